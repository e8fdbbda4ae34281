/* bench/timer.h - bench_now(): seconds since an arbitrary fixed point, from the platform's
   monotonic clock (QueryPerformanceCounter, mach_absolute_time, or POSIX clock_gettime, for
   which bench.c defines _POSIX_C_SOURCE: -std=c99 hides it otherwise). */
#ifndef BENCH_TIMER_H
#define BENCH_TIMER_H

#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
static double bench_now(void)
{
    static LARGE_INTEGER freq; /* zero until first use */
    LARGE_INTEGER t;
    if (freq.QuadPart == 0) QueryPerformanceFrequency(&freq);
    QueryPerformanceCounter(&t);
    return (double)t.QuadPart / (double)freq.QuadPart;
}
#elif defined(__APPLE__)
#include <mach/mach_time.h>
static double bench_now(void)
{
    static mach_timebase_info_data_t tb; /* zero until first use */
    if (tb.denom == 0) mach_timebase_info(&tb);
    return (double)mach_absolute_time() * (double)tb.numer / (double)tb.denom * 1e-9;
}
#else
#include <time.h>
static double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
#endif

#endif /* BENCH_TIMER_H */

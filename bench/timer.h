/* bench/timer.h - a portable monotonic clock for the benchmarks.

   bench_now() returns seconds since an arbitrary fixed point, from the
   platform's monotonic high-resolution clock:
     Windows   QueryPerformanceCounter / QueryPerformanceFrequency
     macOS     mach_absolute_time (scaled by mach_timebase_info)
     POSIX     clock_gettime(CLOCK_MONOTONIC)
   On POSIX, define _POSIX_C_SOURCE >= 199309L before including any header
   (bench.c does) so that -std=c99 exposes clock_gettime. */
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

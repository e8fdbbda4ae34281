/* bench/limits.h - the machine limits the benchmarks are compared against, measured in
   the same process: FMA throughput (independent FMA chains, intrinsics for the widest
   vector ISA the compiler flags enable) and STREAM-like copy / add / read bandwidth. */
#ifndef BENCH_LIMITS_H
#define BENCH_LIMITS_H

#include <stddef.h>

typedef struct bench_fma_kernel {
    const char *name;    /* e.g. "avx2_fma" */
    const char *desc;    /* e.g. "AVX2+FMA, 12 chains x 8 lanes" */
    double flops_per_iter; /* per thread, per loop iteration */
    float (*run)(long iters, float seed); /* (bench_fma_run calls it) */
} bench_fma_kernel;

/* The FMA kernels this build has (widest first); returns how many. */
int bench_fma_kernels(const bench_fma_kernel **list);
/* Run kernel k for iters iterations on each of `threads` threads (OpenMP; 1 without it).
   Returns a value that depends on every FMA (to be stored somewhere visible). */
float bench_fma_run(int k, long iters, int threads);

/* STREAM-like kernels over n floats, split statically across `threads` threads.
   copy counts 8 bytes per element (read a, write b), add 12 (read a, b, write c),
   update 8 (read a, write a: the in-place pattern, half the footprint of copy). */
void bench_stream_copy(float *b, const float *a, size_t n, int threads);
void bench_stream_add(float *c, const float *a, const float *b, size_t n, int threads);
void bench_stream_update(float *a, size_t n, int threads);
/* A read-only stream: the sum of n floats (4 bytes per element, nothing written), each
   thread its static part: what a call that only reads its data (a weight at one row)
   can reach. Returns the sum (to be stored somewhere visible). */
float bench_stream_read(const float *a, size_t n, int threads);
/* Set n floats to small varied values, in parallel with the same static split
   (first touch: pages land where the threads that use them run). */
void bench_stream_init(float *a, size_t n, float seed, int threads);

#endif /* BENCH_LIMITS_H */

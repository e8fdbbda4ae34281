/* bench/limits.c - FMA peak and STREAM-like kernels. See limits.h. */
#include "limits.h"

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif
#if defined(__ARM_NEON) && defined(__aarch64__)
#include <arm_neon.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#define BENCH_OMP_SUM _Pragma("omp parallel num_threads(threads) reduction(+:total)")
#define BENCH_OMP_FOR _Pragma("omp parallel for schedule(static) num_threads(threads)")
#else
#define BENCH_OMP_SUM
#define BENCH_OMP_FOR
#define omp_get_thread_num() 0
#define omp_get_num_threads() 1
#endif

/* A kernel of `chains` independent accumulators of type V, c = c * a + b: enough chains to
   cover FMA latency x FMA pipes (Zen 3 / Intel: 4 cycles x 2 pipes = 8 at least). a is just
   below 1, so the values converge to b / (1 - a) and never overflow or go subnormal. At -O3
   the chains loop unrolls and c[] lives in registers. */
#define FMA_KERNEL(name, V, chains, set1, fma, add, hsum) \
    static float name(long iters, float seed) \
    { \
        const V a = set1(0.9999999f), b = set1(seed * 1e-7f); \
        V c[chains]; \
        long i; \
        int j; \
        for (j = 0; j < chains; j++) c[j] = set1(seed + (float)j); \
        for (i = 0; i < iters; i++) \
            for (j = 0; j < chains; j++) c[j] = fma(c[j], a, b); \
        for (j = 1; j < chains; j++) c[0] = add(c[0], c[j]); \
        return hsum(c[0]); \
    }

#ifdef __AVX512F__
FMA_KERNEL(fma_avx512, __m512, 16, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps,
           _mm512_reduce_add_ps)
#endif

#if defined(__AVX2__) && defined(__FMA__)
static float hsum_avx2(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_shuffle_ps(s, s, 1)));
}
FMA_KERNEL(fma_avx2, __m256, 12, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps, hsum_avx2)
#endif

#if defined(__ARM_NEON) && defined(__aarch64__)
#define NEON_FMA(c, a, b) vfmaq_f32(b, c, a)
FMA_KERNEL(fma_neon, float32x4_t, 16, vdupq_n_f32, NEON_FMA, vaddq_f32, vaddvq_f32)
#endif

/* Portable fallback: 8 scalar chains of a multiply and an add (2 flops), which the
   compiler may contract to FMA or vectorise; either way it is what plain C reaches. */
#define SCALAR_SET(x) (x)
#define SCALAR_FMA(c, a, b) ((c) * (a) + (b))
#define SCALAR_ADD(x, y) ((x) + (y))
FMA_KERNEL(fma_scalar, float, 8, SCALAR_SET, SCALAR_FMA, SCALAR_ADD, SCALAR_SET)

static const bench_fma_kernel kernels[] = {
#ifdef __AVX512F__
    {"avx512_fma", "AVX-512F, 16 chains x 16 lanes", 16.0 * 16.0 * 2.0, fma_avx512},
#endif
#if defined(__AVX2__) && defined(__FMA__)
    {"avx2_fma", "AVX2+FMA, 12 chains x 8 lanes", 12.0 * 8.0 * 2.0, fma_avx2},
#endif
#if defined(__ARM_NEON) && defined(__aarch64__)
    {"neon_fma", "NEON, 16 chains x 4 lanes", 16.0 * 4.0 * 2.0, fma_neon},
#endif
    {"scalar", "scalar C, 8 chains of mul+add", 8.0 * 2.0, fma_scalar}};

int bench_fma_kernels(const bench_fma_kernel **list)
{
    *list = kernels;
    return (int)(sizeof kernels / sizeof kernels[0]);
}

float bench_fma_run(int k, long iters, int threads)
{
    float total = 0.0f;
    (void)threads;
    BENCH_OMP_SUM
    total += kernels[k].run(iters, 1.0f + 0.001f * (float)omp_get_thread_num());
    return total;
}

/* A sum of a[lo, hi) in 32 running sums (the inner loop vectorises: every load feeds an
   add of its own lane, and no float sum is reordered). */
static float read_range(const float *a, size_t lo, size_t hi)
{
    float acc[32] = {0}, s = 0.0f;
    size_t i = lo, j;
    for (; i + 32 <= hi; i += 32)
        for (j = 0; j < 32; j++) acc[j] += a[i + j];
    for (; i < hi; i++) acc[0] += a[i];
    for (j = 0; j < 32; j++) s += acc[j];
    return s;
}

/* Where part t of n elements split in nt parts begins (n * t could overflow). */
static size_t part(size_t n, size_t t, size_t nt) { return n / nt * t + n % nt * t / nt; }

float bench_stream_read(const float *a, size_t n, int threads)
{
    float total = 0.0f;
    (void)threads;
    BENCH_OMP_SUM
    {
        const size_t t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();
        total += read_range(a, part(n, t, nt), part(n, t + 1, nt));
    }
    return total;
}

/* stmt for each i < n, each of `threads` threads its static part. */
#define STREAM_LOOP(stmt) \
    long i, nn = (long)n; \
    (void)threads; \
    BENCH_OMP_FOR \
    for (i = 0; i < nn; i++) stmt;

/* "+ 0.0f" is not an identity (-0.0f + 0.0f is +0.0f), so compilers cannot turn the loop
   into a memcpy call (which may use non-temporal stores); it stays the plain load/store
   loop a library would write, and the add is free at this speed. */
void bench_stream_copy(float *b, const float *a, size_t n, int threads)
{
    STREAM_LOOP(b[i] = a[i] + 0.0f)
}

void bench_stream_add(float *c, const float *a, const float *b, size_t n, int threads)
{
    STREAM_LOOP(c[i] = a[i] + b[i])
}

void bench_stream_update(float *a, size_t n, int threads)
{
    STREAM_LOOP(a[i] = a[i] + 1.0f)
}

void bench_stream_init(float *a, size_t n, float seed, int threads)
{
    STREAM_LOOP(a[i] = seed + (float)(i % 1024) * (1.0f / 1024.0f))
}

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
#define BENCH_OMP_PARALLEL _Pragma("omp parallel num_threads(threads)")
#define BENCH_OMP_FOR _Pragma("omp parallel for schedule(static) num_threads(threads)")
#else
#define BENCH_OMP_PARALLEL
#define BENCH_OMP_FOR
#endif

/* Each kernel: c = c * a + b on independent accumulators. a is just below 1, so the
   values converge to b / (1 - a) and never overflow or go subnormal. Enough chains to
   cover FMA latency x FMA pipes (Zen 3 / Intel: 4 cycles x 2 pipes = 8 at least). */

#ifdef __AVX512F__
static float fma_avx512(long iters, float seed)
{
    const __m512 a = _mm512_set1_ps(0.9999999f), b = _mm512_set1_ps(seed * 1e-7f);
    __m512 c0 = _mm512_set1_ps(seed), c1 = _mm512_set1_ps(seed + 1.0f);
    __m512 c2 = _mm512_set1_ps(seed + 2.0f), c3 = _mm512_set1_ps(seed + 3.0f);
    __m512 c4 = _mm512_set1_ps(seed + 4.0f), c5 = _mm512_set1_ps(seed + 5.0f);
    __m512 c6 = _mm512_set1_ps(seed + 6.0f), c7 = _mm512_set1_ps(seed + 7.0f);
    __m512 c8 = _mm512_set1_ps(seed + 8.0f), c9 = _mm512_set1_ps(seed + 9.0f);
    __m512 c10 = _mm512_set1_ps(seed + 10.0f), c11 = _mm512_set1_ps(seed + 11.0f);
    __m512 c12 = _mm512_set1_ps(seed + 12.0f), c13 = _mm512_set1_ps(seed + 13.0f);
    __m512 c14 = _mm512_set1_ps(seed + 14.0f), c15 = _mm512_set1_ps(seed + 15.0f);
    long i;
    for (i = 0; i < iters; i++) {
        c0 = _mm512_fmadd_ps(c0, a, b);   c1 = _mm512_fmadd_ps(c1, a, b);
        c2 = _mm512_fmadd_ps(c2, a, b);   c3 = _mm512_fmadd_ps(c3, a, b);
        c4 = _mm512_fmadd_ps(c4, a, b);   c5 = _mm512_fmadd_ps(c5, a, b);
        c6 = _mm512_fmadd_ps(c6, a, b);   c7 = _mm512_fmadd_ps(c7, a, b);
        c8 = _mm512_fmadd_ps(c8, a, b);   c9 = _mm512_fmadd_ps(c9, a, b);
        c10 = _mm512_fmadd_ps(c10, a, b); c11 = _mm512_fmadd_ps(c11, a, b);
        c12 = _mm512_fmadd_ps(c12, a, b); c13 = _mm512_fmadd_ps(c13, a, b);
        c14 = _mm512_fmadd_ps(c14, a, b); c15 = _mm512_fmadd_ps(c15, a, b);
    }
    c0 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(c0, c1), _mm512_add_ps(c2, c3)),
                       _mm512_add_ps(_mm512_add_ps(c4, c5), _mm512_add_ps(c6, c7)));
    c8 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(c8, c9), _mm512_add_ps(c10, c11)),
                       _mm512_add_ps(_mm512_add_ps(c12, c13), _mm512_add_ps(c14, c15)));
    return _mm512_reduce_add_ps(_mm512_add_ps(c0, c8));
}
#endif

#if defined(__AVX2__) && defined(__FMA__)
static float fma_avx2(long iters, float seed)
{
    const __m256 a = _mm256_set1_ps(0.9999999f), b = _mm256_set1_ps(seed * 1e-7f);
    __m256 c0 = _mm256_set1_ps(seed), c1 = _mm256_set1_ps(seed + 1.0f);
    __m256 c2 = _mm256_set1_ps(seed + 2.0f), c3 = _mm256_set1_ps(seed + 3.0f);
    __m256 c4 = _mm256_set1_ps(seed + 4.0f), c5 = _mm256_set1_ps(seed + 5.0f);
    __m256 c6 = _mm256_set1_ps(seed + 6.0f), c7 = _mm256_set1_ps(seed + 7.0f);
    __m256 c8 = _mm256_set1_ps(seed + 8.0f), c9 = _mm256_set1_ps(seed + 9.0f);
    __m256 c10 = _mm256_set1_ps(seed + 10.0f), c11 = _mm256_set1_ps(seed + 11.0f);
    __m128 s;
    long i;
    for (i = 0; i < iters; i++) {
        c0 = _mm256_fmadd_ps(c0, a, b);   c1 = _mm256_fmadd_ps(c1, a, b);
        c2 = _mm256_fmadd_ps(c2, a, b);   c3 = _mm256_fmadd_ps(c3, a, b);
        c4 = _mm256_fmadd_ps(c4, a, b);   c5 = _mm256_fmadd_ps(c5, a, b);
        c6 = _mm256_fmadd_ps(c6, a, b);   c7 = _mm256_fmadd_ps(c7, a, b);
        c8 = _mm256_fmadd_ps(c8, a, b);   c9 = _mm256_fmadd_ps(c9, a, b);
        c10 = _mm256_fmadd_ps(c10, a, b); c11 = _mm256_fmadd_ps(c11, a, b);
    }
    c0 = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c0, c1), _mm256_add_ps(c2, c3)),
                       _mm256_add_ps(_mm256_add_ps(c4, c5), _mm256_add_ps(c6, c7)));
    c8 = _mm256_add_ps(_mm256_add_ps(c8, c9), _mm256_add_ps(c10, c11));
    c0 = _mm256_add_ps(c0, c8);
    s = _mm_add_ps(_mm256_castps256_ps128(c0), _mm256_extractf128_ps(c0, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}
#endif

#if defined(__ARM_NEON) && defined(__aarch64__)
static float fma_neon(long iters, float seed)
{
    const float32x4_t a = vdupq_n_f32(0.9999999f), b = vdupq_n_f32(seed * 1e-7f);
    float32x4_t c[16];
    float32x4_t s;
    long i;
    int j;
    for (j = 0; j < 16; j++) c[j] = vdupq_n_f32(seed + (float)j);
    for (i = 0; i < iters; i++) {
        c[0] = vfmaq_f32(b, c[0], a);   c[1] = vfmaq_f32(b, c[1], a);
        c[2] = vfmaq_f32(b, c[2], a);   c[3] = vfmaq_f32(b, c[3], a);
        c[4] = vfmaq_f32(b, c[4], a);   c[5] = vfmaq_f32(b, c[5], a);
        c[6] = vfmaq_f32(b, c[6], a);   c[7] = vfmaq_f32(b, c[7], a);
        c[8] = vfmaq_f32(b, c[8], a);   c[9] = vfmaq_f32(b, c[9], a);
        c[10] = vfmaq_f32(b, c[10], a); c[11] = vfmaq_f32(b, c[11], a);
        c[12] = vfmaq_f32(b, c[12], a); c[13] = vfmaq_f32(b, c[13], a);
        c[14] = vfmaq_f32(b, c[14], a); c[15] = vfmaq_f32(b, c[15], a);
    }
    s = c[0];
    for (j = 1; j < 16; j++) s = vaddq_f32(s, c[j]);
    return vaddvq_f32(s);
}
#endif

/* Portable fallback: 8 scalar chains of a multiply and an add (2 flops), which the
   compiler may contract to FMA or vectorise; either way it is what plain C reaches. */
static float fma_scalar(long iters, float seed)
{
    const float a = 0.9999999f, b = seed * 1e-7f;
    float c[8];
    float s = 0.0f;
    long i;
    int j;
    for (j = 0; j < 8; j++) c[j] = seed + (float)j;
    for (i = 0; i < iters; i++)
        for (j = 0; j < 8; j++) c[j] = c[j] * a + b;
    for (j = 0; j < 8; j++) s += c[j];
    return s;
}

typedef float (*fma_fn)(long iters, float seed);

static const bench_fma_kernel kernels[] = {
#ifdef __AVX512F__
    { "avx512_fma", "AVX-512F, 16 chains x 16 lanes", 16.0 * 16.0 * 2.0 },
#endif
#if defined(__AVX2__) && defined(__FMA__)
    { "avx2_fma", "AVX2+FMA, 12 chains x 8 lanes", 12.0 * 8.0 * 2.0 },
#endif
#if defined(__ARM_NEON) && defined(__aarch64__)
    { "neon_fma", "NEON, 16 chains x 4 lanes", 16.0 * 4.0 * 2.0 },
#endif
    { "scalar", "scalar C, 8 chains of mul+add", 8.0 * 2.0 }
};

static const fma_fn kernel_fns[] = {
#ifdef __AVX512F__
    fma_avx512,
#endif
#if defined(__AVX2__) && defined(__FMA__)
    fma_avx2,
#endif
#if defined(__ARM_NEON) && defined(__aarch64__)
    fma_neon,
#endif
    fma_scalar
};

int bench_fma_kernels(const bench_fma_kernel **list)
{
    *list = kernels;
    return (int)(sizeof kernels / sizeof kernels[0]);
}

float bench_fma_run(int k, long iters, int threads)
{
    float total = 0.0f;
    const fma_fn fn = kernel_fns[k];
#ifdef _OPENMP
    BENCH_OMP_PARALLEL
    {
        const float r = fn(iters, 1.0f + 0.001f * (float)omp_get_thread_num());
        _Pragma("omp atomic")
        total += r;
    }
#else
    (void)threads;
    total = fn(iters, 1.0f);
#endif
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

float bench_stream_read(const float *a, size_t n, int threads)
{
    float total = 0.0f;
#ifdef _OPENMP
    BENCH_OMP_PARALLEL
    {
        const size_t t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();
        const float r = read_range(a, n / nt * t + n % nt * t / nt,
                                   n / nt * (t + 1) + n % nt * (t + 1) / nt);
        _Pragma("omp atomic")
        total += r;
    }
#else
    (void)threads;
    total = read_range(a, 0, n);
#endif
    return total;
}

void bench_stream_copy(float *b, const float *a, size_t n, int threads)
{
    /* "+ 0.0f" is not an identity (-0.0f + 0.0f is +0.0f), so compilers cannot turn
       the loop into a memcpy call (which may use non-temporal stores); it stays the
       plain load/store loop a library would write, and the add is free at this speed. */
    long i, nn = (long)n;
    (void)threads;
    BENCH_OMP_FOR
    for (i = 0; i < nn; i++) b[i] = a[i] + 0.0f;
}

void bench_stream_add(float *c, const float *a, const float *b, size_t n, int threads)
{
    long i, nn = (long)n;
    (void)threads;
    BENCH_OMP_FOR
    for (i = 0; i < nn; i++) c[i] = a[i] + b[i];
}

void bench_stream_update(float *a, size_t n, int threads)
{
    long i, nn = (long)n;
    (void)threads;
    BENCH_OMP_FOR
    for (i = 0; i < nn; i++) a[i] = a[i] + 1.0f;
}

void bench_stream_init(float *a, size_t n, float seed, int threads)
{
    long i, nn = (long)n;
    (void)threads;
    BENCH_OMP_FOR
    for (i = 0; i < nn; i++) a[i] = seed + (float)(i % 1024) * (1.0f / 1024.0f);
}

/* tools/exhaustive.c - the headers' own float functions against the correctly rounded value.

   `make exhaustive` runs every unary function over all 2^32 float inputs, powf over the
   exponents and bases the library uses plus a random sample, the own fmaf against the
   hardware's fused multiply-add, and the double functions on random samples;
   `make exhaustive-sample` (CI) runs every K-th input only. It prints one line a function:
   "correctly rounded" or the count of results that are not, with the largest error in
   ulps. It needs MPFR (Debian: libmpfr-dev); the headers do not.

   How the reference decides (CORE-MATH's method): the platform's double function, whose
   error is below 1 ulp of a double, brackets the true value in [d - 2^-50 |d|, d + 2^-50 |d|];
   when both ends round to the same float, that float is the correctly rounded result.
   When they do not (about 2^-26 of the inputs), MPFR computes it at float precision with
   float's exponent range, subnormals included.

   The functions come from the headers' lists: PE__OWN_MATH(X) / FFN__OWN_MATH(X) (unary
   float functions, X(libm name, function)), PE__OWN_POWF, FFN__OWN_FMAF, *__OWN_MATH_D(X)
   (double) and FFN__OWN_ROUND16(X) (ffn.h's float to bfloat16 / float16, widened back). */
#define _GNU_SOURCE
#define PE_IMPLEMENTATION
#define FFN_IMPLEMENTATION
#include "pe.h"
#include "ffn.h"
#include <math.h>
#include <mpfr.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef float (*f1)(float);
typedef double (*d1)(double);
typedef int (*m1)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);

static float bits_f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t f_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static int64_t ordered(float f)      /* floats in order, as integers: ulp distances */
{
    uint32_t u = f_bits(f);
    return (u >> 31) ? -(int64_t)(u & 0x7fffffffu) : (int64_t)u;
}
static int same(float a, float b) { return (a != a && b != b) || f_bits(a) == f_bits(b); }
static int64_t ulps(float a, float b)
{
    return (a != a || b != b) ? INT32_MAX : llabs(ordered(a) - ordered(b));
}

/* The results not correctly rounded: how many, the largest error in ulps, where. */
typedef struct { uint64_t bad; int64_t worst; double at; } tally;
static void miss(tally *t, int64_t e, double x)
{
    t->bad++;
    if (e > t->worst) { t->worst = e; t->at = x; }
}

/* One function's line: n inputs (what: "inputs", "pairs", ...; ok_what on success);
   hard: the MPFR decisions (-1: not counted); at: print where the worst error is. */
static int verdict(const char *header, const char *name, uint64_t n, const char *what,
                   const char *ok_what, const tally *t, long long hard, int at)
{
    printf("%-4s %-6s %llu %s", header, name, (unsigned long long)n, t->bad ? what : ok_what);
    if (!t->bad && hard >= 0) printf(": correctly rounded (%llu decided by MPFR)\n", (unsigned long long)hard);
    else if (!t->bad) printf(": correctly rounded\n");
    else if (at) printf(": %llu NOT correctly rounded, largest error %lld ulp at %a\n",
                        (unsigned long long)t->bad, (long long)t->worst, t->at);
    else printf(": %llu NOT correctly rounded, largest error %lld ulp\n",
                (unsigned long long)t->bad, (long long)t->worst);
    return t->bad != 0;
}

typedef int (*m2)(mpfr_ptr, mpfr_srcptr, mpfr_srcptr, mpfr_rnd_t);

/* The correctly rounded float (prec 24) or double (prec 53) of f(x), or of pow(x, y) when
   pow is set: computed at that precision with that type's exponent range, subnormals
   included (the float result is exact as a double). */
static double mpfr_ref(int prec, m1 m, m2 pow, double x, double y)
{
    mpfr_t a, b, r;
    double out;
    int t;
    mpfr_set_emin(prec == 24 ? -148 : -1073);  /* smallest subnormal 2^-149, 2^-1074 */
    mpfr_set_emax(prec == 24 ? 128 : 1024);
    mpfr_inits2(prec, r, (mpfr_ptr)0);
    mpfr_inits2(64, a, b, (mpfr_ptr)0);
    mpfr_set_d(a, x, MPFR_RNDN);
    mpfr_set_d(b, y, MPFR_RNDN);
    t = pow ? pow(r, a, b, MPFR_RNDN) : m ? m(r, a, MPFR_RNDN) : 0;   /* (one of them is set) */
    t = mpfr_subnormalize(r, t, MPFR_RNDN);
    out = mpfr_get_d(r, MPFR_RNDN);
    mpfr_clears(a, b, r, (mpfr_ptr)0);
    return out;
}

/* The double reference decides when both ends of its error interval round alike. */
static int decided(double d, float *out)
{
    const double e = 0x1p-50;
    float lo = (float)(d - fabs(d) * e), hi = (float)(d + fabs(d) * e);
    *out = (float)d;
    return d != d || d - d != 0 || same(lo, hi);     /* NaN and +-inf are exact here */
}

/* x to bfloat16 (bf) or float16, widened back (ref_bf16, ref_f16; own_*: ffn.h's): MPFR at
   8 or 11 bits in the type's exponent range (ties to even, subnormals, Inf past the largest);
   a NaN quiet, its sign and the top payload bits that fit kept (bfloat16 7, float16 10). */
static float round16(int bf, float x)
{
    mpfr_t r;
    float out;
    if (x != x) return bits_f((f_bits(x) & (bf ? 0xffff0000u : 0xffffe000u)) | 0x400000u);
    mpfr_set_emin(bf ? -132 : -23), mpfr_set_emax(bf ? 128 : 16); /* subnormals: 2^-133, 2^-24 up */
    mpfr_init2(r, bf ? 8 : 11);
    mpfr_subnormalize(r, mpfr_set_flt(r, x, MPFR_RNDN), MPFR_RNDN);
    out = mpfr_get_flt(r, MPFR_RNDN);
    mpfr_clear(r);
    return out;
}
#define OWN16(name, narrow, widen) static float own_##name(float x) { return widen(narrow(x)); } \
    static float ref_##name(float x) { return round16(#name[0] == 'b', x); }
FFN__OWN_ROUND16(OWN16)

/* r: the exact reference (the roundings, compared bit for bit, NaNs too), else d and m */
static const struct { const char *name; d1 d; m1 m; f1 r; } refs[] = {
    {"sinf", sin, mpfr_sin, 0}, {"cosf", cos, mpfr_cos, 0}, {"expf", exp, mpfr_exp, 0},
    {"erff", erf, mpfr_erf, 0}, {"tanhf", tanh, mpfr_tanh, 0}, {"logf", log, mpfr_log, 0},
    {"bf16", 0, 0, ref_bf16}, {"f16", 0, 0, ref_f16},
};

/* ---- one job: a range of inputs split among threads ---------------------------- */
typedef struct {
    f1 f; d1 d; m1 m; f1 r;
    uint64_t n, step, next;           /* inputs i * step for i < n; next: the shared cursor */
    tally t;                          /* results not correctly rounded */
    uint64_t hard;                    /* MPFR decisions */
    pthread_mutex_t mu;
} job1;

static void *run1(void *p)
{
    job1 *j = (job1 *)p;
    uint64_t hard = 0, i0;
    tally t = {0, 0, 0};
    while ((i0 = __atomic_fetch_add(&j->next, 65536, __ATOMIC_RELAXED)) < j->n) {
        uint64_t i, i1 = i0 + 65536 < j->n ? i0 + 65536 : j->n;
        for (i = i0; i < i1; i++) {
            float x = bits_f((uint32_t)(i * j->step)), y = j->f(x), r;
            if (j->r) r = j->r(x);
            else if (!decided(j->d((double)x), &r))
                r = (float)mpfr_ref(24, j->m, 0, x, 0), hard++;
            if (j->r ? f_bits(y) != f_bits(r) : !same(y, r)) miss(&t, ulps(y, r), x);
        }
    }
    pthread_mutex_lock(&j->mu);
    j->t.bad += t.bad; j->hard += hard;
    if (t.worst > j->t.worst) { j->t.worst = t.worst; j->t.at = t.at; }
    pthread_mutex_unlock(&j->mu);
    return 0;
}

static int nthreads;

static int check1(const char *header, const char *name, f1 f, uint64_t step)
{
    job1 j;
    pthread_t th[256];
    int t, k = -1;
    for (t = 0; t < (int)(sizeof refs / sizeof refs[0]); t++)
        if (!strcmp(refs[t].name, name)) k = t;
    if (k < 0) { printf("%s %s: no reference here\n", header, name); return 1; }
    memset(&j, 0, sizeof j);
    j.f = f; j.d = refs[k].d; j.m = refs[k].m; j.r = refs[k].r;
    j.step = step; j.n = ((uint64_t)1 << 32) / step;
    pthread_mutex_init(&j.mu, 0);
    for (t = 0; t < nthreads; t++) pthread_create(&th[t], 0, run1, &j);
    for (t = 0; t < nthreads; t++) pthread_join(th[t], 0);
    return verdict(header, name, j.n, "inputs", step > 1 ? "inputs (sampled)" : "inputs (all 2^32)",
                   &j.t, j.r ? -1 : (long long)j.hard, 1);
}

/* ---- powf: exponents and bases the library uses, then random pairs ------------ */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd32(void)
{
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}
typedef float (*f2)(float, float);

static void powf_one(f2 f, float x, float y, tally *t, uint64_t *hard)
{
    float r, v = f(x, y);
    if (!decided(pow((double)x, (double)y), &r)) { r = (float)mpfr_ref(24, 0, mpfr_pow, x, y); ++*hard; }
    if (!same(v, r)) miss(t, ulps(v, r), x);
}

static int check_powf(const char *header, f2 f, uint64_t random_pairs)
{
    static const float theta[] = {10000.0f, 500000.0f, 1000000.0f, 10000000.0f, 100.0f,
                                  50000.0f, 20000.0f, 25000.0f, 75000.0f, 1e4f * 8.0f};
    uint64_t n = 0, hard = 0, i;
    tally t = {0, 0, 0};
    int rot, k, b;
    /* RoPE: theta^(f32(2i) / f32(rot)) for every even rot <= 1024, listed and random bases */
    for (rot = 2; rot <= 1024; rot += 2)
        for (k = 0; k < rot / 2; k++) {
            float e = (float)(2 * k) / (float)rot;
            for (b = 0; b < (int)(sizeof theta / sizeof theta[0]); b++, n++)
                powf_one(f, theta[b], e, &t, &hard);
            for (b = 0; b < 4; b++, n++)
                powf_one(f, 1.0f + (float)(rnd32() >> 8), e, &t, &hard);
        }
    /* ALiBi and integer powers: base^k, k = 1..1024, bases in (0, 1) and (1, 2^16) */
    for (k = 1; k <= 1024; k++)
        for (b = 0; b < 64; b++, n++) {
            float x = b & 1 ? bits_f(0x3f800000u - 1 - (rnd32() & 0x7fffff))
                            : 1.0f + (float)(rnd32() & 0xffff) * bits_f(rnd32() & 0x3fffffffu);
            powf_one(f, x, (float)k, &t, &hard);
        }
    /* powers of two (and a negative one) to integer and half-integer powers, across the
       subnormal range and its midpoint 2^-150: exact results, where only the exact value
       rounds a tie to even */
    for (b = 1; b <= 4; b++)
        for (k = -1200; k <= 1200; k++, n += 3) {
            const float p2 = (float)(1 << b), y = 0.5f * (float)k;
            powf_one(f, p2, y, &t, &hard);
            powf_one(f, 1.0f / p2, y, &t, &hard);
            powf_one(f, -p2, y, &t, &hard);
        }
    /* random: positive bases of every exponent, exponents with |y| < 2^7, then any bits */
    for (i = 0; i < random_pairs; i++, n++) {
        float x = bits_f(rnd32() & 0x7fffffffu);
        float y = i & 1 ? bits_f(rnd32()) : bits_f((rnd32() & 0x83ffffffu) | 0x3c000000u);
        powf_one(f, x, y, &t, &hard);
    }
    return verdict(header, "powf", n, "pairs", "pairs", &t, (long long)hard, 0);
}

/* ---- the double functions: random samples against MPFR at double precision ------- */
static double bits_d(uint64_t u) { double d; memcpy(&d, &u, 8); return d; }
static uint64_t rnd64(void) { return (uint64_t)rnd32() << 32 | rnd32(); }
static int64_t ordered_d(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return (u >> 63) ? -(int64_t)(u & 0x7fffffffffffffffull) : (int64_t)u;
}
static int same_d(double a, double b) { return (a != a && b != b) || ordered_d(a) == ordered_d(b); }
static int64_t ulps_d(double a, double b)
{
    return (a != a || b != b) ? INT32_MAX : llabs(ordered_d(a) - ordered_d(b));
}

static const struct { const char *name; m1 m; } refs_d[] = {
    {"sin", mpfr_sin}, {"cos", mpfr_cos}, {"exp", mpfr_exp}, {"log", mpfr_log},
    {"log2", mpfr_log2}, {"sqrt", mpfr_sqrt},
};

/* A random argument: any bits (every magnitude; NaN and inf too) in one case of four, else
   |x| < 2^11 (exp: the finite range) or 0 < x (logs) with a random exponent. */
static double arg_d(const char *name, uint64_t i)
{
    uint64_t u = rnd64();
    if (i % 4 == 0) return bits_d(u);
    if (!strcmp(name, "log") || !strcmp(name, "log2") || !strcmp(name, "sqrt"))
        return bits_d(u & 0x7fffffffffffffffull);
    /* exponent in [-30, 10] (sin, cos: beyond 2^20 too, up to 2^60) */
    return bits_d((u & 0x800fffffffffffffull) |
                  (uint64_t)(1023 - 30 + (int)(rnd32() % (strncmp(name, "exp", 3) ? 91 : 41)))
                      << 52);
}

static int check_d(const char *header, const char *name, d1 f, uint64_t n)
{
    uint64_t i;
    tally t = {0, 0, 0};
    m1 m = 0;
    int k;
    for (k = 0; k < (int)(sizeof refs_d / sizeof refs_d[0]); k++)
        if (!strcmp(refs_d[k].name, name)) m = refs_d[k].m;
    if (!m) { printf("%s %s: no reference here\n", header, name); return 1; }
    for (i = 0; i < n; i++) {
        double x = arg_d(name, i), y = f(x), r = mpfr_ref(53, m, 0, x, 0);
        if (!same_d(y, r)) miss(&t, ulps_d(y, r), x);
    }
    return verdict(header, name, n, "random doubles", "random doubles", &t, -1, 1);
}

/* pow in double: the library's uses (theta^(2i/rot), the ALiBi and dynamic-NTK powers),
   then random pairs (positive bases of any exponent, |y| < 2^7; any bits) */
static int check_pow(const char *header, double (*f)(double, double), uint64_t n)
{
    uint64_t i, m = 0;
    tally t = {0, 0, 0};
    int rot, k;
    for (rot = 2; rot <= 256; rot += 2)
        for (k = 0; k < rot / 2; k++, m++) {
            double x = 1.0 + (double)(rnd32() % 1000000), y = (double)(2 * k) / rot;
            double v = f(x, y), r = mpfr_ref(53, 0, mpfr_pow, x, y);
            if (!same_d(v, r)) miss(&t, ulps_d(v, r), x);
        }
    for (i = 0; i < n; i++, m++) {
        double x = i & 1 ? bits_d(rnd64()) : bits_d(rnd64() & 0x7fffffffffffffffull);
        double y = i & 1 ? bits_d(rnd64())
                         : bits_d((rnd64() & 0x801fffffffffffffull) | 0x3f80000000000000ull);
        double v = f(x, y), r = mpfr_ref(53, 0, mpfr_pow, x, y);
        if (!same_d(v, r)) miss(&t, ulps_d(v, r), x);
    }
    return verdict(header, "pow", m, "pairs", "pairs", &t, -1, 0);
}

/* ---- fmaf: the own fused multiply-add against the hardware's --------------------- */
#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("fma"))) static float hw_fmaf(float a, float b, float c)
{ return __builtin_fmaf(a, b, c); }
static int have_hw_fma(void) { return __builtin_cpu_supports("fma"); }
#else
static float hw_fmaf(float a, float b, float c) { return fmaf(a, b, c); }
static int have_hw_fma(void) { return 1; }
#endif

static int check_fmaf(const char *header, f1 dummy, float (*f)(float, float, float),
                      uint64_t n)
{
    uint64_t i, bad = 0;
    (void)dummy;
    /* cppcheck-suppress knownConditionTrueFalse ; (constant only off x86) */
    if (!have_hw_fma()) { printf("%-4s fmaf: no hardware FMA here\n", header); return 0; }
    for (i = 0; i < n; i++) {
        float a = bits_f(rnd32()), b = bits_f(rnd32()), c;
        switch (i & 3) {  /* adversarial: c cancels the product, or sits half an ulp off it */
        case 0: c = bits_f(rnd32()); break;
        case 1: c = -(a * b); break;
        case 2: c = bits_f(f_bits(-(a * b)) ^ (rnd32() & 3u)); break;
        default:
            a = bits_f((rnd32() & 0x807fffffu) | 0x3f800000u);
            b = bits_f((rnd32() & 0x807fffffu) | 0x3f800000u);
            c = bits_f((rnd32() & 0x80ffffffu) | (f_bits(a * b) & 0x7f000000u));
        }
        if (!same(f(a, b, c), hw_fmaf(a, b, c))) bad++;
    }
    printf("%-4s fmaf   %llu triples: %s (%llu differ from the hardware's)\n", header,
           (unsigned long long)n, bad ? "NOT exact" : "exact", (unsigned long long)bad);
    return bad != 0;
}

int main(int argc, char **argv)
{
    uint64_t step = 1;
    const char *only = 0;
    int fails = 0, checks = 0, i;
    setvbuf(stdout, NULL, _IOLBF, 0);   /* each function's line as it ends (nohup > file) */
    nthreads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--step") && i + 1 < argc) step = strtoull(argv[++i], 0, 10);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) nthreads = atoi(argv[++i]);
        else { fprintf(stderr, "usage: %s [--step K] [--only NAME] [--threads T]\n", argv[0]);
               return 2; }
    }
    if (nthreads < 1 || nthreads > 256) nthreads = 1;
    if (step < 1) step = 1;
    /* RUN(name, call): the check call of function name, unless --only names another */
#define RUN(name, call) if (!only || !strcmp(only, name)) checks++, fails += call;
#define PE_ROW(name, fn) RUN(#name, check1("pe", #name, fn, step))
#define FFN_ROW(name, fn) RUN(#name, check1("ffn", #name, fn, step))
#define PE_ROW_D(name, fn) RUN(#name, check_d("pe", #name, fn, step > 1 ? 100000 : 1000000))
#ifdef PE__OWN_MATH
    PE__OWN_MATH(PE_ROW)
#endif
#ifdef FFN__OWN_MATH
    FFN__OWN_MATH(FFN_ROW)
#endif
#ifdef PE__OWN_POWF
    RUN("powf", check_powf("pe", PE__OWN_POWF, step > 1 ? 1000000 : 100000000))
#endif
#ifdef PE__OWN_MATH_D
    PE__OWN_MATH_D(PE_ROW_D)
#endif
#ifdef PE__OWN_POW
    RUN("pow", check_pow("pe", PE__OWN_POW, step > 1 ? 100000 : 1000000))
#endif
#define FFN_ROW16(name, narrow, widen) FFN_ROW(name, own_##name)
    FFN__OWN_ROUND16(FFN_ROW16)
#ifdef FFN__OWN_FMAF
    RUN("fmaf", check_fmaf("ffn", 0, FFN__OWN_FMAF, step > 1 ? 10000000 : 1000000000))
#endif
    printf("%d passed, %d failed\n", checks - fails, fails);
    return fails != 0 || checks == 0;
}

/* tests/test_ffn_paths.c - ffn.h's fast path (whatever SIMD the flags enable, OpenMP
   if on) against its scalar path (FFN_NO_SIMD) and against float64. No goldens.

   One file, compiled three times: twice as a "library unit" holding a private
   (FFN_STATIC) copy of ffn.h behind a table of function pointers, once as the test:

     cc -std=c99 -O2 -DTEST_FFN_UNIT=1 -c tests/test_ffn_paths.c -o scalar.o
     cc -std=c99 -O2 -march=native [-fopenmp] -DTEST_FFN_UNIT=2 -c tests/test_ffn_paths.c -o fast.o
     cc -std=c99 -O2 [-fopenmp] tests/test_ffn_paths.c scalar.o fast.o -lm -o test_ffn_paths

   (aarch64: aarch64-linux-gnu-gcc -static ..., run with qemu-aarch64.)

   Checks, for many random shapes (rows 1..17 and more, in/out not multiples of 16,
   one output column, long reductions):
     accuracy   both paths' max error against float64 is within the contract's bound
                sqrt(K) * 2^-23 * S per element (S = |b| + sum |x||w|); the ratios are
                printed, and the fast path's RMS ratio must not exceed the scalar one's
     packed     ffn_linear == ffn_linear_packed, ffn_block == ffn_block_packed, bit for
                bit, on both paths; ffn_pack_weight writes the documented layout
     threads    1, 2 and 3 threads give the same bits (only if the fast unit has OpenMP)
     relu       ffn_block's fused ReLU == ffn_linear + ffn_relu + ffn_linear, bit for bit;
                NaN, -0.0, -inf rows give torch's values on both paths
     bounds     every output sits between guard floats that must be intact afterwards;
                inputs are allocated to their exact size (run under ASan to catch reads)
     errors     the new functions' argument checks, and nothing written on error
   Output: one line per check (ok / FAIL), then "N passed, N failed"; exit 1 on failure.
   No timing: the machines are shared. */
#include <stddef.h>

/* One compiled copy of ffn.h. */
typedef struct {
    const char *path; /* FFN_SIMD_NAME */
    int openmp;       /* set_threads works */
    int (*set_threads)(int n);
    int (*linear)(float *, const float *, const float *, const float *, size_t, size_t,
                  size_t);
    int (*linear_packed)(float *, const float *, const float *, const float *, size_t,
                         size_t, size_t);
    int (*relu)(float *, const float *, size_t);
    size_t (*scratch_floats)(size_t, size_t, size_t);
    int (*block)(float *, const float *, const float *, const float *, const float *,
                 const float *, size_t, size_t, size_t, float *, size_t);
    int (*block_packed)(float *, const float *, const float *, const float *,
                        const float *, const float *, size_t, size_t, size_t, float *,
                        size_t);
    size_t (*pack_floats)(size_t, size_t);
    int (*pack_weight)(float *, size_t, const float *, size_t, size_t);
} test_unit;

const test_unit *test_ffn_unit_scalar(void);
const test_unit *test_ffn_unit_fast(void);

#if defined(TEST_FFN_UNIT) /* ===================== a library unit ================ */

#define FFN_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define FFNDEF static __attribute__((unused))
#else
#define FFNDEF static
#endif
#if TEST_FFN_UNIT == 1
#ifndef FFN_NO_SIMD
#define FFN_NO_SIMD
#endif
#define TEST_UNIT_GETTER test_ffn_unit_scalar
#else
#define TEST_UNIT_GETTER test_ffn_unit_fast
#endif
#define FFN_IMPLEMENTATION
#include "../ffn.h"

#if defined(_OPENMP) && !defined(FFN_NO_SIMD)
#include <omp.h>
static int test_set_threads(int n) { omp_set_num_threads(n); return 1; }
#define TEST_OPENMP 1
#else
static int test_set_threads(int n) { (void)n; return 0; }
#define TEST_OPENMP 0
#endif

const test_unit *TEST_UNIT_GETTER(void)
{
    static const test_unit u = {
        FFN_SIMD_NAME, TEST_OPENMP, test_set_threads,
        ffn_linear, ffn_linear_packed, ffn_relu, ffn_block_scratch_floats,
        ffn_block, ffn_block_packed, ffn_pack_floats, ffn_pack_weight
    };
    return &u;
}

#else /* ================================ the test ================================= */

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ffn.h's status codes (this unit does not include ffn.h: it is path-neutral). */
enum { T_OK = 0, T_NULL = -201, T_ZERO = -202, T_OVERFLOW = -203, T_SCRATCH = -204, T_ALIAS = -205 };

static int n_pass, n_fail;

static void check(int ok, const char *fmt, ...)
{
    va_list ap;
    printf(ok ? "ok   " : "FAIL ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    if (ok) n_pass++; else n_fail++;
}

/* ---- deterministic random numbers (xorshift64*) ---- */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rnd32(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 0x2545F4914F6CDD1Dull) >> 32);
}
static size_t rnd_upto(size_t n) { return 1 + rnd32() % n; } /* 1..n */
static float rnd_unit(void) { return (float)((double)rnd32() / 4294967296.0 * 2.0 - 1.0); }

/* ---- buffers with guard floats on both sides ---- */
#define GUARD 64
static const uint32_t guard_bits = 0x7FBADBADu; /* a NaN payload nobody computes */

typedef struct { float *base, *p; size_t n; } gbuf;

static gbuf gb_alloc(size_t n)
{
    gbuf b;
    size_t i;
    float g;
    memcpy(&g, &guard_bits, sizeof g);
    b.n = n;
    b.base = (float *)malloc((n + 2 * GUARD) * sizeof(float));
    if (!b.base) { fprintf(stderr, "out of memory\n"); exit(2); }
    b.p = b.base + GUARD;
    for (i = 0; i < n + 2 * GUARD; i++) b.base[i] = g;
    return b;
}
static int gb_intact(const gbuf *b)
{
    size_t i;
    for (i = 0; i < GUARD; i++)
        if (memcmp(&b->base[i], &guard_bits, 4) || memcmp(&b->p[b->n + i], &guard_bits, 4))
            return 0;
    return 1;
}
/* The whole output region still holds the guard pattern (nothing written). */
static int gb_untouched(const gbuf *b)
{
    size_t i;
    for (i = 0; i < b->n + 2 * GUARD; i++)
        if (memcmp(&b->base[i], &guard_bits, 4)) return 0;
    return 1;
}
static void gb_free(gbuf *b) { free(b->base); b->base = b->p = NULL; }

/* Inputs: exactly n floats (so that ASan / valgrind see any read past the end). */
static float *alloc_exact(size_t n)
{
    float *p = (float *)malloc((n ? n : 1) * sizeof(float));
    if (!p) { fprintf(stderr, "out of memory\n"); exit(2); }
    return p;
}
static float *rand_floats(size_t n, float scale)
{
    float *p = alloc_exact(n);
    size_t i;
    for (i = 0; i < n; i++) p[i] = scale * rnd_unit();
    return p;
}

/* Bitwise equality, NaNs equal to NaNs of any payload. */
static int same_bits(const float *a, const float *b, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof(float)) && !(a[i] != a[i] && b[i] != b[i]))
            return 0;
    return 1;
}

/* ---- float64 reference and the contract's bound ---- */
/* Max over elements of |y - exact| / (sqrt(K) 2^-23 S), and the sum of its squares. */
static void error_ratio(const float *y, const float *x, const float *w, const float *b,
                        size_t rows, size_t in, size_t out, double *max_ratio,
                        double *sum_sq)
{
    size_t r, o, k;
    const double unit = sqrt((double)in) * ldexp(1.0, -23);
    for (r = 0; r < rows; r++)
        for (o = 0; o < out; o++) {
            double exact = b ? b[o] : 0.0, s = b ? fabs(b[o]) : 0.0, ratio;
            for (k = 0; k < in; k++) {
                double t = (double)x[r * in + k] * (double)w[o * in + k];
                exact += t;
                s += fabs(t);
            }
            ratio = s > 0 ? fabs((double)y[r * out + o] - exact) / (unit * s)
                          : (y[r * out + o] == 0.0f ? 0.0 : INFINITY);
            if (ratio > *max_ratio || ratio != ratio) *max_ratio = ratio;
            *sum_sq += ratio * ratio;
        }
}

/* ---- one Linear shape on both paths ---- */
typedef struct { double max_s, max_f, sq_s, sq_f; size_t n; } acc_stats;

static void test_linear_shape(const test_unit *S, const test_unit *F, size_t rows,
                              size_t in, size_t out, int with_bias, acc_stats *st)
{
    float *x = rand_floats(rows * in, 1.0f), *w = rand_floats(out * in, 0.5f);
    float *b = with_bias ? rand_floats(out, 0.5f) : NULL;
    size_t pn = F->pack_floats(in, out);
    gbuf ys = gb_alloc(rows * out), yf = gb_alloc(rows * out), yfp = gb_alloc(rows * out);
    gbuf ysp = gb_alloc(rows * out), wp = gb_alloc(pn), wps = gb_alloc(pn);
    double ms = 0, mf = 0;
    int st1, st2, st3, st4, st5, st6;
    char shape[96];
    snprintf(shape, sizeof shape, "rows %zu in %zu out %zu %s", rows, in, out,
             with_bias ? "bias" : "no bias");

    st1 = S->linear(ys.p, x, w, b, rows, in, out);
    st2 = F->linear(yf.p, x, w, b, rows, in, out);
    st3 = F->pack_weight(wp.p, pn, w, in, out);
    st4 = S->pack_weight(wps.p, pn, w, in, out);
    st5 = F->linear_packed(yfp.p, x, wp.p, b, rows, in, out);
    st6 = S->linear_packed(ysp.p, x, wps.p, b, rows, in, out);
    if (st1 || st2 || st3 || st4 || st5 || st6) {
        check(0, "linear %s: status %d %d %d %d %d %d", shape, st1, st2, st3, st4, st5, st6);
        goto done;
    }
    error_ratio(ys.p, x, w, b, rows, in, out, &ms, &st->sq_s);
    error_ratio(yf.p, x, w, b, rows, in, out, &mf, &st->sq_f);
    st->n += rows * out;
    if (ms > st->max_s) st->max_s = ms;
    if (mf > st->max_f) st->max_f = mf;
    check(mf <= 1.0 && ms <= 1.0, "accuracy linear %s: max err / bound: fast %.3f, scalar %.3f",
          shape, mf, ms);
    check(same_bits(yf.p, yfp.p, rows * out) && same_bits(ys.p, ysp.p, rows * out) &&
              same_bits(wp.p, wps.p, pn),
          "packed linear %s: packed == unpacked (fast and scalar), same packing", shape);
    check(gb_intact(&ys) && gb_intact(&yf) && gb_intact(&yfp) && gb_intact(&ysp) &&
              gb_intact(&wp) && gb_intact(&wps),
          "bounds linear %s: guards intact", shape);
done:
    free(x); free(w); free(b);
    gb_free(&ys); gb_free(&yf); gb_free(&yfp); gb_free(&ysp); gb_free(&wp); gb_free(&wps);
}

/* ---- the packed layout, as documented ---- */
static void test_layout(const test_unit *U, size_t in, size_t out)
{
    float *w = rand_floats(out * in, 1.0f);
    size_t pn = U->pack_floats(in, out), panels = (out + 15) / 16, p, k, j, bad = 0;
    gbuf wp = gb_alloc(pn);
    int st = U->pack_weight(wp.p, pn, w, in, out);
    for (p = 0; p < panels; p++)
        for (k = 0; k < in; k++)
            for (j = 0; j < 16; j++) {
                size_t o = p * 16 + j;
                float want = o < out ? w[o * in + k] : 0.0f;
                if (memcmp(&wp.p[(p * in + k) * 16 + j], &want, sizeof want)) bad++;
            }
    check(st == T_OK && pn == panels * 16 * in && !bad && gb_intact(&wp),
          "layout %s in %zu out %zu: packed[(p*in+k)*16+j] == w[p*16+j][k], zero padded",
          U->path, in, out);
    free(w);
    gb_free(&wp);
}

/* ---- the block: packed/unpacked, fused relu, threads, in place ---- */
static void run_block(const test_unit *U, int packed, float *y, const float *x,
                      const float *w1, const float *b1, const float *w2, const float *b2,
                      size_t rows, size_t d, size_t h, int *status)
{
    size_t n = U->scratch_floats(rows, d, h);
    gbuf s = gb_alloc(n);
    int st;
    if (packed) {
        size_t n1 = U->pack_floats(d, h), n2 = U->pack_floats(h, d);
        float *p1 = alloc_exact(n1), *p2 = alloc_exact(n2);
        st = U->pack_weight(p1, n1, w1, d, h);
        if (!st) st = U->pack_weight(p2, n2, w2, h, d);
        if (!st) st = U->block_packed(y, x, p1, b1, p2, b2, rows, d, h, s.p, n);
        free(p1);
        free(p2);
    } else {
        st = U->block(y, x, w1, b1, w2, b2, rows, d, h, s.p, n);
    }
    if (!gb_intact(&s)) st = 99; /* scratch overrun */
    if (!*status) *status = st;
    gb_free(&s);
}

/* fc2(relu(fc1(x))) from the unit's own ffn_linear and ffn_relu. */
static void run_composed(const test_unit *U, float *y, const float *x, const float *w1,
                         const float *b1, const float *w2, const float *b2, size_t rows,
                         size_t d, size_t h, int *status)
{
    float *hid = alloc_exact(rows * h);
    int st = U->linear(hid, x, w1, b1, rows, d, h);
    if (!st) st = U->relu(hid, hid, rows * h);
    if (!st) st = U->linear(y, hid, w2, b2, rows, h, d);
    if (!*status) *status = st;
    free(hid);
}

static void test_block_shape(const test_unit *S, const test_unit *F, size_t rows,
                             size_t d, size_t h, int special)
{
    float *x = rand_floats(rows * d, 1.0f), *w1 = rand_floats(h * d, 0.5f);
    float *w2 = rand_floats(d * h, 0.5f), *b1 = rand_floats(h, 0.5f);
    float *b2 = rand_floats(d, 0.5f);
    gbuf yf = gb_alloc(rows * d), yfp = gb_alloc(rows * d), yc = gb_alloc(rows * d);
    gbuf ys = gb_alloc(rows * d), ysc = gb_alloc(rows * d);
    int st = 0;
    size_t i, k;
    char shape[80];
    snprintf(shape, sizeof shape, "rows %zu d %zu h %zu%s", rows, d, h,
             special ? " +NaN/-0/-inf rows" : "");
    if (special) {
        /* Non-negative weights (column 0 of fc1 positive) make special rows exact:
           row 0 all -0.0, b1 = -0.0: hidden -0.0, kept by relu, so y = -0.0 where
           b2 = -0.0; row 1 with a NaN: hidden NaN, kept, y NaN; row 2 starting with
           -inf: hidden -inf, relu 0, y == b2; row 3 very negative: hidden < 0, relu 0. */
        for (i = 0; i < h * d; i++) w1[i] = fabsf(w1[i]) + (i % d == 0 ? 0.25f : 0.0f);
        for (i = 0; i < d * h; i++) w2[i] = fabsf(w2[i]) + 0.01f;
        for (i = 0; i < h; i++) b1[i] = -0.0f;
        for (i = 0; i < d; i += 2) b2[i] = -0.0f;
        for (k = 0; k < d; k++) {
            x[k] = -0.0f;
            if (rows > 1) x[d + k] = k == d / 2 ? NAN : 1.0f;
            if (rows > 2) x[2 * d + k] = k == 0 ? -INFINITY : 1.0f;
            if (rows > 3) x[3 * d + k] = k == 0 ? -1.0e30f : 0.0f;
        }
    }
    run_block(F, 0, yf.p, x, w1, b1, w2, b2, rows, d, h, &st);
    run_block(F, 1, yfp.p, x, w1, b1, w2, b2, rows, d, h, &st);
    run_composed(F, yc.p, x, w1, b1, w2, b2, rows, d, h, &st);
    run_block(S, 0, ys.p, x, w1, b1, w2, b2, rows, d, h, &st);
    run_composed(S, ysc.p, x, w1, b1, w2, b2, rows, d, h, &st);
    if (st) {
        check(0, "block %s: status %d", shape, st);
    } else {
        check(same_bits(yf.p, yfp.p, rows * d), "packed block %s (%s): packed == unpacked",
              shape, F->path);
        check(same_bits(yf.p, yc.p, rows * d) && same_bits(ys.p, ysc.p, rows * d),
              "relu block %s: fused relu == linear + ffn_relu + linear (fast and scalar)",
              shape);
        if (special) {
            int ok = 1, u;
            for (u = 0; u < 2; u++) {
                const float *y = u ? yf.p : ys.p;
                for (i = 0; i < d; i++) {
                    if (i % 2 == 0 && !(y[i] == 0.0f && signbit(y[i]))) ok = 0;
                    if (rows > 1 && y[d + i] == y[d + i]) ok = 0;
                    if (rows > 2 && y[2 * d + i] != b2[i]) ok = 0;
                    if (rows > 3 && y[3 * d + i] != b2[i]) ok = 0;
                }
            }
            check(ok, "relu special %s: -0.0 kept, NaN kept, -inf -> 0 (both paths)", shape);
        }
    }
    check(gb_intact(&yf) && gb_intact(&yfp) && gb_intact(&yc) && gb_intact(&ys) &&
              gb_intact(&ysc),
          "bounds block %s: guards intact (outputs and scratch)", shape);
    free(x); free(w1); free(w2); free(b1); free(b2);
    gb_free(&yf); gb_free(&yfp); gb_free(&yc); gb_free(&ys); gb_free(&ysc);
}

/* y == x for the block, on the fast path. */
static void test_block_inplace(const test_unit *F, size_t rows, size_t d, size_t h)
{
    float *x = rand_floats(rows * d, 1.0f), *w1 = rand_floats(h * d, 0.5f);
    float *w2 = rand_floats(d * h, 0.5f), *b1 = rand_floats(h, 0.5f);
    float *b2 = rand_floats(d, 0.5f);
    gbuf xy = gb_alloc(rows * d), y = gb_alloc(rows * d);
    int st = 0;
    memcpy(xy.p, x, rows * d * sizeof(float));
    run_block(F, 0, y.p, x, w1, b1, w2, b2, rows, d, h, &st);
    run_block(F, 1, xy.p, xy.p, w1, b1, w2, b2, rows, d, h, &st);
    check(!st && same_bits(y.p, xy.p, rows * d) && gb_intact(&y) && gb_intact(&xy),
          "inplace block rows %zu d %zu h %zu: y == x", rows, d, h);
    free(x); free(w1); free(w2); free(b1); free(b2);
    gb_free(&xy); gb_free(&y);
}

/* 1, 2 and 3 threads: the same bits (the block unpacked, packed, unpacked; fc1 alone). */
static void test_threads(const test_unit *F, size_t rows, size_t d, size_t h)
{
    float *x = rand_floats(rows * d, 1.0f), *w1 = rand_floats(h * d, 0.5f);
    float *w2 = rand_floats(d * h, 0.5f), *b1 = rand_floats(h, 0.5f);
    float *b2 = rand_floats(d, 0.5f);
    gbuf y[3], l[3];
    int t, st = 0, ok = 1;
    for (t = 0; t < 3; t++) {
        y[t] = gb_alloc(rows * d);
        l[t] = gb_alloc(rows * h);
        F->set_threads(t + 1);
        run_block(F, t == 1, y[t].p, x, w1, b1, w2, b2, rows, d, h, &st);
        if (!st) st = F->linear(l[t].p, x, w1, b1, rows, d, h);
    }
    F->set_threads(2);
    for (t = 0; t < 3; t++) {
        ok = ok && gb_intact(&y[t]) && gb_intact(&l[t]);
        if (t) ok = ok && same_bits(y[0].p, y[t].p, rows * d) &&
                    same_bits(l[0].p, l[t].p, rows * h);
    }
    check(!st && ok, "threads rows %zu d %zu h %zu: 1, 2, 3 threads give the same bits",
          rows, d, h);
    for (t = 0; t < 3; t++) { gb_free(&y[t]); gb_free(&l[t]); }
    free(x); free(w1); free(w2); free(b1); free(b2);
}

/* ---- argument checks of the packed API (both units) ---- */
static void test_errors(const test_unit *U)
{
    float w[6 * 20], x[3 * 6], b[20], big[2 * 16 * 6 + 8];
    gbuf y = gb_alloc(3 * 20), p = gb_alloc(2 * 16 * 6), s = gb_alloc(3 * 20);
    const size_t pn = 2 * 16 * 6, huge = (size_t)-1 / 2;
    int ok = 1;
    size_t i;
    for (i = 0; i < sizeof w / sizeof w[0]; i++) w[i] = 1.0f;
    for (i = 0; i < sizeof x / sizeof x[0]; i++) x[i] = 1.0f;
    for (i = 0; i < 20; i++) b[i] = 0.0f;

    ok &= U->pack_floats(6, 20) == pn && U->pack_floats(0, 20) == 0 &&
          U->pack_floats(6, 0) == 0 && U->pack_floats(huge, 20) == 0 &&
          U->pack_floats(3, huge) == 0 && U->pack_floats(1, 1) == 16;
    check(ok, "errors %s: ffn_pack_floats sizes, 0 for zero and overflow", U->path);

    ok = U->pack_weight(NULL, pn, w, 6, 20) == T_NULL &&
         U->pack_weight(p.p, pn, NULL, 6, 20) == T_NULL &&
         U->pack_weight(p.p, pn, w, 0, 20) == T_ZERO &&
         U->pack_weight(p.p, pn, w, 6, 0) == T_ZERO &&
         U->pack_weight(p.p, pn, w, huge, 20) == T_OVERFLOW &&
         U->pack_weight(p.p, pn - 1, w, 6, 20) == T_SCRATCH &&
         U->pack_weight(p.p, 0, w, 6, 20) == T_SCRATCH &&
         U->pack_weight(big, pn, big + 4, 6, 1) == T_ALIAS;
    check(ok && gb_untouched(&p), "errors %s: ffn_pack_weight NULL/zero/overflow/size/alias, "
          "nothing written", U->path);

    if (U->pack_weight(p.p, pn, w, 6, 20) != T_OK) ok = 0;
    ok = U->linear_packed(NULL, x, p.p, b, 3, 6, 20) == T_NULL &&
         U->linear_packed(y.p, NULL, p.p, b, 3, 6, 20) == T_NULL &&
         U->linear_packed(y.p, x, NULL, b, 3, 6, 20) == T_NULL &&
         U->linear_packed(y.p, x, p.p, b, 0, 6, 20) == T_ZERO &&
         U->linear_packed(y.p, x, p.p, b, 3, 0, 20) == T_ZERO &&
         U->linear_packed(y.p, x, p.p, b, 3, 6, 0) == T_ZERO &&
         U->linear_packed(y.p, x, p.p, b, huge, 6, 20) == T_OVERFLOW &&
         U->linear_packed(y.p, x, p.p, b, 3, huge, 20) == T_OVERFLOW &&
         /* y overlaps the padded part of the packed weight */
         U->linear_packed(p.p + 16 * 6 - 1, x, p.p, b, 1, 6, 1) == T_ALIAS &&
         U->linear_packed(y.p, y.p, p.p, b, 3, 6, 20) == T_ALIAS &&
         U->linear_packed(y.p, x, p.p, y.p + 5, 3, 6, 20) == T_ALIAS;
    check(ok && gb_untouched(&y), "errors %s: ffn_linear_packed NULL/zero/overflow/alias, "
          "nothing written", U->path);

    ok = U->block_packed(NULL, x, p.p, b, p.p, b, 3, 6, 20, s.p, 60) == T_NULL &&
         U->block_packed(y.p, x, NULL, b, p.p, b, 3, 6, 20, s.p, 60) == T_NULL &&
         U->block_packed(y.p, x, p.p, b, NULL, b, 3, 6, 20, s.p, 60) == T_NULL &&
         U->block_packed(y.p, x, p.p, b, p.p, b, 3, 6, 20, NULL, 60) == T_NULL &&
         U->block_packed(y.p, x, p.p, b, p.p, b, 0, 6, 20, s.p, 60) == T_ZERO &&
         U->block_packed(y.p, x, p.p, b, p.p, b, 3, 6, 0, s.p, 60) == T_ZERO &&
         U->block_packed(y.p, x, p.p, b, p.p, b, huge, 6, 20, s.p, 60) == T_OVERFLOW &&
         U->block_packed(y.p, x, p.p, b, p.p, b, 3, 6, 20, s.p,
                         U->scratch_floats(3, 6, 20) - 1) == T_SCRATCH &&
         U->block_packed(y.p, x, p.p, b, p.p, b, 3, 6, 20, y.p, 60) == T_ALIAS &&
         U->block_packed(s.p, x, p.p, b, p.p, b, 3, 6, 20, s.p, 60) == T_ALIAS &&
         U->block_packed(y.p, x, p.p, y.p, p.p, b, 3, 6, 20, s.p, 60) == T_ALIAS;
    check(ok && gb_untouched(&y) && gb_untouched(&s),
          "errors %s: ffn_block_packed NULL/zero/overflow/scratch/alias, nothing written",
          U->path);
    gb_free(&y); gb_free(&p); gb_free(&s);
}

/* A hash of one block's output bits: every SIMD path (and the scalar path where
   the target has a fast fma) computes the same FMA chains, so this line should read
   the same on AVX2, AVX-512 and NEON builds. Printed, not checked. */
static void fingerprint(const test_unit *U)
{
    const size_t rows = 23, d = 72, h = 200;
    float *x = rand_floats(rows * d, 1.0f), *w1 = rand_floats(h * d, 0.5f);
    float *w2 = rand_floats(d * h, 0.5f), *b1 = rand_floats(h, 0.5f);
    float *b2 = rand_floats(d, 0.5f), *y = alloc_exact(rows * d);
    uint32_t hash = 2166136261u, u;
    int st = 0;
    size_t i;
    run_block(U, 1, y, x, w1, b1, w2, b2, rows, d, h, &st);
    for (i = 0; i < rows * d; i++) {
        memcpy(&u, &y[i], sizeof u);
        hash = (hash ^ u) * 16777619u;
    }
    printf("# fingerprint %s: block rows %zu d %zu h %zu -> %08lx (status %d)\n", U->path,
           rows, d, h, (unsigned long)hash, st);
    free(x); free(w1); free(w2); free(b1); free(b2); free(y);
}

int main(void)
{
    const test_unit *S = test_ffn_unit_scalar(), *F = test_ffn_unit_fast();
    acc_stats st = {0, 0, 0, 0, 0};
    size_t i, r;
    static const size_t special_in[] = {1, 2, 15, 16, 17, 31, 33, 64, 100, 257};
    static const size_t special_out[] = {1, 2, 15, 16, 17, 48, 63, 64, 65, 130};

    printf("# fast path: %s%s; scalar path: %s\n", F->path,
           F->openmp ? " + OpenMP" : "", S->path);
    check(strcmp(S->path, "scalar") == 0, "paths: FFN_NO_SIMD unit says \"scalar\"");

    test_errors(S);
    test_errors(F);
    test_layout(S, 5, 33);
    test_layout(F, 5, 33);
    test_layout(F, 37, 16);
    test_layout(F, 300, 1);

    /* rows 1..17 with awkward in/out, then random shapes, then long reductions */
    for (r = 1; r <= 17; r++)
        test_linear_shape(S, F, r, special_in[r % 10], special_out[(r * 7) % 10], r % 3 != 0,
                          &st);
    for (i = 0; i < 40; i++) { /* (sequenced: argument evaluation order varies) */
        size_t rows = i % 4 == 0 ? rnd_upto(200) : rnd_upto(17);
        size_t in = rnd_upto(300), out = rnd_upto(150);
        test_linear_shape(S, F, rows, in, out, (int)(i % 5 != 0), &st);
    }
    test_linear_shape(S, F, 1, 4096, 40, 1, &st);
    test_linear_shape(S, F, 7, 3000, 33, 1, &st);
    test_linear_shape(S, F, 13, 1024, 64, 0, &st);
    test_linear_shape(S, F, 50, 700, 1, 1, &st);
    test_linear_shape(S, F, 2, 2500, 300, 1, &st);
    {
        double rms_s = sqrt(st.sq_s / (double)st.n), rms_f = sqrt(st.sq_f / (double)st.n);
        check(st.max_f <= 1.0 && rms_f <= rms_s * 1.02,
              "accuracy summary over %zu elements: error / bound max fast %.3f scalar %.3f,"
              " rms fast %.4f scalar %.4f (fast must not be worse)",
              st.n, st.max_f, st.max_s, rms_f, rms_s);
    }

    /* the block */
    test_block_shape(S, F, 1, 16, 64, 0);
    test_block_shape(S, F, 5, 17, 33, 1);
    test_block_shape(S, F, 7, 40, 100, 1);
    test_block_shape(S, F, 13, 64, 256, 0);
    test_block_shape(S, F, 19, 33, 65, 1);
    test_block_shape(S, F, 64, 96, 200, 0);
    for (i = 0; i < 6; i++) {
        size_t rows = rnd_upto(40), d = rnd_upto(80), h = rnd_upto(160);
        test_block_shape(S, F, rows, d, h, (int)(i % 2));
    }
    test_block_inplace(F, 9, 24, 50);
    test_block_inplace(F, 70, 130, 300);
    test_block_inplace(F, 300, 64, 96);  /* threads share out columns (<= 256 rows each) */
    test_block_inplace(F, 1100, 64, 96); /* threads share out rows */

    fingerprint(F);

    /* thread counts: shapes above the parallel threshold */
    if (F->openmp) {
        test_threads(F, 1, 1024, 2048);
        test_threads(F, 37, 200, 333);
        test_threads(F, 130, 256, 1024);
        test_threads(F, 600, 100, 260);
        test_threads(F, 1000, 64, 96);  /* rows shared out at 2 and 3 threads */
    } else {
        printf("# threads: the fast unit has no OpenMP, not tested\n");
    }

    printf("%d passed, %d failed\n", n_pass, n_fail);
    return n_fail ? 1 : 0;
}

#endif /* TEST_FFN_UNIT */

/* tests/test_ffn_paths.c - every path of ffn.h that this build and CPU run (AVX-512,
   AVX2, NEON; OpenMP if on) against its scalar path and against float64. No goldens.

     cc -std=c99 -O2 tests/test_ffn_paths.c support/unit.c -lm && ./a.out   (any flags)

   For each path P and many shapes (rows 1..17 and more, in/out not multiples of 16, one
   output column, long reductions), P against the scalar path:
     same bits  the Linear and the block (plain and packed) and the packing (every path
                computes the same FMA chains); each trainer of features/ (FEATURE_PATHS:
                the blocks' train forwards and backwards) in every output
     accuracy   the error against float64 within sqrt(K) 2^-23 S per element (S = |b| +
                sum |x||w|); ratios printed
     packed     the packed forms give the plain forms' bits; the documented layout
     threads    1, 2 and 3 threads the same bits (OpenMP builds), training included; in
                any build a pool of the test's (tasks in reverse on the calling thread)
                lent as 1..64 threads gives the bits of none
     relu       the fused ReLU == Linear + ReLU + Linear bit for bit; NaN, -0.0, -inf rows
                give torch's values
     bounds     guard floats around every output stay intact; inputs of their exact size
                (for ASan)
   (The packed API's argument checks are tests/test_errors.c's.) Output: one line per
   check, then "N passed, N failed"; exit 1 on failure. No timing: the machines are shared. */
#include "../ffn.h"
#include "../pe.h"
#include "../support/harness.h"

/* A path of ffn.h, by name, and a call on it: ON(P, call) makes the call on path P. */
typedef const char *path;
#define ON(P, call) (th_use(&th_ffn, P), call)

#define check th_check

/* ---- deterministic random numbers ---- */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rnd32(void) { return (uint32_t)(th_xorshift(&rng_state) >> 32); }
static size_t rnd_upto(size_t n) { return 1 + rnd32() % n; } /* 1..n */
static float rnd_unit(void) { return (float)((double)rnd32() / 4294967296.0 * 2.0 - 1.0); }

/* ---- buffers with guard floats on both sides ---- */
#define GUARD 64
static const uint32_t guard_bits = 0x7FBADBADu; /* a NaN payload nobody computes */

typedef struct { float *base, *p; size_t n; } gbuf;

/* Inputs: exactly n floats (so that ASan / valgrind see any read past the end). */
static float *alloc_exact(size_t n)
{
    float *p = (float *)malloc((n ? n : 1) * sizeof(float));
    if (!p) { fprintf(stderr, "out of memory\n"); exit(2); }
    return p;
}

static gbuf gb_alloc(size_t n)
{
    gbuf b;
    size_t i;
    b.n = n;
    b.base = alloc_exact(n + 2 * GUARD);
    b.p = b.base + GUARD;
    for (i = 0; i < n + 2 * GUARD; i++) memcpy(&b.base[i], &guard_bits, sizeof guard_bits);
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
static void gb_free(gbuf *b) { free(b->base); b->base = b->p = NULL; }
/* the n buffers b[0..n-1]: all intact; freed */
static int gbs_intact(const gbuf *b, int n)
{
    while (n--) if (!gb_intact(b++)) return 0;
    return 1;
}
static void gbs_free(gbuf *b, int n) { while (n--) gb_free(b++); }
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
    for (i = 0; i < n && th_same(a[i], b[i]); i++) {}
    return i == n;
}

/* ---- float64 reference and the contract's bounds ---- */
static double worst_seen; /* the largest |error| / (gamma_n S) of any element */

/* Max over elements of |y - exact| / (sqrt(K) 2^-23 S), the sum of its squares, and
   worst_seen against the worst-case bound. */
static void error_ratio(const float *y, const float *x, const float *w, const float *b,
                        size_t rows, size_t in, size_t out, double *max_ratio,
                        double *sum_sq)
{
    size_t r, o, k;
    const double unit = sqrt((double)in) * ldexp(1.0, -23);
    const double worst = th_gamma((double)th_sum_roundings(in));    /* the order's worst case */
    for (r = 0; r < rows; r++)
        for (o = 0; o < out; o++) {
            double exact = b ? b[o] : 0.0, s = b ? fabs(b[o]) : 0.0, ratio, err;
            for (k = 0; k < in; k++) {
                double t = (double)x[r * in + k] * (double)w[o * in + k];
                exact += t;
                s += fabs(t);
            }
            err = fabs((double)y[r * out + o] - exact);
            ratio = s > 0 ? err / (unit * s) : (y[r * out + o] == 0.0f ? 0.0 : INFINITY);
            if (s > 0 && err / (worst * s) > worst_seen) worst_seen = err / (worst * s);
            if (ratio > *max_ratio || ratio != ratio) *max_ratio = ratio;
            *sum_sq += ratio * ratio;
        }
}

/* ---- the inputs of a block: x (rows, d), w1 (h, d), w2 (d, h), b1 (h), b2 (d) ---- */
typedef struct { float *x, *w1, *w2, *b1, *b2; } blk_in;

static blk_in blk_make(size_t rows, size_t d, size_t h)
{
    blk_in b;
    b.x = rand_floats(rows * d, 1.0f);
    b.w1 = rand_floats(h * d, 0.5f);
    b.w2 = rand_floats(d * h, 0.5f);
    b.b1 = rand_floats(h, 0.5f);
    b.b2 = rand_floats(d, 0.5f);
    return b;
}
static void blk_free(blk_in *b) { free(b->x); free(b->w1); free(b->w2); free(b->b1); free(b->b2); }

/* ---- training: a train forward, then its backward from what it saved ---- */
enum { TR_Y, TR_H, TR_UH, TR_DX, TR_DW1, TR_DB1, TR_DWU, TR_DBU, TR_DW2, TR_DB2, TR_N };

typedef struct {
    size_t rows, d, h;
    float *x, *dy, *w[3], *b[3], *g0[TR_N]; /* w, b: fc1 / gate, up, fc2 / down */
} train_in;

/* A feature's training calls (a row of features/, FEATURE_PATHS_TRAIN): the scratch of
   its train forward and of its backward, and run: the forward into o[TR_Y], o[TR_H]
   (o[TR_UH]), then the backward into the gradients (on the path set). */
typedef struct {
    const char *name;
    size_t (*scratch)(size_t rows, size_t d, size_t h);
    size_t (*bwd_scratch)(size_t rows, size_t d, size_t h);
    int (*run)(int act, const train_in *t, gbuf *o, float *s, size_t ns, size_t nb);
} trainer;

#define FEATURE_PATHS
#include "../features/all.inc"
#undef FEATURE_PATHS

static const trainer trainers[] = {
#define FEATURE_PATHS_TRAIN
#include "../features/all.inc"
#undef FEATURE_PATHS_TRAIN
};
#define N_TRAINERS (int)(sizeof trainers / sizeof trainers[0])

/* ---- one Linear shape on path F and the scalar path S ---- */
typedef struct { double max_s, max_f, sq_s, sq_f; size_t n; } acc_stats;

static void test_linear_shape(path S, path F, size_t rows,
                              size_t in, size_t out, int with_bias, acc_stats *st)
{
    /* [0] on the scalar path S, [1] on F: y, y from the packed weights, the packing */
    const path on[2] = {S, F};
    float *x = rand_floats(rows * in, 1.0f), *w = rand_floats(out * in, 0.5f);
    float *b = with_bias ? rand_floats(out, 0.5f) : NULL;
    const size_t pn = ON(F, op_pack_floats(in, out)), n = rows * out;
    gbuf y[2], yp[2], wp[2];
    double ms = 0, mf = 0;
    int s[6], u;
    char shape[96];
    snprintf(shape, sizeof shape, "rows %zu in %zu out %zu %s", rows, in, out,
             with_bias ? "bias" : "no bias");
    for (u = 0; u < 2; u++) {
        y[u] = gb_alloc(n), yp[u] = gb_alloc(n), wp[u] = gb_alloc(pn);
        s[u] = ON(on[u], op_linear(y[u].p, x, w, b, rows, in, out, 0));
        s[2 + u] = ON(on[u], op_pack(wp[u].p, pn, w, in, out));
        s[4 + u] = ON(on[u], op_linear(yp[u].p, x, wp[u].p, b, rows, in, out, 1));
    }
    if (s[0] || s[1] || s[2] || s[3] || s[4] || s[5]) {
        check(0, "linear %s: status %d %d %d %d %d %d", shape, s[0], s[1], s[2], s[3], s[4],
              s[5]);
        goto done;
    }
    error_ratio(y[0].p, x, w, b, rows, in, out, &ms, &st->sq_s);
    error_ratio(y[1].p, x, w, b, rows, in, out, &mf, &st->sq_f);
    st->n += n;
    if (ms > st->max_s) st->max_s = ms;
    if (mf > st->max_f) st->max_f = mf;
    check(mf <= 1.0 && ms <= 1.0, "accuracy linear %s: max err / bound: %s %.3f, scalar %.3f",
          shape, F, mf, ms);
    check(same_bits(y[1].p, y[0].p, n) && same_bits(yp[1].p, yp[0].p, n),
          "same bits linear %s: %s == scalar, unpacked and packed", shape, F);
    check(same_bits(y[1].p, yp[1].p, n) && same_bits(y[0].p, yp[0].p, n) &&
              same_bits(wp[1].p, wp[0].p, pn),
          "packed linear %s: packed == unpacked (%s and scalar), same packing", shape, F);
    check(gbs_intact(y, 2) && gbs_intact(yp, 2) && gbs_intact(wp, 2),
          "bounds linear %s: guards intact", shape);
done:
    free(x); free(w); free(b);
    gbs_free(y, 2); gbs_free(yp, 2); gbs_free(wp, 2);
}

/* ---- the packed layout, as documented; its size is 0 where it overflows ---- */
static void test_layout(path U, size_t in, size_t out)
{
    float *w = rand_floats(out * in, 1.0f);
    size_t pn = ON(U, op_pack_floats(in, out)), panels = (out + 15) / 16, p, k, j, bad = 0;
    gbuf wp = gb_alloc(pn);
    int st = ON(U, op_pack(wp.p, pn, w, in, out));
    for (p = 0; p < panels; p++)
        for (k = 0; k < in; k++)
            for (j = 0; j < 16; j++) {
                size_t o = p * 16 + j;
                float want = o < out ? w[o * in + k] : 0.0f;
                if (memcmp(&wp.p[(p * in + k) * 16 + j], &want, sizeof want)) bad++;
            }
    check(st == FFN_OK && pn == panels * 16 * in && !bad && gb_intact(&wp) &&
              ON(U, op_pack_floats(3, (size_t)-1 / 2)) == 0,
          "layout %s in %zu out %zu: packed[(p*in+k)*16+j] == w[p*16+j][k], zero padded "
          "(out SIZE_MAX/2: size 0)", U, in, out);
    free(w);
    gb_free(&wp);
}

/* ---- the block: packed/unpacked, fused relu, threads, in place ---- */

/* fc2(relu(fc1(x))) from the Linear and the ReLU of path U. */
static void run_composed(path U, float *y, const float *x, const float *w1,
                         const float *b1, const float *w2, const float *b2, size_t rows,
                         size_t d, size_t h, int *status)
{
    float *hid = alloc_exact(rows * h);
    int st = ON(U, op_linear(hid, x, w1, b1, rows, d, h, 0));
    if (!st) st = ON(U, op_relu(hid, hid, rows * h));
    if (!st) st = ON(U, op_linear(y, hid, w2, b2, rows, h, d, 0));
    if (!*status) *status = st;
    free(hid);
}

static void test_block_shape(path S, path F, size_t rows,
                             size_t d, size_t h, int special)
{
    blk_in in = blk_make(rows, d, h);
    float *x = in.x, *w1 = in.w1, *w2 = in.w2, *b1 = in.b1, *b2 = in.b2;
    /* on F: the block, packed, composed of the Linear and ReLU; on S: plain, composed */
    gbuf o[5];
    float *yf, *yfp, *yc, *ys, *ysc;
    int st = 0;
    size_t i, k;
    char shape[80];
    for (k = 0; k < 5; k++) o[k] = gb_alloc(rows * d);
    yf = o[0].p, yfp = o[1].p, yc = o[2].p, ys = o[3].p, ysc = o[4].p;
    snprintf(shape, sizeof shape, "rows %zu d %zu h %zu%s", rows, d, h,
             special ? " +NaN/-0/-inf rows" : "");
    if (special) {
        /* Non-negative weights (column 0 of fc1 positive) make special rows exact:
           row 0 all -0.0, b1 = -0.0: every block of products sums to +0.0 (a block's
           chain starts from +0.0), so hidden = -0.0 + +0.0 = +0.0 and y = +0.0 where
           b2 = -0.0, as torch gives; row 1 with a NaN: hidden NaN, kept by relu, y NaN;
           row 2 starting with -inf: hidden -inf, relu 0, y == b2; row 3 very negative:
           hidden < 0, relu 0. */
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
    run_block(F, 0, yf, x, w1, b1, w2, b2, rows, d, h, &st);
    run_block(F, 1, yfp, x, w1, b1, w2, b2, rows, d, h, &st);
    run_composed(F, yc, x, w1, b1, w2, b2, rows, d, h, &st);
    run_block(S, 0, ys, x, w1, b1, w2, b2, rows, d, h, &st);
    run_composed(S, ysc, x, w1, b1, w2, b2, rows, d, h, &st);
    if (st) {
        check(0, "block %s: status %d", shape, st);
    } else {
        check(same_bits(yf, ys, rows * d), "same bits block %s: %s == scalar", shape, F);
        check(same_bits(yf, yfp, rows * d), "packed block %s (%s): packed == unpacked",
              shape, F);
        check(same_bits(yf, yc, rows * d) && same_bits(ys, ysc, rows * d),
              "relu block %s: fused relu == linear + relu + linear (%s and scalar)",
              shape, F);
        if (special) {
            int ok = 1, u;
            for (u = 0; u < 2; u++) {
                const float *y = u ? yf : ys;
                for (i = 0; i < d; i++) {
                    if (i % 2 == 0 && !(y[i] == 0.0f && !signbit(y[i]))) ok = 0;
                    if (rows > 1 && y[d + i] == y[d + i]) ok = 0;
                    if (rows > 2 && y[2 * d + i] != b2[i]) ok = 0;
                    if (rows > 3 && y[3 * d + i] != b2[i]) ok = 0;
                }
            }
            check(ok, "relu special %s: -0.0 rows give +0.0, NaN kept, -inf -> 0 (%s and scalar)",
                  shape, F);
        }
    }
    check(gbs_intact(o, 5), "bounds block %s: guards intact (outputs and scratch)", shape);
    blk_free(&in);
    gbs_free(o, 5);
}

/* y == x for the block. */
static void test_block_inplace(path F, size_t rows, size_t d, size_t h)
{
    blk_in in = blk_make(rows, d, h);
    gbuf xy = gb_alloc(rows * d), y = gb_alloc(rows * d);
    int st = 0;
    memcpy(xy.p, in.x, rows * d * sizeof(float));
    run_block(F, 0, y.p, in.x, in.w1, in.b1, in.w2, in.b2, rows, d, h, &st);
    run_block(F, 1, xy.p, xy.p, in.w1, in.b1, in.w2, in.b2, rows, d, h, &st);
    check(!st && same_bits(y.p, xy.p, rows * d) && gb_intact(&y) && gb_intact(&xy),
          "inplace block %s rows %zu d %zu h %zu: y == x", F, rows, d, h);
    blk_free(&in);
    gb_free(&xy); gb_free(&y);
}

/* ---- training: every trainer's outputs ---- */
static size_t train_size(const train_in *t, int k)
{
    switch (k) {
    case TR_Y: case TR_DX: return t->rows * t->d;
    case TR_H: case TR_UH: return t->rows * t->h;
    case TR_DB1: case TR_DBU: return t->h;
    case TR_DB2: return t->d;
    default: return t->h * t->d;
    }
}

static train_in train_make(size_t rows, size_t d, size_t h)
{
    train_in t;
    int k;
    t.rows = rows; t.d = d; t.h = h;
    t.x = rand_floats(rows * d, 1.0f);
    t.dy = rand_floats(rows * d, 1.0f);
    for (k = 0; k < 3; k++) {
        t.w[k] = rand_floats(h * d, 0.5f);
        t.b[k] = rand_floats(k < 2 ? h : d, 0.5f);
    }
    for (k = 0; k < TR_N; k++)      /* the .grad the backward adds to */
        t.g0[k] = k >= TR_DW1 ? rand_floats(train_size(&t, k), 0.25f) : NULL;
    return t;
}

static void train_free(train_in *t)
{
    int k;
    free(t->x); free(t->dy);
    for (k = 0; k < 3; k++) { free(t->w[k]); free(t->b[k]); }
    for (k = 0; k < TR_N; k++) free(t->g0[k]);
}

/* Trainer tr's forward and backward on path U into o[] (guarded; a block without an up
   projection leaves up_h and the up gradients alone). Returns the first failing status,
   99 for a scratch overrun. */
static int run_train(path U, const trainer *tr, int act, const train_in *t, gbuf *o)
{
    size_t ns, nb;
    gbuf s;
    int st, k;
    th_use(&th_ffn, U);
    ns = tr->scratch(t->rows, t->d, t->h);
    nb = tr->bwd_scratch(t->rows, t->d, t->h);
    s = gb_alloc(ns > nb ? ns : nb);
    for (k = 0; k < TR_N; k++) {
        o[k] = gb_alloc(train_size(t, k));
        if (t->g0[k]) memcpy(o[k].p, t->g0[k], train_size(t, k) * sizeof(float));
    }
    st = tr->run(act, t, o, s.p, ns, nb);
    if (!st && !gb_intact(&s)) st = 99;
    gb_free(&s);
    return st;
}

/* a and b (TR_N outputs of run_train) have the same bits and intact guards. */
static int train_same(const train_in *t, gbuf *a, gbuf *b)
{
    int k, ok = 1;
    for (k = 0; k < TR_N; k++)
        ok = ok && gb_intact(&a[k]) && gb_intact(&b[k]) &&
             same_bits(a[k].p, b[k].p, train_size(t, k));
    return ok;
}

/* Every trainer on path F and on scalar: the same bits in every output, guards intact. */
static void test_train_shape(path S, path F, size_t rows, size_t d, size_t h)
{
    static const int acts[3] = {FFN_RELU, FFN_GELU_TANH | FFN_FAST, FFN_SILU};
    train_in t = train_make(rows, d, h);
    gbuf of[TR_N], os[TR_N];
    int g, a;
    for (g = 0; g < N_TRAINERS; g++)
        for (a = 0; a < 3; a++) {
            const int sf = run_train(F, &trainers[g], acts[a], &t, of);
            const int ss = run_train(S, &trainers[g], acts[a], &t, os);
            check(!sf && !ss && train_same(&t, of, os), "same bits train %s act %d rows %zu d %zu "
                  "h %zu: forward (y, pre-activations) and backward (dx, dw, db) %s == scalar "
                  "(status %d)", trainers[g].name, acts[a], rows, d, h, F, sf ? sf : ss);
            gbs_free(of, TR_N);
            gbs_free(os, TR_N);
        }
    train_free(&t);
}

#ifdef _OPENMP
#include <omp.h>
/* 1, 2 and 3 threads: the same bits (the block unpacked, packed, unpacked; fc1 alone). */
static void test_threads(path F, size_t rows, size_t d, size_t h)
{
    blk_in in = blk_make(rows, d, h);
    gbuf y[3], l[3];
    int t, st = 0, ok;
    for (t = 0; t < 3; t++) {
        y[t] = gb_alloc(rows * d);
        l[t] = gb_alloc(rows * h);
        omp_set_num_threads(t + 1);
        run_block(F, t == 1, y[t].p, in.x, in.w1, in.b1, in.w2, in.b2, rows, d, h, &st);
        if (!st) st = ON(F, op_linear(l[t].p, in.x, in.w1, in.b1, rows, d, h, 0));
    }
    omp_set_num_threads(2);
    ok = gbs_intact(y, 3) && gbs_intact(l, 3);
    for (t = 1; t < 3; t++)
        ok = ok && same_bits(y[0].p, y[t].p, rows * d) && same_bits(l[0].p, l[t].p, rows * h);
    check(!st && ok, "threads rows %zu d %zu h %zu: 1, 2, 3 threads give the same bits",
          rows, d, h);
    gbs_free(y, 3);
    gbs_free(l, 3);
    blk_free(&in);
}

/* 1, 2 and 3 threads: the same bits in every output of the train forward and backward. */
static void test_train_threads(path F, size_t rows, size_t d, size_t h)
{
    train_in t = train_make(rows, d, h);
    gbuf o[3][TR_N];
    int g, n, st = 0;
    for (g = 0; g < N_TRAINERS; g++) {
        for (n = 0; n < 3; n++) {
            int s;
            omp_set_num_threads(n + 1);
            s = run_train(F, &trainers[g], FFN_SILU, &t, o[n]);
            if (!st) st = s;
        }
        omp_set_num_threads(2);
        check(!st && train_same(&t, o[0], o[1]) && train_same(&t, o[0], o[2]),
              "threads train %s rows %zu d %zu h %zu: 1, 2, 3 threads give the same bits (%s)",
              trainers[g].name, rows, d, h, F);
        for (n = 0; n < 3; n++) gbs_free(o[n], TR_N);
    }
    train_free(&t);
}
#endif

/* ---- threads lent by the caller, in any build ---- */

/* A pool that runs every task on the calling thread, the last index first: the bits
   must not depend on which thread runs a task, nor in which order (any pool may do
   either). It counts what it is given: never fewer than 2 tasks, nor more than it was
   lent as, and it was used at all where a call has more than one task. */
typedef struct { int threads, calls, bad; } serial_pool;

static void serial_for(void *pool, int n, ffn_task_fn task, void *arg)
{
    serial_pool *p = (serial_pool *)pool;
    int i;
    p->calls++;
    if (n < 2 || n > p->threads) p->bad++;
    for (i = n - 1; i >= 0; i--) task(arg, i);
}

/* T = 1..64 lent: the block (unpacked, packed) and fc1 alone give the bits of no pool;
   the train forwards and backwards at a few T (each a dozen GEMMs). */
static void test_pool_threads(path F, size_t rows, size_t d, size_t h)
{
    static const int train_t[] = {2, 3, 7, 16, 64};
    blk_in in = blk_make(rows, d, h);
    float *x = in.x, *w1 = in.w1, *w2 = in.w2, *b1 = in.b1, *b2 = in.b2;
    gbuf y[3], l[2];
    serial_pool p = {0, 0, 0};
    train_in tr = train_make(rows, d, h);
    gbuf o[2][TR_N];
    int t, k, g, st = 0, ok = 1, lent_ok = 1;
    for (k = 0; k < 3; k++) y[k] = gb_alloc(rows * d);
    for (k = 0; k < 2; k++) l[k] = gb_alloc(rows * h);
    th_use(&th_ffn, F);
    lend(NULL, NULL, 0);
    run_block(F, 0, y[0].p, x, w1, b1, w2, b2, rows, d, h, &st);
    run_block(F, 1, y[1].p, x, w1, b1, w2, b2, rows, d, h, &st);
    if (!st) st = ON(F, op_linear(l[0].p, x, w1, b1, rows, d, h, 0));
    ok = !st && same_bits(y[0].p, y[1].p, rows * d);
    for (t = 1; t <= 64 && ok; t++) {
        p.threads = t;
        lent_ok = lent_ok && lend(serial_for, &p, t) == FFN_OK;
        run_block(F, t % 2, y[2].p, x, w1, b1, w2, b2, rows, d, h, &st);
        if (!st) st = ON(F, op_linear(l[1].p, x, w1, b1, rows, d, h, 0));
        lend(NULL, NULL, 0);
        ok = !st && same_bits(y[0].p, y[2].p, rows * d) && same_bits(l[0].p, l[1].p, rows * h) &&
             gb_intact(&y[2]) && gb_intact(&l[1]);
    }
    check(ok && lent_ok && !p.bad && p.calls > 0,
          "pool threads rows %zu d %zu h %zu: lent as T = 1..64 (tasks in reverse), the block and "
          "fc1 give the bits of the calling thread (%d parallel-fors, %d wrong; up to T=%d; %s)",
          rows, d, h, p.calls, p.bad, t - 1, F);
    for (g = 0; g < N_TRAINERS; g++) {
        ok = !run_train(F, &trainers[g], FFN_GELU_TANH, &tr, o[0]);
        for (k = 0; k < (int)(sizeof train_t / sizeof train_t[0]) && ok; k++) {
            p.threads = train_t[k];
            lend(serial_for, &p, train_t[k]);
            ok = !run_train(F, &trainers[g], FFN_GELU_TANH, &tr, o[1]) &&
                 train_same(&tr, o[0], o[1]);
            lend(NULL, NULL, 0);
            gbs_free(o[1], TR_N);
        }
        check(ok && !p.bad, "pool threads train %s rows %zu d %zu h %zu: lent as 2 .. 64 "
              "threads, every output the bits of the calling thread (%s)",
              trainers[g].name, rows, d, h, F);
        gbs_free(o[0], TR_N);
    }
    train_free(&tr);
    gbs_free(y, 3);
    gbs_free(l, 2);
    blk_free(&in);
}

/* A hash of one block's output bits on path U: every path computes the same FMA
   chains, so every path must give the same value (and the same on every machine). */
static uint32_t fingerprint(path U)
{
    const size_t rows = 23, d = 72, h = 200;
    blk_in in;
    float *y;
    uint32_t hash = 2166136261u, u;
    int st = 0;
    size_t i;
    rng_state = 0x243F6A8885A308D3ull;
    in = blk_make(rows, d, h);
    y = alloc_exact(rows * d);
    run_block(U, 1, y, in.x, in.w1, in.b1, in.w2, in.b2, rows, d, h, &st);
    for (i = 0; i < rows * d; i++) {
        memcpy(&u, &y[i], sizeof u);
        hash = (hash ^ u) * 16777619u;
    }
    printf("# fingerprint %s: block rows %zu d %zu h %zu -> %08lx (status %d)\n", U,
           rows, d, h, (unsigned long)hash, st);
    blk_free(&in);
    free(y);
    return st ? 0 : hash;
}

/* Everything above for path F against the scalar path S, on the same random shapes
   and values for every F. */
/* for each row i of a table of shapes; its first three columns as arguments */
#define EACH(i, table) for (i = 0; i < sizeof table / sizeof table[0]; i++)
#define ROW3(table) table[i][0], table[i][1], table[i][2]

static void test_path(path F)
{
    path S = "scalar";
    acc_stats st = {0, 0, 0, 0, 0};
    size_t i, r;
    static const size_t special_in[] = {1, 2, 15, 16, 17, 31, 33, 64, 100, 257};
    static const size_t special_out[] = {1, 2, 15, 16, 17, 48, 63, 64, 65, 130};
    static const size_t layouts[][2] = {{5, 33}, {37, 16}, {300, 1}};
    /* long reductions: rows, in, out, bias */
    static const size_t longs[][4] = {{1, 4096, 40, 1}, {7, 3000, 33, 1}, {13, 1024, 64, 0},
                                      {50, 700, 1, 1}, {2, 2500, 300, 1}};
    /* the block: rows, d, h, special rows */
    static const size_t blocks[][4] = {{1, 16, 64, 0}, {5, 17, 33, 1}, {7, 40, 100, 1},
                                       {13, 64, 256, 0}, {19, 33, 65, 1}, {64, 96, 200, 0}};
    /* training: the train forwards and the backwards, rows 1, odd sizes, whole tiles;
       rows 530: past one row block, the backward packs W^T */
    static const size_t trains[][3] = {{1, 13, 37}, {7, 40, 100}, {13, 64, 256},
                                       {64, 96, 200}, {130, 33, 65}, {530, 9, 20}};
    /* thread counts lent by a pool of the caller's (any build): few rows (a grid of
       row x column ranges per layer), rows 600 (row ranges through both layers at 2
       threads, the grid above); the last: fc1 split, fc2 (one panel) one task */
    static const size_t pools[][3] = {{1, 256, 1024}, {8, 128, 1024}, {600, 32, 48},
                                      {1, 16, 4096}};
#ifdef _OPENMP
    /* thread counts: shapes above the parallel threshold; rows 1000: rows shared out at 2
       and 3 threads. Training: 37 rows, the backward's GEMMs in column blocks; 1100,
       dx's and the forward's rows shared out */
    static const size_t omps[][3] = {{1, 1024, 2048}, {37, 200, 333}, {130, 256, 1024},
                                     {600, 100, 260}, {1000, 64, 96}};
    static const size_t omp_trains[][3] = {{37, 200, 333}, {1100, 64, 96}};
#endif

    rng_state = 0x9E3779B97F4A7C15ull;
    printf("# path %s against scalar\n", F);
    EACH(i, layouts) test_layout(F, layouts[i][0], layouts[i][1]);

    /* rows 1..17 with awkward in/out, then random shapes, then long reductions */
    for (r = 1; r <= 17; r++)
        test_linear_shape(S, F, r, special_in[r % 10], special_out[(r * 7) % 10], r % 3 != 0,
                          &st);
    for (i = 0; i < 40; i++) { /* (sequenced: argument evaluation order varies) */
        size_t rows = i % 4 == 0 ? rnd_upto(200) : rnd_upto(17);
        size_t in = rnd_upto(300), out = rnd_upto(150);
        test_linear_shape(S, F, rows, in, out, (int)(i % 5 != 0), &st);
    }
    EACH(i, longs) test_linear_shape(S, F, ROW3(longs), (int)longs[i][3], &st);
    {
        double rms_s = sqrt(st.sq_s / (double)st.n), rms_f = sqrt(st.sq_f / (double)st.n);
        check(worst_seen <= 1.0, "worst-case bound: every error within gamma_n * S of the "
              "summation order (n = 79 at K = 3072): at most %.3f of it", worst_seen);
        check(st.max_f <= 1.0 && rms_f <= rms_s * 1.02,
              "accuracy summary over %zu elements: error / bound max %s %.3f scalar %.3f,"
              " rms %s %.4f scalar %.4f (%s must not be worse)",
              st.n, F, st.max_f, st.max_s, F, rms_f, rms_s, F);
    }

    EACH(i, blocks) test_block_shape(S, F, ROW3(blocks), (int)blocks[i][3]);
    for (i = 0; i < 6; i++) {
        size_t rows = rnd_upto(40), d = rnd_upto(80), h = rnd_upto(160);
        test_block_shape(S, F, rows, d, h, (int)(i % 2));
    }
    /* y == x; rows 300: threads share out columns (<= 256 rows each), 1100: out rows
       (one call each: gcc 12 -O3 loses the sizes' range over a table's loop, and warns of
       a memcpy of 2^64 - 512 bytes) */
    test_block_inplace(F, 9, 24, 50);
    test_block_inplace(F, 70, 130, 300);
    test_block_inplace(F, 300, 64, 96);
    test_block_inplace(F, 1100, 64, 96);
    EACH(i, trains) test_train_shape(S, F, ROW3(trains));
    if (strcmp(F, "scalar"))     /* (the scalar path runs on the calling thread) */
        EACH(i, pools) test_pool_threads(F, ROW3(pools));
#ifdef _OPENMP
    EACH(i, omps) test_threads(F, ROW3(omps));
    EACH(i, omp_trains) test_train_threads(F, ROW3(omp_trains));
#else
    printf("# threads: built without OpenMP, not tested\n");
#endif
}

/* FFN_FAST's activations over a spread of float bit patterns (one in 2^14 of all 2^32:
   every exponent, signs, denormals, +-inf, NaNs) plus a grid of [-12, 12] in 2^-8 steps,
   with lengths whose tails fall outside the vector loops: path F gives the scalar path's
   bits (NaN: a NaN), and the scalar ones are within the documented bound of float64
   (th_fast_bound, th_act_unit; non-finite where float64 is). */
static void test_fast_act(path F)
{
    enum { N = (1 << 18) + 6145 + 7 };
    float *x = alloc_exact(N), *ys = alloc_exact(N), *yf = alloc_exact(N);
    size_t i, bad_bits = 0, bad_bound = 0;
    int act;
    double worst = 0;
    for (i = 0; i < (size_t)1 << 18; i++) {
        const uint32_t u = (uint32_t)(i << 14) | (uint32_t)(i & 0x3FFF);
        memcpy(&x[i], &u, sizeof u);
    }
    for (; i < N; i++) x[i] = (float)((double)((long)i - (1L << 18) - 3072) / 256.0);
    for (act = FFN_GELU; act <= FFN_SIGMOID; act++) {
        bad_bits = bad_bound = 0;
        worst = 0;
        check(ON("scalar", op_act(ys, x, N, act | FFN_FAST)) == FFN_OK &&
                  ON(F, op_act(yf, x, N - 3, act | FFN_FAST)) == FFN_OK,
              "fast act %d on scalar and %s: status ok", act, F);
        for (i = 0; i < N - 3; i++)
            bad_bits += !th_same(ys[i], yf[i]);
        for (i = 0; i < N; i++) {
            const double r = th_act64(act, x[i]);
            int ok;
            if (!isfinite(r) || !isfinite(ys[i])) {
                ok = isnan(r) ? isnan(ys[i]) : ys[i] == r;
            } else {
                const double e = fabs(ys[i] - r) / th_act_unit(act, x[i]);
                if (e > worst) worst = e;
                ok = e <= th_fast_bound[act];
            }
            bad_bound += !ok;
        }
        check(bad_bits == 0, "fast act %d: %s == scalar bit for bit over %d inputs (%zu differ)",
              act, F, N - 3, bad_bits);
        check(bad_bound == 0, "fast act %d: within %.2f u of float64 (max %.3f u; %zu outside)",
              act, th_fast_bound[act], worst, bad_bound);
    }
    free(x);
    free(ys);
    free(yf);
}

int main(void)
{
    const char *paths[TH_MAX_PATHS];
    const int n = th_paths(&th_ffn, paths, stdout);
    const uint32_t want = fingerprint("scalar");
    int i, others = 0;
    test_layout("scalar", 5, 33);
    for (i = 0; i < n; i++) {
        if (strcmp(paths[i], "scalar") == 0) continue;
        others++;
        test_path(paths[i]);
        test_fast_act(paths[i]);
        check(fingerprint(paths[i]) == want && want != 0,
              "fingerprint %s == scalar's (the same FMA chains)", paths[i]);
    }
    if (!others) {   /* still the accuracy, packing and bounds checks */
        test_path("scalar");
        test_fast_act("scalar");
    }
    return th_summary();
}


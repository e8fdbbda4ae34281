/* fuzz/fuzz.c - the fuzz targets of pe.h, ffn.h, support/npy.h and examples/safetensors.h in
   one program: one per public function that has one (fzt_<function>, in its feature's piece
   in features/), one for the choice of path, one for the .npy reader, one for the
   .safetensors reader; fz_targets, below, from support/api.h.
   Linked with support/unit.c. With -DFZ_LIBFUZZER -fsanitize=fuzzer (tools/fuzz.sh):
       FZ_TARGET=<target> ./fuzz [libFuzzer flags] [CORPUS_DIR...]
   Without (any C99 or C++ compiler):
       fuzz CORPUS_DIR [TARGET]   every file of CORPUS_DIR/<target>/ (sorted) through its
                                  target: "replay: N targets, M inputs, 0 failed"
   Both: --list (the targets), --seeds (with their seeds' kind, tools/make_seeds.sh).
   A failed check prints what differs and aborts. Each input runs on scalar and on a
   non-scalar path chosen from its hash (TH_PATHS, e.g. "avx2 scalar", narrows the choice). */
/* 64-bit inode numbers and offsets on 32-bit hosts (stat fails with EOVERFLOW otherwise) */
#define _FILE_OFFSET_BITS 64

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef FZ_LIBFUZZER
#include <dirent.h>
#include <sys/stat.h>
#endif

#include "../pe.h"
#include "../ffn.h"
/* ffn.h's own erff, tanhf, expf (correctly rounded) and exact fmaf, from support/unit.c */
#include "../support/unit_math.h"
#define NPY_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define NPYDEF static __attribute__((unused))
#endif
#define NPY_IMPLEMENTATION
#include "../support/npy.h"
#include "../support/harness.h"

#include "../support/api.h"

#include "fz.h"
#define FEATURE_FUZZ
#include "../features/all.inc"
#undef FEATURE_FUZZ
#include "npy.inc"
#include "safetensors.inc"

/* ---- the train forwards -------------------------------------------------------------- */

static int fz_train_want(int gated, int packed, int act, const void *const *p, size_t rows,
                         size_t d, size_t h, size_t sf)
{
    size_t wb1 = h * d * 4, wb2 = wb1, hb = rows * h * 4, yb = rows * d * 4, ob[4], ib[7];
    const void *o[4], *in[7];
    int ni = 0;
    if (!fz_act_ok(act, 0)) return FFN_ERR_ARG;
    if (!p[FT_Y] || !p[FT_H] || (gated && !p[FT_UH]) || !p[FT_X] || !p[FT_W1] ||
        (gated && !p[FT_WU]) || !p[FT_W2] || !p[FT_S])
        return FFN_ERR_NULL;
    if (!rows || !d || !h) return FFN_ERR_ZERO_SIZE;
    if (!fz_fbytes_ok(rows, d) || !fz_fbytes_ok(rows, h) || !fz_fbytes_ok(h, d))
        return FFN_ERR_OVERFLOW;
    if (packed) {
        const size_t p1 = fz_pack_floats(d, h), p2 = fz_pack_floats(h, d);
        if (!p1 || !p2) return FFN_ERR_OVERFLOW;
        wb1 = p1 * 4;
        wb2 = p2 * 4;
    }
    if (sf < rows * h) return FFN_ERR_SCRATCH;
    o[0] = p[FT_Y]; ob[0] = yb;
    o[1] = p[FT_S]; ob[1] = hb;
    o[2] = p[FT_H]; ob[2] = hb;
    o[3] = gated ? p[FT_UH] : NULL; ob[3] = hb;
    if (p[FT_X] != p[FT_Y]) { in[ni] = p[FT_X]; ib[ni++] = yb; }
    in[ni] = p[FT_W1]; ib[ni++] = wb1;
    in[ni] = p[FT_B1]; ib[ni++] = h * 4;
    if (gated) {
        in[ni] = p[FT_WU]; ib[ni++] = wb1;
        in[ni] = p[FT_BU]; ib[ni++] = h * 4;
    }
    in[ni] = p[FT_W2]; ib[ni++] = wb2;
    in[ni] = p[FT_B2]; ib[ni++] = d * 4;
    return fz_aliased(o, ob, 4, in, ib, ni) ? FFN_ERR_ALIAS : FFN_OK;
}

/* The train forwards: act from the input (invalid ones and FFN_GPT_OSS too), the status
   contract with y == x allowed, no write on error; on success, on each path: y, h (and
   up_h) path == scalar == the documented summation order (fz_ffn_dot; y over act (times
   up) as fz_block_values / fz_gated_values check it, the ReLU block also against the
   exact value's bound), and the same bits as the Linear (packed or not) for h (up_h) and
   the block's forward with act for y (separate buffers); packed == the unpacked train
   forward. */
static int fz_train_call(int gated, int packed, int act, float *const *p, size_t rows, size_t d,
                         size_t h, size_t sf)
{
    return (gated ? fz_gated_train_call : fz_block_train_call)(packed, act, p, rows, d, h, sf);
}

static int fz_train(const uint8_t *data, size_t size, int gated, int packed)
{
    static const char *const bnames[FT_N] = { "y", "h", "up_h", "x", "w1", "b1", "w_up", "b_up",
                                              "w2", "b2", "scratch" };
    FZ_FRAME;
    size_t rows, d, h, need, sf, salloc;
    int want, st, pass, k, act, ib[FT_N];
    unsigned nul, mode;
    float *got[3][2] = { { NULL, NULL }, { NULL, NULL }, { NULL, NULL } };
    float *w[3] = { NULL, NULL, NULL }, *wc[3] = { NULL, NULL, NULL }, *bc[3], *xin;
    float *p[FT_N], *y2, *h2, *u2, *s2;
    fz_begin(&f, &m, data, size, &th_ffn);
    mode = fz_byte(&f);
    act = fz_act(&f);
    if (mode % 8 == 7) {                /* huge sizes: only the checks before any access */
        FZ_HUGES(&f, &rows, &d, &h);
        sf = fz_byte(&f) < 128 ? fz_size_huge(&f) : (size_t)-1;
        nul = fz_byte(&f);
        for (k = 0; k < FT_N; k++)
            p[k] = nul % 16 == (unsigned)k + 1 ||
                           (!gated && (k == FT_UH || k == FT_WU || k == FT_BU))
                       ? NULL : FZ_DUMMY(k % FZ_NDUMMY);
        want = fz_train_want(gated, packed, act, (const void *const *)p, rows, d, h, sf);
        FZ_CTX(NULL, "rows=%zu, d=%zu, h=%zu, scratch %zu, act %d", rows, d, h, sf, act);
        FZ_HUGE(fz_train_call(gated, packed, act, p, rows, d, h, sf));
    }
    f.profile = fz_byte(&f);
    rows = fz_dim(&f, mode % 8 == 6 ? 3 : 14);
    d = fz_dim(&f, mode % 8 == 6 ? 160 : 40);
    h = fz_dim(&f, mode % 8 == 6 ? 300 : 72);
    need = rows && d && h ? rows * h : 0;
    sf = fz_scratch_arg(&f, need, 8, &salloc);
    /* nul: 1..11 that buffer NULL (the biases allowed), 64..79 all biases NULL */
    nul = fz_byte(&f);
    for (k = 0; k < FT_N; k++) {
        const int wk = k == FT_W1 || k == FT_WU ? 1 : k == FT_W2 ? 2 : 0;
        const int bias = k == FT_B1 || k == FT_BU || k == FT_B2;
        size_t bytes = k == FT_Y || k == FT_X ? rows * d : k == FT_H || k == FT_UH ? rows * h
                     : k == FT_S ? salloc : k == FT_B2 ? d : bias ? h : 0;
        if (wk) bytes = packed ? fz_pack_floats(wk == 1 ? d : h, wk == 1 ? h : d) : h * d;
        ib[k] = -1;
        if (!gated && (k == FT_UH || k == FT_WU || k == FT_BU)) continue;
        ib[k] = fz_add_buf(&m, bnames[k], bytes * 4, 4,
                           k == FT_Y || k == FT_H || k == FT_UH || k == FT_S,
                           nul == (unsigned)k + 1 || (bias && nul >= 64 && nul < 80));
    }
    fz_place(&m, &f);
    if (m.b[ib[FT_X]].p) fz_fill_floats(&f, m.b[ib[FT_X]].p, rows * d);
    if (d && h)
        for (k = 0; k < 3; k++) {
            const int at = k == 0 ? FT_W1 : k == 1 ? FT_WU : FT_W2;
            const size_t in = k < 2 ? d : h, out = k < 2 ? h : d;
            if (ib[at] < 0) continue;
            w[k] = (float *)fz_malloc(out * in * 4);
            fz_fill_floats(&f, w[k], out * in);
            fz_put_weight(&m, ib[at], w[k], in, out, packed, &f);
        }
    for (k = FT_B1; k <= FT_B2; k += 2)
        if (ib[k] >= 0 && m.b[ib[k]].p) fz_fill_floats(&f, m.b[ib[k]].p, k == FT_B2 ? d : h);
    fz_snapshot(&m);
    for (k = 0; k < FT_N; k++)
        p[k] = FZ_F(ib[k]);
    want = fz_train_want(gated, packed, act, (const void *const *)p, rows, d, h, sf);
    FZ_CTX(&m, "rows=%zu, d=%zu, h=%zu, scratch %zu of %zu, act %d", rows, d, h, sf, need, act);
    m.wr[ib[FT_S]] = need * 4;
    for (pass = 0; pass < 2; pass++) {
        fz_pass(&f, &m, pass);
        st = fz_train_call(gated, packed, act, p, rows, d, h, sf);
        fz_passed(&f, &m, pass, st, want, name, ctx, 0, NULL);
        for (k = 0; k < 3 && st == FFN_OK; k++)
            if (k < 2 || gated)
                got[k][pass] = (float *)fz_copy(&m, ib[k == 0 ? FT_Y : k == 1 ? FT_H : FT_UH]);
    }
    if (want != FFN_OK) {
        for (k = 0; k < 3; k++) free(w[k]);
        return fz_end(&m, NULL);
    }
    xin = FZ_IN(ib[FT_X]);   /* the inputs as they were */
    for (k = 0; k < 3; k++) {
        const int at = k == 0 ? FT_W1 : k == 1 ? FT_WU : FT_W2;
        bc[k] = FZ_IN(ib[at + 1]);
        wc[k] = packed ? FZ_IN(ib[at]) : w[k];
    }
    /* the pre-activations: the documented order, bit for bit */
    for (k = 1; k < (gated ? 3 : 2); k++) {
        float *const *g = got[k];
        const float *wk = w[k == 1 ? 0 : 1], *bk = bc[k == 1 ? 0 : 1];
        size_t r, j;
        for (r = 0; r < rows; r++)
            for (j = 0; j < h; j++)
                fz_same3(&f, k == 1 ? "h (gate_h)" : "up_h", ctx, r * h + j, g[0][r * h + j],
                         g[1][r * h + j],
                         fz_ffn_dot(xin + r * d, wk + j * d, 1, d, bk ? bk[j] : 0.0f),
                         "the FMA chain");
    }
    if (gated) {
        const float *wp3[3], *bp3[3];
        for (k = 0; k < 3; k++) { wp3[k] = w[k]; bp3[k] = bc[k]; }
        fz_gated_values(&f, name, ctx, got[0], xin, wp3, bp3, rows, d, h, act);
    } else {
        fz_block_values(&f, name, ctx, got[0], xin, w[0], bc[0], w[2], bc[2], rows, d, h, act);
    }
    /* the same bits as the public calls, on each path (separate buffers) */
    y2 = (float *)fz_malloc(rows * d * 4);
    h2 = (float *)fz_malloc(rows * h * 4);
    u2 = (float *)fz_malloc(rows * h * 4);
    s2 = (float *)fz_malloc(2 * need * 4);
    for (pass = 0; pass < 2; pass++) {
        fz_pass(&f, NULL, pass);
        st = fz_linear_call(packed, h2, xin, wc[0], bc[0], rows, d, h);
        if (!st && gated)
            st = fz_gated_call(packed, act, y2, xin, (const float *const *)wc,
                               (const float *const *)bc, rows, d, h, s2, 2 * need);
        else if (!st)
            st = fz_block_call(packed, 1, act, y2, xin, wc[0], bc[0], wc[2], bc[2], rows, d, h,
                               s2, need);
        if (!st && gated) st = fz_linear_call(packed, u2, xin, wc[1], bc[1], rows, d, h);
        fz_eq_on_path(&f, name, ctx, st, got[0], y2, rows * d, pass, "the block's forward");
        fz_eq_on_path(&f, name, ctx, 0, got[1], h2, rows * h, pass, "the Linear (gate / fc1)");
        if (gated) fz_eq_on_path(&f, name, ctx, 0, got[2], u2, rows * h, pass, "the Linear (up)");
        if (packed) {   /* the unpacked train forward */
            float *q[FT_N];
            for (k = 0; k < FT_N; k++) q[k] = NULL;
            q[FT_Y] = y2; q[FT_H] = h2; q[FT_UH] = gated ? u2 : NULL; q[FT_X] = xin;
            q[FT_W1] = w[0]; q[FT_B1] = bc[0]; q[FT_WU] = w[1]; q[FT_BU] = bc[1];
            q[FT_W2] = w[2]; q[FT_B2] = bc[2]; q[FT_S] = s2;
            st = fz_train_call(gated, 0, act, q, rows, d, h, need);
            fz_eq_on_path(&f, name, ctx, st, got[0], y2, rows * d, pass, "the unpacked one: y");
            fz_eq_on_path(&f, name, ctx, 0, got[1], h2, rows * h, pass, "the unpacked one: h");
        }
    }
    for (k = 0; k < 3; k++) {
        free(w[k]); free(got[k][0]); free(got[k][1]);
    }
    free(y2); free(h2); free(u2); free(s2);
    return fz_end(&m, NULL);
}

/* ---- the backwards --------------------------------------------------------------------- */

/* The scratch count, independently: (gated) rows max(d, h), two rows h buffers, the larger
   of the two layer shapes' Linear backward scratch (fz_lb_need); 0 when a size is 0
   or any count's bytes overflow. */
static size_t fz_bwd_need(int gated, size_t rows, size_t d, size_t h)
{
    const size_t l1 = fz_lb_need(rows, d, h), l2 = fz_lb_need(rows, h, d), max = (size_t)-1 / 4;
    size_t n, lead;
    if (!l1 || !l2 || !fz_fbytes_ok(rows, h)) return 0;
    n = rows * h;
    lead = gated ? rows * (d > h ? d : h) : 0;      /* rows d fits: l1 holds x^T packed */
    if (n > (max - lead) / 2 || (l1 > l2 ? l1 : l2) > max - lead - 2 * n) return 0;
    return lead + 2 * n + (l1 > l2 ? l1 : l2);
}

/* act first (FFN_GPT_OSS refused); NULL: the inputs, the scratch, or every output; ZERO_SIZE;
   OVERFLOW (the buffers, the scratch count); SCRATCH; ALIAS: no output (the scratch among
   them) overlaps another or an input. */
static int fz_bwd_want(int gated, int act, const void *const *p, size_t rows, size_t d, size_t h,
                       size_t sf)
{
    size_t b[FB_N], need;
    int a, any = 0;
    if (!fz_act_ok(act, 0)) return FFN_ERR_ARG;
    for (a = FB_DX; a <= FB_DB2; a++) any |= p[a] != NULL;
    if (!p[FB_DY] || !p[FB_X] || !p[FB_H] || (gated && !p[FB_UH]) || !p[FB_W1] ||
        (gated && !p[FB_WU]) || !p[FB_W2] || !p[FB_S] || !any)
        return FFN_ERR_NULL;
    if (!rows || !d || !h) return FFN_ERR_ZERO_SIZE;
    if (!fz_fbytes_ok(rows, d) || !fz_fbytes_ok(rows, h) || !fz_fbytes_ok(h, d))
        return FFN_ERR_OVERFLOW;
    need = fz_bwd_need(gated, rows, d, h);
    if (!need) return FFN_ERR_OVERFLOW;
    if (sf < need) return FFN_ERR_SCRATCH;
    b[FB_DX] = b[FB_DY] = b[FB_X] = rows * d * 4;
    b[FB_DW1] = b[FB_DWU] = b[FB_DW2] = b[FB_W1] = b[FB_WU] = b[FB_W2] = h * d * 4;
    b[FB_DB1] = b[FB_DBU] = h * 4;
    b[FB_DB2] = d * 4;
    b[FB_H] = b[FB_UH] = rows * h * 4;
    b[FB_S] = need * 4;
    /* the outputs against each other, the inputs and the scratch; the scratch, the inputs */
    return fz_aliased(p, b, FB_DB2 + 1, p + FB_DY, b + FB_DY, FB_N - FB_DY) ||
                   fz_aliased(p + FB_S, b + FB_S, 1, p + FB_DY, b + FB_DY, FB_S - FB_DY)
               ? FFN_ERR_ALIAS : FFN_OK;
}

static int fz_bwd_call(int gated, int act, float *const *p, size_t rows, size_t d, size_t h,
                       size_t sf)
{
    return (gated ? fz_gated_bwd_call : fz_block_bwd_call)(act, p, rows, d, h, sf);
}

/* The backward composed of the public calls, on the current path, into o[] (the outputs
   the call under test got; dw / db start from what they held): the block the activation,
   the Linear backward (fc2), the activation's backward, the Linear backward (fc1); the
   gated one the activation, p = a * up, the Linear backward (down), du = dp * a, dp * up
   through the activation's backward, the Linear backward (gate, up), dx their sum. */
static FZ_NOCOV void fz_bwd_composed(int gated, int act, float *const *o, const float *const *in,
                                     size_t rows, size_t d, size_t h)
{
    const size_t n = rows * h, ls = fz_lb_need(rows, d, h) > fz_lb_need(rows, h, d)
                                        ? fz_lb_need(rows, d, h) : fz_lb_need(rows, h, d);
    float *a = (float *)fz_malloc(n * 4 + 4), *g = (float *)fz_malloc(n * 4 + 4);
    float *u = (float *)fz_malloc(n * 4 + 4), *t = (float *)fz_malloc(rows * d * 4 + 4);
    float *s = (float *)fz_malloc(ls * 4 + 4);
    size_t i;
    int st;
    st = fz_act_call(1, a, in[FB_H], n, act, NULL);
    if (gated)
        for (i = 0; i < n; i++) u[i] = a[i] * in[FB_UH][i];
    if (!st) st = fz_lb_call(g, o[FB_DW2], o[FB_DB2], in[FB_DY], gated ? u : a, in[FB_W2],
                                      rows, h, d, s, ls);
    if (gated)
        for (i = 0; i < n; i++) {
            u[i] = g[i] * a[i];                 /* du */
            g[i] = g[i] * in[FB_UH][i];         /* dp * up */
        }
    if (!st) st = fz_act_call(2, g, g, n, act, in[FB_H]);
    if (!st && (o[FB_DX] || o[FB_DW1] || o[FB_DB1]))
        st = fz_lb_call(o[FB_DX], o[FB_DW1], o[FB_DB1], g, in[FB_X], in[FB_W1], rows, d, h, s, ls);
    if (gated && !st)
        st = fz_lb_call(t, o[FB_DWU], o[FB_DBU], u, in[FB_X], in[FB_WU], rows, d, h, s, ls);
    if (gated && o[FB_DX])
        for (i = 0; i < rows * d; i++) o[FB_DX][i] = o[FB_DX][i] + t[i];
    FZ_CHECK(st == 0, "the public calls composed: %s", fz_status_name(&th_ffn, st));
    free(a); free(g); free(u); free(t); free(s);
}

/* The backwards: act from the input (invalid ones and
   FFN_GPT_OSS too), which outputs are NULL from the byte after it, the status contract, no
   write on error; on success every output given: path == scalar == the public calls
   composed on each path (fz_bwd_composed), the gradients added to what dw and db held. */
static int fz_backward(const uint8_t *data, size_t size, int gated)
{
    static const char *const bnames[FB_N] = { "dx", "dw1", "db1", "dw_up", "db_up", "dw2", "db2",
                                              "dy", "x", "h", "up_h", "w1", "w_up", "w2",
                                              "scratch" };
    FZ_FRAME;
    size_t rows, d, h, need, sf, salloc, i, sz[FB_N];
    int want, st, pass, k, act, ib[FB_N];
    unsigned nul, mode, skip;
    float *p[FB_N], *got[FB_DB2 + 1][2];
    fz_begin(&f, &m, data, size, &th_ffn);
    mode = fz_byte(&f);
    act = fz_act(&f);
    if (mode % 8 != 7) f.profile = fz_byte(&f);
    skip = fz_byte(&f) % 4 == 0 ? fz_byte(&f) : 0;  /* bit k: output k NULL */
    memset(got, 0, sizeof got);
    if (mode % 8 == 7) {                /* huge sizes: only the checks before any access */
        FZ_HUGES(&f, &rows, &d, &h);
        sf = fz_byte(&f) < 128 ? fz_size_huge(&f) : (size_t)-1;
        nul = fz_byte(&f);
        for (k = 0; k < FB_N; k++)
            p[k] = (k <= FB_DB2 && (skip >> k & 1)) || nul % 16 == (unsigned)k + 1 ||
                           (!gated && (k == FB_DWU || k == FB_DBU || k == FB_UH || k == FB_WU))
                       ? NULL : FZ_DUMMY(k % FZ_NDUMMY);
        want = fz_bwd_want(gated, act, (const void *const *)p, rows, d, h, sf);
        if (want == FFN_OK || want == FFN_ERR_ALIAS) return 0;
        FZ_CTX(NULL, "rows=%zu, d=%zu, h=%zu, scratch %zu, act %d, skip %u", rows,
               d, h, sf, act, skip);
        for (pass = 0; pass < 2; pass++) {
            fz_pass(&f, NULL, pass);
            i = (gated ? fz_gated_bwd_scratch : fz_block_bwd_scratch)(rows, d, h);
            FZ_CHECK(i == fz_bwd_need(gated, rows, d, h), "%s_scratch_floats(%zu, %zu, %zu) on "
                     "%s = %zu", name, rows, d, h, f.path[pass], i);
            st = fz_bwd_call(gated, act, p, rows, d, h, sf);
            fz_passed(&f, NULL, pass, st, want, name, ctx, 0, NULL);
        }
        return 0;
    }
    rows = fz_dim(&f, mode % 8 == 6 ? 30 : 14);
    d = fz_dim(&f, mode % 8 == 6 ? 100 : 40);
    h = fz_dim(&f, mode % 8 == 6 ? 130 : 72);
    need = fz_bwd_need(gated, rows, d, h);
    sf = fz_scratch_arg(&f, need, 8, &salloc);
    nul = fz_byte(&f);                  /* 7..14: that input (dy .. w2) or the scratch NULL */
    sz[FB_DX] = sz[FB_DY] = sz[FB_X] = rows * d;
    sz[FB_DW1] = sz[FB_DWU] = sz[FB_DW2] = sz[FB_W1] = sz[FB_WU] = sz[FB_W2] = h * d;
    sz[FB_DB1] = sz[FB_DBU] = h;
    sz[FB_DB2] = d;
    sz[FB_H] = sz[FB_UH] = rows * h;
    sz[FB_S] = salloc;
    for (k = 0; k < FB_N; k++) {
        ib[k] = -1;
        if (!gated && (k == FB_DWU || k == FB_DBU || k == FB_UH || k == FB_WU)) continue;
        ib[k] = fz_add_buf(&m, bnames[k], sz[k] * 4, 4, k <= FB_DB2 || k == FB_S,
                           (k <= FB_DB2 && (skip >> k & 1)) || (k > FB_DB2 && nul == (unsigned)k));
    }
    fz_place(&m, &f);
    for (k = FB_DW1; k < FB_S; k++)     /* the .grad so far, and the inputs */
        if (ib[k] >= 0 && m.b[ib[k]].p) fz_fill_floats(&f, m.b[ib[k]].p, sz[k]);
    fz_snapshot(&m);
    for (k = 0; k < FB_N; k++)
        p[k] = FZ_F(ib[k]);
    want = fz_bwd_want(gated, act, (const void *const *)p, rows, d, h, sf);
    FZ_CTX(&m, "rows=%zu, d=%zu, h=%zu, scratch %zu of %zu, act %d, skip %u", rows,
           d, h, sf, need, act, skip);
    m.wr[ib[FB_S]] = need * 4;
    for (pass = 0; pass < 2; pass++) {
        fz_pass(&f, &m, pass);
        i = (gated ? fz_gated_bwd_scratch : fz_block_bwd_scratch)(rows, d, h);
        FZ_CHECK(i == need, "%s_scratch_floats(%zu, %zu, %zu) on %s = %zu, want %zu", name, rows,
                 d, h, f.path[pass], i, need);
        st = fz_bwd_call(gated, act, p, rows, d, h, sf);
        fz_passed(&f, &m, pass, st, want, name, ctx, 0, NULL);
        for (k = 0; k <= FB_DB2 && st == FFN_OK; k++)
            if (p[k]) got[k][pass] = (float *)fz_copy(&m, ib[k]);
    }
    if (want == FFN_OK) {
        float *in[FB_N], *o[FB_DB2 + 1];
        for (k = 0; k < FB_N; k++)   /* the inputs, and dw / db as they were */
            in[k] = k != FB_S ? FZ_IN(ib[k]) : NULL;
        for (pass = 0; pass < 2; pass++) {
            fz_pass(&f, NULL, pass);
            for (k = 0; k <= FB_DB2; k++) {
                o[k] = NULL;
                if (!p[k]) continue;
                o[k] = (float *)fz_malloc(sz[k] * 4 + 4);
                if (k != FB_DX) memcpy(o[k], in[k], sz[k] * 4);
            }
            fz_bwd_composed(gated, act, o, (const float *const *)in, rows, d, h);
            for (k = 0; k <= FB_DB2; k++) {
                char what[64];
                if (!o[k]) continue;
                snprintf(what, sizeof what, "%s %s", name, bnames[k]);
                for (i = 0; i < sz[k]; i++)
                    if (pass == 0) fz_same3(&f, what, ctx, i, got[k][0][i], got[k][1][i], o[k][i],
                                            "the public calls composed");
                fz_eq_on_path(&f, what, ctx, 0, got[k], o[k], sz[k], pass,
                              "the public calls composed");
                free(o[k]);
            }
        }
    }
    for (k = 0; k <= FB_DB2; k++) { free(got[k][0]); free(got[k][1]); }
    return fz_end(&m, NULL);
}

/* ---- the scratch counts ------------------------------------------------------------ */

/* On each path: the forward's count (bwd: the backward's) is rows * hidden (gated:
   fz_gated_need; bwd: fz_bwd_need), 0 exactly when a size is 0 or a count's bytes
   overflow; small shapes: the call accepts that count and refuses one float less, and
   its outputs are zero (zero weights, bwd: zero inputs). */
static int fz_scratch_floats(const uint8_t *data, size_t size, int gated, int bwd)
{
    const char *name = fz_name;
    fz_t f;
    size_t rows, d, h, rh, want, sf, i;
    int pass, j;
    fz_begin(&f, NULL, data, size, &th_ffn);
    if (fz_byte(&f) % 2) {
        FZ_HUGES(&f, &rows, &d, &h);
    } else {
        rows = fz_dim(&f, 12);
        d = fz_dim(&f, 40);
        h = fz_dim(&f, 70);
    }
    rh = rows && d && h && fz_fbytes_ok(rows, h) ? rows * h : 0;
    want = bwd ? fz_bwd_need(gated, rows, d, h) : gated ? fz_gated_need(rows, d, h) : rh;
    for (pass = 0; pass < 2; pass++) {
        const char *path = fz_pass(&f, NULL, pass);
        const size_t got = (bwd ? gated ? fz_gated_bwd_scratch : fz_block_bwd_scratch
                                : gated ? fz_gated_scratch : fz_block_scratch)(rows, d, h);
        /* the block's forward: exact sizes; the backward: every buffer the largest */
        const size_t n = rows * d + h * d + rows * h, out = bwd ? n : rows * d;
        float *b[FB_N];
        FZ_CHECK(got == want, "%s(%zu, %zu, %zu) on %s = %zu, want %zu", name, rows, d, h,
                 path, got, want);
        if (!gated && !bwd)     /* the gated train forward's count is the block's */
            FZ_CHECK(fz_gated_train_scratch(rows, d, h) == rh, "the gated train forward's "
                     "count(%zu, %zu, %zu) on %s = %zu, want %zu", rows, d, h, path,
                     fz_gated_train_scratch(rows, d, h), rh);
        if (bwd ? !(want && rows <= 64 && d <= 256 && h <= 256)
                : !(rh && rows <= 64 && d <= 256 && h <= 256 && rows * d <= 4096 &&
                    h * d <= 16384 && rh <= 4096))
            continue;
        for (j = 0; j < FB_N; j++) {
            b[j] = (float *)fz_calloc(j == FB_S ? got : bwd ? n : j < 2 ? rows * d : h * d, 4);
        }
        for (i = 0; !bwd && i < rows * d; i++) b[1][i] = (float)i;     /* x */
        for (sf = got - 1; sf <= got; sf++) {
            const float *w[3], *bs[3] = { NULL, NULL, NULL };
            int st;
            w[0] = w[1] = b[2];
            w[2] = b[3];
            st = bwd ? fz_bwd_call(gated, FFN_SILU, b, rows, d, h, sf)
                 : gated ? fz_gated_call(0, FFN_SILU, b[0], b[1], w, bs, rows, d, h, b[FB_S], sf)
                 : fz_block_call(0, 0, FFN_RELU, b[0], b[1], b[2], NULL, b[3], NULL, rows, d,
                                 h, b[FB_S], sf);
            FZ_CHECK(st == (sf < got ? FFN_ERR_SCRATCH : FFN_OK), "%s on %s (%zu, %zu, %zu) "
                     "with %zu of %zu scratch floats: %s", name, path, rows, d, h, sf, got,
                     fz_status_name(&th_ffn, st));
        }
        for (j = 0; j <= (bwd ? FB_DB2 : 0); j++)
            for (i = 0; i < out; i++)
                FZ_CHECK(b[j][i] == 0.0f, "%s on %s: zero %s, output %d element %zu != 0",
                         name, path, bwd ? "inputs" : "weights", j, i);
        for (j = 0; j < FB_N; j++) free(b[j]);
    }
    return 0;
}

/* ---- the paths: both headers' path functions --------------------------------------- */

/* The path list of each header (*_path_name) and what *_set_path said of each name the
   first time. */
typedef struct {
    int n;
    const char *name[TH_MAX_PATHS];
    int st[TH_MAX_PATHS];
    const char *best;
} fz_path_list;

/* The list is the same as the first time (strings and statuses), unique, ends with
   "scalar" (which always runs) and then NULL; auto (and NULL) is the first path that runs
   (best first). */
static void fz_path_list_check(const th_lib *lib, fz_path_list *known)
{
    const char *name;
    int i, j;
    if (!known->n) {
        for (i = 0; (name = lib->name(i)) != NULL; i++) {
            FZ_CHECK(i < TH_MAX_PATHS, "%s_path_name: more than %d paths", lib->header, i);
            known->name[i] = name;
            known->st[i] = lib->set(name);
            if (!known->st[i] && !known->best) known->best = name;
        }
        known->n = i;
        FZ_CHECK(known->best, "%s: no path runs", lib->header);
    }
    for (i = 0; i < known->n; i++) {
        name = lib->name(i);
        FZ_CHECK(name && strcmp(name, known->name[i]) == 0, "%s_path_name(%d) = %s, was %s",
                 lib->header, i, name ? name : "NULL", known->name[i]);
        for (j = 0; j < i; j++)
            FZ_CHECK(strcmp(name, known->name[j]) != 0, "%s_path_name(%d) and (%d): %s",
                     lib->header, j, i, name);
    }
    FZ_CHECK(known->n > 0 && strcmp(known->name[known->n - 1], "scalar") == 0 &&
             known->st[known->n - 1] == 0 && lib->name(known->n) == NULL,
             "%s_path_name: %d paths, the last %s, then %s", lib->header, known->n,
             known->n ? known->name[known->n - 1] : "-",
             lib->name(known->n) ? lib->name(known->n) : "NULL");
    FZ_CHECK(lib->set(NULL) == 0 && strcmp(lib->now(), known->best) == 0,
             "%s_set_path(NULL): %s, want %s", lib->header, lib->now(), known->best);
}

/* name: 0, PATH or CPU (the same as the first time for a listed name; PATH for anything
   else but "auto", which gives the best); on failure the path does not change, on
   success it is name. */
static void fz_set_path_check(const th_lib *lib, const fz_path_list *known, const char *name)
{
    const int e_path = lib == &th_ffn ? (int)FFN_ERR_PATH : (int)PE_ERR_PATH;
    const int e_cpu = lib == &th_ffn ? (int)FFN_ERR_CPU : (int)PE_ERR_CPU;
    const char *before = lib->now(), *after;
    const char *want_path = strcmp(name, "auto") == 0 ? known->best : NULL;
    /* pe.h's path "avx2" was "avx" until 1.4: its path setter takes the old name for it */
    const char *as = lib == &th_pe && strcmp(name, "avx") == 0 ? "avx2" : name;
    int want = want_path ? 0 : e_path, st, i;
    for (i = 0; !want_path && i < known->n; i++)
        if (strcmp(as, known->name[i]) == 0) {
            want = known->st[i];
            want_path = known->name[i];
        }
    FZ_CHECK(want == 0 || want == e_path || want == e_cpu, "%s_set_path(\"%s\") = %s, not "
             "OK, PATH or CPU", lib->header, name, fz_status_name(lib, want));
    st = lib->set(name);
    after = lib->now();
    FZ_CHECK(st == want, "%s_set_path(\"%s\") = %s, want %s", lib->header, name,
             fz_status_name(lib, st), fz_status_name(lib, want));
    FZ_CHECK(after && strcmp(after, st ? before : want_path) == 0,
             "%s_set_path(\"%s\") = %s: %s_path() was %s, is %s", lib->header, name,
             fz_status_name(lib, st), lib->header, before, after ? after : "NULL");
}

/* The input, cut at its NUL bytes, is a list of names for both headers. */
static int fz_set_path(const uint8_t *data, size_t size)
{
    static fz_path_list known[2];
    char *s = (char *)fz_malloc(size + 1), *p;
    if (size) memcpy(s, data, size);
    s[size] = '\0';
    fz_path_list_check(&th_pe, &known[0]);
    fz_path_list_check(&th_ffn, &known[1]);
    for (p = s; p <= s + size; p += strlen(p) + 1) {
        fz_set_path_check(&th_pe, &known[0], p);
        fz_set_path_check(&th_ffn, &known[1], p);
    }
    th_use(&th_pe, NULL);
    th_use(&th_ffn, NULL);
    free(s);
    return 0;
}

/* ---- the targets ------------------------------------------------------------------- */

typedef int (*fz_target_fn)(const uint8_t *data, size_t size);

/* name: the target and its seed corpus directory fuzz/corpus/<name>/; fn 0: the function
   has no target of its own (the row is skipped); seeds: what tools/make_seeds.sh writes
   for it, "kind salt [key]" (see there). A piece gives a target other seeds than
   "plain 0" by defining fzt_<function> as `fzt_<function>, "kind salt"`. */
static const struct {
    const char *name;
    fz_target_fn fn;
    const char *seeds;
} fz_targets[] = {
#define FZ_ARG1_(a, ...) a
#define FZ_ARG2_(a, b, ...) b
#define FZ_ARG1(...) FZ_ARG1_(__VA_ARGS__, ~)
#define FZ_ARG2(...) FZ_ARG2_(__VA_ARGS__, "plain 0", ~)
#define FZ_ROW(name, ret, params) { #name, FZ_ARG1(fzt_##name), FZ_ARG2(fzt_##name) },
    PEFFN_API(FZ_ROW)
    { "paths", fz_set_path, "paths" },
    { "npy", fz_npy, "npy" },
    { "safetensors", fz_safetensors, "safetensors" }
};
#define FZ_NTARGETS (sizeof fz_targets / sizeof fz_targets[0])

/* The targets (seeds: and their seeds' kind), one per line; 1 if arg asks for it. */
static int fz_list(FILE *out, const char *arg)
{
    const int seeds = strcmp(arg, "--seeds") == 0;
    size_t t;
    if (!seeds && strcmp(arg, "--list") != 0) return 0;
    for (t = 0; t < FZ_NTARGETS; t++)
        if (!fz_targets[t].fn) continue;
        else if (!seeds) fprintf(out, "%s\n", fz_targets[t].name);
        else fprintf(out, "%s %s\n", fz_targets[t].name, fz_targets[t].seeds);
    return 1;
}

#ifdef FZ_LIBFUZZER
/* ---- libFuzzer: FZ_TARGET names the target ----------------------------------------- */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static fz_target_fn fz_target;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *name = getenv("FZ_TARGET");
    size_t t;
    int i;
    for (i = 1; i < *argc; i++)
        if (fz_list(stdout, (*argv)[i])) exit(0);
    for (t = 0; name && t < FZ_NTARGETS; t++)
        if (strcmp(name, fz_targets[t].name) == 0 && fz_targets[t].fn) {
            fz_target = fz_targets[t].fn;
            fz_name = fz_targets[t].name;
        }
    if (!fz_target) {
        fprintf(stderr, "fuzz: %s%s; set FZ_TARGET to one of:\n",
                name ? "no such target: FZ_TARGET=" : "FZ_TARGET is not set",
                name ? name : "");
        fz_list(stderr, "--list");
        exit(2);
    }
    fz_setup(stderr);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fz_target(data, size);
}

#else
/* ---- the corpus replay ------------------------------------------------------------- */

static int fz_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every regular file of dir through fn, in sorted order; returns how many (-1: no
   such dir). */
static long fz_run_dir(const char *dir, fz_target_fn fn)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    size_t n = 0, cap = 0, i;
    long count = 0;
    if (!d) return -1;
    while ((e = readdir(d)) != NULL) {
        size_t need;
        if (e->d_name[0] == '.') continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            names = (char **)realloc(names, cap * sizeof *names);
            if (!names) exit(2);
        }
        need = strlen(dir) + strlen(e->d_name) + 2;
        names[n] = (char *)malloc(need);
        if (!names[n]) exit(2);
        snprintf(names[n], need, "%s/%s", dir, e->d_name);
        n++;
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, fz_cmp);
    for (i = 0; i < n; i++) {
        struct stat sb;
        if (stat(names[i], &sb) == 0 && S_ISREG(sb.st_mode)) {
            size_t len;
            unsigned char *buf = (unsigned char *)th_read_file(names[i], &len);
            if (!buf) { fprintf(stderr, "replay: cannot read %s\n", names[i]); exit(2); }
            fn(buf, len);
            free(buf);
            count++;
        }
        free(names[i]);
    }
    free(names);
    return count;
}

int main(int argc, char **argv)
{
    size_t t, done = 0;
    long total = 0;
    int l, i;
    if (argc == 2 && fz_list(stdout, argv[1])) return 0;
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s CORPUS_DIR [TARGET]   (%s --list: the targets)\n",
                argv[0], argv[0]);
        return 2;
    }
    fz_setup(stdout);
    for (t = 0; t < FZ_NTARGETS; t++) {
        char dir[4096];
        long n;
        if (!fz_targets[t].fn || (argc > 2 && strcmp(argv[2], fz_targets[t].name) != 0))
            continue;
        fz_name = fz_targets[t].name;
        snprintf(dir, sizeof dir, "%s/%s", argv[1], fz_targets[t].name);
        n = fz_run_dir(dir, fz_targets[t].fn);
        if (n < 0) {
            fprintf(stderr, "replay: no corpus directory %s\n", dir);
            return 1;
        }
        total += n;
        done++;
    }
    if (!done) {
        fprintf(stderr, "replay: no such target %s (%s --list)\n", argv[2], argv[0]);
        return 1;
    }
    /* which path each input compared with scalar */
    for (l = 0; l < 2; l++) {
        const fz_paths_t *p = &fz_paths[l];
        printf("# %s inputs per path tested against scalar:", p->lib->header);
        for (i = 0; i < p->n; i++) printf(" %s %lu", p->path[i], p->inputs[i]);
        if (!p->n) printf(" scalar (alone) %lu", p->inputs[0]);
        putchar('\n');
    }
    printf("replay: %lu targets, %ld inputs, 0 failed\n", (unsigned long)done, total);
    return 0;
}
#endif

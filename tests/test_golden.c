/* test_golden.c - run every case of reference/goldens/MANIFEST.txt through pe.h / ffn.h
   and compare with what PyTorch computed. Where torch's values come from libm, the
   library's own bits (torch's steps, the libm calls correctly rounded: the manifest's
   own_KEY, see "the library's own bits" below) are checked exactly and torch's within a
   derived tolerance.

   usage: test_golden [path/to/MANIFEST.txt]     (default reference/goldens/MANIFEST.txt)

   The manifest (written by reference/make_goldens.py, which documents each case) has
   one line per case, `case NAME op=OP key=value ...`, file values relative to the
   manifest's directory; '#' lines are comments, unknown keys are ignored. Every
   tolerance below is written next to its comparison together with the reason for it
   (README.md, "Numerical contract", has the measurements behind them).

   Every case runs on every path of its header that this build and CPU run (pe.h's
   cases on each pe path, ffn.h's on each ffn path); the "# pe paths:" and "# ffn
   paths:" lines say which ran and why the others did not.

   Output: one line per case and path, `ok   [PATH] NAME  op  ...` or `FAIL ...` (with the worst
   element), a digest of the outputs per header and path (`# digest pe avx512: HASH (N
   outputs)`, see "The digests" below), then exactly `N passed, N failed`. The exit
   status is non-zero on any failure, and a missing manifest, a missing file or key, an
   unknown op or a manifest without a single case are failures, never skips. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../pe.h"
#include "../ffn.h"
#define NPY_IMPLEMENTATION
#include "../support/npy.h"
#include "../support/harness.h"
#include "../examples/train.h"

#define EPS32 (1.0 / 8388608.0)  /* 2^-23: float32 machine epsilon */

/* ---- small float helpers ---------------------------------------------------- */

static uint32_t fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* The digests: the library promises the same bits on every platform, path and thread
   count, so a digest of every output the cases compute must read the same on every
   build (tools/cross_test.sh compares each build's "# digest LIB PATH:" lines with the
   host's). 64-bit FNV-1a over each float's 32 bits, low byte first (the same on a
   big-endian target), in the order the checks read them: every C-side value given to
   note() (hence compare_exact, note_tol and the rest) and same_bits(); not the goldens
   that are compared with each other (cmp_stats.golden_only), and not the training
   losses: examples/train.h's cross-entropy calls the C library's expf and logf (the
   example is a user of the headers, not part of them), so its curve's bits are the
   platform's (within the tolerance below against torch; the same on every path of one
   build).
   Every NaN hashes as 0x7FC00000: the headers promise NaN-ness, not a NaN's sign or
   payload (see same_bits). With the environment variable GOLDEN_DIGESTS=cases each
   case's own digest is printed too ("# digest case [PATH] NAME: ..."): where two builds'
   digests differ, a diff of the two logs' lines names the cases. (A case that fails
   may skip its later checks, so the counts differ as well.) */
typedef struct {
    uint64_t h;
    size_t n;
} digest;
#define DIGEST_BASIS UINT64_C(14695981039346656037)    /* FNV-1a's offset basis */
static digest *digest_now;      /* the header's and path's running now */
static digest digest_case;      /* the case's running now */

static void digest_add(digest *d, uint32_t b)
{
    int k;
    for (k = 0; k < 4; k++) d->h = (d->h ^ ((b >> (8 * k)) & 0xFFu)) * UINT64_C(1099511628211);
    d->n++;
}

static void digest_float(float v)
{
    const uint32_t b = isnan(v) ? UINT32_C(0x7FC00000) : fbits(v);
    if (!digest_now) return;
    digest_add(digest_now, b);
    digest_add(&digest_case, b);
}

/* The "bit-exact" rule: identical bit patterns, except that any NaN equals any NaN
   (torch does not promise a NaN payload, and neither does the C API). So -0.0 != 0.0. */
static int same_value(float c, float t)
{
    return (isnan(c) && isnan(t)) || fbits(c) == fbits(t);
}

/* Distance in ulps of two finite floats, on the ordered integer line (-0 == +0). */
static double ulp_distance(float c, float t)
{
    uint32_t a = fbits(c), b = fbits(t);
    a = a >> 31 ? 0x80000000u - (a & 0x7FFFFFFFu) : a + 0x80000000u;
    b = b >> 31 ? 0x80000000u - (b & 0x7FFFFFFFu) : b + 0x80000000u;
    return a > b ? (double)(a - b) : (double)(b - a);
}

/* NaN, +inf, -inf or finite: torch's non-finite outputs must be matched in class. */
static int fclass(double v)
{
    if (isnan(v)) return 0;
    if (isinf(v)) return v > 0 ? 1 : -1;
    return 2;
}

/* ---- a case: its manifest line, the memory it owns, its verdict ---------------- */

#define MAX_KV 64
#define MAX_OWNED 160

typedef struct {
    const char *name, *op, *dir;
    int line, nkv;
    const char *key[MAX_KV], *val[MAX_KV];
    void *owned[MAX_OWNED];     /* freed when the case ends */
    int nowned;
    int failed;
    char why[1024];             /* the first failure's message */
} gcase;

static void fail(gcase *c, const char *fmt, ...)
{
    va_list ap;
    if (c->failed) return;      /* keep the first (root) cause */
    c->failed = 1;
    va_start(ap, fmt);
    vsnprintf(c->why, sizeof c->why, fmt, ap);
    va_end(ap);
}

static void *own(gcase *c, void *p)
{
    if (!p) { fail(c, "out of memory"); return NULL; }
    if (c->nowned == MAX_OWNED) { free(p); fail(c, "too many buffers"); return NULL; }
    c->owned[c->nowned++] = p;
    return p;
}

static void *alloc_n(gcase *c, size_t n, size_t size)
{
    if (n > (size_t)-1 / size) { fail(c, "buffer size overflows"); return NULL; }
    return own(c, malloc(n ? n * size : 1));
}

static float *alloc_floats(gcase *c, size_t n) { return (float *)alloc_n(c, n, sizeof(float)); }

static void release(gcase *c)
{
    int i;
    for (i = 0; i < c->nowned; i++) free(c->owned[i]);
    c->nowned = 0;
}

static const char *get(gcase *c, const char *key)
{
    int i;
    for (i = 0; i < c->nkv; i++)
        if (strcmp(c->key[i], key) == 0) return c->val[i];
    fail(c, "missing key '%s'", key);
    return NULL;
}

/* The case has this key (optional keys only; get() fails on a missing one). */
static int has(const gcase *c, const char *key)
{
    int i;
    for (i = 0; i < c->nkv; i++)
        if (strcmp(c->key[i], key) == 0) return 1;
    return 0;
}

/* A strictly decimal, non-zero size value (all sizes in the manifest are >= 1). */
static size_t get_size(gcase *c, const char *key)
{
    const char *s = get(c, key), *p;
    size_t v = 0;
    if (!s) return 0;
    for (p = s; *p; p++) {
        size_t d = (size_t)(*p - '0');
        if (*p < '0' || *p > '9' || v > ((size_t)-1 - d) / 10) {
            fail(c, "key %s=%s is not a size", key, s);
            return 0;
        }
        v = v * 10 + d;
    }
    if (p == s || v == 0) { fail(c, "key %s=%s is not a positive size", key, s); return 0; }
    return v;
}

/* A decimal value that may be 0 (start, offset, causal). */
static size_t get_count(gcase *c, const char *key)
{
    const char *s = get(c, key);
    if (s && strcmp(s, "0") == 0) return 0;
    return get_size(c, key);
}

/* A finite decimal number (theta, factor); NaN after a failure. */
static double get_real(gcase *c, const char *key)
{
    const char *s = get(c, key);
    char *end;
    double v;
    if (!s) return NAN;
    v = strtod(s, &end);
    if (*end || !isfinite(v)) { fail(c, "key %s=%s is not a finite number", key, s); return NAN; }
    return v;
}

/* An optional decimal number (a rope_scaling parameter, a hyperparameter): `dflt` when
   the key is absent. */
static double get_real_or(gcase *c, const char *key, double dflt)
{
    return has(c, key) ? get_real(c, key) : dflt;
}

/* Load key's file, check that it has kind `kind` and exactly the given shape. */
static int load(gcase *c, const char *key, npy_array *a, char kind, int ndim,
                const size_t *shape)
{
    char path[4096];
    const char *f = get(c, key);
    int st, i, ok;
    memset(a, 0, sizeof *a);
    if (!f || c->failed) return 0;
    if (snprintf(path, sizeof path, "%s/%s", c->dir, f) >= (int)sizeof path) {
        fail(c, "path too long for %s", key);
        return 0;
    }
    if ((st = npy_load(path, a)) != NPY_OK) {
        fail(c, "%s: %s: %s", key, path, npy_status_string(st));
        return 0;
    }
    ok = a->dtype == kind && a->ndim == ndim;
    for (i = 0; ok && i < ndim; i++) ok = a->shape[i] == shape[i];
    if (!ok) {
        char got[256], want[256];
        int n = 0, m = 0;
        for (i = 0; i < a->ndim && n < 200; i++)
            n += snprintf(got + n, sizeof got - (size_t)n, "%s%zu", i ? "," : "", a->shape[i]);
        got[n] = '\0';
        for (i = 0; i < ndim && m < 200; i++)
            m += snprintf(want + m, sizeof want - (size_t)m, "%s%zu", i ? "," : "", shape[i]);
        want[m] = '\0';
        fail(c, "%s: %s is %c%d (%s), expected %c (%s)", key, f, a->dtype, a->itemsize,
             got, kind, want);
        npy_free(a);
        return 0;
    }
    return 1;
}

static float *load_f32(gcase *c, const char *key, int ndim, const size_t *shape)
{
    npy_array a;
    float *p = NULL;
    int st;
    if (!load(c, key, &a, 'f', ndim, shape)) return NULL;
    st = npy_to_f32(&a, &p);
    npy_free(&a);
    if (st != NPY_OK) { fail(c, "%s: %s", key, npy_status_string(st)); return NULL; }
    return (float *)own(c, p);
}

static double *load_f64(gcase *c, const char *key, int ndim, const size_t *shape)
{
    npy_array a;
    double *p = NULL;
    int st;
    if (!load(c, key, &a, 'f', ndim, shape)) return NULL;
    st = npy_to_f64(&a, &p);
    npy_free(&a);
    if (st != NPY_OK) { fail(c, "%s: %s", key, npy_status_string(st)); return NULL; }
    return (double *)own(c, p);
}

static int64_t *load_i64(gcase *c, const char *key, int ndim, const size_t *shape)
{
    npy_array a;
    int64_t *p = NULL;
    int st;
    if (!load(c, key, &a, 'i', ndim, shape)) return NULL;
    st = npy_to_i64(&a, &p);
    npy_free(&a);
    if (st != NPY_OK) { fail(c, "%s: %s", key, npy_status_string(st)); return NULL; }
    return (int64_t *)own(c, p);
}

/* ---- the library's own bits ----------------------------------------------------------
   Where torch's result comes from libm (sinf, cosf, expf, powf, erff, tanhf; log, log2,
   pow in double), pe.h and ffn.h call their own correctly rounded functions in torch's
   float32 pipeline: their bits are the same on every platform, and they are not torch's
   wherever glibc's function (which torch called for the golden) is not correctly
   rounded. The goldens keep torch's values; for each such array KEY the manifest adds
   own_KEY: `same` (the library's bits are torch's) or an int64 (k, 2) file of (flat
   index, the library's float32 bits there) where they differ (make_goldens.py, which
   asserts that the same pipeline on glibc's functions gives torch's golden). The tests
   check the library's bits exactly against torch's array with that patch applied, and
   torch's values within a tolerance derived next to each comparison. */

/* torch's array `golden` (n floats) with own_KEY applied: a new array, NULL (and the case
   failed) when own_KEY is missing or malformed. A patch entry must change the value (an
   entry equal to torch's would be a stale patch) and the indices must increase. */
static float *load_own(gcase *c, const char *key, const float *golden, size_t n)
{
    char okey[96], path[4096];
    const char *f;
    float *o;
    npy_array a;
    int64_t *p = NULL;
    size_t i, k;
    int st;
    if (!golden || c->failed) return NULL;
    snprintf(okey, sizeof okey, "own_%s", key);
    if (!(f = get(c, okey))) return NULL;
    if (!(o = alloc_floats(c, n))) return NULL;
    memcpy(o, golden, n * sizeof *o);
    if (strcmp(f, "same") == 0) return o;
    if (snprintf(path, sizeof path, "%s/%s", c->dir, f) >= (int)sizeof path) {
        fail(c, "path too long for %s", okey);
        return NULL;
    }
    if ((st = npy_load(path, &a)) != NPY_OK) {
        fail(c, "%s: %s: %s", okey, path, npy_status_string(st));
        return NULL;
    }
    if (a.dtype != 'i' || a.ndim != 2 || a.shape[1] != 2 || a.shape[0] == 0) {
        fail(c, "%s: %s is not a non-empty (k, 2) int64 array", okey, f);
        npy_free(&a);
        return NULL;
    }
    k = a.shape[0];
    st = npy_to_i64(&a, &p);
    npy_free(&a);
    if (st != NPY_OK) { fail(c, "%s: %s", okey, npy_status_string(st)); return NULL; }
    if (!own(c, p)) return NULL;
    for (i = 0; i < k; i++) {
        const int64_t at = p[2 * i], b = p[2 * i + 1];
        uint32_t u;
        if (at < 0 || (uint64_t)at >= (uint64_t)n || (i && at <= p[2 * i - 2]) || b < 0 ||
            b > 0xFFFFFFFFll) {
            fail(c, "%s: entry %zu (%lld, %lld) is out of range or out of order", okey, i,
                 (long long)at, (long long)b);
            return NULL;
        }
        u = (uint32_t)b;
        if (u == fbits(golden[at])) {
            fail(c, "%s: entry %zu changes nothing (a stale patch)", okey, i);
            return NULL;
        }
        memcpy(&o[at], &u, sizeof u);
    }
    return o;
}

/* Load the float32 array key and the library's own bits for it (*own_out); the golden. */
static float *load_f32_own(gcase *c, const char *key, int ndim, const size_t *shape,
                           float **own_out)
{
    size_t n = 1;
    int i;
    float *g = load_f32(c, key, ndim, shape);
    for (i = 0; i < ndim; i++) n *= shape[i];
    *own_out = load_own(c, key, g, n);
    return g;
}

/* The count of elements where the library's bits are not torch's (NaN == NaN). */
static size_t own_moved(const float *own_bits, const float *torch_bits, size_t n)
{
    size_t i, m = 0;
    for (i = 0; i < n; i++) m += !same_value(own_bits[i], torch_bits[i]);
    return m;
}

/* The length n of key's (n,) file, for the vectors whose length the manifest does not
   give (rows, wte_row_ids); 0 (and the case failed) if it is not a non-empty vector. */
static size_t vector_len(gcase *c, const char *key)
{
    char path[4096];
    const char *f = get(c, key);
    npy_array a;
    size_t n;
    int st;
    if (!f || c->failed) return 0;
    snprintf(path, sizeof path, "%s/%s", c->dir, f);
    if ((st = npy_load(path, &a)) != NPY_OK) {
        fail(c, "%s: %s: %s", key, path, npy_status_string(st));
        return 0;
    }
    n = a.ndim == 1 ? a.shape[0] : 0;
    npy_free(&a);
    if (n == 0) fail(c, "%s: expected a non-empty (n,) array", key);
    return n;
}

/* An optional bias: "none" means NULL (valid for ffn), otherwise a (n,) float file.
   *ok is cleared when a file was named but could not be loaded. */
static float *load_bias(gcase *c, const char *key, size_t n, int *ok)
{
    const char *v = get(c, key);
    *ok = v != NULL;
    if (!v || strcmp(v, "none") == 0) return NULL;
    {
        float *b = load_f32(c, key, 1, &n);
        *ok = b != NULL;
        return b;
    }
}

/* n elements; multiplications of sizes from the manifest must not overflow. */
static size_t prod(gcase *c, size_t a, size_t b)
{
    if (b && a > (size_t)-1 / b) { fail(c, "shape product overflows"); return 0; }
    return a * b;
}

/* ---- the worst element of a comparison ------------------------------------------ */

typedef struct {
    size_t n, n_exact, n_bad;
    double max_err;      /* max finite |c - t| (or ulps) over all elements */
    double max_ratio;    /* max err / tol over all elements */
    size_t worst;        /* flat index of the worst bad element */
    double worst_err;
    float wc, wt;
    double wtol;
    int golden_only;     /* c is a golden too (the own bits vs torch's): not hashed */
} cmp_stats;

/* Record one element: err is its distance (NaN or inf when not measurable), tol its
   allowance, bad the verdict. The worst bad element (largest err, first on ties,
   unmeasurable counting as infinite) is kept for the failure message. */
static void note(cmp_stats *s, size_t i, float c, float t, double err, double tol, int bad)
{
    double e = isnan(err) ? INFINITY : err;
    double ratio = tol > 0 ? e / tol : (e > 0 ? INFINITY : 0.0);
    if (!s->golden_only) digest_float(c);
    s->n++;
    if (same_value(c, t)) s->n_exact++;
    if (isfinite(e) && e > s->max_err) s->max_err = e;
    if (ratio > s->max_ratio) s->max_ratio = ratio;
    if (!bad) return;
    if (++s->n_bad == 1 || e > s->worst_err) {
        s->worst = i;
        s->worst_err = e;
        s->wc = c;
        s->wt = t;
        s->wtol = tol;
    }
}

static void unravel(char *buf, size_t cap, size_t i, int ndim, const size_t *shape)
{
    size_t idx[8];
    int d, n = 0;
    for (d = ndim - 1; d >= 0; d--) { idx[d] = i % shape[d]; i /= shape[d]; }
    n += snprintf(buf, cap, "[");
    for (d = 0; d < ndim && (size_t)n < cap; d++)
        n += snprintf(buf + n, cap - (size_t)n, "%s%zu", d ? "," : "", idx[d]);
    if ((size_t)n < cap) snprintf(buf + n, cap - (size_t)n, "]");
}

/* Fail the case if s has bad elements, naming the worst one. */
static void verdict(gcase *c, const cmp_stats *s, const char *what, int ndim,
                    const size_t *shape)
{
    char at[128];
    if (!s->n_bad) return;
    unravel(at, sizeof at, s->worst, ndim, shape);
    fail(c, "%s: %zu of %zu elements bad; worst at %s (flat %zu): c=%.9g (0x%08lx) "
            "t=%.9g (0x%08lx) |c-t|=%.3g tol=%.3g",
         what, s->n_bad, s->n, at, s->worst, (double)s->wc, (unsigned long)fbits(s->wc),
         (double)s->wt, (unsigned long)fbits(s->wt),
         fabs((double)s->wc - (double)s->wt), s->wtol);
}

/* Bit-exact comparison (same_value) of n floats. */
static cmp_stats compare_exact(const float *c, const float *t, size_t n)
{
    cmp_stats s;
    size_t i;
    memset(&s, 0, sizeof s);
    for (i = 0; i < n; i++) {
        int bad = !same_value(c[i], t[i]);
        /* inf - inf is NaN: a matching non-finite pair has distance 0 */
        double err = bad ? fabs((double)c[i] - (double)t[i]) : 0.0;
        note(&s, i, c[i], t[i], err, 0.0, bad);
    }
    return s;
}

/* Fill with a byte pattern that is not a plausible result, so an element the code under
   test forgot to write cannot pass by accident (0xA5A5A5A5 is -2.87e-16). */
static void poison(float *p, size_t n) { memset(p, 0xA5, n * sizeof *p); }

/* ---- pe_table --------------------------------------------------------------------- */


static void run_pe_table(gcase *c, char *info, size_t cap)
{
    const char *mode = get(c, "mode"), *dispatch = get(c, "dispatch");
    size_t M = get_size(c, "max_len"), D = get_size(c, "d_model"), n, i, j, shape[2];
    int torch_mode, glibc, st;
    int64_t *rows;
    float *expect, *mine = NULL, *table, *fast = NULL;
    cmp_stats s, sf, st_;

    if (c->failed) return;
    torch_mode = strcmp(mode, "torch") == 0;
    glibc = strcmp(dispatch, "glibc") == 0;
    if (!torch_mode && strcmp(mode, "exact") != 0) { fail(c, "unknown mode=%s", mode); return; }
    if (!glibc && strcmp(dispatch, "default") != 0) {
        fail(c, "unknown dispatch=%s", dispatch);
        return;
    }
    if (!(n = vector_len(c, "rows"))) return;
    rows = load_i64(c, "rows", 1, &n);
    shape[0] = n;
    shape[1] = D;
    expect = load_f32(c, "expect", 2, shape);
    /* torch mode under the scalar dispatch: the library's own bits (expf, sinf, cosf
       correctly rounded); the default dispatch's and the exact tables are compared as
       they are (within a tolerance, and bit for bit) */
    if (torch_mode && glibc) mine = load_own(c, "expect", expect, n * D);
    table = alloc_floats(c, prod(c, M, D));
    if (torch_mode) fast = alloc_floats(c, prod(c, M, D));
    if (c->failed) return;
    for (i = 0; i < n; i++)
        if (rows[i] < 0 || (uint64_t)rows[i] >= (uint64_t)M) {
            fail(c, "rows[%zu] = %lld is outside [0, %zu)", i, (long long)rows[i], M);
            return;
        }

    /* The C side computes the FULL table, as a user would, and only the listed rows are
       compared: a bug in a row that the golden skips can still corrupt a listed one. */
    poison(table, M * D);
    st = torch_mode ? pe_sinusoidal_table(table, M, D) : pe_sinusoidal_table_exact(table, M, D);
    if (st != PE_OK) { fail(c, "status %d (%s)", st, pe_status_string(st)); return; }
    if (fast) {
        poison(fast, M * D);
        st = pe_sinusoidal_table_fast(fast, M, D);
        if (st != PE_OK) { fail(c, "fast: status %d (%s)", st, pe_status_string(st)); return; }
    }

    memset(&s, 0, sizeof s);
    memset(&sf, 0, sizeof sf);
    memset(&st_, 0, sizeof st_);
    st_.golden_only = 1;
    for (i = 0; i < n; i++) {
        size_t pos = (size_t)rows[i];
        for (j = 0; j < D; j++) {
            float cv = table[pos * D + j], tv = expect[i * D + j];
            double err = fabs((double)cv - (double)tv), tol;
            int bad;
            if (mine) {
                /* Bit-exact against the library's own bits: the float32 steps of torch
                   (s = f32(-ln(10000)/d), div = expf(f32(2i) s), sinf/cosf(f32(p) div)),
                   each libm call correctly rounded. */
                const float ov = mine[i * D + j];
                note(&s, i * D + j, cv, ov, fabs((double)cv - (double)ov), 0.0, !same_value(cv, ov));
                /* and pe_sinusoidal_table_fast: the same angles, its own sin/cos in double
                   rounded once, i.e. correctly rounded: the same bits */
                note(&sf, i * D + j, fast[pos * D + j], ov,
                     fabs((double)fast[pos * D + j] - (double)ov), 0.0,
                     !same_value(fast[pos * D + j], ov));
                /* The golden (torch on glibc) within a derived tolerance. Both are the same
                   float32 steps; glibc's expf/sinf/cosf are within 1 ulp of the correctly
                   rounded values (make_goldens.py measures it: MANIFEST, "# own libm
                   calls"). div (<= 1) may then differ by 1 ulp <= 2^-23 div; the angle
                   fl(p div) by p 2^-23 div plus the two products' roundings (2^-24 |a|
                   each): <= 2^-22 |a| with |a| <= p; sin/cos are 1-Lipschitz, and their
                   results (|v| <= 1, an ulp <= 2^-23) round within 1 ulp (glibc) and 1/2 ulp
                   (own): 2^-22 (p + 1) in all. */
                tol = ldexp(1.0, -22) * ((double)pos + 1.0);
                note(&st_, i * D + j, ov, tv, fabs((double)ov - (double)tv), tol,
                     !(fabs((double)ov - (double)tv) <= tol));
                continue;
            }
            if (!torch_mode) {
                /* Exact mode, either dispatch: torch evaluates the formula in float64 and
                   rounds once, as pe_sinusoidal_table_exact does with double exp/sin/cos
                   (glibc's, or the header's own: a difference in the last bit of a double
                   changes the rounded float only within 2^-29 of a float midpoint); the
                   float64 goldens of both dispatches are byte-identical. */
                tol = 0.0;
                bad = !same_value(cv, tv);
            } else {
                /* Torch's default dispatch uses SLEEF's vectorised expf, 1 ulp off the
                   correctly rounded value for ~10% of the div terms (the library's is
                   correctly rounded); the argument pos * div carries that 1 ulp (2^-24
                   relative, div <= 1) multiplied by pos, so sin/cos may differ by up to
                   ~pos * 2^-24 plus their own rounding. Measured max 2 * pos * 2^-24,
                   hence 2^-22 * max(pos, 1). */
                tol = ldexp(1.0, -22) * (double)(pos > 1 ? pos : 1);
                bad = !(err <= tol) || !isfinite(cv) || !isfinite(tv);
            }
            note(&s, i * D + j, cv, tv, err, tol, bad);
            if (fast) {
                /* vs torch's default dispatch: as the torch-mode table above */
                double ef = fabs((double)fast[pos * D + j] - (double)tv);
                note(&sf, i * D + j, fast[pos * D + j], tv, ef, tol,
                     !(ef <= tol) || !isfinite(fast[pos * D + j]));
            }
        }
    }
    if (fast) verdict(c, &sf, "pe_sinusoidal_table_fast", 2, shape);
    if (mine) verdict(c, &st_, "the library's own bits vs torch's golden (tolerance)", 2, shape);
    if (s.n_bad) {      /* name the table position as well as the index into expect */
        char what[96];
        snprintf(what, sizeof what, "table (expect row %zu = position %lld)", s.worst / D,
                 (long long)rows[s.worst / D]);
        verdict(c, &s, what, 2, shape);
    }
    if (mine)
        snprintf(info, cap, "bit-exact (the library's own bits: correctly rounded expf/sinf/cosf "
                 "in torch's float32 steps), _fast too; %zu/%zu values not torch-on-glibc's, max "
                 "|diff| %.3g, max diff/tol %.3g (2^-22 (pos+1)); rows=%zu of %zu",
                 own_moved(mine, expect, n * D), n * D, st_.max_err, st_.max_ratio, n, M);
    else if (!torch_mode)
        snprintf(info, cap, "max_err=%.3g (bit-exact: float64 formula rounded once) "
                 "rows=%zu of %zu", s.max_err, n, M);
    else
        snprintf(info, cap, "max_err=%.3g max_err/tol=%.3f (|c-t| <= 2^-22*max(pos,1): "
                 "SLEEF expf 1 ulp * pos) bit-exact %zu/%zu (%.1f%%) rows=%zu of %zu",
                 s.max_err, s.max_ratio, s.n_exact, s.n, 100.0 * (double)s.n_exact /
                 (double)s.n, n, M);
}

/* ---- pe_add_batch_first / pe_add_seq_first ----------------------------------------- */

static void run_pe_add(gcase *c, int batch_first, char *info, size_t cap)
{
    size_t B = get_size(c, "batch"), S = get_size(c, "seq"), D = get_size(c, "d_model");
    size_t M = get_size(c, "max_len"), n, xs[3], ts[2];
    float *x, *table, *expect, *out, *inpl, *same;
    cmp_stats s1, s2, s3;
    int st1, st2, st3;

    if (c->failed) return;
    xs[0] = batch_first ? B : S;
    xs[1] = batch_first ? S : B;
    xs[2] = D;
    ts[0] = M;
    ts[1] = D;
    n = prod(c, prod(c, B, S), D);
    x = load_f32(c, "x", 3, xs);
    table = load_f32(c, "table", 2, ts);
    expect = load_f32(c, "expect", 3, xs);
    out = alloc_floats(c, n + 1);
    inpl = alloc_floats(c, n);
    same = alloc_floats(c, n);
    if (c->failed) return;
    out += 1; /* off the vector alignment: the stores' aligned part must start late */

    poison(out, n);
    memcpy(inpl, x, n * sizeof *x);
    memcpy(same, x, n * sizeof *x);
    if (batch_first) {
        st1 = pe_add_batch_first(out, x, table, B, S, D, M);
        st2 = pe_add_batch_first_inplace(inpl, table, B, S, D, M);
        st3 = pe_add_batch_first(same, same, table, B, S, D, M);   /* out == x allowed */
    } else {
        st1 = pe_add_seq_first(out, x, table, S, B, D, M);
        st2 = pe_add_seq_first_inplace(inpl, table, S, B, D, M);
        st3 = pe_add_seq_first(same, same, table, S, B, D, M);
    }
    if (st1 || st2 || st3) {
        fail(c, "status %d / inplace %d / out==x %d", st1, st2, st3);
        return;
    }
    /* Bit-exact: one float32 addition per element, correctly rounded in C and in torch
       (a broadcast add has no reduction order to differ in). NaN == NaN, -0 != +0. */
    s1 = compare_exact(out, expect, n);
    s2 = compare_exact(inpl, expect, n);
    s3 = compare_exact(same, expect, n);
    verdict(c, &s1, "out-of-place", 3, xs);
    verdict(c, &s2, "_inplace", 3, xs);
    verdict(c, &s3, "out == x", 3, xs);
    snprintf(info, cap, "max_err=%.3g (bit-exact; out-of-place, _inplace and out==x) n=%zu",
             s1.max_err > s2.max_err ? s1.max_err : s2.max_err, n);
}

/* ---- embed --------------------------------------------------------------------------- */

static void run_embed(gcase *c, char *info, size_t cap)
{
    size_t B = get_size(c, "batch"), S = get_size(c, "seq"), D = get_size(c, "d_model");
    size_t V = get_size(c, "vocab"), L = get_size(c, "context_length");
    size_t n, nrows, i, is[2], os[3], ws[2], ps[2];
    int64_t *ids, *row_ids;
    int32_t *ids32;
    float *wte_rows, *wte, *wpe, *expect, *out64, *out32;
    cmp_stats s1, s2;
    int st;

    if (c->failed) return;
    if (!(nrows = vector_len(c, "wte_row_ids"))) return;
    is[0] = B; is[1] = S;
    os[0] = B; os[1] = S; os[2] = D;
    ws[0] = nrows; ws[1] = D;
    ps[0] = L; ps[1] = D;
    n = prod(c, prod(c, B, S), D);
    ids = load_i64(c, "ids", 2, is);
    row_ids = load_i64(c, "wte_row_ids", 1, &nrows);
    wte_rows = load_f32(c, "wte_rows", 2, ws);
    wpe = load_f32(c, "wpe", 2, ps);
    expect = load_f32(c, "expect", 3, os);
    wte = alloc_floats(c, prod(c, V, D));
    ids32 = (int32_t *)alloc_n(c, prod(c, B, S), sizeof *ids32);
    out64 = alloc_floats(c, n);
    out32 = alloc_floats(c, n + 1);
    if (c->failed) return;
    out32 += 1; /* off the vector alignment, as in run_pe_add */

    /* The full (vocab, d) table, NaN except the rows torch used: if the C code reads any
       row other than wte[id], a NaN reaches the output and the bit-exact check fails. */
    for (i = 0; i < V * D; i++) wte[i] = (float)NAN;
    for (i = 0; i < nrows; i++) {
        if (row_ids[i] < 0 || (uint64_t)row_ids[i] >= (uint64_t)V) {
            fail(c, "wte_row_ids[%zu] = %lld outside [0, %zu)", i, (long long)row_ids[i], V);
            return;
        }
        memcpy(wte + (size_t)row_ids[i] * D, wte_rows + i * D, D * sizeof *wte);
    }
    for (i = 0; i < B * S; i++) {
        if (ids[i] < INT32_MIN || ids[i] > INT32_MAX) {
            fail(c, "ids[%zu] = %lld does not fit int32", i, (long long)ids[i]);
            return;
        }
        ids32[i] = (int32_t)ids[i];
    }
    poison(out64, n);
    poison(out32, n);
    if ((st = pe_embed_i64(out64, ids, wte, wpe, B, S, D, V, L)) != PE_OK) {
        fail(c, "pe_embed_i64 status %d (%s)", st, pe_status_string(st));
        return;
    }
    if ((st = pe_embed(out32, ids32, wte, wpe, B, S, D, V, L)) != PE_OK) {
        fail(c, "pe_embed status %d (%s)", st, pe_status_string(st));
        return;
    }
    /* Bit-exact: a gather (exact copy) and one float32 addition per element. */
    s1 = compare_exact(out64, expect, n);
    s2 = compare_exact(out32, expect, n);
    verdict(c, &s1, "pe_embed_i64", 3, os);
    verdict(c, &s2, "pe_embed (int32 ids)", 3, os);
    snprintf(info, cap, "max_err=%.3g (bit-exact; int64 and int32 ids; %zu of %zu wte rows "
             "stored, rest NaN)", s1.max_err > s2.max_err ? s1.max_err : s2.max_err, nrows, V);
}

/* The packed forms (ffn_linear_packed, ffn_block_packed) are documented to give the same
   bits as the unpacked ones: fail the case unless got == want bit for bit, a NaN's sign
   and payload aside (the headers do not specify them: a compiler that vectorises a
   scalar loop one way in place and another way out of place may produce another NaN). */
static void same_bits(gcase *c, const char *what, const float *got, const float *want, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) digest_float(got[i]);
    for (i = 0; i < n; i++)
        if (fbits(got[i]) != fbits(want[i]) && !(isnan(got[i]) && isnan(want[i]))) {
            fail(c, "%s differs at flat %zu: 0x%08lx vs 0x%08lx", what, i,
                 (unsigned long)fbits(got[i]), (unsigned long)fbits(want[i]));
            return;
        }
}

/* ---- activations ------------------------------------------------------------------------ */

/* The act= key of a case: FFN_RELU.. (op=relu is FFN_RELU), or -1 after a failure. */
static int act_of(gcase *c)
{
    static const char *const names[] = {"relu", "gelu", "gelu_tanh", "silu", "sigmoid",
                                        "gpt_oss"};
    const char *a = strcmp(c->op, "relu") == 0 || strcmp(c->op, "ffn_block") == 0 ? "relu"
                                                                                 : get(c, "act");
    int i;
    for (i = 0; a && i < 6; i++)
        if (strcmp(a, names[i]) == 0) return i;
    if (a) fail(c, "unknown act=%s", a);
    return -1;
}

/* GELU, GELU-tanh, SiLU and the sigmoid call erff, tanhf and expf: ffn.h's own, correctly
   rounded, so their bits are the same everywhere and are not those of torch's scalar
   kernels on glibc (the golden `expect`) wherever glibc's result is not correctly rounded
   (make_goldens.py counts them: MANIFEST, "# own act_*"). ffn_activation is checked bit
   for bit against its own bits (own_expect); those against torch's within the derived
   tolerance of act_torch_tol. */
static void note_tol(cmp_stats *s, size_t i, float c, float t, double tol);

/* FFN_FAST while the act, ffn_block_act and ffn_gated cases run a second time with
   act | FFN_FAST (the case's name then ends in "+fast"). */
static int act_fast;

/* c against the float64 reference ref within FFN_FAST's bound (th_fast_bound); where ref
   is not finite (x = +-inf, NaN), c's class must be torch's (t). */
static cmp_stats compare_fast(const float *c, const double *ref, const float *t, const float *x,
                              size_t n, int act)
{
    cmp_stats s;
    size_t i;
    memset(&s, 0, sizeof s);
    for (i = 0; i < n; i++) {
        if (!isfinite(ref[i])) {
            note_tol(&s, i, c[i], t[i], 0.0);
        } else {
            const double err = isfinite(c[i]) ? fabs((double)c[i] - ref[i]) : INFINITY;
            const double tol = th_fast_bound[act] * th_act_unit(act, x[i]);
            note(&s, i, c[i], (float)ref[i], err, tol, !(err <= tol));
        }
    }
    return s;
}

/* The library's GELU / GELU-tanh / SiLU / sigmoid bits (own) against torch's scalar kernel
   on glibc (t): the same float32 steps, with erff, tanhf or expf within 1 ulp (erff, expf)
   or 2 ulps (tanhf) of each other (MANIFEST, "# own libm calls"). In the 1 + erf / 1 + tanh
   / 1 + exp term (>= 1 or cancelling) 2 ulps of the function's result are at most 2 ulps of
   1 after the addition's rounding, i.e. 2^-22 relative to the term, which the products
   carry to the result times |x| >= |act(x)| (GELU, SiLU: x / (1 + e)); the sigmoid's
   1 / (1 + e) relative to t. Hence 2^-22 max(|x|, |t|), non-finite values of the same
   class. */
static cmp_stats act_torch_tol(const float *own_bits, const float *t, const float *x, size_t n)
{
    cmp_stats s;
    size_t i;
    memset(&s, 0, sizeof s);
    s.golden_only = 1;
    for (i = 0; i < n; i++)
        note_tol(&s, i, own_bits[i], t[i], ldexp(fmax(fabs((double)x[i]), fabs((double)t[i])), -22));
    return s;
}

/* op=relu (ffn_relu and ffn_activation) and op=act (ffn_activation): bit-exact, incl.
   the sign of zero and NaN-ness. relu: torch.relu is clamp_min, which only replaces
   x < 0. gelu, gelu_tanh, silu, sigmoid: torch's scalar kernels (made with
   ATEN_CPU_CAPABILITY=default, oneDNN off), which ffn.h reproduces operation for
   operation with its own correctly rounded erff/tanhf/expf: bit for bit against the
   library's own bits (own_expect), within act_torch_tol of torch's. The errors against
   the float64 reference of ffn.h and of torch's vectorised result (torch_vec) are
   reported. */
static void run_act(gcase *c, char *info, size_t cap)
{
    size_t n = get_size(c, "n"), i, len;
    const int act = act_of(c), relu_op = strcmp(c->op, "relu") == 0;
    float *x, *expect, *mine, *y, *inpl, *y2;
    cmp_stats s1, s2, s3, so;
    int st1, st2, st3;
    if (c->failed) return;
    x = load_f32(c, "x", 1, &n);
    expect = load_f32(c, "expect", 1, &n);
    /* relu has no libm call: its golden is the library's bits */
    mine = act == FFN_RELU ? expect : load_own(c, "expect", expect, n);
    y = alloc_floats(c, n);
    inpl = alloc_floats(c, n);
    y2 = alloc_floats(c, n);
    if (c->failed) return;
    poison(y, n);
    poison(y2, n);
    memcpy(inpl, x, n * sizeof *x);
    st1 = ffn_activation(y, x, n, act | act_fast);
    st2 = ffn_activation(inpl, inpl, n, act | act_fast);      /* y == x is allowed */
    st3 = relu_op ? ffn_relu(y2, x, n) : ffn_activation(y2, x, n, act | act_fast);
    if (st1 || st2 || st3) { fail(c, "status %d / in place %d / %d", st1, st2, st3); return; }
    if (act_fast) {
        /* FFN_FAST: within its bound of float64 and torch's class where that is not
           finite; its error and torch's vectorised one's, in units u, reported. */
        const double *ref = load_f64(c, "ref64", 1, &n);
        const float *vec = load_f32(c, "torch_vec", 1, &n);
        double e_f = 0, e_v = 0;
        if (!ref || !vec) return;
        s1 = compare_fast(y, ref, expect, x, n, act);
        verdict(c, &s1, "ffn_activation(act | FFN_FAST)", 1, &n);
        same_bits(c, "in place", inpl, y, n);
        same_bits(c, "again", y2, y, n);
        for (i = 0; i < n; i++) {
            const double u = th_act_unit(act, x[i]);
            if (!isfinite(ref[i])) continue;
            e_f = fmax(e_f, fabs(y[i] - ref[i]) / u);
            e_v = fmax(e_v, fabs(vec[i] - ref[i]) / u);
        }
        /* and no further from float64 than torch's own vectorised results on the same
           inputs (both deterministic: these bits are the same on every platform) */
        if (!(e_f <= e_v))
            fail(c, "FFN_FAST's max error %.4f u > torch vectorised's %.4f u", e_f, e_v);
        snprintf(info, cap, "max err vs float64 %.3f u (bound %.2f u), torch vectorised %.3f u "
                 "(u = %s); y==x the same bits; n=%zu", e_f, th_fast_bound[act], e_v,
                 act == FFN_SIGMOID ? "2^-24" : "max(2^-23 |x|, 2^-149)", n);
        return;
    }
    s1 = compare_exact(y, mine, n);
    s2 = compare_exact(inpl, mine, n);
    s3 = compare_exact(y2, mine, n);
    verdict(c, &s1, "ffn_activation", 1, &n);
    verdict(c, &s2, "in place", 1, &n);
    verdict(c, &s3, relu_op ? "ffn_relu" : "again", 1, &n);
    if (act == FFN_RELU) {
        snprintf(info, cap, "max_err=%.3g (bit-exact incl. -0.0 and NaN; y!=x and y==x) n=%zu",
                 s1.max_err, n);
    } else {
        so = act_torch_tol(mine, expect, x, n);
        verdict(c, &so, "the library's own bits vs torch's scalar kernel (tolerance)", 1, &n);
        snprintf(info, cap, "bit-exact (the library's own bits, correctly rounded libm; "
                 "y!=x and y==x); %zu of %zu not torch-on-glibc's, max |diff| %.3g, max "
                 "diff/tol %.3g (2^-22 max(|x|,|t|)) n=%zu", own_moved(mine, expect, n), n,
                 so.max_err, so.max_ratio, n);
    }
    if (has(c, "ref64") && has(c, "torch_vec")) {
        const double *ref = load_f64(c, "ref64", 1, &n);
        const float *vec = load_f32(c, "torch_vec", 1, &n);
        double e_c = 0, e_v = 0;
        size_t dv = 0;
        if (!ref || !vec) return;
        for (i = 0; i < n; i++) {
            if (fbits(vec[i]) != fbits(expect[i])) dv++;
            if (!isfinite(ref[i])) continue;
            if (fabs(y[i] - ref[i]) > e_c) e_c = fabs(y[i] - ref[i]);
            if (fabs(vec[i] - ref[i]) > e_v) e_v = fabs(vec[i] - ref[i]);
        }
        len = strlen(info);
        snprintf(info + len, cap - len, "; max err vs float64 %.3g, torch vectorised %.3g "
                 "(%zu of %zu elements differ from torch's scalar)", e_c, e_v, dv, n);
    }
}

static float *pack(gcase *c, const float *w, size_t in, size_t outf)
{
    size_t n = ffn_pack_floats(in, outf);
    float *p;
    int st;
    if (!n) { fail(c, "ffn_pack_floats(%zu, %zu) = 0", in, outf); return NULL; }
    if (!(p = alloc_floats(c, n))) return NULL;
    if ((st = ffn_pack_weight(p, n, w, in, outf)) != FFN_OK) {
        fail(c, "ffn_pack_weight: status %d (%s)", st, ffn_status_string(st));
        return NULL;
    }
    return p;
}

/* ---- linear and ffn_block -------------------------------------------------------------- */

/* Compare one output element c against torch's t with tolerance tol (>= 0, finite).
   A non-finite torch value must be matched in class (NaN, +inf, -inf): there is no
   distance to measure, but e.g. an overflow to +inf must not become NaN or finite. */
static void note_tol(cmp_stats *s, size_t i, float c, float t, double tol)
{
    double err;
    int bad;
    if (!isfinite(t)) {
        bad = fclass(c) != fclass(t);
        err = 0;
    } else {
        err = isfinite(c) ? fabs((double)c - (double)t) : INFINITY;
        bad = !(err <= tol);
    }
    note(s, i, c, t, err, tol, bad);
}

/* S[r,o] = |b[o]| + sum_k |x[r,k]| |w[o,k]| in double: products of two floats are exact
   in double and the sum's own rounding is ~2^-53 relative, negligible against 2^-23. */
static double abs_dot(const float *x, const float *w, const float *b, size_t o, size_t K)
{
    double acc = b ? fabs((double)b[o]) : 0.0;
    size_t k;
    for (k = 0; k < K; k++) acc += fabs((double)x[k]) * fabs((double)w[k]);
    return acc;
}

/* Cases with ref64 (the float64 result from the same float32 inputs): ffn.h's maximum
   error against it must be no larger than torch's, torch's counted as at least one
   float32 ulp of the largest |ref64| (so that 1-ulp rounding noise of a short sum does
   not decide). Both y (ffn_linear / ffn_block) and yp (the packed form) are judged;
   appends "acc: ..." with the ratios (max and rms, ffn.h / torch) to info. */
static void against_ref64(gcase *c, const float *y, const float *yp, const float *expect,
                          size_t n, int ndim, const size_t *shape, char *info, size_t cap,
                          int enforce)
{
    const double *ref;
    double e_c = 0, e_p = 0, e_t = 0, q_c = 0, q_t = 0, m = 0, ulp;
    size_t i, len;
    if (!has(c, "ref64")) return;
    ref = load_f64(c, "ref64", ndim, shape);
    if (!ref) return;
    for (i = 0; i < n; i++) {
        const double dc = fabs((double)y[i] - ref[i]), dp = fabs((double)yp[i] - ref[i]);
        const double dt = fabs((double)expect[i] - ref[i]);
        if (!(dc <= e_c)) e_c = dc;        /* (a NaN makes the maximum NaN: a failure) */
        if (!(dp <= e_p)) e_p = dp;
        if (!(dt <= e_t)) e_t = dt;
        q_c += dc * dc;
        q_t += dt * dt;
        if (fabs(ref[i]) > m) m = fabs(ref[i]);
    }
    ulp = (double)nextafterf((float)m, INFINITY) - (double)(float)m;
    if (e_t < ulp) e_t = ulp;
    if (enforce && (!(e_c <= e_t) || !(e_p <= e_t)))
        fail(c, "less accurate than torch: max |err| against float64 %.3g (packed %.3g) > "
             "torch's %.3g", e_c, e_p, e_t);
    len = strlen(info);
    snprintf(info + len, cap - len, "; acc: max err vs float64 %.3g = %.2fx torch's %.3g "
             "(floor 1 ulp %.3g), rms %.2fx%s", e_c, e_c / e_t, e_t, ulp,
             q_t > 0 ? sqrt(q_c / q_t) : 0.0, enforce ? "" : " (reported only: FFN_FAST)");
}

static void run_linear(gcase *c, char *info, size_t cap)
{
    size_t R = get_size(c, "rows"), K = get_size(c, "in"), O = get_size(c, "out");
    size_t r, o, xs[2], ws[2], ys[2];
    float *x, *w, *b, *expect, *y;
    cmp_stats s;
    int st, ok;

    if (c->failed) return;
    xs[0] = R; xs[1] = K;
    ws[0] = O; ws[1] = K;
    ys[0] = R; ys[1] = O;
    x = load_f32(c, "x", 2, xs);
    w = load_f32(c, "weight", 2, ws);
    b = load_bias(c, "bias", O, &ok);
    expect = load_f32(c, "expect", 2, ys);
    y = alloc_floats(c, prod(c, R, O));
    if (c->failed || !ok) return;
    poison(y, R * O);
    if ((st = ffn_linear(y, x, w, b, R, K, O)) != FFN_OK) {
        fail(c, "status %d (%s)", st, ffn_status_string(st));
        return;
    }
    memset(&s, 0, sizeof s);
    for (r = 0; r < R; r++)
        for (o = 0; o < O; o++) {
            /* A float32 dot product of length K plus a bias is within
               sqrt(K) * 2^-23 * (|b| + sum_k |x_k||w_k|) of the exact value (the
               probabilistic bound for K roundings of relative size 2^-24 each, with
               margin); torch's result obeys the same bound, so C and torch may differ
               by the sum of their errors, measured at <= 0.13 of this bound. It scales
               with K and with the magnitudes, unlike a flat epsilon. */
            double tol = sqrt((double)K) * EPS32 * abs_dot(x + r * K, w + o * K, b, o, K);
            note_tol(&s, r * O + o, y[r * O + o], expect[r * O + o], tol);
        }
    verdict(c, &s, "y", 2, ys);
    if (!c->failed) {           /* ffn_linear_packed: same bits as ffn_linear */
        float *wp = pack(c, w, K, O), *yp = alloc_floats(c, R * O);
        if (c->failed) return;
        poison(yp, R * O);
        if ((st = ffn_linear_packed(yp, x, wp, b, R, K, O)) != FFN_OK) {
            fail(c, "ffn_linear_packed: status %d (%s)", st, ffn_status_string(st));
            return;
        }
        same_bits(c, "ffn_linear_packed vs ffn_linear", yp, y, R * O);
        snprintf(info, cap, "max_err=%.3g max_err/tol=%.3f (|c-t| <= sqrt(K)*2^-23*(|b|+sum|x||w|)"
                 ", K=%zu%s) bit-exact %zu/%zu; packed == unpacked", s.max_err, s.max_ratio, K,
                 b ? "" : ", bias=none", s.n_exact, s.n);
        against_ref64(c, y, yp, expect, R * O, 2, ys, info, cap, 1);
    }
}

/* The activations' Lipschitz constants (max |act'|): relu 1, gelu 1.129 (at x = 1.43
   GELU(x)' = Phi(x) + x phi(x)), gelu_tanh the same to 3 digits, silu 1.0998 (x = 2.4),
   sigmoid 1/4, GPT-OSS's glu g sigmoid(1.702 g) (after the clamp, 1-Lipschitz) silu's
   1.0998 (its derivative is silu's at 1.702 g). */
static const double act_lip[] = {1.0, 1.13, 1.13, 1.1, 0.25, 1.1};

/* GPT-OSS's hidden unit from the gate and up pre-activations, as ffn.h documents it (and
   torch computes it): g = min(gate, 7), glu = g sigmoid(1.702 g) (the sigmoid through
   ffn_activation), times min(max(up, -7), 7) + 1; each step a float. */
static float gpt_oss_hidden(float gate, float up, int fast)
{
    const float limit = 7.0f, alpha = 1.702f, one = 1.0f;
    const float g = gate > limit ? limit : gate;
    float v = g * alpha, s, glu, u;
    if (ffn_activation(&s, &v, 1, FFN_SIGMOID | fast) != FFN_OK) return 0.0f;
    glu = g * s;
    u = up < -limit ? -limit : up > limit ? limit : up;
    u = u + one;
    return u * glu;
}

/* A block's output y (R, D) against torch's: the last layer's own rounding, sqrt(H) *
   2^-23 * (|b_i| + sum_j |h_rj| |w_ij|) with h = torch's hidden_ref, plus the hidden
   layer's allowed error tolh carried through it: sum_j |w_ij| tolh[r,j]. */
static cmp_stats last_layer(const float *y, const float *expect, const float *href,
                            const float *w, const float *b, const double *tolh, size_t R,
                            size_t D, size_t H)
{
    cmp_stats s;
    size_t r, i, j;
    memset(&s, 0, sizeof s);
    for (r = 0; r < R; r++)
        for (i = 0; i < D; i++) {
            double carried = 0.0, tol;
            for (j = 0; j < H; j++) carried += fabs((double)w[i * H + j]) * tolh[r * H + j];
            tol = sqrt((double)H) * EPS32 * abs_dot(href + r * H, w + i * H, b, i, H) + carried;
            note_tol(&s, r * D + i, y[r * D + i], expect[r * D + i], tol);
        }
    return s;
}

static void run_ffn_block(gcase *c, char *info, size_t cap)
{
    size_t R = get_size(c, "rows"), D = get_size(c, "d_model"), H = get_size(c, "hidden");
    size_t r, i, j, xs[2], w1s[2], w2s[2], hs[2], ns;
    float *x, *w1, *b1, *w2, *b2, *href, *expect, *y, *yin, *scratch, *hc;
    double *tol1;
    cmp_stats s, sh;
    int st, ok1, ok2;
    const int act = act_of(c), relu_op = strcmp(c->op, "ffn_block") == 0;

    if (c->failed) return;
    xs[0] = R; xs[1] = D;
    w1s[0] = H; w1s[1] = D;
    w2s[0] = D; w2s[1] = H;
    hs[0] = R; hs[1] = H;
    x = load_f32(c, "x", 2, xs);
    w1 = load_f32(c, "w1", 2, w1s);
    b1 = load_bias(c, "b1", H, &ok1);
    w2 = load_f32(c, "w2", 2, w2s);
    b2 = load_bias(c, "b2", D, &ok2);
    href = load_f32(c, "hidden_ref", 2, hs);
    expect = load_f32(c, "expect", 2, xs);
    if (c->failed || !ok1 || !ok2) return;
    ns = ffn_block_scratch_floats(R, D, H);
    if (ns == 0) { fail(c, "ffn_block_scratch_floats returned 0"); return; }
    y = alloc_floats(c, R * D);
    yin = alloc_floats(c, R * D);
    hc = alloc_floats(c, R * H);
    scratch = alloc_floats(c, ns);
    tol1 = (double *)alloc_n(c, prod(c, R, H), sizeof *tol1);
    if (c->failed) return;

    poison(y, R * D);
    st = relu_op ? ffn_block(y, x, w1, b1, w2, b2, R, D, H, scratch, ns)
                 : ffn_block_act(y, x, w1, b1, w2, b2, R, D, H, act | act_fast, scratch, ns);
    if (st != FFN_OK) {
        fail(c, "status %d (%s)", st, ffn_status_string(st));
        return;
    }
    /* y == x (in place, on a copy) must give the very same bits: the summation order is
       fixed by the build, not by where the output lives. */
    memcpy(yin, x, R * D * sizeof *x);
    if ((st = ffn_block_act(yin, yin, w1, b1, w2, b2, R, D, H, act | act_fast, scratch, ns)) != FFN_OK) {
        fail(c, "in place: status %d (%s)", st, ffn_status_string(st));
        return;
    }
    same_bits(c, "y == x (in place) vs out-of-place", yin, y, R * D);
    if (c->failed) return;

    /* Hidden layer bound, per element (same reasoning as for linear, K = d_model):
       t = sqrt(D) * 2^-23 * (|b1_j| + sum_k |x_rk| |w1_jk|) before the activation, then
       tol1[r,j] = L t + the two activations' own errors, where L is the activation's
       Lipschitz constant (relu: 1, no error of its own). torch's vectorised GELU/SiLU
       and ffn.h's (correctly rounded erff/tanhf/expf in torch's scalar steps) are each
       within 2 ulps of 1 times |a| of the exact
       act(a) (|act(a)| <= |a|; 1 + erf and 1 + tanh cancel for a << 0, so an error
       relative to |a|, not to act(a)): 4 * 2^-23 |a| for both, a the pre-activation.
       Checked directly against hidden_ref through the public ffn_linear +
       ffn_activation: a bad hidden layer is then named as such. */
    memset(&sh, 0, sizeof sh);
    if ((st = ffn_linear(hc, x, w1, b1, R, D, H)) != FFN_OK) {
        fail(c, "hidden via ffn_linear: status %d", st);
        return;
    }
    for (r = 0; r < R; r++)
        for (j = 0; j < H; j++)
            tol1[r * H + j] = act_lip[act] * sqrt((double)D) * EPS32 *
                                  abs_dot(x + r * D, w1 + j * D, b1, j, D) +
                              (act == FFN_RELU ? 0.0 : 4.0 * EPS32 * fabs(hc[r * H + j]));
    if ((st = ffn_activation(hc, hc, R * H, act | act_fast)) != FFN_OK) {
        fail(c, "hidden via ffn_activation: status %d", st);
        return;
    }
    for (i = 0; i < R * H; i++) note_tol(&sh, i, hc[i], href[i], tol1[i]);
    verdict(c, &sh, "hidden (ffn_linear+ffn_activation vs hidden_ref)", 2, hs);
    /* The block is that hidden layer through fc2, bit for bit (one summation order). */
    if ((st = ffn_linear(yin, hc, w2, b2, R, H, D)) != FFN_OK) {
        fail(c, "fc2 via ffn_linear: status %d", st);
        return;
    }
    same_bits(c, "ffn_linear(ffn_activation(ffn_linear(x))) vs the block", yin, y, R * D);

    s = last_layer(y, expect, href, w2, b2, tol1, R, D, H);
    verdict(c, &s, "y", 2, xs);
    if (!c->failed) {           /* ffn_block_packed: same bits as ffn_block */
        float *w1p = pack(c, w1, D, H), *w2p = pack(c, w2, H, D), *yp = alloc_floats(c, R * D);
        if (c->failed) return;
        poison(yp, R * D);
        st = relu_op ? ffn_block_packed(yp, x, w1p, b1, w2p, b2, R, D, H, scratch, ns)
                     : ffn_block_act_packed(yp, x, w1p, b1, w2p, b2, R, D, H, act | act_fast, scratch, ns);
        if (st != FFN_OK) {
            fail(c, "ffn_block_packed: status %d (%s)", st, ffn_status_string(st));
            return;
        }
        same_bits(c, "ffn_block_packed vs ffn_block", yp, y, R * D);
        int conv = 0;
        if (has(c, "w1_conv1d") && !c->failed) {   /* GPT-2's Conv1D (in, out) weights */
            size_t n1 = ffn_pack_floats(D, H), n2 = ffn_pack_floats(H, D), t1[2], t2[2];
            float *c1, *c2, *p1 = alloc_floats(c, n1), *p2 = alloc_floats(c, n2);
            t1[0] = D; t1[1] = H;
            t2[0] = H; t2[1] = D;
            c1 = load_f32(c, "w1_conv1d", 2, t1);
            c2 = load_f32(c, "w2_conv1d", 2, t2);
            if (c->failed) return;
            if ((st = ffn_pack_weight_in_out(p1, n1, c1, D, H)) != FFN_OK ||
                (st = ffn_pack_weight_in_out(p2, n2, c2, H, D)) != FFN_OK) {
                fail(c, "ffn_pack_weight_in_out: status %d (%s)", st, ffn_status_string(st));
                return;
            }
            same_bits(c, "fc1 packed from Conv1D (in, out) vs from nn.Linear (out, in)", p1, w1p, n1);
            same_bits(c, "fc2 packed from Conv1D (in, out) vs from nn.Linear (out, in)", p2, w2p, n2);
            conv = 1;
        }
        snprintf(info, cap, "max_err=%.3g max_err/tol=%.3f (per-layer sqrt(K)*2^-23*S, fc1 error "
                 "carried through |w2|) hidden max_err/tol1=%.3f; y==x and packed bit-identical%s",
                 s.max_err, s.max_ratio, sh.max_ratio,
                 b1 && b2 ? "" : (b1 ? "; b2=none" : (b2 ? "; b1=none" : "; b1=b2=none")));
        /* With GELU or SiLU the error is the activation's as much as the sums': asserted
           with the library's own (correctly rounded) activations, the same bits on every
           platform; FFN_FAST's is reported, not asserted (the sums are, by the ReLU
           cases). */
        against_ref64(c, y, yp, expect, R * D, 2, xs, info, cap,
                      act == FFN_RELU || !act_fast);
        if (conv) {
            size_t len = strlen(info);
            snprintf(info + len, cap - len, "; ffn_pack_weight_in_out of the Conv1D weights: "
                     "the same packed bits");
        }
    }
}

/* op=ffn_gated: y = down(act(gate(x)) * up(x)). Checked as ffn_block_act is: bit for bit
   the composition of the public calls (ffn_linear, ffn_activation, a float product,
   ffn_linear), y == x and the packed form give the same bits, and against torch per
   element: the hidden product h = A U (A = act(gate), U = up) within
   |A| tol_u + (|U| + tol_u) tol_a + 2^-23 |h| (the Linear bound tol_u of up, tol_a of
   the activation as in ffn_block_act, one rounding of the product on each side), the
   output within down's Linear bound plus sum_j |w_down_ij| tol_h[r,j]. */
static void run_ffn_gated(gcase *c, char *info, size_t cap)
{
    size_t R = get_size(c, "rows"), D = get_size(c, "d_model"), H = get_size(c, "hidden");
    size_t r, j, xs[2], ws[2], wds[2], hs[2], ns, n;
    float *x, *wg, *bg, *wu, *bu, *wd, *bd, *href, *expect, *y, *yin, *scratch, *ga, *up, *yc;
    float *wgu = NULL, *bgu = NULL, *wdio = NULL;
    double *tolh;
    cmp_stats s, sh;
    int st, ok1, ok2, ok3;
    const int act = act_of(c), oss = act == FFN_GPT_OSS;

    if (c->failed) return;
    xs[0] = R; xs[1] = D;
    ws[0] = H; ws[1] = D;
    wds[0] = D; wds[1] = H;
    hs[0] = R; hs[1] = H;
    x = load_f32(c, "x", 2, xs);
    if (oss) {  /* the checkpoint's tensors; w_gate, w_up, w_down made from them here */
        size_t gus[2], dio[2], bgs = 2 * H, k;
        gus[0] = D; gus[1] = 2 * H;
        dio[0] = H; dio[1] = D;
        wgu = load_f32(c, "w_gate_up", 2, gus);
        bgu = load_f32(c, "b_gate_up", 1, &bgs);
        wdio = load_f32(c, "w_down_in_out", 2, dio);
        if (c->failed) return;
        wg = alloc_floats(c, H * D);
        wu = alloc_floats(c, H * D);
        wd = alloc_floats(c, H * D);
        bg = alloc_floats(c, H);
        bu = alloc_floats(c, H);
        if (c->failed) return;
        for (j = 0; j < H; j++) {
            for (k = 0; k < D; k++) {
                wg[j * D + k] = wgu[k * 2 * H + 2 * j];
                wu[j * D + k] = wgu[k * 2 * H + 2 * j + 1];
                wd[k * H + j] = wdio[j * D + k];
            }
            bg[j] = bgu[2 * j];
            bu[j] = bgu[2 * j + 1];
        }
        ok1 = ok2 = 1;
    } else {
        wg = load_f32(c, "w_gate", 2, ws);
        bg = load_bias(c, "b_gate", H, &ok1);
        wu = load_f32(c, "w_up", 2, ws);
        bu = load_bias(c, "b_up", H, &ok2);
        wd = load_f32(c, "w_down", 2, wds);
    }
    bd = load_bias(c, "b_down", D, &ok3);
    href = load_f32(c, "hidden_ref", 2, hs);
    expect = load_f32(c, "expect", 2, xs);
    if (c->failed || !ok1 || !ok2 || !ok3) return;
    ns = ffn_gated_scratch_floats(R, D, H);
    if (ns == 0) { fail(c, "ffn_gated_scratch_floats returned 0"); return; }
    n = prod(c, R, H);
    y = alloc_floats(c, R * D);
    yin = alloc_floats(c, R * D);
    yc = alloc_floats(c, R * D);
    ga = alloc_floats(c, n);
    up = alloc_floats(c, n);
    scratch = alloc_floats(c, ns);
    tolh = (double *)alloc_n(c, n, sizeof *tolh);
    if (c->failed) return;

    poison(y, R * D);
    if ((st = ffn_gated(y, x, wg, bg, wu, bu, wd, bd, R, D, H, act | act_fast, scratch, ns)) != FFN_OK) {
        fail(c, "status %d (%s)", st, ffn_status_string(st));
        return;
    }
    memcpy(yin, x, R * D * sizeof *x);
    if ((st = ffn_gated(yin, yin, wg, bg, wu, bu, wd, bd, R, D, H, act | act_fast, scratch, ns)) != FFN_OK) {
        fail(c, "in place: status %d (%s)", st, ffn_status_string(st));
        return;
    }
    same_bits(c, "y == x (in place) vs out-of-place", yin, y, R * D);
    if ((st = ffn_linear(ga, x, wg, bg, R, D, H)) != FFN_OK ||
        (st = ffn_linear(up, x, wu, bu, R, D, H)) != FFN_OK) {
        fail(c, "gate/up via ffn_linear: status %d", st);
        return;
    }
    for (r = 0; r < R; r++)     /* tol_a, from the pre-activation gate */
        for (j = 0; j < H; j++)
            tolh[r * H + j] = act_lip[act] * sqrt((double)D) * EPS32 *
                                  abs_dot(x + r * D, wg + j * D, bg, j, D) +
                              (act == FFN_RELU ? 0.0 : 4.0 * EPS32 * fabs(ga[r * H + j]));
    if (!oss && (st = ffn_activation(ga, ga, n, act | act_fast)) != FFN_OK) {
        fail(c, "ffn_activation: status %d", st);
        return;
    }
    memset(&sh, 0, sizeof sh);
    for (r = 0; r < R; r++)
        for (j = 0; j < H; j++) {
            const size_t k = r * H + j;
            /* GPT-OSS: the up factor is clamp(up) + 1 (clamp: 1-Lipschitz; + 1 rounds on
               each side), the act the glu of the clamped gate */
            const double tu = sqrt((double)D) * EPS32 * abs_dot(x + r * D, wu + j * D, bu, j, D) +
                              (oss ? 2.0 * EPS32 * (fabs((double)up[k]) + 1.0) : 0.0);
            const float hk = oss ? gpt_oss_hidden(ga[k], up[k], act_fast) : ga[k] * up[k];
            const double ta = tolh[k];
            const double a = oss ? gpt_oss_hidden(ga[k], 0.0f, act_fast) : ga[k];
            const double u = oss ? (up[k] < -7 ? -7.0 : up[k] > 7 ? 7.0 : up[k]) + 1.0 : up[k];
            ga[k] = hk;
            tolh[k] = fabs(a) * tu + (fabs(u) + tu) * ta + EPS32 * fabs((double)ga[k]);
            note_tol(&sh, k, ga[k], href[k], tolh[k]);
        }
    verdict(c, &sh, "hidden act(gate) * up (public calls vs hidden_ref)", 2, hs);
    if ((st = ffn_linear(yc, ga, wd, bd, R, H, D)) != FFN_OK) {
        fail(c, "down via ffn_linear: status %d", st);
        return;
    }
    same_bits(c, "ffn_linear(act(ffn_linear) * ffn_linear) vs ffn_gated", yc, y, R * D);
    if (c->failed) return;
    s = last_layer(y, expect, href, wd, bd, tolh, R, D, H);
    verdict(c, &s, "y", 2, xs);
    if (!c->failed) {           /* ffn_gated_packed: same bits as ffn_gated */
        float *pg = pack(c, wg, D, H), *pu = pack(c, wu, D, H), *pd = pack(c, wd, H, D);
        float *yp = alloc_floats(c, R * D);
        if (c->failed) return;
        if (oss) {  /* packed straight from the checkpoint's interleaved and (in, out) tensors */
            const size_t ng = ffn_pack_floats(D, H), nd = ffn_pack_floats(H, D);
            float *qg = alloc_floats(c, ng), *qu = alloc_floats(c, ng), *qd = alloc_floats(c, nd);
            if (c->failed) return;
            if ((st = ffn_pack_weight_strided(qg, ng, wgu, D, H, 2, 2 * H)) != FFN_OK ||
                (st = ffn_pack_weight_strided(qu, ng, wgu + 1, D, H, 2, 2 * H)) != FFN_OK ||
                (st = ffn_pack_weight_in_out(qd, nd, wdio, H, D)) != FFN_OK) {
                fail(c, "packing the GPT-OSS tensors: status %d (%s)", st, ffn_status_string(st));
                return;
            }
            same_bits(c, "gate packed strided from gate_up[:, 0::2] vs from w_gate", qg, pg, ng);
            same_bits(c, "up packed strided from gate_up[:, 1::2] vs from w_up", qu, pu, ng);
            same_bits(c, "down packed from (in, out) vs from (out, in)", qd, pd, nd);
        }
        poison(yp, R * D);
        st = ffn_gated_packed(yp, x, pg, bg, pu, bu, pd, bd, R, D, H, act | act_fast, scratch, ns);
        if (st != FFN_OK) {
            fail(c, "ffn_gated_packed: status %d (%s)", st, ffn_status_string(st));
            return;
        }
        same_bits(c, "ffn_gated_packed vs ffn_gated", yp, y, R * D);
        snprintf(info, cap, "max_err=%.3g max_err/tol=%.3f hidden max_err/tol=%.3f; the public "
                 "calls composed, y==x and packed bit-identical", s.max_err, s.max_ratio,
                 sh.max_ratio);
        against_ref64(c, y, yp, expect, R * D, 2, xs, info, cap,
                      act == FFN_RELU || !act_fast);
    }
}

/* op=linear_backward: ffn_linear_backward against autograd's x.grad, weight.grad and
   bias.grad (accumulated into the stored dw0 / db0). Each gradient element is a float32
   sum, bounded per element as a Linear's (sqrt(K) 2^-23 S, K = out for dx, rows for dw
   and db), plus 2^-23 |g| for dw and db: the final dw0 + sum rounds once on each side.
   Asked for one gradient at a time (the others NULL), each comes out with the same bits;
   the maximum error against float64 is reported beside torch's. db is also torch's bits:
   the same dy summed in torch's cascade order (that order is the point of ffn.h's db: its
   error against float64 is then torch's, where the Linear's blocked order was 1.1-1.3x
   torch's at 257-1000 rows). */
static void run_linear_backward(gcase *c, char *info, size_t cap)
{
    size_t R = get_size(c, "rows"), K = get_size(c, "in_features"), O = get_size(c, "out_features");
    size_t r, o, k, xs[2], ws[2], ys[2], ns, i;
    float *x, *w, *dy, *dw0, *db0, *edx, *edw, *edb, *dx, *dw, *db, *dx1, *dw1, *db1, *scratch;
    float *col, *ones;
    const double *rdx, *rdw, *rdb;
    cmp_stats sx, sw, sb;
    double e[3] = {0, 0, 0}, et[3] = {0, 0, 0};
    int st;

    if (c->failed) return;
    xs[0] = R; xs[1] = K;
    ws[0] = O; ws[1] = K;
    ys[0] = R; ys[1] = O;
    x = load_f32(c, "x", 2, xs);
    w = load_f32(c, "weight", 2, ws);
    dy = load_f32(c, "dy", 2, ys);
    dw0 = load_f32(c, "dw0", 2, ws);
    db0 = load_f32(c, "db0", 1, &O);
    edx = load_f32(c, "expect_dx", 2, xs);
    edw = load_f32(c, "expect_dw", 2, ws);
    edb = load_f32(c, "expect_db", 1, &O);
    rdx = load_f64(c, "ref64_dx", 2, xs);
    rdw = load_f64(c, "ref64_dw", 2, ws);
    rdb = load_f64(c, "ref64_db", 1, &O);
    ns = ffn_linear_backward_scratch_floats(R, K, O);
    dx = alloc_floats(c, R * K);
    dw = alloc_floats(c, O * K);
    db = alloc_floats(c, O);
    dx1 = alloc_floats(c, R * K);
    dw1 = alloc_floats(c, O * K);
    db1 = alloc_floats(c, O);
    scratch = alloc_floats(c, ns ? ns : 1);
    col = alloc_floats(c, R);
    ones = alloc_floats(c, R);
    if (c->failed) return;
    if (!ns) { fail(c, "ffn_linear_backward_scratch_floats returned 0"); return; }
    poison(dx, R * K);
    memcpy(dw, dw0, O * K * sizeof *dw);
    memcpy(db, db0, O * sizeof *db);
    if ((st = ffn_linear_backward(dx, dw, db, dy, x, w, R, K, O, scratch, ns)) != FFN_OK) {
        fail(c, "status %d (%s)", st, ffn_status_string(st));
        return;
    }
    /* one gradient at a time */
    poison(dx1, R * K);
    memcpy(dw1, dw0, O * K * sizeof *dw1);
    memcpy(db1, db0, O * sizeof *db1);
    if ((st = ffn_linear_backward(dx1, NULL, NULL, dy, NULL, w, R, K, O, scratch, ns)) != FFN_OK ||
        (st = ffn_linear_backward(NULL, dw1, NULL, dy, x, NULL, R, K, O, scratch, ns)) != FFN_OK ||
        (st = ffn_linear_backward(NULL, NULL, db1, dy, NULL, NULL, R, K, O, scratch, ns)) != FFN_OK) {
        fail(c, "one gradient at a time: status %d (%s)", st, ffn_status_string(st));
        return;
    }
    same_bits(c, "dx alone vs with dw and db", dx1, dx, R * K);
    same_bits(c, "dw alone vs with dx and db", dw1, dw, O * K);
    same_bits(c, "db alone vs with dx and dw", db1, db, O);
    if (c->failed) return;
    memset(&sx, 0, sizeof sx);
    memset(&sw, 0, sizeof sw);
    memset(&sb, 0, sizeof sb);
    for (i = 0; i < R; i++) ones[i] = 1.0f;
    for (r = 0; r < R; r++)
        for (k = 0; k < K; k++) {
            double S = 0;
            for (o = 0; o < O; o++) S += fabs((double)dy[r * O + o]) * fabs((double)w[o * K + k]);
            note_tol(&sx, r * K + k, dx[r * K + k], edx[r * K + k], sqrt((double)O) * EPS32 * S);
        }
    for (o = 0; o < O; o++) {
        for (r = 0; r < R; r++) col[r] = dy[r * O + o];
        for (k = 0; k < K; k++) {
            double S = fabs((double)dw0[o * K + k]);
            for (r = 0; r < R; r++) S += fabs((double)col[r]) * fabs((double)x[r * K + k]);
            note_tol(&sw, o * K + k, dw[o * K + k], edw[o * K + k],
                     sqrt((double)R) * EPS32 * S + EPS32 * fabs((double)edw[o * K + k]));
        }
        note_tol(&sb, o, db[o], edb[o], sqrt((double)R) * EPS32 * abs_dot(col, ones, db0, o, R) +
                 EPS32 * fabs((double)edb[o]));
    }
    verdict(c, &sx, "dx", 2, xs);
    verdict(c, &sw, "dw", 2, ws);
    verdict(c, &sb, "db", 1, &O);
    /* db sums torch's dy in torch's order (the cascade of its AVX2 and default dispatch,
       which made the goldens) and adds it onto db0 once, as autograd: torch's bits */
    same_bits(c, "db vs torch's (the same sum of the same dy)", db, edb, O);
    for (i = 0; i < R * K; i++) {
        e[0] = fmax(e[0], fabs(dx[i] - rdx[i]));
        et[0] = fmax(et[0], fabs(edx[i] - rdx[i]));
    }
    for (i = 0; i < O * K; i++) {
        e[1] = fmax(e[1], fabs(dw[i] - rdw[i]));
        et[1] = fmax(et[1], fabs(edw[i] - rdw[i]));
    }
    for (i = 0; i < O; i++) {
        e[2] = fmax(e[2], fabs(db[i] - rdb[i]));
        et[2] = fmax(et[2], fabs(edb[i] - rdb[i]));
    }
    snprintf(info, cap, "max_err/tol dx %.3f dw %.3f db %.3f (Linear bound per element, K = out / "
             "rows); db bit-exact; one at a time the same bits; max err vs float64: dx %.3g (torch "
             "%.3g), dw %.3g (torch %.3g), db %.3g (torch %.3g)", sx.max_ratio, sw.max_ratio,
             sb.max_ratio, e[0], et[0], e[1], et[1], e[2], et[2]);
}

/* op=act_backward: ffn_activation_backward against autograd's x.grad (torch's default
   dispatch). ReLU bit for bit (a selection). The others are dy times a sum of two terms
   that each side evaluates in float with libm, each term within a few ulps: per element
   2^-23 |dy| (8 T(x) + A(x)), T the sum of the terms' magnitudes (in double): GELU
   Phi + |x| phi, GELU-tanh (1 + t)/2 + K (1 - t^2) with K = |x/2 beta (1 + 3 kappa x^2)|,
   SiLU s (1 + |x| (1 - s)), sigmoid s (1 - s); and A the absolute errors that do not
   scale with T: GELU 1 (torch's vectorised erf is within 1.5e-7 of erf in absolute
   terms, so its cdf within 0.63 2^-23, also where Phi is tiny), GELU-tanh 2 K (t, a
   float, is within 2^-24 of tanh near +-1, so 1 - t^2 within 2^-23 absolute on each
   side: where t rounds to 1 torch gets 1 - t^2 = 0). Where torch's value is not finite,
   the same class (NaN, +-inf). dx == dy and dx == x (in place) give the same bits. */
/* T(x) and A(x) of that derivation (act not ReLU); the tolerance per unit |dy| is
   2^-23 (8 T + A). */
static double act_grad_terms(int act, double xv, double *A)
{
    const double pi = 3.14159265358979323846;
    *A = 0.0;
    switch (act) {
    case FFN_GELU:
        *A = 1.0;
        return 0.5 * erfc(-xv / sqrt(2.0)) + fabs(xv) * exp(-0.5 * xv * xv) / sqrt(2.0 * pi);
    case FFN_GELU_TANH: {
        const double b = sqrt(2.0 / pi), tt = tanh(b * (xv + 0.044715 * xv * xv * xv));
        const double K = fabs(0.5 * xv * b * (1.0 + 3.0 * 0.044715 * xv * xv));
        *A = 2.0 * K;
        return 0.5 * (1.0 + tt) + K * (1.0 - tt * tt);
    }
    default: {
        const double sg = 1.0 / (1.0 + exp(-xv));
        return act == FFN_SILU ? sg * (1.0 + fabs(xv) * (1.0 - sg)) : sg * (1.0 - sg);
    }
    }
}

static void run_act_backward(gcase *c, char *info, size_t cap)
{
    size_t n = get_size(c, "n"), i;
    const int act = act_of(c);
    float *x, *dy, *expect, *dx, *dx2;
    const double *ref;
    cmp_stats s;
    double e = 0, et = 0;
    int st;
    if (c->failed) return;
    x = load_f32(c, "x", 1, &n);
    dy = load_f32(c, "dy", 1, &n);
    expect = load_f32(c, "expect", 1, &n);
    ref = load_f64(c, "ref64", 1, &n);
    dx = alloc_floats(c, n);
    dx2 = alloc_floats(c, n);
    if (c->failed) return;
    poison(dx, n);
    if ((st = ffn_activation_backward(dx, dy, x, n, act)) != FFN_OK) {
        fail(c, "status %d (%s)", st, ffn_status_string(st));
        return;
    }
    memcpy(dx2, dy, n * sizeof *dx2);
    st = ffn_activation_backward(dx2, dx2, x, n, act);
    if (st == FFN_OK) same_bits(c, "dx == dy (in place)", dx2, dx, n);
    memcpy(dx2, x, n * sizeof *dx2);
    if (st == FFN_OK) st = ffn_activation_backward(dx2, dy, dx2, n, act);
    if (st == FFN_OK) same_bits(c, "dx == x (in place)", dx2, dx, n);
    else fail(c, "in place: status %d", st);
    if (c->failed) return;
    if (act == FFN_RELU) {
        s = compare_exact(dx, expect, n);
    } else {
        memset(&s, 0, sizeof s);
        for (i = 0; i < n; i++) {
            double A;
            const double T = act_grad_terms(act, x[i], &A);
            note_tol(&s, i, dx[i], expect[i],
                     EPS32 * fabs((double)dy[i]) * (isfinite(T) && isfinite(A) ? 8.0 * T + A : 0.0));
        }
    }
    verdict(c, &s, "dx", 1, &n);
    for (i = 0; i < n; i++)
        if (isfinite(ref[i]) && isfinite(dx[i]) && isfinite(expect[i])) {
            e = fmax(e, fabs(dx[i] - ref[i]));
            et = fmax(et, fabs(expect[i] - ref[i]));
        }
    snprintf(info, cap, "%s; in place the same bits; max err vs float64 %.3g (torch %.3g) n=%zu",
             act == FFN_RELU ? "bit-exact (threshold_backward)" : "within 2^-23 |dy| (8 T(x) + A(x))",
             e, et, n);
}

/* op=opt_step: one step of ffn_sgd_step / ffn_adamw_step from torch's state before that
   step (param_in, buf_in or m_in, v_in) against torch.optim's after it. Each output is a
   few float operations on its inputs: per element 2^-23 (2 |in| + 2 |out| + 8 U) (the
   input's own rounding, e.g. param * (1 - lr wd), counts where the sum cancels), U the magnitude
   of what was added to the input (SGD: lr (|grad| + wd |p| + momentum (|buf_in| +
   |buf_out|)); buf: momentum |buf_in| + |grad| + wd |p|; AdamW's m: |m| + |grad|, v:
   |v| + |grad|^2, param: lr wd |p| + step_size |m| / den). torch's kernels may fuse a
   product into an add (its vectorised add with alpha, addcmul, addcdiv, lerp) or not;
   these bounds cover both. */
static void run_opt_step(gcase *c, char *info, size_t cap)
{
    size_t n = get_size(c, "n"), i;
    const char *kind = get(c, "kind");
    const int sgd = kind && strcmp(kind, "sgd") == 0;
    const long step = (long)get_size(c, "step");
    const double lr = get_real_or(c, "lr", 0), wd = get_real_or(c, "weight_decay", sgd ? 0.0 : 0.01);
    float *p, *g, *s1, *s2, *pe, *e1, *e2;
    cmp_stats sp, s1s, s2s;
    int st;
    if (c->failed) return;
    p = load_f32(c, "param_in", 1, &n);
    g = load_f32(c, "grad", 1, &n);
    s1 = load_f32(c, sgd ? "buf_in" : "m_in", 1, &n);
    s2 = sgd ? NULL : load_f32(c, "v_in", 1, &n);
    pe = load_f32(c, "param_out", 1, &n);
    e1 = load_f32(c, sgd ? "buf_out" : "m_out", 1, &n);
    e2 = sgd ? NULL : load_f32(c, "v_out", 1, &n);
    if (c->failed) return;
    memset(&sp, 0, sizeof sp);
    memset(&s1s, 0, sizeof s1s);
    memset(&s2s, 0, sizeof s2s);
    if (sgd) {
        const double mom = get_real_or(c, "momentum", 0), damp = get_real_or(c, "dampening", 0);
        const int nest = (int)get_real_or(c, "nesterov", 0);
        float *p0 = alloc_floats(c, n), *b0 = alloc_floats(c, n);
        if (c->failed) return;
        memcpy(p0, p, n * sizeof *p);
        memcpy(b0, s1, n * sizeof *s1);
        st = ffn_sgd_step(p, s1, g, n, (float)lr, (float)mom, (float)damp, (float)wd, nest, step == 1);
        if (st != FFN_OK) { fail(c, "ffn_sgd_step: status %d (%s)", st, ffn_status_string(st)); return; }
        for (i = 0; i < n; i++) {
            const double gi = fabs((double)g[i]) + wd * fabs((double)p0[i]);
            const double U = lr * (gi + mom * (fabs((double)b0[i]) + fabs((double)e1[i])));
            note_tol(&sp, i, p[i], pe[i], EPS32 * (2.0 * fabs((double)p0[i]) +
                                                   2.0 * fabs((double)pe[i]) + 8.0 * U));
            if (mom != 0.0)
                note_tol(&s1s, i, s1[i], e1[i], EPS32 * (2.0 * fabs((double)b0[i]) +
                                                          2.0 * fabs((double)e1[i]) +
                                                          8.0 * (mom * fabs((double)b0[i]) + gi)));
        }
    } else {
        const char *b = get(c, "betas");
        double b1 = 0.9, b2 = 0.999, eps = get_real_or(c, "eps", 1e-8), ss, bc2;
        float *p0 = alloc_floats(c, n), *m0 = alloc_floats(c, n), *v0 = alloc_floats(c, n);
        if (c->failed) return;
        if (b) { char *end; b1 = strtod(b, &end); if (*end == ',') b2 = strtod(end + 1, NULL); }
        memcpy(p0, p, n * sizeof *p);
        memcpy(m0, s1, n * sizeof *s1);
        memcpy(v0, s2, n * sizeof *s2);
        st = ffn_adamw_step(p, s1, s2, g, n, (float)lr, (float)b1, (float)b2, (float)eps, (float)wd, step);
        if (st != FFN_OK) { fail(c, "ffn_adamw_step: status %d (%s)", st, ffn_status_string(st)); return; }
        ss = lr / (1.0 - pow(b1, (double)step));
        bc2 = sqrt(1.0 - pow(b2, (double)step));
        for (i = 0; i < n; i++) {
            const double gi = fabs((double)g[i]);
            const double den = sqrt((double)e2[i]) / bc2 + eps;
            const double U = lr * wd * fabs((double)p0[i]) + ss * fabs((double)e1[i]) / den;
            note_tol(&s1s, i, s1[i], e1[i], EPS32 * (2.0 * fabs((double)m0[i]) + 2.0 * fabs((double)e1[i]) +
                                                      8.0 * (fabs((double)m0[i]) + gi)));
            note_tol(&s2s, i, s2[i], e2[i], EPS32 * (2.0 * fabs((double)v0[i]) + 2.0 * fabs((double)e2[i]) +
                                                      8.0 * (fabs((double)v0[i]) + gi * gi)));
            note_tol(&sp, i, p[i], pe[i], EPS32 * (2.0 * fabs((double)p0[i]) + 2.0 * fabs((double)pe[i]) +
                                                   8.0 * U));
        }
    }
    verdict(c, &sp, "param", 1, &n);
    verdict(c, &s1s, sgd ? "momentum_buffer" : "exp_avg", 1, &n);
    if (!sgd) verdict(c, &s2s, "exp_avg_sq", 1, &n);
    snprintf(info, cap, "%s step %ld: max_err/tol param %.3f, %s %.3f%s; n=%zu", kind, step,
             sp.max_ratio, sgd ? "buf" : "m", s1s.max_ratio, sgd ? "" : ", v checked", n);
}

/* ---- training the blocks: op=ffn_block_backward, op=ffn_gated_backward ------------------ */

/* How far ffn.h's and torch's value of one sum may be apart. Each gradient element is a
   float32 sum of K products (a weight or bias gradient: also added to the .grad it
   accumulates into). ffn.h sums in the NUMERICAL CONTRACT's order, whose worst case is
   n(K) = min(K, kb) + min(sb, B) - 1 + ceil(B / sb) roundings of any one term (B =
   ceil(K / kb) blocks, kb = 8, 16, 32, 64 from K = 1, 64, 256, 1024, sb = 8 blocks, 4 when
   kb is 64): |ffn.h - exact| <= gamma_n S, gamma_n = n u / (1 - n u), u = 2^-24, S the sum of
   the terms' magnitudes. torch's GEMM or sum runs in an order not known here, and any
   order's worst case is gamma_K S (Higham, Accuracy and Stability of Numerical
   Algorithms, 3.1). So the two are within (gamma_n(K) + gamma_K) S, with one more rounding
   on each side where a start value is added (the .grad, a bias: acc). For a weight
   gradient K = rows: ffn.h's n grows with the blocks, 8, 20, 40, 71 at rows 7, 64, 256,
   1024, torch's bound linearly with rows; both are worst cases (the typical error is
   about sqrt(K) u S). */
static double sum_bound(size_t K, int acc)
{
    const size_t kb = K < 64 ? 8 : K < 256 ? 16 : K < 1024 ? 32 : 64, sb = kb < 64 ? 8 : 4;
    const size_t B = (K + kb - 1) / kb;
    const double u = ldexp(1.0, -24), a = acc ? 1.0 : 0.0;
    const double n = (double)((K < kb ? K : kb) + (B < sb ? B : sb) - 1 + (B + sb - 1) / sb) + a;
    const double k = (double)K + a;
    return n * u / (1.0 - n * u) + k * u / (1.0 - k * u);
}

/* The tolerance of one such sum, start g0 plus sum_k coef_k val_k (coef NULL: 1), where
   ffn.h's val_k and torch's may differ by e_k (NULL: 0; an activation computed another way,
   a gradient carried from the layer above): sum_bound(K, acc) S + sum_k |coef_k| e_k, with
   S = |g0| + sum_k |coef_k| (|val_k| + e_k) (torch's terms are that large at most). */
static double grad_tol(size_t K, int acc, double g0, const float *coef, size_t cs,
                       const float *val, size_t vs, const double *e, size_t es)
{
    double S = fabs(g0), carried = 0.0;
    size_t k;
    for (k = 0; k < K; k++) {
        const double cf = coef ? fabs((double)coef[k * cs]) : 1.0, ek = e ? e[k * es] : 0.0;
        S += cf * (fabs((double)val[k * vs]) + ek);
        carried += cf * ek;
    }
    return sum_bound(K, acc) * S + carried;
}

/* a = act(v), ffn.h's against torch's: 0 for ReLU (a selection); otherwise each is within
   2 ulps of 1 times |v| of the exact act(v) (the derivation of ffn_block_act's hidden
   layer): 4 2^-23 |v|; with FFN_FAST ffn.h's is its documented bound B max(2^-23 |v|,
   2^-149) (th_fast_bound) instead of 2 2^-23 |v|. */
static double act_err(int act, float v)
{
    if (act == FFN_RELU) return 0.0;
    if (act_fast) return th_fast_bound[act] * th_act_unit(act, v) + 2.0 * EPS32 * fabs((double)v);
    return 4.0 * EPS32 * fabs((double)v);
}

/* g = dy * act'(v) on both sides (v the same pre-activation) where ffn.h's dy (dyc) and
   torch's differ by e_in: (T + tA) e_in + tA |dyc| + 2^-23 T (|dyc| + e_in), T >= |act'(v)|
   and tA = 2^-23 (8 T + A) per unit dy as run_act_backward derives them (the last term:
   each side's rounding of the product, which tA covers for dyc alone). ReLU: g is dy
   (v > 0) or 0 on both sides: e_in or 0. */
static double act_grad_err(int act, float v, float dyc, double e_in)
{
    double A, T, tA;
    if (act == FFN_RELU) return v > 0.0f ? e_in : 0.0;
    T = act_grad_terms(act, v, &A);
    tA = EPS32 * (8.0 * T + A);
    return (T + tA) * e_in + tA * fabs((double)dyc) + EPS32 * T * (fabs((double)dyc) + e_in);
}

/* A (n,) or (a, b) float file, or zeros for "none" (a .grad autograd had not made yet);
   *given: a file was named. */
static float *load_or_zeros(gcase *c, const char *key, int ndim, const size_t *shape, int *given)
{
    const char *v = get(c, key);
    const size_t n = ndim == 1 ? shape[0] : prod(c, shape[0], shape[1]);
    float *p;
    *given = v && strcmp(v, "none") != 0;
    if (*given) return load_f32(c, key, ndim, shape);
    p = alloc_floats(c, n);
    if (p) memset(p, 0, n * sizeof *p);
    return p;
}

static float *dup_floats(gcase *c, const float *src, size_t n)
{
    float *p = alloc_floats(c, n);
    if (p && src) memcpy(p, src, n * sizeof *p);
    return p;
}

/* Max |ffn.h - ref64| and |torch - ref64| of one gradient, into "name a/b" of info. With
   enforce, ffn.h's must be no larger than torch's, torch's counted as at least one float32
   ulp of the largest |ref64| (as against_ref64 for the forward). Enforced for the bias
   gradient of the last layer (db2, db_down): the sum over the rows of torch's own dy, in
   torch's cascade order, as ffn_linear_backward's db. Not for db1, db_gate, db_up: they sum
   ffn.h's dh, whose elements carry the roundings of ffn.h's dh = (dy w2) act'(h) (the
   Linear's order, not OpenBLAS's), so their error against float64 measures those inputs
   more than the sum (measured: 1.1-1.3x torch's, or 0.8x, from case to case, the same
   cascade on both sides); those are judged by own_sum_report below, as sums of torch's
   own dh against its exact sum. */
static void ref64_report(gcase *c, char *info, size_t cap, const char *name, const float *got,
                         const float *t, const double *ref, size_t n, int enforce)
{
    double e = 0, et = 0, m = 0, ulp;
    size_t i, len = strlen(info);
    for (i = 0; i < n; i++) {
        const double d = fabs(got[i] - ref[i]);
        if (!(d <= e)) e = d;              /* (a NaN makes the maximum NaN: a failure) */
        et = fmax(et, fabs(t[i] - ref[i]));
        if (fabs(ref[i]) > m) m = fabs(ref[i]);
    }
    ulp = (double)nextafterf((float)m, INFINITY) - (double)(float)m;
    if (enforce && !(e <= fmax(et, ulp)))
        fail(c, "%s less accurate than torch's: max |err| against float64 %.3g > torch's %.3g "
             "(floor 1 ulp %.3g)", name, e, et, ulp);
    snprintf(info + len, cap - len, " %s %.3g/%.3g", name, e, et);
}

/* A hidden layer's bias gradient db[j] = db0[j] + sum_r dh[r * n + j] (j < n, R rows),
   judged as a sum against the exact value of the sum of its input. The float64 sums
   below are exact to (R - 1) 2^-53 sum|dh|, 2^-29 of what a float32 order can lose, so
   they stand for the exact ones.
   - Enforced, on the same input: ffn.h's sum of torch's dh (tdh: autograd's gradient of
     the layer's output, grad_* in the goldens, which make_goldens.py asserts sums to
     torch's db bit for bit), tdb_ffn = ffn_linear_backward's db alone from tdh and db0,
     against db0 + sum64(tdh), must be no less accurate than torch's db (tdb) against the
     same: max error no larger than torch's, torch's floored at one float32 ulp of the
     largest |exact sum|. The floor: the result is a float32, so even a correctly rounded
     sum is off by up to half an ulp of itself, and torch's error can be 0 by the luck of
     its inputs (rows = 1 without db0: one value, exact) where another order needs a
     rounding; below 1 ulp the errors differ by where single roundings fall, not by the
     order (the floor of against_ref64 and ref64_report). With ffn.h's cascade, torch's
     order, the two are the same bits (ratio 1; op=linear_backward asserts the bits).
   - Reported: each side against the exact sum of ITS OWN input: ffn.h's db (from ffn.h's
     dh) against db0 + sum64(dh), torch's against db0 + sum64(tdh). Not enforced: the two
     dh differ in their roundings (ffn.h's Linear order vs OpenBLAS's), and the same order
     on different inputs loses different amounts: on ffn_bwd_relu_r64_d16_h96, both in
     torch's cascade, ffn.h's max error is 1.06x torch's, above the floor; a bound on one
     input against the other's luck would fail by chance, not by the order.
   Appends "name e_ffn/e_torch (ratio) own e/e (ratio)" to info. */
static void own_sum_report(gcase *c, char *info, size_t cap, const char *name,
                           const float *db, const float *dh, const float *tdb_ffn,
                           const float *tdb, const float *tdh, const float *db0, size_t R,
                           size_t n)
{
    double e = 0, et = 0, eo = 0, m = 0, mo = 0, ulp, ulpo;
    size_t j, r, len = strlen(info);
    for (j = 0; j < n; j++) {
        double s = (double)db0[j], st = (double)db0[j], d;
        for (r = 0; r < R; r++) {
            s += (double)dh[r * n + j];
            st += (double)tdh[r * n + j];
        }
        d = fabs((double)tdb_ffn[j] - st);
        if (!(d <= e)) e = d;              /* (a NaN makes the maximum NaN: a failure) */
        et = fmax(et, fabs((double)tdb[j] - st));
        d = fabs((double)db[j] - s);
        if (!(d <= eo)) eo = d;
        m = fmax(m, fabs(st));
        mo = fmax(mo, fmax(fabs(s), fabs(st)));
    }
    ulp = (double)nextafterf((float)m, INFINITY) - (double)(float)m;
    ulpo = (double)nextafterf((float)mo, INFINITY) - (double)(float)mo;
    if (!(e <= fmax(et, ulp)))
        fail(c, "%s: ffn.h's sum of torch's dh less accurate than torch's: max |err| against "
             "the exact sum %.3g > torch's %.3g (floor 1 ulp %.3g)", name, e, et, ulp);
    snprintf(info + len, cap - len, " %s %.3g/%.3g (%.2fx) own %.3g/%.3g (%.2fx)", name, e, et,
             e / fmax(et, ulp), eo, et, eo / fmax(et, ulpo));
}

/* h (rows, out) of a train forward against torch's: a Linear (K = in, the bias a start
   value), both within the contract's sum bound; returns the max err / tol. */
static double pre_vs_torch(gcase *c, const char *what, const float *h, const float *t,
                           const float *x, const float *w, const float *b, size_t R,
                           size_t K, size_t O)
{
    cmp_stats s;
    size_t r, o;
    size_t sh[2];
    memset(&s, 0, sizeof s);
    for (r = 0; r < R; r++)
        for (o = 0; o < O; o++)
            note_tol(&s, r * O + o, h[r * O + o], t[r * O + o],
                     grad_tol(K, b != NULL, b ? b[o] : 0.0, x + r * K, 1, w + o * K, 1, NULL, 0));
    sh[0] = R; sh[1] = O;
    verdict(c, &s, what, 2, sh);
    return s.max_ratio;
}

/* op=ffn_block_backward: ffn_block_act_train and ffn_block_act_backward (act | FFN_FAST in
   the +fast run) against autograd's gradients of fc2(act(fc1(x))).
   - the train forward: h the bits of ffn_linear (and within the sum bound of torch's h),
     y the bits of ffn_block_act; y == x and the packed form the same bits;
   - the backward from torch's h: bit for bit ffn_activation -> ffn_linear_backward (fc2) ->
     ffn_activation_backward -> ffn_linear_backward (fc1), and each gradient asked alone
     the same bits;
   - against torch, per element, with the sums' bound (sum_bound) and the differences of
     their inputs carried through (act_err for a = act(h); da's sum bound through
     act_grad_err for dh): dw2 (K = rows), db2, then dh into dw1, db1 (K = rows) and
     dx (K = hidden);
   - the errors of ffn.h and of torch against the float64 autograd, reported;
   - db1 as a sum (own_sum_report): ffn.h's sum of torch's dh (grad_h) no less accurate
     than torch's db1 against the exact sum. */
static void run_ffn_block_backward(gcase *c, char *info, size_t cap)
{
    static const char *const gname[5] = {"dx", "dw1", "db1", "dw2", "db2"};
    static const char *const g0key[4] = {"dw1_0", "db1_0", "dw2_0", "db2_0"};
    size_t R = get_size(c, "rows"), D = get_size(c, "d_model"), H = get_size(c, "hidden");
    const int act = act_of(c), a_ = act | act_fast;
    size_t xs[2], w1s[2], w2s[2], hs[2], gs[5][2], gn[5], r, i, j, k, ns, nb, nl;
    float *x, *w1, *b1, *w2, *b2, *dy, *h, *g0[4], *ex[5], *got[5], *cmp[5], *one, *scr;
    float *yc, *hc, *ya, *yp, *hp, *w1p, *w2p, *a, *da, *dh, *lscr, *tdh;
    const double *ref[5];
    double *ea, *edh, rh;
    cmp_stats s[5];
    int st, ok1, ok2, acc[4], g;

    if (c->failed) return;
    xs[0] = R; xs[1] = D;
    w1s[0] = H; w1s[1] = D;
    w2s[0] = D; w2s[1] = H;
    hs[0] = R; hs[1] = H;
    memcpy(gs[0], xs, sizeof xs); memcpy(gs[1], w1s, sizeof xs); gs[2][0] = H;
    memcpy(gs[3], w2s, sizeof xs); gs[4][0] = D;
    gn[0] = R * D; gn[1] = H * D; gn[2] = H; gn[3] = D * H; gn[4] = D;
    x = load_f32(c, "x", 2, xs);
    w1 = load_f32(c, "w1", 2, w1s);
    b1 = load_bias(c, "b1", H, &ok1);
    w2 = load_f32(c, "w2", 2, w2s);
    b2 = load_bias(c, "b2", D, &ok2);
    dy = load_f32(c, "dy", 2, xs);
    h = load_f32(c, "h", 2, hs);
    tdh = load_f32(c, "grad_h", 2, hs);     /* torch's gradient of h, the input of its db1 */
    for (g = 0; g < 4; g++) g0[g] = load_or_zeros(c, g0key[g], g % 2 ? 1 : 2, gs[g + 1], &acc[g]);
    for (g = 0; g < 5; g++) {
        char key[32];
        snprintf(key, sizeof key, "expect_%s", gname[g]);
        ex[g] = load_f32(c, key, g % 2 ? 2 : (g ? 1 : 2), gs[g]);
        snprintf(key, sizeof key, "ref64_%s", gname[g]);
        ref[g] = load_f64(c, key, g % 2 ? 2 : (g ? 1 : 2), gs[g]);
    }
    if (c->failed || !ok1 || !ok2) return;

    /* the train forward */
    ns = ffn_block_scratch_floats(R, D, H);
    nb = ffn_block_backward_scratch_floats(R, D, H);
    nl = ffn_linear_backward_scratch_floats(R, D, H);
    if (ffn_linear_backward_scratch_floats(R, H, D) > nl)
        nl = ffn_linear_backward_scratch_floats(R, H, D);
    if (!ns || !nb || !nl) { fail(c, "a scratch size query returned 0"); return; }
    scr = alloc_floats(c, nb > ns ? nb : ns);
    yc = alloc_floats(c, R * D); ya = alloc_floats(c, R * D); yp = alloc_floats(c, R * D);
    hc = alloc_floats(c, R * H); hp = alloc_floats(c, R * H);
    w1p = pack(c, w1, D, H); w2p = pack(c, w2, H, D);
    if (c->failed) return;
    poison(yc, R * D); poison(hc, R * H);
    if ((st = ffn_block_act_train(yc, hc, x, w1, b1, w2, b2, R, D, H, a_, scr, ns)) != FFN_OK ||
        (st = ffn_block_act(ya, x, w1, b1, w2, b2, R, D, H, a_, scr, ns)) != FFN_OK ||
        (st = ffn_linear(hp, x, w1, b1, R, D, H)) != FFN_OK) {
        fail(c, "train forward / ffn_block_act / ffn_linear: status %d (%s)", st,
             ffn_status_string(st));
        return;
    }
    same_bits(c, "ffn_block_act_train's y vs ffn_block_act", yc, ya, R * D);
    same_bits(c, "ffn_block_act_train's h vs ffn_linear", hc, hp, R * H);
    memcpy(ya, x, R * D * sizeof *x);   /* y == x */
    if ((st = ffn_block_act_train(ya, hp, ya, w1, b1, w2, b2, R, D, H, a_, scr, ns)) != FFN_OK) {
        fail(c, "train forward in place: status %d", st);
        return;
    }
    same_bits(c, "ffn_block_act_train y == x", ya, yc, R * D);
    same_bits(c, "ffn_block_act_train y == x: h", hp, hc, R * H);
    poison(yp, R * D); poison(hp, R * H);
    st = ffn_block_act_train_packed(yp, hp, x, w1p, b1, w2p, b2, R, D, H, a_, scr, ns);
    if (st != FFN_OK) {
        fail(c, "ffn_block_act_train_packed: status %d", st);
        return;
    }
    same_bits(c, "ffn_block_act_train_packed vs unpacked: y", yp, yc, R * D);
    same_bits(c, "ffn_block_act_train_packed vs unpacked: h", hp, hc, R * H);
    rh = pre_vs_torch(c, "h (fc1(x)) vs torch's", hc, h, x, w1, b1, R, D, H);
    if (c->failed) return;

    /* the backward from torch's h, and the public calls composed */
    for (g = 0; g < 5; g++) {
        got[g] = g ? dup_floats(c, g0[g - 1], gn[g]) : alloc_floats(c, gn[g]);
        cmp[g] = g ? dup_floats(c, g0[g - 1], gn[g]) : alloc_floats(c, gn[g]);
    }
    one = alloc_floats(c, R * D > H * D ? R * D : H * D);
    a = alloc_floats(c, R * H); da = alloc_floats(c, R * H); dh = alloc_floats(c, R * H);
    lscr = alloc_floats(c, nl);
    ea = (double *)alloc_n(c, R * H, sizeof *ea);
    edh = (double *)alloc_n(c, R * H, sizeof *edh);
    if (c->failed) return;
    poison(got[0], gn[0]);
    st = ffn_block_act_backward(got[0], got[1], got[2], got[3], got[4], dy, x, h, w1, w2, R, D,
                                H, a_, scr, nb);
    if (st != FFN_OK) {
        fail(c, "ffn_block_act_backward: status %d (%s)", st, ffn_status_string(st));
        return;
    }
    if ((st = ffn_activation(a, h, R * H, a_)) != FFN_OK ||
        (st = ffn_linear_backward(da, cmp[3], cmp[4], dy, a, w2, R, H, D, lscr, nl)) != FFN_OK ||
        (st = ffn_activation_backward(dh, da, h, R * H, a_)) != FFN_OK ||
        (st = ffn_linear_backward(cmp[0], cmp[1], cmp[2], dh, x, w1, R, D, H, lscr, nl)) != FFN_OK) {
        fail(c, "the public calls composed: status %d", st);
        return;
    }
    for (g = 0; g < 5; g++) {
        char what[96];
        snprintf(what, sizeof what, "%s vs the public calls composed", gname[g]);
        same_bits(c, what, got[g], cmp[g], gn[g]);
    }
    for (g = 0; g < 5 && !c->failed; g++) {     /* each gradient alone */
        float *o[5] = {NULL, NULL, NULL, NULL, NULL};
        char what[64];
        if (g) memcpy(one, g0[g - 1], gn[g] * sizeof *one);
        else poison(one, gn[g]);
        o[g] = one;
        st = ffn_block_act_backward(o[0], o[1], o[2], o[3], o[4], dy, x, h, w1, w2, R, D, H, a_,
                                    scr, nb);
        snprintf(what, sizeof what, "%s alone vs with the others", gname[g]);
        if (st != FFN_OK) fail(c, "%s: status %d", what, st);
        else same_bits(c, what, one, got[g], gn[g]);
    }
    if (c->failed) return;

    /* against torch */
    memset(s, 0, sizeof s);
    for (k = 0; k < R * H; k++) ea[k] = act_err(act, h[k]);
    for (i = 0; i < D; i++) {
        for (j = 0; j < H; j++)
            note_tol(&s[3], i * H + j, got[3][i * H + j], ex[3][i * H + j],
                     grad_tol(R, acc[2], g0[2][i * H + j], dy + i, D, a + j, H, ea + j, H));
        note_tol(&s[4], i, got[4][i], ex[4][i],
                 grad_tol(R, acc[3], g0[3][i], NULL, 0, dy + i, D, NULL, 0));
    }
    for (r = 0; r < R; r++)     /* da's sum bound (K = d) through act' */
        for (j = 0; j < H; j++)
            edh[r * H + j] = act_grad_err(act, h[r * H + j], da[r * H + j],
                                          grad_tol(D, 0, 0.0, dy + r * D, 1, w2 + j, H, NULL, 0));
    for (j = 0; j < H; j++) {
        for (k = 0; k < D; k++)
            note_tol(&s[1], j * D + k, got[1][j * D + k], ex[1][j * D + k],
                     grad_tol(R, acc[0], g0[0][j * D + k], x + k, D, dh + j, H, edh + j, H));
        note_tol(&s[2], j, got[2][j], ex[2][j],
                 grad_tol(R, acc[1], g0[1][j], NULL, 0, dh + j, H, edh + j, H));
    }
    for (r = 0; r < R; r++)
        for (k = 0; k < D; k++)
            note_tol(&s[0], r * D + k, got[0][r * D + k], ex[0][r * D + k],
                     grad_tol(H, 0, 0.0, w1 + k, D, dh + r * H, 1, edh + r * H, 1));
    for (g = 0; g < 5; g++) verdict(c, &s[g], gname[g], g == 2 || g == 4 ? 1 : 2, gs[g]);
    snprintf(info, cap, "max_err/tol dx %.3f dw1 %.3f db1 %.3f dw2 %.3f db2 %.3f h %.3f (sum "
             "bounds, K = hidden, rows, rows, rows, rows, d); train forward, packed, y==x, the "
             "public calls composed, one at a time: the same bits; err vs float64 (ffn.h/torch):",
             s[0].max_ratio, s[1].max_ratio, s[2].max_ratio, s[3].max_ratio, s[4].max_ratio, rh);
    for (g = 0; g < 5; g++)
        ref64_report(c, info, cap, gname[g], got[g], ex[g], ref[g], gn[g], g == 4);
    /* db1 as a sum (dh is ffn.h's own: the public calls composed, the same bits) */
    memcpy(one, g0[1], H * sizeof *one);
    if ((st = ffn_linear_backward(NULL, NULL, one, tdh, NULL, NULL, R, D, H, lscr, nl)) != FFN_OK) {
        fail(c, "db alone from torch's dh: status %d", st);
        return;
    }
    {
        size_t len = strlen(info);
        snprintf(info + len, cap - len, "; db vs the exact sum of torch's dh (ffn.h/torch), "
                 "and of each one's own:");
    }
    own_sum_report(c, info, cap, "db1", got[2], dh, one, ex[2], tdh, g0[1], R, H);
}

/* op=ffn_gated_backward: ffn_gated_train and ffn_gated_backward as the block's above, for
   down(act(gate(x)) * up(x)): the train forward's gate_h, up_h the bits of ffn_linear (and
   within the sum bound of torch's), y the bits of ffn_gated; the backward from torch's
   gate_h, up_h bit for bit the public calls composed (ffn_activation, the product,
   ffn_linear_backward (down), the products dp * up and dp * a, ffn_activation_backward,
   ffn_linear_backward (gate, up), dx the sum of the two); against torch per element:
   p = a * up within |up| e_a plus each side's rounding (2^-23 |p|), carried into dw_down
   (K = rows); dp's sum bound (K = d) e_dp into da = dp * up (|up| e_dp + rounding) and
   du = dp * a (|a| e_dp + (|dp| + e_dp) e_a + rounding), da through act' (act_grad_err)
   into dg; dg and du into their weight and bias gradients (K = rows) and into dx
   (K = hidden each, plus the final sum's rounding on each side, 2^-23 |dx|). Without
   biases, the bias gradients are NULL; with them, db_gate and db_up as sums as db1 of
   op=ffn_block_backward (own_sum_report, on grad_gate_h and grad_up_h). */
static void run_ffn_gated_backward(gcase *c, char *info, size_t cap)
{
    static const char *const gname[7] = {"dx", "dw_gate", "db_gate", "dw_up", "db_up", "dw_down",
                                         "db_down"};
    size_t R = get_size(c, "rows"), D = get_size(c, "d_model"), H = get_size(c, "hidden");
    const int act = act_of(c), a_ = act | act_fast;
    size_t xs[2], ws[2], wds[2], hs[2], gs[7][2], gn[7], r, i, j, k, ns, nb, nl, n;
    float *x, *wg, *bg, *wu, *bu, *wd, *bd, *dy, *gh, *uh, *g0[7], *ex[7], *got[7], *cmp[7];
    float *one, *scr, *yc, *ya, *yp, *ghc, *uhc, *ghp, *uhp, *pg, *pu, *pd, *a, *p, *dp, *dav;
    float *du, *dg, *dxu, *lscr, *tdg = NULL, *tdu = NULL;
    const double *ref[7];
    double *ea, *ep, *eda, *edu, *edg, rg, ru;
    cmp_stats s[7];
    int st, ok1, ok2, ok3, acc[7], g, has_b;

    if (c->failed) return;
    xs[0] = R; xs[1] = D;
    ws[0] = H; ws[1] = D;
    wds[0] = D; wds[1] = H;
    hs[0] = R; hs[1] = H;
    n = R * H;
    memcpy(gs[0], xs, sizeof xs); memcpy(gs[1], ws, sizeof ws); gs[2][0] = H;
    memcpy(gs[3], ws, sizeof ws); gs[4][0] = H; memcpy(gs[5], wds, sizeof wds); gs[6][0] = D;
    gn[0] = R * D; gn[1] = gn[3] = H * D; gn[2] = gn[4] = H; gn[5] = D * H; gn[6] = D;
    x = load_f32(c, "x", 2, xs);
    wg = load_f32(c, "w_gate", 2, ws);
    bg = load_bias(c, "b_gate", H, &ok1);
    wu = load_f32(c, "w_up", 2, ws);
    bu = load_bias(c, "b_up", H, &ok2);
    wd = load_f32(c, "w_down", 2, wds);
    bd = load_bias(c, "b_down", D, &ok3);
    dy = load_f32(c, "dy", 2, xs);
    gh = load_f32(c, "gate_h", 2, hs);
    uh = load_f32(c, "up_h", 2, hs);
    if (c->failed || !ok1 || !ok2 || !ok3) return;
    has_b = bg != NULL;
    if ((bu != NULL) != has_b || (bd != NULL) != has_b) {
        fail(c, "some biases but not all");
        return;
    }
    if (has_b) {    /* torch's gradients of gate_h and up_h, the inputs of its db_gate, db_up */
        tdg = load_f32(c, "grad_gate_h", 2, hs);
        tdu = load_f32(c, "grad_up_h", 2, hs);
    }
    for (g = 1; g < 7; g++) {   /* the .grad before the backward (without biases: zeros, unused) */
        char key[32];
        snprintf(key, sizeof key, "%s_0", gname[g]);
        g0[g] = load_or_zeros(c, key, g % 2 ? 2 : 1, gs[g], &acc[g]);
    }
    g0[0] = NULL;
    acc[0] = 0;
    for (g = 0; g < 7; g++) {
        char key[32];
        ex[g] = NULL;
        ref[g] = NULL;
        if (g % 2 == 0 && g && !has_b) continue;
        snprintf(key, sizeof key, "expect_%s", gname[g]);
        ex[g] = load_f32(c, key, g % 2 || !g ? 2 : 1, gs[g]);
        snprintf(key, sizeof key, "ref64_%s", gname[g]);
        ref[g] = load_f64(c, key, g % 2 || !g ? 2 : 1, gs[g]);
    }
    if (c->failed) return;

    /* the train forward */
    ns = ffn_block_scratch_floats(R, D, H);
    nb = ffn_gated_backward_scratch_floats(R, D, H);
    nl = ffn_linear_backward_scratch_floats(R, D, H);
    if (ffn_linear_backward_scratch_floats(R, H, D) > nl)
        nl = ffn_linear_backward_scratch_floats(R, H, D);
    k = ffn_gated_scratch_floats(R, D, H);
    if (!ns || !nb || !nl || !k) { fail(c, "a scratch size query returned 0"); return; }
    if (k < nb) k = nb;
    scr = alloc_floats(c, k);
    yc = alloc_floats(c, R * D); ya = alloc_floats(c, R * D); yp = alloc_floats(c, R * D);
    ghc = alloc_floats(c, n); uhc = alloc_floats(c, n);
    ghp = alloc_floats(c, n); uhp = alloc_floats(c, n);
    pg = pack(c, wg, D, H); pu = pack(c, wu, D, H); pd = pack(c, wd, H, D);
    if (c->failed) return;
    poison(yc, R * D); poison(ghc, n); poison(uhc, n);
    if ((st = ffn_gated_train(yc, ghc, uhc, x, wg, bg, wu, bu, wd, bd, R, D, H, a_, scr, ns)) ||
        (st = ffn_gated(ya, x, wg, bg, wu, bu, wd, bd, R, D, H, a_, scr, k)) != FFN_OK ||
        (st = ffn_linear(ghp, x, wg, bg, R, D, H)) != FFN_OK ||
        (st = ffn_linear(uhp, x, wu, bu, R, D, H)) != FFN_OK) {
        fail(c, "train forward / ffn_gated / ffn_linear: status %d (%s)", st,
             ffn_status_string(st));
        return;
    }
    same_bits(c, "ffn_gated_train's y vs ffn_gated", yc, ya, R * D);
    same_bits(c, "ffn_gated_train's gate_h vs ffn_linear", ghc, ghp, n);
    same_bits(c, "ffn_gated_train's up_h vs ffn_linear", uhc, uhp, n);
    memcpy(ya, x, R * D * sizeof *x);   /* y == x */
    if ((st = ffn_gated_train(ya, ghp, uhp, ya, wg, bg, wu, bu, wd, bd, R, D, H, a_, scr, ns))) {
        fail(c, "train forward in place: status %d", st);
        return;
    }
    same_bits(c, "ffn_gated_train y == x", ya, yc, R * D);
    poison(yp, R * D); poison(ghp, n); poison(uhp, n);
    st = ffn_gated_train_packed(yp, ghp, uhp, x, pg, bg, pu, bu, pd, bd, R, D, H, a_, scr, ns);
    if (st != FFN_OK) {
        fail(c, "ffn_gated_train_packed: status %d", st);
        return;
    }
    same_bits(c, "ffn_gated_train_packed vs unpacked: y", yp, yc, R * D);
    same_bits(c, "ffn_gated_train_packed vs unpacked: gate_h", ghp, ghc, n);
    same_bits(c, "ffn_gated_train_packed vs unpacked: up_h", uhp, uhc, n);
    rg = pre_vs_torch(c, "gate_h vs torch's", ghc, gh, x, wg, bg, R, D, H);
    ru = pre_vs_torch(c, "up_h vs torch's", uhc, uh, x, wu, bu, R, D, H);
    if (c->failed) return;

    /* the backward from torch's gate_h and up_h, and the public calls composed */
    for (g = 0; g < 7; g++) {
        got[g] = cmp[g] = NULL;
        if (g % 2 == 0 && g && !has_b) continue;
        got[g] = g ? dup_floats(c, g0[g], gn[g]) : alloc_floats(c, gn[g]);
        cmp[g] = g ? dup_floats(c, g0[g], gn[g]) : alloc_floats(c, gn[g]);
    }
    one = alloc_floats(c, R * D > H * D ? R * D : H * D);
    a = alloc_floats(c, n); p = alloc_floats(c, n); dp = alloc_floats(c, n);
    dav = alloc_floats(c, n); du = alloc_floats(c, n); dg = alloc_floats(c, n);
    dxu = alloc_floats(c, R * D);
    lscr = alloc_floats(c, nl);
    ea = (double *)alloc_n(c, n, sizeof *ea);
    ep = (double *)alloc_n(c, n, sizeof *ep);
    eda = (double *)alloc_n(c, n, sizeof *eda);
    edu = (double *)alloc_n(c, n, sizeof *edu);
    edg = (double *)alloc_n(c, n, sizeof *edg);
    if (c->failed) return;
    poison(got[0], gn[0]);
    st = ffn_gated_backward(got[0], got[1], got[2], got[3], got[4], got[5], got[6], dy, x, gh, uh,
                            wg, wu, wd, R, D, H, a_, scr, nb);
    if (st != FFN_OK) {
        fail(c, "ffn_gated_backward: status %d (%s)", st, ffn_status_string(st));
        return;
    }
    if ((st = ffn_activation(a, gh, n, a_)) != FFN_OK) { fail(c, "ffn_activation: %d", st); return; }
    for (k = 0; k < n; k++) p[k] = a[k] * uh[k];
    if ((st = ffn_linear_backward(dp, cmp[5], cmp[6], dy, p, wd, R, H, D, lscr, nl)) != FFN_OK) {
        fail(c, "down's ffn_linear_backward: %d", st);
        return;
    }
    for (k = 0; k < n; k++) {
        dav[k] = dp[k] * uh[k];
        du[k] = dp[k] * a[k];
    }
    if ((st = ffn_activation_backward(dg, dav, gh, n, a_)) != FFN_OK ||
        (st = ffn_linear_backward(cmp[0], cmp[1], cmp[2], dg, x, wg, R, D, H, lscr, nl)) != FFN_OK ||
        (st = ffn_linear_backward(dxu, cmp[3], cmp[4], du, x, wu, R, D, H, lscr, nl)) != FFN_OK) {
        fail(c, "the public calls composed: status %d", st);
        return;
    }
    for (k = 0; k < R * D; k++) cmp[0][k] = cmp[0][k] + dxu[k];
    for (g = 0; g < 7; g++) {
        char what[96];
        if (!got[g]) continue;
        snprintf(what, sizeof what, "%s vs the public calls composed", gname[g]);
        same_bits(c, what, got[g], cmp[g], gn[g]);
    }
    for (g = 0; g < 7 && !c->failed; g++) {     /* each gradient alone */
        float *o[7] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
        char what[64];
        if (!got[g]) continue;
        if (g) memcpy(one, g0[g], gn[g] * sizeof *one);
        else poison(one, gn[g]);
        o[g] = one;
        st = ffn_gated_backward(o[0], o[1], o[2], o[3], o[4], o[5], o[6], dy, x, gh, uh, wg, wu, wd,
                                R, D, H, a_, scr, nb);
        snprintf(what, sizeof what, "%s alone vs with the others", gname[g]);
        if (st != FFN_OK) fail(c, "%s: status %d", what, st);
        else same_bits(c, what, one, got[g], gn[g]);
    }
    if (c->failed) return;

    /* against torch */
    memset(s, 0, sizeof s);
    for (k = 0; k < n; k++) {
        const double au = fabs((double)uh[k]);
        ea[k] = act_err(act, gh[k]);
        ep[k] = au * ea[k] + EPS32 * (fabs((double)p[k]) + au * ea[k]);
    }
    for (i = 0; i < D; i++) {
        for (j = 0; j < H; j++)
            note_tol(&s[5], i * H + j, got[5][i * H + j], ex[5][i * H + j],
                     grad_tol(R, acc[5], g0[5][i * H + j], dy + i, D, p + j, H, ep + j, H));
        if (has_b)
            note_tol(&s[6], i, got[6][i], ex[6][i],
                     grad_tol(R, acc[6], g0[6][i], NULL, 0, dy + i, D, NULL, 0));
    }
    for (r = 0; r < R; r++)
        for (j = 0; j < H; j++) {
            const size_t q = r * H + j;
            const double e = grad_tol(D, 0, 0.0, dy + r * D, 1, wd + j, H, NULL, 0);
            const double au = fabs((double)a[q]), uu = fabs((double)uh[q]);
            eda[q] = uu * e + EPS32 * (fabs((double)dav[q]) + uu * e);
            edu[q] = au * e + (fabs((double)dp[q]) + e) * ea[q];
            edu[q] += EPS32 * (fabs((double)du[q]) + edu[q]);
            edg[q] = act_grad_err(act, gh[q], dav[q], eda[q]);
        }
    for (j = 0; j < H; j++) {
        for (k = 0; k < D; k++) {
            note_tol(&s[1], j * D + k, got[1][j * D + k], ex[1][j * D + k],
                     grad_tol(R, acc[1], g0[1][j * D + k], x + k, D, dg + j, H, edg + j, H));
            note_tol(&s[3], j * D + k, got[3][j * D + k], ex[3][j * D + k],
                     grad_tol(R, acc[3], g0[3][j * D + k], x + k, D, du + j, H, edu + j, H));
        }
        if (has_b) {
            note_tol(&s[2], j, got[2][j], ex[2][j],
                     grad_tol(R, acc[2], g0[2][j], NULL, 0, dg + j, H, edg + j, H));
            note_tol(&s[4], j, got[4][j], ex[4][j],
                     grad_tol(R, acc[4], g0[4][j], NULL, 0, du + j, H, edu + j, H));
        }
    }
    for (r = 0; r < R; r++)
        for (k = 0; k < D; k++) {
            const double tg = grad_tol(H, 0, 0.0, wg + k, D, dg + r * H, 1, edg + r * H, 1);
            const double tu = grad_tol(H, 0, 0.0, wu + k, D, du + r * H, 1, edu + r * H, 1);
            note_tol(&s[0], r * D + k, got[0][r * D + k], ex[0][r * D + k],
                     tg + tu + EPS32 * fabs((double)got[0][r * D + k]) + ldexp(tg + tu, -24));
        }
    for (g = 0; g < 7; g++)
        if (got[g]) verdict(c, &s[g], gname[g], g % 2 || !g ? 2 : 1, gs[g]);
    snprintf(info, cap, "max_err/tol dx %.3f dw_gate %.3f dw_up %.3f dw_down %.3f", s[0].max_ratio,
             s[1].max_ratio, s[3].max_ratio, s[5].max_ratio);
    if (has_b) {
        size_t len = strlen(info);
        snprintf(info + len, cap - len, " db_gate %.3f db_up %.3f db_down %.3f", s[2].max_ratio,
                 s[4].max_ratio, s[6].max_ratio);
    }
    {
        size_t len = strlen(info);
        snprintf(info + len, cap - len, " gate_h %.3f up_h %.3f (sum bounds); train forward, "
                 "packed, y==x, the public calls composed, one at a time: the same bits; err vs "
                 "float64 (ffn.h/torch):", rg, ru);
    }
    for (g = 0; g < 7; g++)
        if (got[g])
            ref64_report(c, info, cap, gname[g], got[g], ex[g], ref[g], gn[g], g == 6);
    if (has_b) {    /* dg and du are ffn.h's own (the public calls composed, the same bits) */
        size_t len = strlen(info);
        snprintf(info + len, cap - len, "; db vs the exact sum of torch's dh (ffn.h/torch), "
                 "and of each one's own:");
        for (g = 2; g <= 4; g += 2) {
            const float *td = g == 2 ? tdg : tdu;
            memcpy(one, g0[g], H * sizeof *one);
            st = ffn_linear_backward(NULL, NULL, one, td, NULL, NULL, R, D, H, lscr, nl);
            if (st != FFN_OK) {
                fail(c, "db alone from torch's dh: status %d", st);
                return;
            }
            own_sum_report(c, info, cap, gname[g], got[g], g == 2 ? dg : du, one, ex[g], td,
                           g0[g], R, H);
        }
    }
}

/* ---- the manifest ------------------------------------------------------------------------ */

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0, got;
    if (!f) return NULL;
    do {
        if (cap - len < 4096) {
            char *nb = (char *)realloc(buf, cap = cap * 2 + 65536);
            if (!nb) { free(buf); fclose(f); return NULL; }
            buf = nb;
        }
        got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
    } while (got > 0);
    if (ferror(f)) { free(buf); fclose(f); return NULL; }
    fclose(f);
    buf[len] = '\0';
    if (strlen(buf) != len) { free(buf); return NULL; }  /* NUL bytes: not a text file */
    return buf;
}

static int is_space(char ch) { return ch == ' ' || ch == '\t' || ch == '\r'; }

/* Split one line (modified in place) into c; 0 if it is not `case NAME k=v ...`. */
static int parse_line(char *line, gcase *c, char *err, size_t cap)
{
    char *tok[MAX_KV + 2];
    int ntok = 0, i;
    char *p = line;
    for (;;) {
        while (is_space(*p)) p++;
        if (!*p) break;
        if (ntok == MAX_KV + 2) { snprintf(err, cap, "too many fields"); return 0; }
        tok[ntok++] = p;
        while (*p && !is_space(*p)) p++;
        if (*p) *p++ = '\0';
    }
    if (ntok < 3 || strcmp(tok[0], "case") != 0 || strchr(tok[1], '=')) {
        snprintf(err, cap, "expected `case NAME op=OP key=value ...`");
        return 0;
    }
    c->name = tok[1];
    for (i = 2; i < ntok; i++) {
        char *eq = strchr(tok[i], '=');
        if (!eq || eq == tok[i]) { snprintf(err, cap, "field '%s' is not key=value", tok[i]); return 0; }
        *eq = '\0';
        c->key[c->nkv] = tok[i];
        c->val[c->nkv++] = eq + 1;
    }
    return 1;
}

/* ---- rope ---------------------------------------------------------------------------- */

/* The library's RoPE against torch's on glibc (the goldens), where only libm differs
   (MANIFEST, "# own libm calls": powf, cosf, sinf within 1 ulp of the correctly rounded
   value), with a derived tolerance:
   - inv_freq = 1 / powf(theta, e): the powers within 1 ulp (2^-23 relative), the
     reciprocal keeps that and each side rounds once (2^-24): 2^-22 |t|;
   - cos/sin of a = f32(p) * inv_freq: the angles differ by p 2^-22 inv plus the two
     products' roundings, <= 2^-21 |a|; cos/sin are 1-Lipschitz and round within 1/2 ulp
     (own) and 1 ulp (glibc) of |v| <= 1 (ulp <= 2^-23); times the factor f, rounded once
     on each side: <= 2^-21 f (|a| + 1) (rope_cs_tol);
   - a rotated value x_e c -+ x_p s (its pair partner x_p): the products carry |x| times
     those, round on each side (2^-24 |x| f each), and so does the sum (|result| <= (|x_e| +
     |x_p|) f): (|x_e| + |x_p|) (rope_cs_tol + 2^-22 f); values past rot are copies (0). */
static double rope_cs_tol(double p, float inv_t, double f)
{
    return ldexp(f * (fabs(p * (double)inv_t) + 1.0), -21);
}

static cmp_stats rope_vs_torch(const float *own_bits, const float *t, const float *x,
                               const float *inv_t, const int64_t *tokpos, size_t start, double f,
                               size_t n, size_t S, size_t H, size_t D, size_t R, int lay, int pair)
{
    cmp_stats s;
    size_t e, half = R / 2;
    memset(&s, 0, sizeof s);
    s.golden_only = 1;
    for (e = 0; e < n; e++) {
        const size_t d = e % D, r = e / D;
        const size_t tok = lay == PE_ROPE_BSHD ? r / H : (r / (H * S)) * S + r % S;
        double tol = 0.0;       /* past rot: a copy */
        if (d < R) {
            const size_t j = pair == PE_ROPE_HALF ? (d < half ? d : d - half) : d / 2;
            const size_t p = pair == PE_ROPE_HALF ? (d < half ? e + half : e - half)
                                                  : (d % 2 ? e - 1 : e + 1);
            tol = (fabs((double)x[e]) + fabs((double)x[p])) *
                  (rope_cs_tol((double)tokpos[tok] + (double)start, inv_t[j], f) + ldexp(f, -22));
        }
        note_tol(&s, e, own_bits[e], t[e], tol);
    }
    return s;
}

/* op=rope: every RoPE function on one case, each compared bit for bit (no tolerance)
   against the library's own bits: the cache and the rotation perform torch's float32
   operations in torch's order (one powf, one division, products, cosf/sinf, products
   and a sum per pair, no FMA) with the header's correctly rounded powf/cosf/sinf; the
   goldens are torch's scalar dispatch (dispatch=glibc: glibc's), which the library's
   bits must match within the derived tolerances above (rope_vs_torch). The exact cache:
   torch's float64 formula (pow, cos, sin in double) rounded once, compared with torch's
   as it is (a double's last bit changes the rounded float only within 2^-29 of a float
   midpoint). Checked: pe_rope_inv_freq; pe_rope_cache and pe_rope_cache_exact at every
   token's position; pe_rope_apply_direct out of place and in place; pe_rope_apply from a
   cache that starts at the case's smallest position (rows relative to it), out of place
   and in place. */
static void run_rope(gcase *c, char *info, size_t cap)
{
    size_t B = get_size(c, "batch"), S = get_size(c, "seq"), H = get_size(c, "heads");
    size_t D = get_size(c, "head_dim"), R = get_size(c, "rot"), start = get_count(c, "start");
    double theta = get_real(c, "theta"), factor = get_real(c, "factor");
    const char *layout = get(c, "layout"), *pairing = get(c, "pairing"), *posv = get(c, "pos");
    size_t xs[4], cs[2], hs, n, T, half = R / 2, i, lo = (size_t)-1, hi = 0, L;
    int lay, pair, st;
    int64_t *pos = NULL, *tokpos, *rel;
    float *x, *inv_e, *cos_e, *sin_e, *cx_e, *sx_e, *expect, *inv, *cc, *sc, *ce, *se, *out, *inpl;
    float *tc, *ts, *inv_o, *cos_o, *sin_o, *exp_o;
    cmp_stats s[8], tt[4];
    const char *what[8] = {"pe_rope_inv_freq", "pe_rope_cache cos", "pe_rope_cache sin",
                           "pe_rope_cache_exact cos", "pe_rope_cache_exact sin",
                           "pe_rope_apply_direct", "pe_rope_apply_direct in place",
                           "pe_rope_apply (cache)"};

    if (c->failed) return;
    lay = strcmp(layout, "bshd") == 0 ? PE_ROPE_BSHD : strcmp(layout, "bhsd") == 0 ? PE_ROPE_BHSD : 0;
    pair = strcmp(pairing, "half") == 0 ? PE_ROPE_HALF
           : strcmp(pairing, "interleaved") == 0 ? PE_ROPE_INTERLEAVED : 0;
    if (!lay || !pair) { fail(c, "unknown layout=%s or pairing=%s", layout, pairing); return; }
    xs[0] = B; xs[1] = lay == PE_ROPE_BHSD ? H : S; xs[2] = lay == PE_ROPE_BHSD ? S : H; xs[3] = D;
    T = prod(c, B, S);
    cs[0] = T; cs[1] = half;
    hs = half;
    n = prod(c, T, prod(c, H, D));
    if (strcmp(posv, "none") != 0) { size_t ps[2]; ps[0] = B; ps[1] = S; pos = load_i64(c, "pos", 2, ps); }
    x = load_f32(c, "x", 4, xs);
    inv_e = load_f32_own(c, "inv_freq", 1, &hs, &inv_o);
    cos_e = load_f32_own(c, "cos", 2, cs, &cos_o);
    sin_e = load_f32_own(c, "sin", 2, cs, &sin_o);
    cx_e = load_f32(c, "cos_exact", 2, cs);
    sx_e = load_f32(c, "sin_exact", 2, cs);
    expect = load_f32_own(c, "expect", 4, xs, &exp_o);
    inv = alloc_floats(c, half);
    cc = alloc_floats(c, T * half); sc = alloc_floats(c, T * half);
    ce = alloc_floats(c, T * half); se = alloc_floats(c, T * half);
    out = alloc_floats(c, n + 1); inpl = alloc_floats(c, n);
    tokpos = (int64_t *)alloc_n(c, T, sizeof *tokpos);
    rel = (int64_t *)alloc_n(c, T, sizeof *rel);
    if (c->failed) return;
    out += 1;   /* off the vector alignment */

    /* every token's position (start + pos or start + s), and their range */
    for (i = 0; i < T; i++) {
        tokpos[i] = pos ? pos[i] : (int64_t)(i % S);
        if ((size_t)tokpos[i] + start < lo) lo = (size_t)tokpos[i] + start;
        if ((size_t)tokpos[i] + start > hi) hi = (size_t)tokpos[i] + start;
    }
    L = hi - lo + 1;

    memset(s, 0, sizeof s);
    poison(inv, half);
    if ((st = pe_rope_inv_freq(inv, R, theta)) != PE_OK) { fail(c, "inv_freq: %s", pe_status_string(st)); return; }
    s[0] = compare_exact(inv, inv_o, half);
    poison(cc, T * half); poison(sc, T * half);
    if ((st = pe_rope_cache(cc, sc, inv, R, (float)factor, tokpos, (int64_t)start, T)) != PE_OK) {
        fail(c, "cache: %s", pe_status_string(st));
        return;
    }
    s[1] = compare_exact(cc, cos_o, T * half);
    s[2] = compare_exact(sc, sin_o, T * half);
    poison(ce, T * half); poison(se, T * half);
    if ((st = pe_rope_cache_exact(ce, se, R, theta, tokpos, (int64_t)start, T)) != PE_OK) {
        fail(c, "cache_exact: %s", pe_status_string(st));
        return;
    }
    s[3] = compare_exact(ce, cx_e, T * half);
    s[4] = compare_exact(se, sx_e, T * half);

    poison(out, n);
    st = pe_rope_apply_direct(out, x, B, S, H, D, R, lay, pair, inv, (float)factor, pos, (int64_t)start);
    if (st != PE_OK) { fail(c, "apply_direct: %s", pe_status_string(st)); return; }
    s[5] = compare_exact(out, exp_o, n);
    memcpy(inpl, x, n * sizeof *x);
    st = pe_rope_apply_direct(inpl, inpl, B, S, H, D, R, lay, pair, inv, (float)factor, pos,
                              (int64_t)start);
    if (st != PE_OK) { fail(c, "apply_direct in place: %s", pe_status_string(st)); return; }
    s[6] = compare_exact(inpl, exp_o, n);

    /* From a cache of positions lo..hi (rows 0..L-1): the rows of the tokens are their
       positions minus lo, given as pos - (lo - start) or, without pos, by start - lo. */
    if (L <= 4096) {
        tc = alloc_floats(c, L * half);
        ts = alloc_floats(c, L * half);
        if (c->failed) return;
        if ((st = pe_rope_cache(tc, ts, inv, R, (float)factor, NULL, (int64_t)lo, L)) != PE_OK) {
            fail(c, "cache for apply: %s", pe_status_string(st));
            return;
        }
        for (i = 0; i < T; i++) rel[i] = tokpos[i] + (int64_t)start - (int64_t)lo;
        poison(out, n);
        st = pe_rope_apply(out, x, B, S, H, D, R, lay, pair, tc, ts, L, pos ? rel : NULL,
                           pos ? 0 : (int64_t)(start - lo));
        if (st != PE_OK) { fail(c, "apply: %s", pe_status_string(st)); return; }
        s[7] = compare_exact(out, exp_o, n);
        memcpy(inpl, x, n * sizeof *x);
        st = pe_rope_apply(inpl, inpl, B, S, H, D, R, lay, pair, tc, ts, L, pos ? rel : NULL,
                           pos ? 0 : (int64_t)(start - lo));
        if (st != PE_OK) { fail(c, "apply in place: %s", pe_status_string(st)); return; }
        {
            cmp_stats si = compare_exact(inpl, exp_o, n);
            verdict(c, &si, "pe_rope_apply (cache) in place", 4, xs);
        }
    } else {
        fail(c, "positions span %zu > 4096: no cache test", L);
    }
    for (i = 0; i < 8; i++) verdict(c, &s[i], what[i], i == 0 ? 1 : i < 5 ? 2 : 4,
                                    i == 0 ? &hs : i < 5 ? cs : xs);
    /* the library's own bits against torch's (rope_vs_torch's derivation) */
    memset(tt, 0, sizeof tt);
    tt[0].golden_only = tt[1].golden_only = tt[2].golden_only = 1;
    for (i = 0; i < half; i++)
        note_tol(&tt[0], i, inv_o[i], inv_e[i], ldexp(fabs((double)inv_e[i]), -22));
    for (i = 0; i < T * half; i++) {
        const double p = (double)tokpos[i / half] + (double)start;
        note_tol(&tt[1], i, cos_o[i], cos_e[i], rope_cs_tol(p, inv_e[i % half], factor));
        note_tol(&tt[2], i, sin_o[i], sin_e[i], rope_cs_tol(p, inv_e[i % half], factor));
    }
    tt[3] = rope_vs_torch(exp_o, expect, x, inv_e, tokpos, start, factor, n, S, H, D, R, lay, pair);
    verdict(c, &tt[0], "own inv_freq vs torch's (tolerance)", 1, &hs);
    verdict(c, &tt[1], "own cos vs torch's (tolerance)", 2, cs);
    verdict(c, &tt[2], "own sin vs torch's (tolerance)", 2, cs);
    verdict(c, &tt[3], "own rotation vs torch's (tolerance)", 4, xs);
    snprintf(info, cap, "bit-exact (the library's own bits): inv_freq, cache, apply_direct, apply "
             "(cache), out of place and in place; cache_exact (torch's); not torch-on-glibc's: "
             "inv_freq %zu, cos %zu, sin %zu, out %zu of %zu (max diff/tol %.3g); positions "
             "%zu..%zu", own_moved(inv_o, inv_e, half), own_moved(cos_o, cos_e, T * half),
             own_moved(sin_o, sin_e, T * half), own_moved(exp_o, expect, n), n,
             fmax(fmax(tt[0].max_ratio, tt[1].max_ratio), fmax(tt[2].max_ratio, tt[3].max_ratio)),
             lo, hi);
}

/* op=alibi: pe_alibi_slopes (mode paper / bloom) and pe_alibi_bias, bit for bit against
   the library's own bits. The paper's slopes are pow/log2 in double, rounded once, as
   Python computes them; the BLOOM slopes powf as torch's scalar dispatch (dispatch=glibc)
   calls it, correctly rounded here (own_slopes; torch's within 1 ulp: powf within 1 ulp
   of each other, no other step); the bias one float32 product per element (and -inf), as
   torch. */
static void run_alibi(gcase *c, char *info, size_t cap)
{
    size_t H = get_size(c, "heads"), Q = get_size(c, "q_len"), K = get_size(c, "k_len");
    size_t off = get_count(c, "offset"), causal = get_count(c, "causal"), bs[3], n, i;
    const char *mode = get(c, "mode");
    float *slopes_e, *expect, *slopes, *bias, *slopes_o, *exp_o;
    int m, st;
    cmp_stats s1, s2, s3;
    if (c->failed) return;
    m = strcmp(mode, "paper") == 0 ? PE_ALIBI_PAPER : strcmp(mode, "bloom") == 0 ? PE_ALIBI_BLOOM : 0;
    if (!m) { fail(c, "unknown mode=%s", mode); return; }
    bs[0] = H; bs[1] = Q; bs[2] = K;
    n = prod(c, H, prod(c, Q, K));
    slopes_e = load_f32_own(c, "slopes", 1, &H, &slopes_o);
    expect = load_f32_own(c, "expect", 3, bs, &exp_o);
    slopes = alloc_floats(c, H);
    bias = alloc_floats(c, n);
    if (c->failed) return;
    poison(slopes, H);
    poison(bias, n);
    if ((st = pe_alibi_slopes(slopes, H, m)) != PE_OK) { fail(c, "slopes: %s", pe_status_string(st)); return; }
    s1 = compare_exact(slopes, slopes_o, H);
    if ((st = pe_alibi_bias(bias, slopes, H, Q, K, off, (int)causal)) != PE_OK) {
        fail(c, "bias: %s", pe_status_string(st));
        return;
    }
    s2 = compare_exact(bias, exp_o, n);
    verdict(c, &s1, "pe_alibi_slopes", 1, &H);
    verdict(c, &s2, "pe_alibi_bias", 3, bs);
    memset(&s3, 0, sizeof s3);
    s3.golden_only = 1;
    for (i = 0; i < H; i++) {
        const double u = ulp_distance(slopes_o[i], slopes_e[i]);
        note(&s3, i, slopes_o[i], slopes_e[i], u, 1.0, !(u <= 1.0));
    }
    verdict(c, &s3, "own slopes vs torch's (1 ulp)", 1, &H);
    snprintf(info, cap, "bit-exact (the library's own bits): slopes and bias; not "
             "torch-on-glibc's: %zu slopes (max %.0f ulp), %zu of %zu bias values",
             own_moved(slopes_o, slopes_e, H), s3.max_err, own_moved(exp_o, expect, n), n);
}

/* op=timestep: pe_timestep_embedding, bit for bit against the library's own bits: torch's
   float32 steps (a float32 product and division, expf, products, sinf/cosf) as its scalar
   dispatch (dispatch=glibc) runs them, with correctly rounded expf/sinf/cosf. Torch's
   (glibc's) within a derived tolerance: e = expf(..) <= 1 (its argument is <= 0) within
   1 ulp (2^-23 e) of the library's; a = scale (t e) carries that and the two products'
   roundings, <= 2^-21 |scale t|; sin/cos 1-Lipschitz, their results (<= 1) within 1 ulp
   and 1/2 ulp: 2^-21 |scale t| + 2^-22. */
static void run_timestep(gcase *c, char *info, size_t cap)
{
    size_t N = get_size(c, "n"), D = get_size(c, "dim"), flip = get_count(c, "flip_sin_to_cos");
    double shift = get_real(c, "downscale_freq_shift"), scale = get_real(c, "scale");
    double maxp = get_real(c, "max_period");
    size_t os[2];
    float *t, *expect, *out, *exp_o;
    cmp_stats s, so;
    size_t i;
    int st;
    if (c->failed) return;
    os[0] = N; os[1] = D;
    t = load_f32(c, "t", 1, &N);
    expect = load_f32_own(c, "expect", 2, os, &exp_o);
    out = alloc_floats(c, prod(c, N, D));
    if (c->failed) return;
    poison(out, N * D);
    st = pe_timestep_embedding(out, t, N, D, (int)flip, shift, scale, maxp);
    if (st != PE_OK) { fail(c, "status %d (%s)", st, pe_status_string(st)); return; }
    s = compare_exact(out, exp_o, N * D);
    verdict(c, &s, "pe_timestep_embedding", 2, os);
    memset(&so, 0, sizeof so);
    so.golden_only = 1;
    for (i = 0; i < N * D; i++)
        note_tol(&so, i, exp_o[i], expect[i],
                 ldexp(fabs(scale * (double)t[i / D]), -21) + ldexp(1.0, -22));
    verdict(c, &so, "own bits vs torch's (tolerance)", 2, os);
    snprintf(info, cap, "bit-exact (the library's own bits: correctly rounded expf/sinf/cosf in "
             "torch's float32 steps); %zu of %zu not torch-on-glibc's (max |diff| %.3g, max "
             "diff/tol %.3g)", own_moved(exp_o, expect, N * D), N * D, so.max_err, so.max_ratio);
}

/* ---- rope_scaling ---------------------------------------------------------------------- */

/* op=rope_scaling: pe_rope_inv_freq_scaled against HF's rope type (type=linear, dynamic,
   yarn, llama3, longrope), then the scaled frequencies through pe_rope_cache +
   pe_rope_apply and pe_rope_apply_direct against HF's rotary forward (cos/sin times
   attention_scaling, rotate_half; batch 1, BSHD, positions seq_len-seq..seq_len-1), all
   bit for bit (no tolerance) against the library's own bits: every float32 operation of
   HF's tensor code is one IEEE operation here in the same order (a Python scalar enters a
   float32 op rounded to float; scalar / tensor is torch's reciprocal times the scalar;
   tensor / scalar a true division), powf where torch's scalar dispatch (dispatch=glibc)
   calls glibc's, correctly rounded here, and the Python double scalars (YaRN's correction
   range and mscale, dynamic NTK's base, LongRoPE's sqrt(1 + ln s / ln L0)) the same
   double operations (log, pow correctly rounded; make_goldens.py asserts they give
   Python's values here). Not compared with torch's within a tolerance: a frequency 1 ulp
   away can fall on the other side of llama3's band edges or YaRN's ramp, a
   discontinuity; MANIFEST ("# own rope_scaling") counts the values that moved. The
   attention factor is HF's Python float (float64 file); pe.h returns it rounded to
   float, which is what torch's `cos * attention_scaling` multiplies by. */
static void run_rope_scaling(gcase *c, char *info, size_t cap)
{
    size_t D = get_size(c, "head_dim"), R = get_size(c, "rot"), L = get_size(c, "seq_len");
    double theta = get_real(c, "theta");
    const char *type = get(c, "type");
    const size_t H = 1, S = 3;
    size_t half = R / 2, xs[4], cs[2], one = 1, n, i;
    pe_rope_scaling sc;
    float *inv_e, *cos_e, *sin_e, *x, *expect, *sf = NULL, *lf = NULL, *inv, *cc, *scc, *out;
    float *inv_o, *cos_o, *sin_o, *exp_o;
    double *af_e;
    float af;
    int t, st;
    cmp_stats s[6];
    const char *what[6] = {"pe_rope_inv_freq_scaled", "pe_rope_cache cos", "pe_rope_cache sin",
                           "pe_rope_apply (cache)", "pe_rope_apply_direct",
                           "pe_rope_apply_direct in place"};
    if (c->failed) return;
    t = strcmp(type, "linear") == 0 ? PE_ROPE_SCALING_LINEAR
        : strcmp(type, "dynamic") == 0 ? PE_ROPE_SCALING_DYNAMIC
        : strcmp(type, "yarn") == 0 ? PE_ROPE_SCALING_YARN
        : strcmp(type, "llama3") == 0 ? PE_ROPE_SCALING_LLAMA3
        : strcmp(type, "longrope") == 0 ? PE_ROPE_SCALING_LONGROPE : 0;
    if (!t || L < S) { fail(c, "unknown type=%s or seq_len < %zu", type, S); return; }
    if (pe_rope_scaling_init(&sc, t) != PE_OK) { fail(c, "pe_rope_scaling_init failed"); return; }
    /* the config's keys; absent ones keep HF's defaults (pe_rope_scaling_init) */
    sc.factor = get_real_or(c, "factor", 0.0);
    sc.max_position_embeddings = has(c, "max_pos") ? get_size(c, "max_pos") : 0;
    sc.original_max_position_embeddings = has(c, "orig") ? get_size(c, "orig") : 0;
    sc.attention_factor = get_real_or(c, "given_attention_factor", 0.0);
    sc.beta_fast = get_real_or(c, "beta_fast", 32.0);
    sc.beta_slow = get_real_or(c, "beta_slow", 1.0);
    sc.mscale = get_real_or(c, "mscale", 0.0);
    sc.mscale_all_dim = get_real_or(c, "mscale_all_dim", 0.0);
    sc.truncate = has(c, "truncate") ? (int)get_count(c, "truncate") : 1;
    sc.low_freq_factor = get_real_or(c, "low", 0.0);
    sc.high_freq_factor = get_real_or(c, "high", 0.0);
    sc.dynamic_as_module = has(c, "dynamic_as_module") ? (int)get_count(c, "dynamic_as_module") : 0;
    if (t == PE_ROPE_SCALING_LONGROPE) {
        sf = load_f32(c, "short_factor", 1, &half);
        lf = load_f32(c, "long_factor", 1, &half);
        sc.short_factor = sf;
        sc.long_factor = lf;
    }
    xs[0] = 1; xs[1] = S; xs[2] = H; xs[3] = D;
    cs[0] = S; cs[1] = half;
    n = prod(c, S * H, D);
    inv_e = load_f32_own(c, "inv_freq", 1, &half, &inv_o);
    af_e = load_f64(c, "attention_factor", 1, &one);
    cos_e = load_f32_own(c, "cos", 2, cs, &cos_o);
    sin_e = load_f32_own(c, "sin", 2, cs, &sin_o);
    x = load_f32(c, "x", 4, xs);
    expect = load_f32_own(c, "expect", 4, xs, &exp_o);
    inv = alloc_floats(c, half);
    cc = alloc_floats(c, S * half);
    scc = alloc_floats(c, S * half);
    out = alloc_floats(c, n);
    if (c->failed) return;

    memset(s, 0, sizeof s);
    poison(inv, half);
    af = -1.0f;
    if ((st = pe_rope_inv_freq_scaled(inv, &af, R, theta, &sc, L)) != PE_OK) {
        fail(c, "inv_freq_scaled: %s", pe_status_string(st));
        return;
    }
    s[0] = compare_exact(inv, inv_o, half);
    {
        const float want = (float)af_e[0];
        cmp_stats sa = compare_exact(&af, &want, 1);
        verdict(c, &sa, "attention_factor (HF's float, rounded to float32)", 1, &one);
    }
    poison(cc, S * half); poison(scc, S * half);
    if ((st = pe_rope_cache(cc, scc, inv, R, af, NULL, (int64_t)(L - S), S)) != PE_OK) {
        fail(c, "cache: %s", pe_status_string(st));
        return;
    }
    s[1] = compare_exact(cc, cos_o, S * half);
    s[2] = compare_exact(scc, sin_o, S * half);
    poison(out, n);
    /* the cache's rows 0..S-1 are the positions L-S..L-1: start 0 */
    st = pe_rope_apply(out, x, 1, S, H, D, R, PE_ROPE_BSHD, PE_ROPE_HALF, cc, scc, S, NULL, 0);
    if (st != PE_OK) { fail(c, "apply: %s", pe_status_string(st)); return; }
    s[3] = compare_exact(out, exp_o, n);
    poison(out, n);
    st = pe_rope_apply_direct(out, x, 1, S, H, D, R, PE_ROPE_BSHD, PE_ROPE_HALF, inv, af, NULL,
                              (int64_t)(L - S));
    if (st != PE_OK) { fail(c, "apply_direct: %s", pe_status_string(st)); return; }
    s[4] = compare_exact(out, exp_o, n);
    memcpy(out, x, n * sizeof *x);
    st = pe_rope_apply_direct(out, out, 1, S, H, D, R, PE_ROPE_BSHD, PE_ROPE_HALF, inv, af, NULL,
                              (int64_t)(L - S));
    if (st != PE_OK) { fail(c, "apply_direct in place: %s", pe_status_string(st)); return; }
    s[5] = compare_exact(out, exp_o, n);
    for (i = 0; i < 6; i++)
        verdict(c, &s[i], what[i], i == 0 ? 1 : i < 3 ? 2 : 4, i == 0 ? &half : i < 3 ? cs : xs);
    snprintf(info, cap, "bit-exact (the library's own bits): inv_freq, attention factor %.9g, "
             "cache, apply (cache, direct, in place); not torch-on-glibc's: inv_freq %zu, cos "
             "%zu, sin %zu, out %zu of %zu; positions %zu..%zu", (double)af,
             own_moved(inv_o, inv_e, half), own_moved(cos_o, cos_e, S * half),
             own_moved(sin_o, sin_e, S * half), own_moved(exp_o, expect, n), n, L - S, L - 1);
}

/* ---- training: pe_add_*_backward, pe_embed*_backward, pe_rope_apply*_backward ------- */

/* A table's gradient (max_len, d) accumulated onto dtable0, against torch's .grad. Rows
   < seq bit for bit: pe.h sums over the batch in torch's order (SumKernel.cpp's cascade_sum
   as the MANIFEST comment states it; make_goldens.py asserts torch computed exactly that)
   and adds the sum to dtable0 once, as autograd's .grad += does, so there is no
   tolerance. Rows >= seq: pe.h does not write them (their bits stay dtable0's); torch
   adds its zero-filled gradient there (dtable0 + 0, which makes -0.0 +0.0), so torch's
   value must equal dtable0's as a number. */
static void check_table_grad(gcase *c, const char *what, const float *got, const float *d0,
                             const float *expect, size_t seq, size_t max_len, size_t d)
{
    size_t i, ts[2];
    cmp_stats s = compare_exact(got, expect, seq * d);
    ts[0] = max_len;
    ts[1] = d;
    verdict(c, &s, what, 2, ts);
    for (i = seq * d; i < max_len * d; i++)
        if (fbits(got[i]) != fbits(d0[i]) ||
            !(expect[i] == d0[i] || (isnan(expect[i]) && isnan(d0[i])))) {
            fail(c, "%s: row %zu >= seq: got 0x%08lx, dtable0 0x%08lx, torch 0x%08lx", what,
                 i / d, (unsigned long)fbits(got[i]), (unsigned long)fbits(d0[i]),
                 (unsigned long)fbits(expect[i]));
            return;
        }
}

/* Guard floats after an accumulated output: they must stay as they were. */
#define GOLD_GUARD 16

static void check_guard(gcase *c, const char *what, const float *g)
{
    size_t i;
    for (i = 0; i < GOLD_GUARD; i++)
        if (fbits(g[i]) != 0xA5A5A5A5u) { fail(c, "%s: wrote past its output", what); return; }
}

/* op=pe_add_batch_first_backward / pe_add_seq_first_backward: the table's gradient of an
   add accumulated onto dtable0 (zeros, or non-zero: accumulation into .grad). */
static void run_add_backward(gcase *c, int batch_first, char *info, size_t cap)
{
    size_t B = get_size(c, "batch"), S = get_size(c, "seq"), D = get_size(c, "d_model");
    size_t M = get_size(c, "max_len"), xs[3], ts[2], nt;
    float *dout, *d0, *expect, *dt;
    int st;

    if (c->failed) return;
    xs[0] = batch_first ? B : S;
    xs[1] = batch_first ? S : B;
    xs[2] = D;
    ts[0] = M;
    ts[1] = D;
    nt = prod(c, M, D);
    dout = load_f32(c, "dout", 3, xs);
    d0 = load_f32(c, "dtable0", 2, ts);
    expect = load_f32(c, "expect", 2, ts);
    dt = alloc_floats(c, nt + 1 + GOLD_GUARD);
    if (c->failed) return;
    dt += 1;    /* off the vector alignment */
    memcpy(dt, d0, nt * sizeof *dt);
    poison(dt + nt, GOLD_GUARD);
    st = batch_first ? pe_add_batch_first_backward(dt, dout, B, S, D, M)
                     : pe_add_seq_first_backward(dt, dout, S, B, D, M);
    if (st) { fail(c, "status %d (%s)", st, pe_status_string(st)); return; }
    check_table_grad(c, "dtable", dt, d0, expect, S, M, D);
    check_guard(c, "dtable", dt + nt);
    snprintf(info, cap, "bit-exact (torch's summation order over batch %zu, accumulated); rows "
             ">= seq untouched", B);
}

/* op=embed_backward: pe_embed_backward and pe_embed_i64_backward against autograd's
   tok_emb.weight.grad and pos_emb.weight.grad, accumulated onto dwte0 / dwpe0.
   dwpe as a table's gradient (check_table_grad: bit for bit). dwte: pe.h adds every
   token's row onto dwte[id] in token order, each row as (g + 0) (torch adds the rows to
   a zero-filled table, where 0 + -0.0 is +0.0); checked first bit for bit against that
   order computed here, for both id types, one output alone and both. torch sums the rows
   of each id from zero in token order and adds the sum to .grad once: the same bits
   where an id occurs once, or where dwte0 is 0 (then both are ((0 + g1) + g2) + ..).
   Where an id occurs m >= 2 times onto a non-zero dwte0 the two orders differ: each is
   a float sum of the m + 1 terms dwte0, g1 .. gm with m roundings, within gamma_m S of
   the exact sum (S = |dwte0| + sum |g_i|, gamma_m = m u / (1 - m u), u = 2^-24; Higham,
   Accuracy and Stability of Numerical Algorithms, 4.2), so they are within 2 gamma_m S
   of each other; m counts that id's tokens, so the bound grows with the batch. Rows no
   token uses: untouched, torch's value equal to dwte0's (dwte0 + 0). */
static void run_embed_backward(gcase *c, char *info, size_t cap)
{
    size_t B = get_size(c, "batch"), S = get_size(c, "seq"), D = get_size(c, "d_model");
    size_t V = get_size(c, "vocab"), L = get_size(c, "context_length");
    size_t n, nte, npe, i, j, is[2], os[3], ws[2], ps[2], nexact = 0, nbound = 0, maxm = 0;
    int64_t *ids;
    int32_t *ids32;
    size_t *count;
    float *dout, *te0, *pe0, *ete, *epe, *ref, *te64, *pe64, *te32, *pe32, *teonly, *peonly;
    cmp_stats s;
    int st;

    if (c->failed) return;
    is[0] = B; is[1] = S;
    os[0] = B; os[1] = S; os[2] = D;
    ws[0] = V; ws[1] = D;
    ps[0] = L; ps[1] = D;
    n = prod(c, B, S);
    nte = prod(c, V, D);
    npe = prod(c, L, D);
    ids = load_i64(c, "ids", 2, is);
    dout = load_f32(c, "dout", 3, os);
    te0 = load_f32(c, "dwte0", 2, ws);
    pe0 = load_f32(c, "dwpe0", 2, ps);
    ete = load_f32(c, "expect_dwte", 2, ws);
    epe = load_f32(c, "expect_dwpe", 2, ps);
    ids32 = (int32_t *)alloc_n(c, n, sizeof *ids32);
    count = (size_t *)alloc_n(c, V, sizeof *count);
    ref = alloc_floats(c, nte);
    te64 = alloc_floats(c, nte + 1 + GOLD_GUARD);
    pe64 = alloc_floats(c, npe + 1 + GOLD_GUARD);
    te32 = alloc_floats(c, nte);
    pe32 = alloc_floats(c, npe);
    teonly = alloc_floats(c, nte);
    peonly = alloc_floats(c, npe);
    if (c->failed) return;
    te64 += 1;
    pe64 += 1;
    memset(count, 0, V * sizeof *count);
    for (i = 0; i < n; i++) {
        if (ids[i] < 0 || (uint64_t)ids[i] >= (uint64_t)V) {
            fail(c, "ids[%zu] = %lld outside [0, %zu)", i, (long long)ids[i], V);
            return;
        }
        ids32[i] = (int32_t)ids[i];
        if (++count[ids[i]] > maxm) maxm = count[ids[i]];
    }
    memcpy(te64, te0, nte * sizeof *te64);
    memcpy(te32, te0, nte * sizeof *te32);
    memcpy(teonly, te0, nte * sizeof *teonly);
    memcpy(pe64, pe0, npe * sizeof *pe64);
    memcpy(pe32, pe0, npe * sizeof *pe32);
    memcpy(peonly, pe0, npe * sizeof *peonly);
    poison(te64 + nte, GOLD_GUARD);
    poison(pe64 + npe, GOLD_GUARD);
    if ((st = pe_embed_i64_backward(te64, pe64, dout, ids, B, S, D, V, L)) != PE_OK ||
        (st = pe_embed_backward(te32, pe32, dout, ids32, B, S, D, V, L)) != PE_OK ||
        (st = pe_embed_i64_backward(teonly, NULL, dout, ids, B, S, D, V, L)) != PE_OK ||
        (st = pe_embed_backward(NULL, peonly, dout, ids32, B, S, D, V, L)) != PE_OK) {
        fail(c, "status %d (%s)", st, pe_status_string(st));
        return;
    }
    check_guard(c, "dwte", te64 + nte);
    check_guard(c, "dwpe", pe64 + npe);
    /* pe.h's documented order, computed here */
    memcpy(ref, te0, nte * sizeof *ref);
    for (i = 0; i < n; i++)
        for (j = 0; j < D; j++) {
            const float g = dout[i * D + j] + 0.0f;
            ref[(size_t)ids[i] * D + j] += g;
        }
    same_bits(c, "dwte (int64 ids) vs token order", te64, ref, nte);
    same_bits(c, "dwte (int32 ids) vs int64", te32, te64, nte);
    same_bits(c, "dwte alone (dwpe NULL) vs both", teonly, te64, nte);
    same_bits(c, "dwpe (int32 ids) vs int64", pe32, pe64, npe);
    same_bits(c, "dwpe alone (dwte NULL) vs both", peonly, pe64, npe);
    check_table_grad(c, "dwpe", pe64, pe0, epe, S, L, D);
    if (c->failed) return;
    memset(&s, 0, sizeof s);
    for (i = 0; i < V; i++)
        for (j = 0; j < D; j++) {
            const size_t e = i * D + j, m = count[i];
            if (!m) {
                const int ok = fbits(te64[e]) == fbits(te0[e]) &&
                               (ete[e] == te0[e] || (isnan(ete[e]) && isnan(te0[e])));
                note(&s, e, te64[e], ete[e], ok ? 0.0 : INFINITY, 0.0, !ok);
            } else if (m == 1 || te0[e] == 0.0f) {
                const int bad = !same_value(te64[e], ete[e]);
                note(&s, e, te64[e], ete[e], bad ? fabs((double)te64[e] - ete[e]) : 0.0, 0.0, bad);
                nexact++;
            } else {
                const double u = ldexp(1.0, -24), gm = (double)m * u / (1.0 - (double)m * u);
                double sum = fabs((double)te0[e]);
                size_t k;
                for (k = 0; k < n; k++)
                    if ((size_t)ids[k] == i) sum += fabs((double)dout[k * D + j]);
                note_tol(&s, e, te64[e], ete[e], 2.0 * gm * sum);
                nbound++;
            }
        }
    verdict(c, &s, "dwte", 2, ws);
    snprintf(info, cap, "dwpe bit-exact; dwte = pe.h's token order bit for bit (int32, int64, "
             "alone), vs torch %zu values bit-exact (id once or dwte0 = 0), %zu within 2 gamma_m S "
             "(max err/tol %.3f, ids repeat up to %zu times)", nexact, nbound, s.max_ratio, maxm);
}

/* Equal values up to the sign of a zero (and any NaN equals any NaN). */
static cmp_stats compare_zero_sign(const float *c, const float *t, size_t n, size_t *nzero)
{
    cmp_stats s;
    size_t i;
    memset(&s, 0, sizeof s);
    for (i = 0; i < n; i++) {
        int bad = !same_value(c[i], t[i]) && !(c[i] == 0.0f && t[i] == 0.0f);
        if (!bad && !same_value(c[i], t[i])) (*nzero)++;
        note(&s, i, c[i], t[i], bad ? fabs((double)c[i] - (double)t[i]) : 0.0, 0.0, bad);
    }
    return s;
}

/* op=rope_backward: pe_rope_apply_backward (from a cache of the case's positions) and
   pe_rope_apply_direct_backward, out of place and in place, against autograd's x.grad
   (made under torch's scalar dispatch, as op=rope: glibc cosf/sinf in the cache), with
   the library's own bits (own_expect, own_inv_freq: correctly rounded powf/cosf/sinf).
   The gradient of a rotation is the rotation by the opposite angle, (ga c + gb s, gb c -
   ga s), and autograd computes exactly these products and sums (make_goldens.py asserts
   it): bit for bit, except that autograd adds zero-filled gradients of x's slices, where
   -0.0 + 0 is +0.0 (so a zero of pe.h's dx may be +0.0 in torch's; no other difference is
   allowed). The direct and cache forms must give the same bits. Torch's own values
   within rope_vs_torch's tolerance (the same rotation, sin negated). */
static void run_rope_backward(gcase *c, char *info, size_t cap)
{
    size_t B = get_size(c, "batch"), S = get_size(c, "seq"), H = get_size(c, "heads");
    size_t D = get_size(c, "head_dim"), R = get_size(c, "rot"), start = get_count(c, "start");
    double theta = get_real(c, "theta"), factor = get_real(c, "factor");
    const char *layout = get(c, "layout"), *pairing = get(c, "pairing"), *posv = get(c, "pos");
    size_t xs[4], hs, n, T, half = R / 2, i, lo = (size_t)-1, hi = 0, L, nz = 0;
    int lay, pair, st;
    int64_t *pos = NULL, *rel;
    float *dout, *inv_e, *expect, *inv, *tc, *ts, *dx, *inpl, *dx2, *inv_o, *exp_o;
    int64_t *tokpos;
    cmp_stats s[4], so;
    const char *what[4] = {"pe_rope_apply_direct_backward", "pe_rope_apply_direct_backward in place",
                           "pe_rope_apply_backward (cache)", "pe_rope_apply_backward (cache) in place"};

    if (c->failed) return;
    lay = strcmp(layout, "bshd") == 0 ? PE_ROPE_BSHD : strcmp(layout, "bhsd") == 0 ? PE_ROPE_BHSD : 0;
    pair = strcmp(pairing, "half") == 0 ? PE_ROPE_HALF
           : strcmp(pairing, "interleaved") == 0 ? PE_ROPE_INTERLEAVED : 0;
    if (!lay || !pair) { fail(c, "unknown layout=%s or pairing=%s", layout, pairing); return; }
    xs[0] = B; xs[1] = lay == PE_ROPE_BHSD ? H : S; xs[2] = lay == PE_ROPE_BHSD ? S : H; xs[3] = D;
    T = prod(c, B, S);
    hs = half;
    n = prod(c, T, prod(c, H, D));
    if (strcmp(posv, "none") != 0) { size_t ps[2]; ps[0] = B; ps[1] = S; pos = load_i64(c, "pos", 2, ps); }
    dout = load_f32(c, "dout", 4, xs);
    inv_e = load_f32_own(c, "inv_freq", 1, &hs, &inv_o);
    expect = load_f32_own(c, "expect", 4, xs, &exp_o);
    tokpos = (int64_t *)alloc_n(c, T, sizeof *tokpos);
    inv = alloc_floats(c, half);
    dx = alloc_floats(c, n + 1);
    dx2 = alloc_floats(c, n);
    inpl = alloc_floats(c, n);
    rel = (int64_t *)alloc_n(c, T, sizeof *rel);
    if (c->failed) return;
    dx += 1;    /* off the vector alignment */
    for (i = 0; i < T; i++) {
        const size_t p = (size_t)(pos ? pos[i] : (int64_t)(i % S)) + start;
        tokpos[i] = pos ? pos[i] : (int64_t)(i % S);
        if (p < lo) lo = p;
        if (p > hi) hi = p;
    }
    L = hi - lo + 1;
    if (L > 4096) { fail(c, "positions span %zu > 4096: no cache test", L); return; }
    if ((st = pe_rope_inv_freq(inv, R, theta)) != PE_OK) { fail(c, "inv_freq: %s", pe_status_string(st)); return; }
    same_bits(c, "pe_rope_inv_freq vs its own bits", inv, inv_o, half);
    tc = alloc_floats(c, L * half);
    ts = alloc_floats(c, L * half);
    if (c->failed) return;

    poison(dx, n);
    st = pe_rope_apply_direct_backward(dx, dout, B, S, H, D, R, lay, pair, inv, (float)factor, pos,
                                       (int64_t)start);
    if (st != PE_OK) { fail(c, "direct_backward: %s", pe_status_string(st)); return; }
    s[0] = compare_zero_sign(dx, exp_o, n, &nz);
    memcpy(inpl, dout, n * sizeof *inpl);
    st = pe_rope_apply_direct_backward(inpl, inpl, B, S, H, D, R, lay, pair, inv, (float)factor,
                                       pos, (int64_t)start);
    if (st != PE_OK) { fail(c, "direct_backward in place: %s", pe_status_string(st)); return; }
    same_bits(c, "direct_backward in place vs out of place", inpl, dx, n);
    s[1] = compare_zero_sign(inpl, exp_o, n, &nz);

    /* from a cache of positions lo..hi, rows relative to lo (as run_rope) */
    if ((st = pe_rope_cache(tc, ts, inv, R, (float)factor, NULL, (int64_t)lo, L)) != PE_OK) {
        fail(c, "cache: %s", pe_status_string(st));
        return;
    }
    for (i = 0; i < T; i++) rel[i] = (pos ? pos[i] : 0) + (int64_t)start - (int64_t)lo;
    poison(dx2, n);
    st = pe_rope_apply_backward(dx2, dout, B, S, H, D, R, lay, pair, tc, ts, L, pos ? rel : NULL,
                                pos ? 0 : (int64_t)(start - lo));
    if (st != PE_OK) { fail(c, "apply_backward: %s", pe_status_string(st)); return; }
    same_bits(c, "apply_backward (cache) vs direct", dx2, dx, n);
    s[2] = compare_zero_sign(dx2, exp_o, n, &nz);
    memcpy(inpl, dout, n * sizeof *inpl);
    st = pe_rope_apply_backward(inpl, inpl, B, S, H, D, R, lay, pair, tc, ts, L, pos ? rel : NULL,
                                pos ? 0 : (int64_t)(start - lo));
    if (st != PE_OK) { fail(c, "apply_backward in place: %s", pe_status_string(st)); return; }
    s[3] = compare_zero_sign(inpl, exp_o, n, &nz);
    for (i = 0; i < 4; i++) verdict(c, &s[i], what[i], 4, xs);
    so = rope_vs_torch(exp_o, expect, dout, inv_e, tokpos, start, factor, n, S, H, D, R, lay, pair);
    verdict(c, &so, "own dx vs torch's (tolerance)", 4, xs);
    snprintf(info, cap, "bit-exact (the library's own bits) up to the sign of zero (%zu zeros "
             "+0.0 in torch's); direct, cache, out of place, in place: the same bits; %zu of %zu "
             "not torch-on-glibc's (max diff/tol %.3g); positions %zu..%zu", nz / 4,
             own_moved(exp_o, expect, n), n, so.max_ratio, lo, hi);
}

/* ---- a training run: op=train ------------------------------------------------------------ */

/* op=train: examples/train.h's model (the code examples/train.c runs) trained for `steps`
   AdamW steps from torch's initial parameters on the batches of its generator, and its
   loss at every step against torch's (loss32), which make_goldens.py got from the same
   model, batches and optimizer in float32, and again in float64 from the same initial
   values (loss64). The manifest's config must be examples/train.h's.

   Tolerance. Neither float32 run follows the float64 trajectory exactly: every operation
   rounds, and training carries each step's differences on into the next. Here they stay
   of the size of a few roundings instead of growing (max |torch32 - torch64| over the run
   is 2.2e-6, MANIFEST.txt's comment; trajectories that diverged chaotically would call
   for a smaller learning rate, not a wider tolerance). Let M_t = max over t' <= t of
   |torch32_t' - torch64_t'|: how far rounding alone has moved torch's loss so far.
   C's operations are no less accurate than torch's: ffn.h's sums stay within the
   contract's bound and its golden cases measure its error against float64 no larger than
   torch's; pe.h's embedding and its gradient are torch's bits, and so is the sinusoidal
   table here (the library's own, correctly rounded, expf/sinf/cosf give the bits of the
   table torch made under ATEN_CPU_CAPABILITY=default in all 128 values: MANIFEST, "# own
   train_sinusoidal"; elsewhere they would be within an ulp); the
   AdamW step is within a few ulps of torch's (op=opt_step); the softmax is torch's
   formula. So C's run strays from the float64 one as far as torch's does, with another
   draw of roundings; allow twice as far, |C_t - torch64_t| <= 2 M_t, and with
   |torch32_t - torch64_t| <= M_t:
      |C_t - torch32_t| <= 3 M_t + b_t,   b_t = 8 u (1 + |torch32_t|),   u = 2^-24.
   b_t is for a step where M_t is small by chance (at step 0 it is torch's error in
   evaluating one loss, nothing more): one evaluation of the loss from the same parameters
   rounds, per token and on each side, exp, the sum of the V exps (>= 1), log, the
   subtraction and the float32 result, on values of the size of 1 + the loss: a few
   roundings of that size each, 8 u (1 + loss) for both together. It also covers the
   softmax's expf and logf (this loop's own libm calls; AdamW's sqrt is correctly rounded
   and its bias corrections in double), which differ from one libm to another by an ulp
   here and there; what such a difference does to the later steps is a rounding's worth
   like any other. Measured here (README.md, "Training"): |C - torch32| / tol at most 0.18 and
   |C - torch64| <= 1.39 M_t; changing the learning rate by 0.1% fails at step 1, by one
   float ulp passes. The model must learn: the final loss below a twentieth of the first
   (ln 16 = 2.77 at the start, which a model that learns nothing keeps).
   Every path and thread count gives the same bits (pe.h's and ffn.h's contract; the
   softmax and the residual add are plain loops of float statements): the loss curve's
   bits must be those of the case's first path. */
static void run_train(gcase *c, char *info, size_t cap)
{
    static struct { char name[64]; uint64_t fp; int set; } first[8];
    const char *pos = get(c, "pos"), *act = get(c, "act");
    const int sin_pos = pos && strcmp(pos, "sinusoidal") == 0;
    const train_config cfg = train_default_config(sin_pos);
    const size_t steps = get_size(c, "steps");
    train_model m;
    float *init, *t32, *loss;
    double *t64, M = 0.0, worst = 0.0, worst64 = 0.0, d32 = 0.0, tol_worst = 0.0;
    const double u = EPS32 / 2.0;                   /* 2^-24 */
    uint64_t fp = UINT64_C(1469598103934665603);   /* FNV-1a over the losses' bits */
    size_t i, n_params, k;
    long t_worst = -1;
    int st;
    if (c->failed) return;
    /* the golden must be of examples/train.h's run */
    if (!(pos && (sin_pos || strcmp(pos, "learned") == 0) && act && strcmp(act, "relu") == 0 &&
          get_size(c, "vocab") == cfg.vocab && get_size(c, "seq") == cfg.seq &&
          get_size(c, "d_model") == cfg.d_model && get_size(c, "hidden") == cfg.hidden &&
          get_size(c, "batch") == cfg.batch && steps == (size_t)cfg.steps &&
          get_size(c, "seed") == cfg.seed && (float)get_real(c, "lr") == cfg.lr &&
          (float)get_real(c, "beta1") == cfg.beta1 && (float)get_real(c, "beta2") == cfg.beta2 &&
          (float)get_real(c, "eps") == cfg.eps &&
          (float)get_real(c, "weight_decay") == cfg.weight_decay)) {
        fail(c, "the manifest's config is not examples/train.h's train_default_config(%d)", sin_pos);
        return;
    }
    if ((st = train_init(&m, &cfg)) < 0) { fail(c, "train_init: %s", train_status_string(st)); return; }
    n_params = m.n_params;
    init = load_f32(c, "params", 1, &n_params);
    t32 = load_f32(c, "loss32", 1, &steps);
    t64 = load_f64(c, "loss64", 1, &steps);
    loss = alloc_floats(c, steps);
    if (c->failed) { train_free(&m); return; }
    memcpy(m.params, init, n_params * sizeof *init);
    for (i = 0; i < steps; i++)
        if ((st = train_step(&m, &loss[i])) < 0) {
            fail(c, "step %zu: %s", i, train_status_string(st));
            train_free(&m);
            return;
        }
    train_free(&m);
    for (i = 0; i < steps; i++) {
        const double c32 = (double)loss[i], e32 = fabs(c32 - (double)t32[i]);
        const double tol = 3.0 * (M = fmax(M, fabs((double)t32[i] - t64[i]))) +
                           8.0 * u * (1.0 + fabs((double)t32[i]));
        const uint32_t b = fbits(loss[i]);
        if (!(e32 <= tol) && t_worst < 0) {
            t_worst = (long)i;
            tol_worst = tol;
        }
        worst = fmax(worst, e32 / tol);
        worst64 = fmax(worst64, M > 0 ? fabs(c32 - t64[i]) / M : 0.0);
        d32 = fmax(d32, e32);
        for (k = 0; k < 4; k++) fp = (fp ^ ((b >> (8 * k)) & 0xFFu)) * UINT64_C(1099511628211);
    }
    if (t_worst >= 0)
        fail(c, "loss at step %ld: C %.9g, torch %.9g, |C - torch| %.3g > tol %.3g (max over the run "
             "|C - torch| / tol %.3f)", t_worst, (double)loss[t_worst], (double)t32[t_worst],
             fabs((double)loss[t_worst] - (double)t32[t_worst]), tol_worst, worst);
    if (!(loss[steps - 1] < loss[0] / 20.0f))
        fail(c, "the model did not learn: loss %.6g at step 0, %.6g at step %zu", (double)loss[0],
             (double)loss[steps - 1], steps - 1);
    for (k = 0; k < sizeof first / sizeof *first; k++) {
        if (!first[k].set) {
            snprintf(first[k].name, sizeof first[k].name, "%s", c->name);
            first[k].fp = fp;
            first[k].set = 1;
            break;
        }
        if (strcmp(first[k].name, c->name) == 0) {
            if (first[k].fp != fp)
                fail(c, "the loss curve's bits (fingerprint %016llx) differ from the first path's (%016llx)",
                     (unsigned long long)fp, (unsigned long long)first[k].fp);
            break;
        }
    }
    snprintf(info, cap, "%zu steps, loss %.4f -> %.6f (torch %.6f); max |C - torch| %.3g, / tol %.3f; "
             "max |C - torch64| / M_t %.3f; curve %016llx", steps, (double)loss[0],
             (double)loss[steps - 1], (double)t32[steps - 1], d32, worst, worst64,
             (unsigned long long)fp);
}

/* Which header a case's op belongs to (its path decides the case's arithmetic). */
static const th_lib *lib_of(const char *op)
{
    static const char *const pe_ops[] = {"pe_table", "pe_add_batch_first",
                                         "pe_add_seq_first", "embed", "rope", "alibi",
                                         "timestep", "rope_scaling",
                                         "pe_add_batch_first_backward",
                                         "pe_add_seq_first_backward", "embed_backward",
                                         "rope_backward"};
    size_t i;
    for (i = 0; i < sizeof pe_ops / sizeof *pe_ops; i++)
        if (op && strcmp(op, pe_ops[i]) == 0) return &th_pe;
    return &th_ffn;
}

/* Runs case c (parsed, op set) and prints its line; returns 1 if it passed, 0 if it
   failed. */
static int run_case(gcase *c, const char *path)
{
    char info[1024];
    const char *cases = getenv("GOLDEN_DIGESTS");
    info[0] = '\0';
    digest_case.h = DIGEST_BASIS;
    digest_case.n = 0;
    if (!c->op) {
        c->op = "?";
    } else if (strcmp(c->op, "pe_table") == 0) {
        run_pe_table(c, info, sizeof info);
    } else if (strcmp(c->op, "pe_add_batch_first") == 0) {
        run_pe_add(c, 1, info, sizeof info);
    } else if (strcmp(c->op, "pe_add_seq_first") == 0) {
        run_pe_add(c, 0, info, sizeof info);
    } else if (strcmp(c->op, "embed") == 0) {
        run_embed(c, info, sizeof info);
    } else if (strcmp(c->op, "rope") == 0) {
        run_rope(c, info, sizeof info);
    } else if (strcmp(c->op, "alibi") == 0) {
        run_alibi(c, info, sizeof info);
    } else if (strcmp(c->op, "timestep") == 0) {
        run_timestep(c, info, sizeof info);
    } else if (strcmp(c->op, "rope_scaling") == 0) {
        run_rope_scaling(c, info, sizeof info);
    } else if (strcmp(c->op, "pe_add_batch_first_backward") == 0) {
        run_add_backward(c, 1, info, sizeof info);
    } else if (strcmp(c->op, "pe_add_seq_first_backward") == 0) {
        run_add_backward(c, 0, info, sizeof info);
    } else if (strcmp(c->op, "embed_backward") == 0) {
        run_embed_backward(c, info, sizeof info);
    } else if (strcmp(c->op, "rope_backward") == 0) {
        run_rope_backward(c, info, sizeof info);
    } else if (strcmp(c->op, "relu") == 0 || strcmp(c->op, "act") == 0) {
        run_act(c, info, sizeof info);
    } else if (strcmp(c->op, "linear") == 0) {
        run_linear(c, info, sizeof info);
    } else if (strcmp(c->op, "opt_step") == 0) {
        run_opt_step(c, info, sizeof info);
    } else if (strcmp(c->op, "act_backward") == 0) {
        run_act_backward(c, info, sizeof info);
    } else if (strcmp(c->op, "linear_backward") == 0) {
        run_linear_backward(c, info, sizeof info);
    } else if (strcmp(c->op, "ffn_gated") == 0) {
        run_ffn_gated(c, info, sizeof info);
    } else if (strcmp(c->op, "ffn_block_backward") == 0) {
        run_ffn_block_backward(c, info, sizeof info);
    } else if (strcmp(c->op, "ffn_gated_backward") == 0) {
        run_ffn_gated_backward(c, info, sizeof info);
    } else if (strcmp(c->op, "train") == 0) {
        run_train(c, info, sizeof info);
    } else if (strcmp(c->op, "ffn_block") == 0 || strcmp(c->op, "ffn_block_act") == 0) {
        run_ffn_block(c, info, sizeof info);
    } else {
        fail(c, "unknown op (line %d)", c->line);
    }
    release(c);
    if (cases && strcmp(cases, "cases") == 0)
        printf("# digest case [%s] %s: %016llx (%lu outputs)\n", path, c->name,
               (unsigned long long)digest_case.h, (unsigned long)digest_case.n);
    if (c->failed) printf("FAIL [%s] %s  %s  %s\n", path, c->name, c->op, c->why);
    else printf("ok   [%s] %s  %s  %s\n", path, c->name, c->op, info);
    fflush(stdout);
    return !c->failed;
}

/* An activation case other than ReLU (FFN_FAST changes nothing there). */
static int has_fast_form(gcase *c)
{
    return c->op && (strcmp(c->op, "act") == 0 || strcmp(c->op, "ffn_block_act") == 0 ||
                     strcmp(c->op, "ffn_gated") == 0 || strcmp(c->op, "ffn_block_backward") == 0 ||
                     strcmp(c->op, "ffn_gated_backward") == 0) && has(c, "act") &&
           strcmp(get(c, "act"), "relu") != 0;
}

#define MAX_CASES 1024

int main(int argc, char **argv)
{
    const char *manifest = argc > 1 ? argv[1] : "reference/goldens/MANIFEST.txt";
    static gcase cases[MAX_CASES];
    static const th_lib *const libs[] = {&th_pe, &th_ffn};
    static digest digests[2][TH_MAX_PATHS];
    const char *paths[2][TH_MAX_PATHS];
    int npaths[2];
    char *text, *line, *next, *dir, *slash;
    int passed = 0, failed = 0, lineno = 0, ncases = 0, l, i, k;

    printf("# build: %s\n",
#ifdef _OPENMP
           "with OpenMP"
#else
           "without OpenMP"
#endif
    );
    printf("# manifest: %s\n", manifest);

    text = read_text(manifest);
    if (!text) {
        printf("FAIL manifest  cannot read %s (run `make reference` to generate the goldens)\n",
               manifest);
        printf("0 passed, 1 failed\n");
        return 1;
    }
    /* Golden files are relative to the manifest's directory. */
    dir = (char *)malloc(strlen(manifest) + 2);
    if (!dir) { printf("FAIL out of memory\n0 passed, 1 failed\n"); return 1; }
    strcpy(dir, manifest);
    slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    else strcpy(dir, ".");

    for (line = text; line; line = next) {
        gcase *c = &cases[ncases];
        char err[256], *p;
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        lineno++;
        for (p = line; is_space(*p); p++) {}
        if (*p == '\0' || *p == '#') continue;
        if (ncases == MAX_CASES) {
            printf("FAIL line %d  more than %d cases\n", lineno, MAX_CASES);
            failed++;
            break;
        }
        memset(c, 0, sizeof *c);
        c->dir = dir;
        c->line = lineno;
        if (!parse_line(p, c, err, sizeof err)) {
            printf("FAIL line %d  malformed manifest line: %s\n", lineno, err);
            failed++;
            continue;
        }
        c->op = get(c, "op");
        ncases++;
    }
    if (ncases == 0) {
        printf("FAIL manifest  %s has no case lines\n", manifest);
        failed++;
    }

    /* Every case on every path of its header that runs here (those without vector code
       too: each path's digest covers the same outputs). */
    for (l = 0; l < 2; l++) {
        const int n = npaths[l] = th_paths(libs[l], paths[l], stdout);
        for (k = 0; k < n; k++) {
            th_use(libs[l], paths[l][k]);
            digest_now = &digests[l][k];
            digest_now->h = DIGEST_BASIS;
            for (i = 0; i < ncases; i++) {
                gcase c = cases[i];     /* a fresh copy: a run records its verdict */
                int r;
                if (lib_of(c.op) != libs[l]) continue;
                r = run_case(&c, paths[l][k]);
                if (r > 0) passed++;
                else if (r == 0) failed++;
                if (has_fast_form(&cases[i])) {
                    char name[256];
                    c = cases[i];
                    snprintf(name, sizeof name, "%s+fast", c.name);
                    c.name = name;
                    act_fast = FFN_FAST;
                    r = run_case(&c, paths[l][k]);
                    act_fast = 0;
                    if (r > 0) passed++;
                    else if (r == 0) failed++;
                }
            }
        }
        th_use(libs[l], NULL);
    }
    digest_now = NULL;
    for (l = 0; l < 2; l++)
        for (k = 0; k < npaths[l]; k++)
            printf("# digest %s %s: %016llx (%lu outputs)\n", libs[l]->header, paths[l][k],
                   (unsigned long long)digests[l][k].h, (unsigned long)digests[l][k].n);
    free(dir);
    free(text);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

/* test_golden.c - every case of reference/goldens/MANIFEST.txt through pe.h / ffn.h on
   every path that runs here, against what PyTorch computed; where torch's values come
   from libm, the library's own bits (own_KEY, below) exactly and torch's within a
   tolerance derived next to each comparison (README.md, "Numerical contract").

   usage: test_golden [path/to/MANIFEST.txt]     (default reference/goldens/MANIFEST.txt)

   The manifest (reference/make_goldens.py documents each case): `case NAME op=OP
   key=value ...` per line, files relative to its directory, '#' lines comments, unknown
   keys ignored. Output: `ok   [PATH] NAME  op  ...` or `FAIL ...` (the worst element)
   per case and path, a digest per header and path (below), `N passed, N failed`; non-zero
   exit on a failure. A missing manifest, file or key, an unknown op or no cases fail. */
#include "../pe.h"
#include "../ffn.h"
#define NPY_IMPLEMENTATION
#include "../support/npy.h"
#include "../support/harness.h"
#include "../examples/train.h"

#define EPS32 (1.0 / 8388608.0)  /* 2^-23: float32 machine epsilon */
/* A shape as an argument, SH(R, D) (up to 4 sizes): one of 16 static slots, read by the
   call before the 16th next SH (C++ has no compound literals). */
static const size_t *sh_(size_t a, size_t b, size_t c, size_t d)
{
    static size_t slot[16][4];
    static unsigned k;
    size_t *s = slot[k++ % 16];
    s[0] = a, s[1] = b, s[2] = c, s[3] = d;
    return s;
}
#define SH_4(a, b, c, d, ...) sh_(a, b, c, d)
#define SH(...) SH_4(__VA_ARGS__, 0, 0, 0, 0)

/* ---- small float helpers ---------------------------------------------------- */

/* The digests: the library promises the same bits on every platform, path and thread
   count, so "# digest LIB PATH: HASH (N outputs)" must read the same on every build
   (tools/cross_test.sh compares them). 64-bit FNV-1a over each float's bits, low byte
   first, of every C-side value given to note() and same_bits(); not goldens compared with
   each other (cmp_stats.golden_only), nor the training losses (examples/train.h calls the
   platform's expf and logf). Every NaN hashes as 0x7FC00000 (its sign and payload are not
   promised). GOLDEN_DIGESTS=cases prints each case's digest too, so that a diff of two
   builds' logs names the cases that differ. */
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
    const uint32_t b = isnan(v) ? UINT32_C(0x7FC00000) : th_fbits(v);
    if (!digest_now) return;
    digest_add(digest_now, b);
    digest_add(&digest_case, b);
}

/* The "bit-exact" rule: th_same (torch does not promise a NaN payload, and neither does
   the C API), so -0.0 != 0.0. */
#define same_value th_same

/* Distance in ulps of two finite floats, on the ordered integer line (-0 == +0). */
static double ulp_distance(float c, float t)
{
    uint32_t a = th_fbits(c), b = th_fbits(t);
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
    int arg;                    /* the op's variant (its row's arg) */
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

/* key's value, or NULL (and with must, the case failed) if the case has no such key */
static const char *value_of(gcase *c, const char *key, int must)
{
    int i;
    for (i = 0; i < c->nkv; i++)
        if (strcmp(c->key[i], key) == 0) return c->val[i];
    if (must) fail(c, "missing key '%s'", key);
    return NULL;
}
#define get(c, key) value_of(c, key, 1)
/* The case has this key (optional keys only; get() fails on a missing one). */
#define has(c, key) (value_of(c, key, 0) != NULL)

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

/* Load file f (key's) of the case's directory into a; 0 (and the case failed) if it fails. */
static int open_npy(gcase *c, const char *key, const char *f, npy_array *a)
{
    char path[4096];
    int st;
    if (snprintf(path, sizeof path, "%s/%s", c->dir, f) >= (int)sizeof path) {
        fail(c, "path too long for %s", key);
        return 0;
    }
    if ((st = npy_load(path, a)) != NPY_OK) fail(c, "%s: %s: %s", key, path, npy_status_string(st));
    return st == NPY_OK;
}

/* "2,3": a shape for a message */
static const char *dims(char *buf, int ndim, const size_t *shape)
{
    int i, n = 0;
    buf[0] = '\0';
    for (i = 0; i < ndim && n < 200; i++) n += sprintf(buf + n, "%s%zu", i ? "," : "", shape[i]);
    return buf;
}

/* Load key's file, check that it has kind `kind` and exactly the given shape. */
static int load(gcase *c, const char *key, npy_array *a, char kind, int ndim,
                const size_t *shape)
{
    const char *f = get(c, key);
    char got[256], want[256];
    int i, ok;
    memset(a, 0, sizeof *a);
    if (!f || c->failed || !open_npy(c, key, f, a)) return 0;
    ok = a->dtype == kind && a->ndim == ndim;
    for (i = 0; ok && i < ndim; i++) ok = a->shape[i] == shape[i];
    if (!ok) {
        fail(c, "%s: %s is %c%d (%s), expected %c (%s)", key, f, a->dtype, a->itemsize,
             dims(got, a->ndim, a->shape), kind, dims(want, ndim, shape));
        npy_free(a);
    }
    return ok;
}

/* Load key's file (kind 'f' or 'i', its shape checked), converted to float32 (to 'f'),
   float64 ('d') or int64 ('i'). */
static void *load_as(gcase *c, const char *key, char kind, int ndim, const size_t *shape,
                     char to)
{
    npy_array a;
    float *f = NULL;
    double *d = NULL;
    int64_t *i = NULL;
    int st;
    if (!load(c, key, &a, kind, ndim, shape)) return NULL;
    st = to == 'f' ? npy_to_f32(&a, &f) : to == 'd' ? npy_to_f64(&a, &d) : npy_to_i64(&a, &i);
    npy_free(&a);
    if (st != NPY_OK) { fail(c, "%s: %s", key, npy_status_string(st)); return NULL; }
    return own(c, to == 'f' ? (void *)f : to == 'd' ? (void *)d : (void *)i);
}
#define load_f32(c, key, ndim, shape) ((float *)load_as(c, key, 'f', ndim, shape, 'f'))
#define load_f64(c, key, ndim, shape) ((double *)load_as(c, key, 'f', ndim, shape, 'd'))
#define load_i64(c, key, ndim, shape) ((int64_t *)load_as(c, key, 'i', ndim, shape, 'i'))

/* Fails the case unless st is the OK status (0) of lib; what names the call. */
static int lib_bad(gcase *c, const th_lib *lib, const char *what, int st)
{
    if (st) fail(c, "%s: status %d (%s)", what, st, lib->why(st));
    return st != 0;
}
#define pe_bad(c, what, st) lib_bad(c, &th_pe, what, st)
#define ffn_bad(c, what, st) lib_bad(c, &th_ffn, what, st)

/* ---- the library's own bits ----------------------------------------------------------
   Where torch's result comes from libm (sinf, cosf, expf, powf, erff, tanhf; log, log2,
   pow in double), pe.h and ffn.h run torch's float32 steps with their own correctly
   rounded functions: the same bits everywhere, not torch's wherever glibc's are not
   correctly rounded. For each such array KEY the manifest adds own_KEY: `same`, or an
   int64 (k, 2) file of (flat index, the library's float32 bits) where they differ
   (make_goldens.py asserts that the same steps on glibc's functions give torch's golden).
   The library's bits are checked exactly against torch's array so patched. */

/* torch's array `golden` (n floats) with own_KEY applied: a new array, NULL (and the case
   failed) when own_KEY is missing or malformed. A patch entry must change the value (an
   entry equal to torch's would be a stale patch) and the indices must increase. */
static float *load_own(gcase *c, const char *key, const float *golden, size_t n)
{
    char okey[96];
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
    if (!open_npy(c, okey, f, &a)) return NULL;
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
        if (u == th_fbits(golden[at])) {
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
    const char *f = get(c, key);
    npy_array a;
    size_t n = 0;
    if (!f || c->failed || !open_npy(c, key, f, &a)) return 0;
    if (a.ndim == 1) n = a.shape[0];
    npy_free(&a);
    if (n == 0) fail(c, "%s: expected a non-empty (n,) array", key);
    return n;
}

/* An optional bias: "none" means NULL (valid for ffn), otherwise a (n,) float file (NULL
   and the case failed when it cannot be loaded). */
static float *load_bias(gcase *c, const char *key, size_t n)
{
    const char *v = get(c, key);
    return !v || strcmp(v, "none") == 0 ? NULL : load_f32(c, key, 1, &n);
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

/* "[1,2]": the index of flat element i of an array of that shape (buf: 256 chars) */
static const char *unravel(char *buf, size_t i, int ndim, const size_t *shape)
{
    size_t idx[8];
    int d;
    for (d = ndim - 1; d >= 0; d--) { idx[d] = i % shape[d]; i /= shape[d]; }
    buf[0] = '[';
    dims(buf + 1, ndim, idx);
    return strcat(buf, "]");
}

/* Fail the case if s has bad elements, naming the worst one. */
static void verdict(gcase *c, const cmp_stats *s, const char *what, int ndim,
                    const size_t *shape)
{
    char at[256];
    if (!s->n_bad) return;
    fail(c, "%s: %zu of %zu elements bad; worst at %s (flat %zu): c=%.9g (0x%08lx) "
            "t=%.9g (0x%08lx) |c-t|=%.3g tol=%.3g",
         what, s->n_bad, s->n, unravel(at, s->worst, ndim, shape), s->worst, (double)s->wc,
         (unsigned long)th_fbits(s->wc), (double)s->wt, (unsigned long)th_fbits(s->wt),
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

/* The packed forms of the Linear and the blocks are documented to give the same
   bits as the unpacked ones: fail the case unless got == want bit for bit, a NaN's sign
   and payload aside (the headers do not specify them: a compiler that vectorises a
   scalar loop one way in place and another way out of place may produce another NaN). */
static void same_bits(gcase *c, const char *what, const float *got, const float *want, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) digest_float(got[i]);
    for (i = 0; i < n; i++)
        if (!th_same(got[i], want[i])) {
            fail(c, "%s differs at flat %zu: 0x%08lx vs 0x%08lx", what, i,
                 (unsigned long)th_fbits(got[i]), (unsigned long)th_fbits(want[i]));
            return;
        }
}

/* The act= key of a case: FFN_RELU.. (relu_op: the op has no act= key, it is FFN_RELU),
   or -1 after a failure. */
static int act_of(gcase *c, int relu_op)
{
    static const char *const names[] = {"relu", "gelu", "gelu_tanh", "silu", "sigmoid",
                                        "gpt_oss"};
    const char *a = relu_op ? "relu" : get(c, "act");
    int i;
    for (i = 0; a && i < 6; i++)
        if (strcmp(a, names[i]) == 0) return i;
    if (a) fail(c, "unknown act=%s", a);
    return -1;
}

/* FFN_FAST while the activation and block cases with an act= run a second time with
   act | FFN_FAST (the case's name then ends in "+fast"). */
static int act_fast;

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
   not decide). Both y (the Linear, the block) and yp (the packed form) are judged;
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

/* The activations' Lipschitz constants (max |act'|): relu 1, gelu 1.129 (at x = 1.43
   GELU(x)' = Phi(x) + x phi(x)), gelu_tanh the same to 3 digits, silu 1.0998 (x = 2.4),
   sigmoid 1/4, GPT-OSS's glu g sigmoid(1.702 g) (after the clamp, 1-Lipschitz) silu's
   1.0998 (its derivative is silu's at 1.702 g). */
static const double act_lip[] = {1.0, 1.13, 1.13, 1.1, 0.25, 1.1};

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

/* op=act_backward's tolerance (run_act_backward): ReLU bit for bit (a selection); the
   others are dy times a sum of two terms that each side evaluates in float with libm,
   each within a few ulps: per element 2^-23 |dy| (8 T(x) + A(x)), T the terms'
   magnitudes (in double): GELU Phi + |x| phi, GELU-tanh (1 + t)/2 + K (1 - t^2) with K =
   |x/2 beta (1 + 3 kappa x^2)|, SiLU s (1 + |x| (1 - s)), sigmoid s (1 - s); A the
   absolute errors that do not scale with T: GELU 1 (torch's vectorised erf is within
   1.5e-7 of erf, so its cdf within 0.63 2^-23), GELU-tanh 2 K (t is within 2^-24 of tanh
   near +-1, so 1 - t^2 within 2^-23 on each side). Returns T(x), A(x) in *A. */
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

/* How far ffn.h's and torch's value of one float32 sum of K products may be apart: ffn.h
   sums in the NUMERICAL CONTRACT's order, |ffn.h - exact| <= gamma_n S with n =
   th_sum_roundings(K), S the sum of the terms' magnitudes; torch's order is not known
   here, and any order's worst case is gamma_K S (Higham, Accuracy and Stability of
   Numerical Algorithms, 3.1). So (gamma_n + gamma_K) S, with one more rounding on each
   side where a start value is added (the .grad, a bias: acc). Both are worst cases (the
   typical error is about sqrt(K) u S). */
static double sum_bound(size_t K, int acc)
{
    return th_gamma((double)(th_sum_roundings(K) + !!acc)) + th_gamma((double)(K + !!acc));
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
   2 ulps of 1 times |v| of the exact act(v) (the derivation of the block's hidden
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

/* A copy of n floats of src, or n zeros (src NULL). */
static float *dup_floats(gcase *c, const float *src, size_t n)
{
    float *p = alloc_floats(c, n);
    if (p && src) memcpy(p, src, n * sizeof *p);
    else if (p) memset(p, 0, n * sizeof *p);
    return p;
}

/* A (n,) or (a, b) float file, or zeros for "none" (a .grad autograd had not made yet);
   *given: a file was named. */
static float *load_or_zeros(gcase *c, const char *key, int ndim, const size_t *shape, int *given)
{
    const char *v = get(c, key);
    const size_t n = ndim == 1 ? shape[0] : prod(c, shape[0], shape[1]);
    *given = v && strcmp(v, "none") != 0;
    return *given ? load_f32(c, key, ndim, shape) : dup_floats(c, NULL, n);
}

/* Max |ffn.h - ref64| and |torch - ref64| of one gradient, into "name a/b" of info. With
   enforce (the last layer's bias gradient: a sum of torch's own dy, in torch's cascade
   order), ffn.h's no larger than torch's, floored at one float32 ulp of the largest
   |ref64| (as against_ref64). Not the hidden layers' (db1, db_gate, db_up): they sum
   ffn.h's dh, whose roundings (the Linear's order, not OpenBLAS's) their error measures
   more than the sum's (1.1-1.3x torch's, or 0.8x, from case to case); own_sum_report
   judges those, as sums of torch's own dh. */
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
   judged as a sum against the exact sum of its input (the float64 sums here are exact to
   2^-29 of what a float32 order can lose).
   - Enforced, on the same input: ffn.h's sum of torch's dh (tdh, grad_* in the goldens,
     which make_goldens.py asserts sums to torch's db bit for bit), tdb_ffn = the Linear's
     db alone from tdh and db0, no less accurate than torch's db (tdb) against db0 +
     sum64(tdh), torch's error floored at one float32 ulp of the largest |exact sum|: a
     float32 result is off by up to half an ulp even correctly rounded, and torch's error
     can be 0 by luck (rows = 1 without db0) where another order rounds once. With ffn.h's
     cascade, torch's order, the two are the same bits (op=linear_backward asserts them).
   - Reported: each side against the exact sum of ITS OWN input (db0 + sum64(dh), db0 +
     sum64(tdh)). Not enforced: the two dh differ in their roundings, and the same order
     loses different amounts on different inputs (ffn_bwd_relu_r64_d16_h96, both in
     torch's cascade: ffn.h's max error 1.06x torch's, above the floor), by chance.
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

/* ---- the blocks' backward -------------------------------------------------------------
   A block's gradients: dx (rows, d), then each layer's weight and bias gradient, the last
   layer's (d, hidden) and (d,), the others' (hidden, d) and (hidden,); without biases the
   bias gradients are absent (NULL). Each comes with its .grad before the backward (NAME_0:
   zeros for "none"), torch's (expect_NAME) and the float64 autograd's (ref64_NAME). */
#define MAX_GRADS 7

typedef struct {
    const float *dy, *x, *in[5];    /* the backward's inputs after dy and x */
    size_t R, D, H, ns;
    int act;
    float *scr;
} bwd_args;

/* The block's backward into o[0..n-1] (NULL: not asked for). */
typedef int (*bwd_fn)(float *const *o, const bwd_args *a);

typedef struct {
    int n;
    const char *const *name;
    size_t shape[MAX_GRADS][2], len[MAX_GRADS];
    float *g0[MAX_GRADS], *ex[MAX_GRADS], *got[MAX_GRADS], *cmp[MAX_GRADS], *one;
    const double *ref[MAX_GRADS];
    int acc[MAX_GRADS];
    cmp_stats s[MAX_GRADS];
} grads;

static int grad_ndim(int g) { return g == 0 || g % 2 ? 2 : 1; }

/* Loads the n gradients' files and makes got and cmp (the .grad before, or for dx poison
   to come) and one (for a gradient asked alone). */
static void grads_load(gcase *c, grads *gr, int n, const char *const *name, size_t R, size_t D,
                       size_t H, int has_b)
{
    char key[32];
    int g;
    memset(gr, 0, sizeof *gr);
    gr->n = n;
    gr->name = name;
    for (g = 0; g < n; g++) {
        gr->shape[g][0] = !g ? R : g >= n - 2 ? D : H;
        gr->shape[g][1] = !g ? D : g >= n - 2 ? H : D;
        gr->len[g] = grad_ndim(g) == 2 ? gr->shape[g][0] * gr->shape[g][1] : gr->shape[g][0];
        if (!g) continue;
        snprintf(key, sizeof key, "%s_0", name[g]);
        gr->g0[g] = load_or_zeros(c, key, grad_ndim(g), gr->shape[g], &gr->acc[g]);
    }
    for (g = 0; g < n; g++) {
        if (grad_ndim(g) == 1 && !has_b) continue;
        snprintf(key, sizeof key, "expect_%s", name[g]);
        gr->ex[g] = load_f32(c, key, grad_ndim(g), gr->shape[g]);
        snprintf(key, sizeof key, "ref64_%s", name[g]);
        gr->ref[g] = load_f64(c, key, grad_ndim(g), gr->shape[g]);
        gr->got[g] = g ? dup_floats(c, gr->g0[g], gr->len[g]) : alloc_floats(c, gr->len[g]);
        gr->cmp[g] = g ? dup_floats(c, gr->g0[g], gr->len[g]) : alloc_floats(c, gr->len[g]);
    }
    gr->one = alloc_floats(c, R * D > H * D ? R * D : H * D);
    if (gr->got[0]) poison(gr->got[0], gr->len[0]);
}

/* Every gradient the same bits as the public calls composed (cmp), and each asked alone
   (the others NULL) the same bits as with the others. */
static void grads_same(gcase *c, grads *gr, bwd_fn f, const bwd_args *a)
{
    char what[96];
    int g;
    for (g = 0; g < gr->n; g++) {
        if (!gr->got[g]) continue;
        snprintf(what, sizeof what, "%s vs the public calls composed", gr->name[g]);
        same_bits(c, what, gr->got[g], gr->cmp[g], gr->len[g]);
    }
    for (g = 0; g < gr->n && !c->failed; g++) {
        float *o[MAX_GRADS] = {NULL};
        if (!gr->got[g]) continue;
        if (g) memcpy(gr->one, gr->g0[g], gr->len[g] * sizeof *gr->one);
        else poison(gr->one, gr->len[g]);
        o[g] = gr->one;
        snprintf(what, sizeof what, "%s alone vs with the others", gr->name[g]);
        if (!ffn_bad(c, what, f(o, a))) same_bits(c, what, gr->one, gr->got[g], gr->len[g]);
    }
}

/* The hidden layers' weight and bias gradients against torch's: sums over the rows of x
   times the layer's output gradient dh[l], which ffn.h's and torch's have within e[l]. */
static void grads_hidden(grads *gr, int layers, const float *x, const float *const *dh,
                         const double *const *e, size_t R, size_t D, size_t H)
{
    size_t j, k, q;
    int l, g;
    for (j = 0; j < H; j++) {
        for (k = 0, q = j * D; k < D; k++, q++)
            for (l = 0, g = 1; l < layers; l++, g += 2)
                note_tol(&gr->s[g], q, gr->got[g][q], gr->ex[g][q], grad_tol(R, gr->acc[g],
                         gr->g0[g][q], x + k, D, dh[l] + j, H, e[l] + j, H));
        for (l = 0, g = 2; l < layers; l++, g += 2)
            if (gr->got[g])
                note_tol(&gr->s[g], j, gr->got[g][j], gr->ex[g][j],
                         grad_tol(R, gr->acc[g], gr->g0[g][j], NULL, 0, dh[l] + j, H, e[l] + j, H));
    }
}

/* The last layer's weight and bias gradients against torch's: sums over the rows of dy
   times the layer's input v, which ffn.h's and torch's have within e. */
static void grads_last(grads *gr, const float *dy, const float *v, const double *e, size_t R,
                       size_t D, size_t H)
{
    const int w = gr->n - 2, b = gr->n - 1;
    size_t i, j, q;
    for (i = 0; i < D; i++) {
        for (j = 0, q = i * H; j < H; j++, q++)
            note_tol(&gr->s[w], q, gr->got[w][q], gr->ex[w][q],
                     grad_tol(R, gr->acc[w], gr->g0[w][q], dy + i, D, v + j, H, e + j, H));
        if (gr->got[b])
            note_tol(&gr->s[b], i, gr->got[b][i], gr->ex[b][i],
                     grad_tol(R, gr->acc[b], gr->g0[b][i], NULL, 0, dy + i, D, NULL, 0));
    }
}

/* The Linear's bias gradient alone, db += the sum of dy's rows (the Linear's piece). */
static int linear_db(float *db, const float *dy, size_t R, size_t in, size_t out, float *scr,
                     size_t ns);

/* Each gradient's verdict; appends to info the errors against float64 (ref64_report,
   enforced for the last bias gradient) and, with biases, the hidden layers' bias gradients
   as sums (own_sum_report) of ffn.h's dh[l] and torch's tdh[l]. */
static void grads_report(gcase *c, grads *gr, char *info, size_t cap, const float *const *dh,
                         const float *const *tdh, size_t R, size_t D, size_t H, float *scr,
                         size_t ns)
{
    size_t len;
    int g;
    for (g = 0; g < gr->n; g++)
        if (gr->got[g]) verdict(c, &gr->s[g], gr->name[g], grad_ndim(g), gr->shape[g]);
    for (g = 0; g < gr->n; g++)
        if (gr->got[g])
            ref64_report(c, info, cap, gr->name[g], gr->got[g], gr->ex[g], gr->ref[g], gr->len[g],
                         g == gr->n - 1);
    if (!gr->got[2]) return;
    len = strlen(info);
    snprintf(info + len, cap - len, "; db vs the exact sum of torch's dh (ffn.h/torch), and of "
             "each one's own:");
    for (g = 2; g < gr->n - 1; g += 2) {
        memcpy(gr->one, gr->g0[g], H * sizeof *gr->one);
        if (ffn_bad(c, "db alone from torch's dh", linear_db(gr->one, tdh[g / 2 - 1], R, D, H,
                                                               scr, ns))) return;
        own_sum_report(c, info, cap, gr->name[g], gr->got[g], dh[g / 2 - 1], gr->one, gr->ex[g],
                       tdh[g / 2 - 1], gr->g0[g], R, H);
    }
}

/* ---- the manifest ------------------------------------------------------------------------ */

#define SPACES " \t\r"

/* Split one line (modified in place) into c; 0 if it is not `case NAME k=v ...`. */
static int parse_line(char *line, gcase *c, char *err, size_t cap)
{
    char *tok[MAX_KV + 2];
    int ntok = 0, i;
    char *p = line;
    while (*(p += strspn(p, SPACES))) {
        if (ntok == MAX_KV + 2) { snprintf(err, cap, "too many fields"); return 0; }
        tok[ntok++] = p;
        p += strcspn(p, SPACES);
        if (*p) *p++ = '\0';
    }
    if (ntok < 3 || strcmp(tok[0], "case") != 0 || strchr(tok[1], '=')) {
        snprintf(err, cap, "expected `case NAME op=OP key=value ...`");
        return 0;
    }
    c->name = tok[1];
    for (i = 2; i < ntok; i++) {
        char *eq = strchr(tok[i], '=');
        if (!eq || eq == tok[i]) {
            snprintf(err, cap, "field '%s' is not key=value", tok[i]);
            return 0;
        }
        *eq = '\0';
        c->key[c->nkv] = tok[i];
        c->val[c->nkv++] = eq + 1;
    }
    return 1;
}

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
        if (th_fbits(got[i]) != th_fbits(d0[i]) ||
            !(expect[i] == d0[i] || (isnan(expect[i]) && isnan(d0[i])))) {
            fail(c, "%s: row %zu >= seq: got 0x%08lx, dtable0 0x%08lx, torch 0x%08lx", what,
                 i / d, (unsigned long)th_fbits(got[i]), (unsigned long)th_fbits(d0[i]),
                 (unsigned long)th_fbits(expect[i]));
            return;
        }
}

/* Guard floats after an accumulated output: they must stay as they were. */
#define GOLD_GUARD 16

static void check_guard(gcase *c, const char *what, const float *g)
{
    size_t i;
    for (i = 0; i < GOLD_GUARD; i++)
        if (th_fbits(g[i]) != 0xA5A5A5A5u) { fail(c, "%s: wrote past its output", what); return; }
}

/* op=train: examples/train.h's model (the code examples/train.c runs) trained for `steps`
   AdamW steps from torch's initial parameters on the batches of its generator, and its
   loss at every step against torch's (loss32), which make_goldens.py got from the same
   model, batches and optimizer in float32, and again in float64 from the same initial
   values (loss64). The manifest's config must be examples/train.h's.

   Tolerance. Every operation rounds and training carries each step's differences on;
   here they stay of the size of a few roundings (max |torch32 - torch64| 2.2e-6,
   MANIFEST's comment; a chaotic divergence would call for a smaller learning rate, not a
   wider tolerance). Let M_t = max over t' <= t of |torch32_t' - torch64_t'|. C's
   operations are no less accurate than torch's (ffn.h's sums within the contract's bound
   and no further from float64 than torch's in its golden cases; pe.h's embedding, its
   gradient and the sinusoidal table torch's bits, MANIFEST "# own train_sinusoidal";
   AdamW within a few ulps, op=opt_step; torch's softmax formula), so C strays from
   float64 as far as torch does with another draw of roundings; allowing twice as far:
      |C_t - torch32_t| <= 3 M_t + b_t,   b_t = 8 u (1 + |torch32_t|),   u = 2^-24.
   b_t is for a step where M_t is small by chance (step 0): one evaluation of the loss
   rounds, per token and on each side, exp, the sum of the exps (>= 1), log, the
   subtraction and the result, on values of the size of 1 + the loss; it also covers the
   softmax's expf and logf, which differ between libms by an ulp here and there. Measured
   (README.md, "Training"): |C - torch32| / tol <= 0.18, |C - torch64| <= 1.39 M_t; the
   learning rate changed by 0.1% fails at step 1, by one float ulp passes. The model must
   learn: the final loss below a twentieth of the first (ln 16 = 2.77 learns nothing).
   Every path and thread count gives the same bits (the contract; the softmax and the
   residual add are plain float loops): the curve's bits must be the case's first path's. */
static void run_train(gcase *c, char *info, size_t cap)
{
    static struct { char name[64]; uint64_t fp; } first[8];     /* name "": not yet */
    const char *pos = get(c, "pos"), *act = get(c, "act");
    const int sin_pos = pos && strcmp(pos, "sinusoidal") == 0;
    const train_config cfg = train_default_config(sin_pos);
    const size_t steps = get_size(c, "steps");
    train_model m;
    float *init, *t32, *loss;
    double *t64, M = 0.0, worst = 0.0, worst64 = 0.0, d32 = 0.0, tol_worst = 0.0;
    const double u = EPS32 / 2.0;                   /* 2^-24 */
    digest fp = {UINT64_C(1469598103934665603), 0};    /* FNV-1a over the losses' bits */
    size_t i, n_params, k;
    long t_worst = -1;
    int st;
    if (c->failed) return;
    /* the golden must be of examples/train.h's run */
#define SAME_SIZE(key) (get_size(c, #key) == cfg.key)
#define SAME_REAL(key) ((float)get_real(c, #key) == cfg.key)
    if (!(pos && (sin_pos || strcmp(pos, "learned") == 0) && act && strcmp(act, "relu") == 0 &&
          SAME_SIZE(vocab) && SAME_SIZE(seq) && SAME_SIZE(d_model) && SAME_SIZE(hidden) &&
          SAME_SIZE(batch) && steps == (size_t)cfg.steps && SAME_SIZE(seed) && SAME_REAL(lr) &&
          SAME_REAL(beta1) && SAME_REAL(beta2) && SAME_REAL(eps) && SAME_REAL(weight_decay))) {
        fail(c, "the manifest's config is not examples/train.h's train_default_config(%d)",
             sin_pos);
        return;
    }
    if ((st = train_init(&m, &cfg)) < 0) {
        fail(c, "train_init: %s", train_status_string(st));
        return;
    }
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
        if (!(e32 <= tol) && t_worst < 0) {
            t_worst = (long)i;
            tol_worst = tol;
        }
        worst = fmax(worst, e32 / tol);
        worst64 = fmax(worst64, M > 0 ? fabs(c32 - t64[i]) / M : 0.0);
        d32 = fmax(d32, e32);
        digest_add(&fp, th_fbits(loss[i]));
    }
    if (t_worst >= 0)
        fail(c, "loss at step %ld: C %.9g, torch %.9g, |C - torch| %.3g > tol %.3g (max over the "
             "run |C - torch| / tol %.3f)", t_worst, (double)loss[t_worst], (double)t32[t_worst],
             fabs((double)loss[t_worst] - (double)t32[t_worst]), tol_worst, worst);
    if (!(loss[steps - 1] < loss[0] / 20.0f))
        fail(c, "the model did not learn: loss %.6g at step 0, %.6g at step %zu", (double)loss[0],
             (double)loss[steps - 1], steps - 1);
    for (k = 0; k < sizeof first / sizeof *first; k++) {
        if (!first[k].name[0]) {
            snprintf(first[k].name, sizeof first[k].name, "%s", c->name);
            first[k].fp = fp.h;
            break;
        }
        if (strcmp(first[k].name, c->name) == 0) {
            if (first[k].fp != fp.h)
                fail(c, "the loss curve's bits (fingerprint %016llx) differ from the first "
                     "path's (%016llx)",
                     (unsigned long long)fp.h, (unsigned long long)first[k].fp);
            break;
        }
    }
    snprintf(info, cap, "%zu steps, loss %.4f -> %.6f (torch %.6f); max |C - torch| %.3g, / tol "
             "%.3f; max |C - torch64| / M_t %.3f; curve %016llx", steps, (double)loss[0],
             (double)loss[steps - 1], (double)t32[steps - 1], d32, worst, worst64,
             (unsigned long long)fp.h);
}

/* ---- the ops ----------------------------------------------------------------------------
   Each feature's runners (features/, FEATURE_GOLDEN) and its rows of the op table
   (FEATURE_GOLDEN_OPS): {op, runner, header, arg, fast}. The header's path decides the
   case's arithmetic; arg is the runner's variant (c->arg); fast: with an act= other than
   relu the case runs again with act | FFN_FAST. */
typedef struct {
    const char *op;
    void (*run)(gcase *c, char *info, size_t cap);
    const th_lib *lib;
    int arg, fast;
} golden_op;

#define FEATURE_GOLDEN
#include "../features/all.inc"
#undef FEATURE_GOLDEN

static const golden_op golden_ops[] = {
#define FEATURE_GOLDEN_OPS
#include "../features/all.inc"
#undef FEATURE_GOLDEN_OPS
    {"train", run_train, &th_ffn, 0, 0},
};

static const golden_op *find_op(const char *op)
{
    size_t i;
    for (i = 0; op && i < sizeof golden_ops / sizeof *golden_ops; i++)
        if (strcmp(op, golden_ops[i].op) == 0) return &golden_ops[i];
    return NULL;
}

/* Runs case c (parsed, op set), prints its line and counts it passed or failed. */
static void run_case(gcase *c, const char *path)
{
    char info[1024];
    const char *cases = getenv("GOLDEN_DIGESTS");
    const golden_op *o = find_op(c->op);
    info[0] = '\0';
    digest_case.h = DIGEST_BASIS;
    digest_case.n = 0;
    if (!c->op) {
        c->op = "?";
    } else if (o) {
        c->arg = o->arg;
        o->run(c, info, sizeof info);
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
    if (c->failed) th_failed++;
    else th_passed++;
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
    static char dir[4096];
    const char *slash;
    char *text, *line, *next;
    int lineno = 0, ncases = 0, l, i, k;

#ifdef _OPENMP
    printf("# build: with OpenMP\n");
#else
    printf("# build: without OpenMP\n");
#endif
    printf("# manifest: %s\n", manifest);

    text = th_read_text(manifest);
    if (!text) {
        printf("FAIL manifest  cannot read %s (run `make reference` to generate the goldens)\n",
               manifest);
        printf("0 passed, 1 failed\n");
        return 1;
    }
    /* Golden files are relative to the manifest's directory. */
    slash = strrchr(manifest, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - manifest) : 1, slash ? manifest : ".");

    for (line = text; line; line = next) {
        gcase *c = &cases[ncases];
        char err[256], *p;
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        lineno++;
        p = line + strspn(line, SPACES);
        if (*p == '\0' || *p == '#') continue;
        if (ncases == MAX_CASES) {
            printf("FAIL line %d  more than %d cases\n", lineno, MAX_CASES);
            th_failed++;
            break;
        }
        memset(c, 0, sizeof *c);
        c->dir = dir;
        c->line = lineno;
        if (!parse_line(p, c, err, sizeof err)) {
            printf("FAIL line %d  malformed manifest line: %s\n", lineno, err);
            th_failed++;
            continue;
        }
        c->op = get(c, "op");
        ncases++;
    }
    if (ncases == 0) {
        printf("FAIL manifest  %s has no case lines\n", manifest);
        th_failed++;
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
                const golden_op *o = find_op(cases[i].op);
                int fast, fast_form;
                if ((o ? o->lib : &th_ffn) != libs[l]) continue;   /* unknown: on ffn.h's */
                /* an activation case other than ReLU (FFN_FAST changes nothing there) */
                fast_form = o && o->fast && has(&cases[i], "act") &&
                            strcmp(get(&cases[i], "act"), "relu") != 0;
                for (fast = 0; fast <= fast_form; fast++) {
                    gcase c = cases[i];     /* a fresh copy: a run records its verdict */
                    char name[256];
                    snprintf(name, sizeof name, "%s+fast", c.name);
                    if (fast) c.name = name;
                    act_fast = fast ? FFN_FAST : 0;
                    run_case(&c, paths[l][k]);
                }
                act_fast = 0;
            }
        }
        th_use(libs[l], NULL);
    }
    digest_now = NULL;
    for (l = 0; l < 2; l++)
        for (k = 0; k < npaths[l]; k++)
            printf("# digest %s %s: %016llx (%lu outputs)\n", libs[l]->header, paths[l][k],
                   (unsigned long long)digests[l][k].h, (unsigned long)digests[l][k].n);
    free(text);
    return th_summary();
}

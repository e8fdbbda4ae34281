/* fuzz/fz.h - what the fuzz targets share (included once, by fuzz.c): the input decoder,
   the memory layouts, the two passes of a call and their checks (fuzz/README.md). */
#ifndef FUZZ_FZ_H
#define FUZZ_FZ_H

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define FZ_UNUSED __attribute__((unused))
#else
#define FZ_UNUSED
#endif
/* the fuzzer's coverage feedback: the headers and the status logic, not the data loops */
#if defined(__clang__)
#define FZ_NOCOV __attribute__((no_sanitize("coverage"), noinline, unused))
#else
#define FZ_NOCOV FZ_UNUSED
#endif

#define FZ_FAIL(...)                                                            \
    do {                                                                        \
        fprintf(stderr, "\nFUZZ CHECK FAILED at %s:%d: ", __FILE__, __LINE__);  \
        fprintf(stderr, __VA_ARGS__);                                           \
        fputc('\n', stderr);                                                    \
        abort();                                                                \
    } while (0)
#define FZ_CHECK(c, ...) do { if (!(c)) FZ_FAIL(__VA_ARGS__); } while (0)

/* calloc that fails the run when out of memory */
static void *fz_calloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    FZ_CHECK(p, "malloc");
    return p;
}
#define fz_malloc(bytes) fz_calloc(bytes, 1)

/* ---- the input decoder -------------------------------------------------------- */

/* Bytes come from the input, then from a PRNG seeded with the input's hash. */
typedef struct {
    const uint8_t *p;
    size_t n, i;
    uint64_t s;
    unsigned profile;   /* how floats are drawn: see fz_float */
    uint64_t h;         /* the hash of the whole input (chooses the path, see fz_pick) */
    const th_lib *lib;  /* the header whose paths the input runs (set by fz_pick) */
    const char *path[2];  /* [0] the path under test, [1] "scalar" */
} fz_t;

static FZ_NOCOV uint64_t fz_rng(fz_t *f)
{
    uint64_t z = (f->s += 0x9E3779B97F4A7C15ull);   /* splitmix64 */
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static FZ_UNUSED void fz_init(fz_t *f, const uint8_t *data, size_t size)
{
    size_t k;
    f->p = data;
    f->n = size;
    f->i = 0;
    f->s = 0xcbf29ce484222325ull;
    for (k = 0; k < size; k++) f->s = (f->s ^ data[k]) * 0x100000001b3ull;
    f->profile = 0;
    f->h = f->s;
    f->lib = NULL;
    f->path[0] = f->path[1] = "scalar";
}

static FZ_NOCOV unsigned fz_byte(fz_t *f)
{
    if (f->i < f->n) return f->p[f->i++];
    return (unsigned)(fz_rng(f) >> 56);
}

static FZ_NOCOV uint32_t fz_u32(fz_t *f)
{
    uint32_t v = 0;
    int k;
    for (k = 0; k < 4; k++) v = v << 8 | fz_byte(f);
    return v;
}

static FZ_UNUSED uint64_t fz_u64(fz_t *f)
{
    uint64_t hi = fz_u32(f);
    return hi << 32 | fz_u32(f);
}

/* A dimension in 1..max, or 0 with probability 1/256. */
static FZ_UNUSED size_t fz_dim(fz_t *f, size_t max)
{
    unsigned b = fz_byte(f);
    return b == 0 ? 0 : 1 + (size_t)(b - 1) % max;
}

/* A size_t from values at and around the overflow limits (for the checks that come
   before any memory access), or raw bits. */
static FZ_UNUSED size_t fz_size_huge(fz_t *f)
{
    const size_t M = (size_t)-1;
    const unsigned half = (unsigned)(sizeof(size_t) * 4);   /* 32 on LP64 */
    const size_t r = (size_t)1 << half;                      /* ~sqrt(SIZE_MAX) */
    const size_t v[32] = { 0, 1, 2, 3, 4, 7, 8, 16, 17, M, M - 1, M / 2, M / 2 + 1, M / 4,
                           M / 4 + 1, M / 8, M / 8 + 1, M / 16 + 1, M / 3, r, r + 1, r - 1,
                           r / 2, r / 2 + 1, r / 4, r / 4 + 1, (size_t)1 << (half + half / 2),
                           (size_t)1 << (half / 2), M / 5 + 1, M / 12 + 1, 65536, 5000 };
    const unsigned b = fz_byte(f) % 40;
    return b < 32 ? v[b] : (size_t)fz_u64(f);
}

static FZ_UNUSED float fz_bits2f(uint32_t u)
{
    float v;
    memcpy(&v, &u, sizeof v);
    return v;
}

#define fz_f2bits th_fbits   /* (support/harness.h) */

/* Special values, as bit patterns so that no compiler folds them. */
static const uint32_t fz_special_bits[24] = {
    0x00000000u, /* +0 */            0x80000000u, /* -0 */
    0x3f800000u, /* 1 */             0xbf800000u, /* -1 */
    0x7f800000u, /* +inf */          0xff800000u, /* -inf */
    0x7fc00000u, /* qNaN */          0xffc00000u, /* -qNaN */
    0x7f800001u, /* sNaN */          0x7fc12345u, /* NaN payload */
    0x00800000u, /* FLT_MIN */       0x00000001u, /* smallest denormal */
    0x007fffffu, /* largest denormal */ 0x80000001u, /* -smallest denormal */
    0x7f7fffffu, /* FLT_MAX */       0xff7fffffu, /* -FLT_MAX */
    0x5f800000u, /* 2^64 */          0x1f800000u, /* 2^-64 */
    0x3f7fffffu, /* 1 - 2^-24 */     0x3f800001u, /* 1 + 2^-23 */
    0x4b800000u, /* 2^24 */          0x807fffffu, /* -largest denormal */
    0x7effffffu, /* FLT_MAX / 2 */   0xfff00000u  /* -NaN */
};

/* A float. The profile (set by the target from one input byte) decides the mix:
   0: values in [-2, 2) with a 24-bit significand (rounding happens, no specials);
   1: mostly those, sometimes specials or raw bits;  2: specials and raw bits often;
   3: raw bit patterns only. */
static FZ_NOCOV float fz_float(fz_t *f)
{
    unsigned sel = fz_byte(f), lim_special, lim_raw;
    switch (f->profile & 3) {
    case 0: lim_special = 0; lim_raw = 0; break;
    case 1: lim_special = 4; lim_raw = 12; break;
    case 2: lim_special = 64; lim_raw = 128; break;
    default: lim_special = 0; lim_raw = 256; break;
    }
    if (sel < lim_special) return fz_bits2f(fz_special_bits[fz_byte(f) % 24]);
    if (sel < lim_raw) return fz_bits2f(fz_u32(f));
    {
        uint32_t m = (uint32_t)fz_byte(f) << 16 | (uint32_t)fz_byte(f) << 8 | fz_byte(f);
        return (float)((int32_t)m - 0x800000) * (1.0f / 4194304.0f); /* [-2, 2) */
    }
}

static FZ_NOCOV void fz_fill_floats(fz_t *f, void *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        float v = fz_float(f);
        memcpy((unsigned char *)p + i * sizeof v, &v, sizeof v);
    }
}

/* ---- size arithmetic, independent of the headers ------------------------------ */

/* a * b * c fits in size_t (returns 0 on overflow). */
static FZ_UNUSED int fz_mul2(size_t *r, size_t a, size_t b)
{
    if (a && b > (size_t)-1 / a) return 0;
    *r = a * b;
    return 1;
}

static FZ_UNUSED int fz_mul3(size_t *r, size_t a, size_t b, size_t c)
{
    size_t t;
    return fz_mul2(&t, a, b) && fz_mul2(r, t, c);
}

/* a * b * sizeof(float) bytes fit in size_t */
static FZ_UNUSED int fz_fbytes_ok(size_t a, size_t b)
{
    size_t r;
    return fz_mul3(&r, a, b, sizeof(float));
}

/* [a, a+an) and [b, b+bn) share a byte (mathematically; the buffers here are real). */
static FZ_UNUSED int fz_overlap(const void *a, size_t an, const void *b, size_t bn)
{
    uintptr_t ua = (uintptr_t)a, ub = (uintptr_t)b;
    if (!a || !b || !an || !bn) return 0;
    return ua < ub + bn && ub < ua + an;
}

/* One of no outputs (o[a], ob[a] bytes) overlaps another output or one of ni inputs. */
static FZ_UNUSED int fz_aliased(const void *const *o, const size_t *ob, int no,
                                const void *const *in, const size_t *ib, int ni)
{
    int a, c;
    for (a = 0; a < no; a++) {
        for (c = a + 1; c < no; c++)
            if (fz_overlap(o[a], ob[a], o[c], ob[c])) return 1;
        for (c = 0; c < ni; c++)
            if (fz_overlap(o[a], ob[a], in[c], ib[c])) return 1;
    }
    return 0;
}

/* A count of floats passed for a buffer of need (the scratch, the packed weight): one
   less, more, a small one, SIZE_MAX (the choice max_case) or need; *alloc: what the
   buffer holds. */
static FZ_UNUSED size_t fz_scratch_arg(fz_t *f, size_t need, unsigned max_case, size_t *alloc)
{
    const unsigned c = fz_byte(f) % 8;
    const size_t sf = c == max_case ? (size_t)-1 : c == 0 ? (need ? need - 1 : 0)
                      : c == 1 ? need + 1 + fz_byte(f) % 32 : c == 2 ? fz_byte(f) % 64 : need;
    *alloc = sf <= need + 64 ? sf : need;
    return sf;
}

/* ---- memory layouts ------------------------------------------------------------- */

#define FZ_MAXBUF 16         /* the gated backward has 15: 7 gradients, 7 inputs, scratch */
#define FZ_GUARD 64          /* bytes of sentinel before and after a guarded block */
#define FZ_SENTINEL 0xA5     /* fill byte of outputs and guards: 0xA5A5A5A5 = -2.9e-16f */

typedef struct {
    const char *name;
    size_t bytes;        /* the size the function is told about */
    size_t align;        /* 4 (float, int32) or 8 (int64) */
    int out;             /* the function may write it */
    int null;            /* pass NULL instead */
    unsigned char *p;    /* where it lives (NULL if null or 0 bytes) */
} fz_buf;

typedef struct {
    int nb;
    fz_buf b[FZ_MAXBUF];
    int arena_mode, alias_out, alias_target;
    unsigned char *arena;
    size_t arena_bytes;
    unsigned char *blk[FZ_MAXBUF];   /* separate mode: malloc'd block */
    size_t blk_bytes[FZ_MAXBUF];
    unsigned char *snap;             /* every byte before the call */
    size_t snap_bytes;
    size_t wr[FZ_MAXBUF];            /* bytes the call may write on success (outputs: all) */
    void *in[FZ_MAXBUF];             /* fz_input's copies */
} fz_mem;

static FZ_UNUSED int fz_add_buf(fz_mem *m, const char *name, size_t bytes, size_t align,
                                int out, int null)
{
    fz_buf *b = &m->b[m->nb];
    FZ_CHECK(m->nb < FZ_MAXBUF, "too many buffers");
    b->name = name;
    b->bytes = bytes;
    b->align = align;
    b->out = out;
    b->null = null;
    b->p = NULL;
    m->wr[m->nb] = out ? bytes : 0;
    return m->nb++;
}

/* Places the buffers. layout byte: 0-3 separate exact-size blocks (bit 0: outputs get
   guard zones; the offset byte misaligns by 0-3 floats), 4-5 one arena with the buffers
   adjacent or a few elements apart, 6-7 one arena with an output laid over another
   buffer at a chosen offset (same start, shifted by one element, overlapping only the
   first or last element, or anywhere in between). Everything is filled with the
   sentinel; the caller then writes the inputs. */
static FZ_UNUSED void fz_place(fz_mem *m, fz_t *f)
{
    unsigned layout = fz_byte(f) % 8;
    int i;
    m->arena = NULL;
    m->snap = NULL;
    m->alias_out = m->alias_target = -1;
    for (i = 0; i < FZ_MAXBUF; i++) m->blk[i] = NULL;
    memset(m->in, 0, sizeof m->in);
    if (layout < 4) {
        m->arena_mode = 0;
        for (i = 0; i < m->nb; i++) {
            fz_buf *b = &m->b[i];
            size_t guard = (b->out && (layout & 1)) ? FZ_GUARD : 0;
            size_t mis = 4 * (size_t)(fz_byte(f) % 4) * (b->align == 4);
            if (b->null || !b->bytes) continue;
            m->blk_bytes[i] = guard + mis + b->bytes + guard;
            m->blk[i] = (unsigned char *)fz_malloc(m->blk_bytes[i]);
            memset(m->blk[i], FZ_SENTINEL, m->blk_bytes[i]);
            b->p = m->blk[i] + guard + mis;
        }
        return;
    }
    {
        /* Offsets first (as signed integers), then one malloc of the exact span. */
        long long off[FZ_MAXBUF], lo = 0, hi = 0, at = 0;
        int outs[FZ_MAXBUF], nouts = 0;
        m->arena_mode = 1;
        for (i = 0; i < m->nb; i++) {
            fz_buf *b = &m->b[i];
            off[i] = 0;
            if (b->null || !b->bytes) continue;
            at += (long long)(4 * (fz_byte(f) % 3));
            at = (at + (long long)b->align - 1) / (long long)b->align * (long long)b->align;
            off[i] = at;
            at += (long long)b->bytes;
            if (b->out) outs[nouts++] = i;
        }
        if (layout >= 6 && nouts > 0) {
            int o = outs[fz_byte(f) % (unsigned)nouts];
            int t = (int)(fz_byte(f) % (unsigned)m->nb);
            if (t != o && !m->b[t].null && m->b[t].bytes) {
                long long ob = (long long)m->b[o].bytes, tb = (long long)m->b[t].bytes;
                long long e, delta;
                switch (fz_byte(f) % 6) {
                case 0: delta = 0; break;
                case 1: delta = 4; break;
                case 2: delta = -4; break;
                case 3: delta = tb - 4; break;          /* out's first float = t's last */
                case 4: delta = -(ob - 4); break;       /* out's last float = t's first */
                default:
                    e = (ob + tb) / 4;
                    delta = 4 * (long long)(fz_u32(f) % (uint32_t)(e + 1)) - (ob - 4);
                    break;
                }
                off[o] = off[t] + delta;
                m->alias_out = o;
                m->alias_target = t;
            }
        }
        for (i = 0; i < m->nb; i++) {
            if (m->b[i].null || !m->b[i].bytes) continue;
            if (off[i] < lo) lo = off[i];
            if (off[i] + (long long)m->b[i].bytes > hi) hi = off[i] + (long long)m->b[i].bytes;
        }
        lo = lo >= 0 ? 0 : -((-lo + 7) / 8 * 8);    /* keep 8-byte alignment */
        m->arena_bytes = (size_t)(hi - lo) + 1;     /* +1: never malloc(0) */
        m->arena = (unsigned char *)fz_malloc(m->arena_bytes);
        memset(m->arena, FZ_SENTINEL, m->arena_bytes);
        for (i = 0; i < m->nb; i++)
            if (!m->b[i].null && m->b[i].bytes)
                m->b[i].p = m->arena + (off[i] - lo);
    }
}

/* The pointer a function is given: NULL (i < 0: no such buffer), a real buffer, or (0
   bytes) a valid dummy. FZ_F: a target's buffer i as a float pointer. */
static float fz_zero_size_dummy[4];

static FZ_UNUSED void *fz_ptr(fz_mem *m, int i)
{
    if (i < 0 || m->b[i].null) return NULL;
    if (!m->b[i].bytes) return fz_zero_size_dummy;
    return m->b[i].p;
}

/* Copies every byte (the arena, or each block) into the snapshot, or (restore) back from
   it to run the other path on the same memory. */
static FZ_NOCOV void fz_snap(fz_mem *m, int restore)
{
    size_t at = 0;
    int i;
    if (!restore) {
        m->snap_bytes = 1 + (m->arena ? m->arena_bytes : 0);
        for (i = 0; i < m->nb; i++) if (m->blk[i]) m->snap_bytes += m->blk_bytes[i];
        m->snap = (unsigned char *)fz_malloc(m->snap_bytes);
    }
    for (i = -1; i < m->nb; i++) {
        unsigned char *p = i < 0 ? m->arena : m->blk[i];
        const size_t n = i < 0 ? m->arena_bytes : m->blk_bytes[i];
        if (!p) continue;
        memcpy(restore ? p : m->snap + at, restore ? m->snap + at : p, n);
        at += n;
    }
}
#define FZ_F(i) ((float *)fz_ptr(&m, i))
#define fz_snapshot(m) fz_snap(m, 0)
#define fz_restore(m) fz_snap(m, 1)

/* A copy of buffer i as it was before the call (for the reference computations); NULL
   for no buffer or a NULL one. */
static FZ_NOCOV void *fz_copy(fz_mem *m, int i)
{
    void *c;
    if (i < 0 || m->b[i].null) return NULL;
    c = fz_malloc(m->b[i].bytes + 1);
    if (m->b[i].p) memcpy(c, m->b[i].p, m->b[i].bytes);
    return c;
}

/* The same of every byte restored first (the inputs as they were), freed by fz_end. */
static FZ_NOCOV void *fz_input(fz_mem *m, int i)
{
    if (i < 0 || m->b[i].null) return NULL;
    fz_restore(m);
    free(m->in[i]);
    return m->in[i] = fz_copy(m, i);
}
#define FZ_IN(i) ((float *)fz_input(&m, i))

/* Byte q may have been written: it lies in an output the function reported success on
   (writable[i] = bytes of buffer i the function may write; 0 for inputs). */
static FZ_NOCOV int fz_in_written(const fz_mem *m, const unsigned char *q, const size_t *writable)
{
    int i;
    for (i = 0; i < m->nb; i++) {
        const unsigned char *p = m->b[i].p;
        if (writable && writable[i] && p && q >= p && q < p + writable[i]) return 1;
    }
    return 0;
}

/* Every byte equals the snapshot, except inside writable ranges (NULL: none). */
static FZ_NOCOV void fz_check_untouched(const fz_mem *m, const size_t *writable,
                                         const char *fn, const char *path)
{
    size_t at = 0, k;
    int i;
    if (m->arena_mode) {
        for (k = 0; k < m->arena_bytes; k++)
            if (m->arena[k] != m->snap[k] && !fz_in_written(m, m->arena + k, writable))
                FZ_FAIL("%s on %s: wrote byte %zu of the arena (%s)", fn, path, k,
                        writable ? "outside its outputs" : "after returning an error");
        return;
    }
    for (i = 0; i < m->nb; i++) {
        if (!m->blk[i]) continue;
        for (k = 0; k < m->blk_bytes[i]; k++)
            if (m->blk[i][k] != m->snap[at + k] && !fz_in_written(m, m->blk[i] + k, writable))
                FZ_FAIL("%s on %s: wrote byte %zu of block '%s' (%s)", fn, path, k, m->b[i].name,
                        writable ? "outside its outputs (guard zone?)"
                                 : "after returning an error");
        at += m->blk_bytes[i];
    }
}

static FZ_UNUSED void fz_free(fz_mem *m)
{
    int i;
    free(m->arena); free(m->snap);
    for (i = 0; i < FZ_MAXBUF; i++) { free(m->blk[i]); free(m->in[i]); }
}

/* ---- float comparisons ----------------------------------------------------------- */

/* Bitwise equal, except that any NaN equals any NaN (NaN payloads are not promised). */
#define fz_same th_same

static FZ_UNUSED float fz_load(const void *p, size_t i)
{
    float v;
    memcpy(&v, (const unsigned char *)p + i * sizeof v, sizeof v);
    return v;
}

/* The class of a dot product b + sum_k a_k * w_k evaluated in float32, in any order.
   FZ_UNSURE: a partial sum might overflow float in some order (S near FLT_MAX), so
   different summation orders may legitimately disagree. */
enum { FZ_FINITE, FZ_PINF, FZ_NINF, FZ_NAN, FZ_UNSURE };

typedef struct {
    int cls;
    double v;   /* the value (double precision; products of floats are exact) */
    double s;   /* S = |b| + sum |a_k w_k| over finite terms */
} fz_dot_t;

static FZ_NOCOV fz_dot_t fz_dot(const double *a, size_t as, const double *w, size_t ws,
                                 size_t k, double bias)
{
    fz_dot_t r;
    size_t i;
    int pinf = 0, ninf = 0, nan = 0;
    double v = 0, s = 0;
    for (i = 0; i <= k; i++) {
        double t = i < k ? a[i * as] * w[i * ws] : bias;
        if (t != t) nan = 1;
        else if (t == HUGE_VAL) pinf = 1;
        else if (t == -HUGE_VAL) ninf = 1;
        else { v += t; s += fabs(t); }
    }
    r.v = v;
    r.s = s;
    if (nan || (pinf && ninf)) r.cls = FZ_NAN;
    else if (s * (1.0 + 2.0 * (double)(k + 2) * ldexp(1.0, -24)) >= (double)FLT_MAX)
        r.cls = FZ_UNSURE;   /* a partial sum or product may overflow to inf */
    else if (pinf) r.cls = FZ_PINF;
    else if (ninf) r.cls = FZ_NINF;
    else r.cls = FZ_FINITE;
    return r;
}

/* ffn.h's summation order (NUMERICAL CONTRACT), restated here: k is cut into blocks
   of fz_kb(k) steps, each a chain of fused multiply-adds from +0; fz_sb(k) blocks make
   a superblock, the sum of its first block plus each next block in turn; the result is
   the bias plus each superblock's sum in turn. */
static size_t fz_kb(size_t k) { return k < 64 ? 8 : k < 256 ? 16 : k < 1024 ? 32 : 64; }
static size_t fz_sb(size_t k) { return k < 1024 ? 8 : 4; }

static FZ_NOCOV float fz_ffn_dot(const float *x, const float *w, size_t ws, size_t k, float b)
{
    const size_t kb = fz_kb(k), sb = fz_sb(k), nb = (k + kb - 1) / kb;
    float total = b, sup = 0.0f;
    size_t blk, i;
    for (blk = 0; blk < nb; blk++) {
        float part = 0.0f;
        for (i = blk * kb; i < k && i < (blk + 1) * kb; i++)   /* (exact everywhere, */
            part = unit_ffn_fmaf(x[i], w[i * ws], part);       /*  not the C library's) */
        sup = blk % sb == 0 ? part : sup + part;
        if (blk % sb == sb - 1 || blk == nb - 1) total = total + sup;
    }
    return total;
}

/* The error bound of that order for a dot product of length k plus a bias:
   gamma_n * S, n = th_sum_roundings(k) (the most roundings one term goes through in that
   order), gamma_n = n u / (1 - n u), u = 2^-24 (Higham, Accuracy and Stability of
   Numerical Algorithms, 3.1; one rounding per fused multiply-add), plus n * 2^-149 for
   products and sums that fall into the denormal range.
   ffn.h documents sqrt(k) * 2^-23 * S as the typical error; build with -DFZ_SQRTK_BOUND
   to check that figure instead. */
static FZ_UNUSED double fz_dot_tol(size_t k, double s)
{
    const double n = (double)th_sum_roundings(k);
#ifdef FZ_SQRTK_BOUND
    return sqrt((double)k) * ldexp(1.0, -23) * s + n * ldexp(1.0, -149);
#else
    return th_gamma(n) * s + n * ldexp(1.0, -149);
#endif
}

/* got agrees with a dot product of class/value d within tol. */
static FZ_UNUSED int fz_dot_ok(float got, const fz_dot_t *d, double tol)
{
    switch (d->cls) {
    case FZ_FINITE: return isfinite(got) && fabs((double)got - d->v) <= tol;
    case FZ_PINF: return got == HUGE_VALF;
    case FZ_NINF: return got == -HUGE_VALF;
    case FZ_NAN: return got != got;
    default: return 1;
    }
}

/* The packed layout of ffn.h, written out: packed[(p * in + k) * 16 + j] =
   w[(16 p + j) * in + k], 0 past out. pad_fill: if not NULL, the padding lanes get
   values from it instead of 0 (their contents are documented as not checked). */
static FZ_NOCOV void fz_pack_ref(float *packed, const float *w, size_t in, size_t out,
                                 fz_t *pad_fill)
{
    size_t panels = (out + 15) / 16, p, k, j;
    for (p = 0; p < panels; p++)
        for (k = 0; k < in; k++)
            for (j = 0; j < 16; j++) {
                size_t o = p * 16 + j;
                packed[(p * in + k) * 16 + j] =
                    o < out ? w[o * in + k] : pad_fill ? fz_float(pad_fill) : 0.0f;
            }
}

/* ceil(out / 16) * 16 * in, 0 if a size is 0 or the bytes overflow (the packed count). */
static FZ_UNUSED size_t fz_pack_floats(size_t in, size_t out)
{
    size_t r, panels;
    if (!in || !out) return 0;
    panels = out / 16 + (out % 16 != 0);
    if (!fz_mul3(&r, panels, 16, in) || !fz_fbytes_ok(r, 1)) return 0;
    return r;
}

/* ---- statuses -------------------------------------------------------------------- */

/* Every documented status of each header, with its name; the end: { 0, NULL }. */
typedef struct {
    int st;
    const char *name;
} fz_status;
#define FZ_ST(s) { s, #s },
static const fz_status fz_pe_statuses[] = { PE_STATUSES(FZ_ST) { 0, NULL } };
static const fz_status fz_ffn_statuses[] = { FFN_STATUSES(FZ_ST) { 0, NULL } };

static const fz_status *fz_statuses(const th_lib *lib)
{
    return lib == &th_ffn ? fz_ffn_statuses : fz_pe_statuses;
}

/* The enum name of a status of lib's header (for messages). */
static const char *fz_status_name(const th_lib *lib, int st)
{
    const fz_status *s;
    for (s = fz_statuses(lib); s->name; s++)
        if (s->st == st) return s->name;
    return "(not a status of this header)";
}

/* ---- the two paths an input runs -------------------------------------------------- */

/* Per header: the non-scalar paths this build and CPU run (th_paths of support/harness.h,
   so TH_PATHS="avx2 scalar" narrows them) and how many inputs tested each. */
typedef struct {
    const th_lib *lib;
    int n;
    const char *path[TH_MAX_PATHS];
    unsigned long inputs[TH_MAX_PATHS];   /* per path (n == 0: scalar against itself) */
} fz_paths_t;

static fz_paths_t fz_paths[2];   /* pe.h, ffn.h */

/* Finds the paths (before the first input); log (if not NULL) gets th_paths()'s lines. */
static void fz_setup(FILE *log)
{
    const th_lib *libs[2] = { &th_pe, &th_ffn };
    int l, i;
    for (l = 0; l < 2; l++) {
        const char *names[TH_MAX_PATHS];
        int n = th_paths(libs[l], names, log);
        fz_paths[l].lib = libs[l];
        fz_paths[l].n = 0;
        for (i = 0; i < n; i++)
            if (strcmp(names[i], "scalar") != 0) fz_paths[l].path[fz_paths[l].n++] = names[i];
    }
}

/* The input will run on one of lib's non-scalar paths and on scalar. The path comes from
   the input's hash, not from its bytes (the decoding stays the same), so the corpus
   replay and the fuzzer spread over every path. */
static void fz_pick(fz_t *f, const th_lib *lib)
{
    fz_paths_t *p = &fz_paths[lib == &th_ffn];
    uint64_t z = f->h;
    int k;
    if (!p->lib) fz_setup(NULL);
    z = (z ^ (z >> 33)) * 0xff51afd7ed558ccdull;   /* murmur3's finaliser */
    z = (z ^ (z >> 33)) * 0xc4ceb9fe1a85ec53ull;
    z ^= z >> 33;
    k = p->n ? (int)(z % (unsigned)p->n) : 0;
    f->lib = lib;
    f->path[0] = p->n ? p->path[k] : "scalar";
    f->path[1] = "scalar";
    p->inputs[k]++;
}

/* Pass k of a call (0: the path under test, 1: scalar): switches the header to that
   path and restores every byte of m (if not NULL) to its snapshot; returns the path. */
/* Set when an oracle value could not be decided (fz_cr); reset by each run. */
static int fz_oracle_unknown;

static const char *fz_pass(const fz_t *f, fz_mem *m, int k)
{
    fz_oracle_unknown = 0;
    th_use(f->lib, f->path[k]);
    if (m) fz_restore(m);
    return f->path[k];
}

/* The buffers of huge mode (m NULL below): all zero, and each call must fail before
   touching them. */
#define FZ_NDUMMY 10
static uint64_t fz_dummy[FZ_NDUMMY][8];
#define FZ_DUMMY(i) ((float *)(void *)fz_dummy[i])

/* Huge mode's n pointers: dummies, p[k] NULL where sel == k + 1. */
static FZ_UNUSED void fz_dummies(float **p, int n, unsigned sel)
{
    int k;
    for (k = 0; k < n; k++) p[k] = sel == (unsigned)k + 1 ? NULL : FZ_DUMMY(k % FZ_NDUMMY);
}

/* After pass k returned st: st == want; with m, on error no byte of m changed, on
   success none outside m->wr and got[k] (if got) is a copy of buffer iout; without,
   the dummies are still zero. ctx describes the call. */
static FZ_NOCOV void fz_passed(const fz_t *f, fz_mem *m, int k, int st, int want,
                               const char *fn, const char *ctx, int iout, float **got)
{
    static const uint64_t zero[FZ_NDUMMY][8] = { { 0 } };
    FZ_CHECK(st == want, "%s on %s (%s): %s, want %s", fn, f->path[k], ctx,
             fz_status_name(f->lib, st), fz_status_name(f->lib, want));
    if (!m) {
        FZ_CHECK(memcmp(fz_dummy, zero, sizeof zero) == 0, "%s on %s (%s): wrote on error",
                 fn, f->path[k], ctx);
        return;
    }
    fz_check_untouched(m, st ? NULL : m->wr, fn, f->path[k]);
    if (!st && got) got[k] = (float *)fz_copy(m, iout);
}

/* ctx = the printf-formatted sizes, plus m's layout (if m). */
#if defined(__MINGW32__) && defined(__MINGW_PRINTF_FORMAT)
__attribute__((format(__MINGW_PRINTF_FORMAT, 4, 5)))  /* C99's %zu with mingw's ANSI stdio */
#elif defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 4, 5)))
#endif
static void fz_ctx(char *ctx, size_t cap, const fz_mem *m, const char *fmt, ...)
{
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(ctx, cap, fmt, ap);
    va_end(ap);
    if (m && n >= 0 && (size_t)n < cap)
        snprintf(ctx + n, cap - (size_t)n, ", layout %d, alias %d->%d", m->arena_mode,
                 m->alias_out, m->alias_target);
}

#define FZ_CTX(mp, ...) fz_ctx(ctx, sizeof ctx, mp, __VA_ARGS__)   /* a target's ctx */

/* a (the path under test), s (scalar) and o (the oracle, what) agree bit for bit, NaN ==
   any NaN, at element i of fn's output. */
static FZ_NOCOV void fz_same3(const fz_t *f, const char *fn, const char *ctx, size_t i,
                              float a, float s, float o, const char *what)
{
    FZ_CHECK(fz_same(a, s), "%s (%s) element %zu: %s %.9g (0x%08x) != scalar %.9g (0x%08x)",
             fn, ctx, i, f->path[0], a, (unsigned)fz_f2bits(a), s, (unsigned)fz_f2bits(s));
    FZ_CHECK(fz_oracle_unknown || fz_same(s, o),
             "%s (%s) element %zu: scalar %.9g (0x%08x) != %s %.9g (0x%08x)",
             fn, ctx, i, s, (unsigned)fz_f2bits(s), what, o, (unsigned)fz_f2bits(o));
}

/* ---- what pe.h's targets share ------------------------------------------------------ */

/* pe.h's float functions and exact modes are correctly rounded: the oracles round pe.h's
   own double functions (support/unit.c; the C library's are not within 1 ulp everywhere)
   to float, except within 4 ulps of a midpoint, where fz_cr sets fz_oracle_unknown and the
   run skips its oracle comparisons (the paths are still compared with scalar). */
#define fz_sin unit_pe_sin
#define fz_cos unit_pe_cos
#define fz_exp unit_pe_exp
#define fz_log unit_pe_log
#define fz_log2 unit_pe_log2
#define fz_pow unit_pe_pow

static float fz_cr(double v)
{
    const double e = 8.8817841970012523e-16;    /* 2^-50 (no hex floats in C++11) */
    const float lo = (float)(v - fabs(v) * e), hi = (float)(v + fabs(v) * e);
    if (fz_f2bits(lo) != fz_f2bits(hi)) fz_oracle_unknown = 1;
    return (float)v;
}
static float fz_sinf(float a) { return fz_cr(fz_sin((double)a)); }
static float fz_cosf(float a) { return fz_cr(fz_cos((double)a)); }
static float fz_expf(float a) { return fz_cr(fz_exp((double)a)); }
static float fz_powf(float x, float y) { return fz_cr(fz_pow((double)x, (double)y)); }

/* d_model of the adds and the embedding: up to 40, or (mode bytes 14, 22, .., 254, which
   the seeds (modes 0..7) leave out, so that they keep their calls) up to 160: the
   vector loops add 4 vectors (64 floats on avx512) of a row at a time. */
#define FZ_PE_D(mode) ((mode) >= 8 && (mode) % 8 == 6 ? 160 : 40)

/* torch's sum over the batch, as pe.h's TRAINING section documents it, written out here
   (float steps, each its own float): the cascade over n values x[i * stride]: chunks of
   2^p values (p = max(4, ceil(log2 n) / 4), ceil(log2 n) taken as 1 for n <= 2) added
   into level 0 from +0; after each chunk level 0 goes into level 1 (and restarts at
   +0), level 1 into level 2 when the values so far are a multiple of 2^2p, level 2 into
   level 3 at multiples of 2^3p; the rest into level 0; then ((l0 + l1) + l2) + l3. */
static FZ_NOCOV float fz_cascade(const float *x, size_t stride, size_t n)
{
    unsigned bits = 1, p;
    uint64_t step, i = 0, j;
    float l0 = 0.0f, l1 = 0.0f, l2 = 0.0f, l3 = 0.0f;
    if (n > 2) {
        uint64_t v = (uint64_t)n - 1;
        for (bits = 0; v; v >>= 1) bits++;
    }
    p = bits / 4 > 4 ? bits / 4 : 4;
    step = (uint64_t)1 << p;
    while (i + step <= n) {
        for (j = 0; j < step; j++, i++) l0 = l0 + x[i * stride];
        l1 = l1 + l0;
        l0 = 0.0f;
        if (i % ((uint64_t)1 << 2 * p) == 0) {
            l2 = l2 + l1;
            l1 = 0.0f;
            if (i % ((uint64_t)1 << 3 * p) == 0) {
                l3 = l3 + l2;
                l2 = 0.0f;
            }
        }
    }
    for (; i < n; i++) l0 = l0 + x[i * stride];
    l0 = l0 + l1;
    l0 = l0 + l2;
    l0 = l0 + l3;
    return l0;
}

/* torch's row_sum: four interleaved cascades (x[4i + k]), the last n % 4 values into the
   first, then ((s0 + s1) + s2) + s3. */
static FZ_NOCOV float fz_rowsum(const float *x, size_t stride, size_t n)
{
    float s[4];
    size_t k, i;
    for (k = 0; k < 4; k++) s[k] = fz_cascade(x + k * stride, 4 * stride, n / 4);
    for (i = n / 4 * 4; i < n; i++) s[0] = s[0] + x[i * stride];
    for (k = 1; k < 4; k++) s[0] = s[0] + s[k];
    return s[0];
}

/* Column c of the batch sum of a reduction of ncols columns, rows at `stride`: the first
   ncols / 32 * 32 columns (ncols / 4 * 4 when ncols < 8) by the cascade, the others by
   row_sum; ncols 1 (contiguous values) with 8 rows or more: 0 plus the last rows % 8
   values in turn, plus the 8 lanes (lane l: row_sum of x[8v + l]) in turn. */
static FZ_NOCOV float fz_batch_sum(const float *x, size_t stride, size_t rows, size_t ncols,
                                   size_t c)
{
    if (ncols == 1 && rows >= 8) {
        float t = 0.0f;
        size_t i;
        for (i = rows / 8 * 8; i < rows; i++) t = t + x[i];
        for (i = 0; i < 8; i++) t = t + fz_rowsum(x + i, 8, rows / 8);
        return t;
    }
    if (c < (ncols == 1 ? 0 : ncols >= 8 ? ncols / 32 * 32 : ncols / 4 * 4))
        return fz_cascade(x + c, stride, rows);
    return fz_rowsum(x + c, stride, rows);
}

/* theta / attention factor: ordinary values, or the edges of "finite and > 0". */
static double fz_pe_param(fz_t *f)
{
    static const double v[12] = { 10000.0, 500000.0, 1.0, 2.5, 0.0, -1.0, 0.5, 1e6,
                                  1e39, 1e-39, 0.9, 1e300 };
    unsigned b = fz_byte(f);
    if (b < 240) return v[b % 12];
    if (b < 248) return (double)fz_bits2f(fz_special_bits[fz_byte(f) % 24]);
    return (double)fz_float(f);
}

static int fz_pe_positive(double v) { return v > 0.0 && v <= DBL_MAX; }

/* ---- what ffn.h's targets share ----------------------------------------------------- */

/* what, another call on path k, returned st == OK and its n floats y equal got[k] (the
   call under test on path k), bit for bit. */
static FZ_NOCOV void fz_eq_on_path(const fz_t *f, const char *name, const char *ctx, int st,
                                   float *const *got, const float *y, size_t n, int k,
                                   const char *what)
{
    size_t i;
    FZ_CHECK(st == 0, "%s (%s) on %s: %s: %s", name, ctx, f->path[k], what,
             fz_status_name(f->lib, st));
    for (i = 0; i < n; i++)
        FZ_CHECK(fz_same(got[k][i], y[i]), "%s (%s) on %s: y[%zu] %.9g (0x%08x) != %s "
                 "%.9g (0x%08x)", name, ctx, f->path[k], i, got[k][i],
                 (unsigned)fz_f2bits(got[k][i]), what, y[i], (unsigned)fz_f2bits(y[i]));
}

/* Buffers of a train forward, in this order: y, h (gate_h), up_h, x, w1 (w_gate), b1
   (b_gate), w_up, b_up, w2 (w_down), b2 (b_down), scratch (the block has no up_h, w_up,
   b_up: NULL). act first (FFN_GPT_OSS refused), then NULL (all but the biases), ZERO_SIZE,
   OVERFLOW (the buffers, packed sizes), SCRATCH (< rows h), ALIAS: y, the scratch (its rows
   h floats), h, up_h overlap nothing, but y may be x. */
enum { FT_Y, FT_H, FT_UH, FT_X, FT_W1, FT_B1, FT_WU, FT_BU, FT_W2, FT_B2, FT_S, FT_N };

/* Buffers of a backward, in this order: the outputs dx, dw1 (dw_gate), db1 (db_gate),
   dw_up, db_up, dw2 (dw_down), db2 (db_down), then dy, x, h (gate_h), up_h, w1 (w_gate),
   w_up, w2 (w_down), scratch (the block has no dw_up, db_up, up_h, w_up). */
enum { FB_DX, FB_DW1, FB_DB1, FB_DWU, FB_DBU, FB_DW2, FB_DB2, FB_DY, FB_X, FB_H, FB_UH, FB_W1,
       FB_WU, FB_W2, FB_S, FB_N };

/* The engines of the block's and the gated block's targets (fuzz.c; gated: the gated
   block's, bwd: the backward's). */
static int fz_scratch_floats(const uint8_t *data, size_t size, int gated, int bwd);
static int fz_train(const uint8_t *data, size_t size, int gated, int packed);
static int fz_backward(const uint8_t *data, size_t size, int gated);

/* ---- the status strings (the paths features' targets) ------------------------------ */

/* Any int gives a non-NULL message; 0 "ok"; each documented status (the enum of the
   header, PATH and CPU included) a distinct "pe: ..." message without "unknown"; the
   other header's range (pe -101..-199, ffn -201..-299) "pe: unknown status (an ffn.h
   status?)" / "ffn: unknown status (a pe.h status?)"; any other int "pe: unknown
   status". */
static void fz_status_check(const th_lib *lib, int st)
{
    const int ffn = lib == &th_ffn, other_hi = ffn ? -101 : -201;
    const fz_status *doc = fz_statuses(lib), *d;
    const char *s = lib->why(st);
    char prefix[16], unknown[64];
    snprintf(prefix, sizeof prefix, "%s: ", lib->header);
    FZ_CHECK(s != NULL, "%s_status_string(%d) is NULL", lib->header, st);
    FZ_CHECK(strlen(s) < 200, "%s_status_string(%d) is too long", lib->header, st);
    if (st == 0) {
        FZ_CHECK(strcmp(s, "ok") == 0, "%s_status_string(0) = '%s'", lib->header, s);
        return;
    }
    FZ_CHECK(strncmp(s, prefix, strlen(prefix)) == 0, "%s_status_string(%d) = '%s'",
             lib->header, st, s);
    for (d = doc; d->name && d->st != st; d++) {}
    if (d->name) {
        const fz_status *e;
        FZ_CHECK(strstr(s, "unknown") == NULL, "%s_status_string(%s) = '%s'", lib->header,
                 d->name, s);
        for (e = doc; e->name; e++)
            FZ_CHECK(e == d || strcmp(lib->why(e->st), s) != 0,
                     "%s and %s share the message '%s'", d->name, e->name, s);
        return;
    }
    snprintf(unknown, sizeof unknown, "%s: unknown status%s", lib->header,
             st > other_hi || st < other_hi - 98 ? ""
                 : ffn ? " (a pe.h status?)" : " (an ffn.h status?)");
    FZ_CHECK(strcmp(s, unknown) == 0, "%s_status_string(%d) = '%s', want '%s'", lib->header,
             st, s, unknown);
}

static int fz_status_strings(const uint8_t *data, size_t size, const th_lib *lib)
{
    static const int edges[] = { INT_MIN, INT_MIN + 1, -300, -299, -298, -250, -202,
                                 -201, -200, -199, -198, -150, -110, -102, -101, -100,
                                 -99, -8, -1, 1, 101, 201, INT_MAX };
    const fz_status *d;
    fz_t f;
    size_t i;
    fz_init(&f, data, size);
    fz_status_check(lib, fz_byte(&f) < 128 ? (int)(signed char)fz_byte(&f) : (int)fz_u32(&f));
    /* and every time (cheap): both headers' statuses and the edges of their ranges */
    for (d = fz_pe_statuses; d->name; d++) fz_status_check(lib, d->st);
    for (d = fz_ffn_statuses; d->name; d++) fz_status_check(lib, d->st);
    for (i = 0; i < sizeof edges / sizeof edges[0]; i++) fz_status_check(lib, edges[i]);
    return 0;
}

/* ---- a target's frame ---------------------------------------------------------------- */

/* The target being run (its row of fuzz.c's table): the function the messages name. */
static const char *fz_name = "";

/* fzt_<function>: the target of a public function (a feature's piece defines it). */
#define FZ_T(fn, call) \
    static int fzt_##fn(const uint8_t *d, size_t n) { return call; }

/* A target's locals: the function the messages name, the call's description, the
   decoder, the buffers. */
#define FZ_FRAME const char *name = fz_name; char ctx[256]; fz_t f; fz_mem m

/* An input starts: the decoder, the path choice, no buffers (m if not NULL). */
static void fz_begin(fz_t *f, fz_mem *m, const uint8_t *data, size_t size, const th_lib *lib)
{
    fz_init(f, data, size);
    fz_pick(f, lib);
    if (m) m->nb = 0;
}

/* Huge mode: each size_t pointed to, up to a NULL, gets fz_size_huge, in order. */
static FZ_UNUSED void fz_huges(fz_t *f, ...)   /* ... NULL */
{
    va_list ap;
    size_t *p;
    va_start(ap, f);
    while ((p = va_arg(ap, size_t *)) != NULL) *p = fz_size_huge(f);
    va_end(ap);
}
#define FZ_HUGES(f, ...) fz_huges(f, __VA_ARGS__, (size_t *)NULL)

/* A run ends: got[] (the outputs' copies of both passes, if got) and m freed. */
static int fz_end(fz_mem *m, float **got)
{
    if (got) {
        free(got[0]); free(got[1]);
    }
    fz_free(m);
    return 0;
}

/* The call on both passes (fz_pass: mp NULL or &m restored), each checked by fz_passed
   (the status want, the bytes of mp, io and got: the output to copy). Uses the target's
   locals f, want, name and ctx. */
#define FZ_TWICE(mp, io, got, ...)                                                    \
    do {                                                                              \
        int k_;                                                                       \
        for (k_ = 0; k_ < 2; k_++) {                                                  \
            fz_pass(&f, mp, k_);                                                      \
            fz_passed(&f, mp, k_, (__VA_ARGS__), want, name, ctx, io, got);           \
        }                                                                             \
    } while (0)
/* Huge mode: the target returns, after (unless want is OK or ALIAS: those need real
   buffers) the call on dummy buffers, which must fail before touching them. */
#define FZ_HUGE(...)                                                                  \
    do {                                                                              \
        if (want && want != (f.lib == &th_ffn ? (int)FFN_ERR_ALIAS : (int)PE_ERR_ALIAS)) \
            FZ_TWICE(NULL, 0, NULL, __VA_ARGS__);                                    \
        return 0;                                                                     \
    } while (0)

#endif /* FUZZ_FZ_H */


/* npy.h - a small, strict reader for NumPy .npy files (test support for pe.h / ffn.h).

   Do this in *one* C or C++ file before including it:
      #define NPY_IMPLEMENTATION
      #include "npy.h"
   (#define NPY_STATIC as well to make every function static to that file.)

   API
      npy_array a;
      int st = npy_load("x.npy", &a);            // or npy_load_mem(buf, len, &a)
      if (st != NPY_OK) { puts(npy_status_string(st)); ... }   // a is zeroed on error
      a.dtype      'f' (float), 'i' (signed integer) or 'u' (uint16: 16-bit floats' bits)
      a.itemsize   4 or 8 (bytes per element; 2 for 'u')
      a.ndim       0..NPY_MAX_DIMS; a.shape[0..ndim-1]; a.count = product of shape
                   (1 for a 0-d array, 0 if some dimension is 0)
      a.data       a.count * a.itemsize bytes, C order, already in HOST byte order
      npy_to_f32(&a, &p)  float dtypes only: malloc'd float copy (f8 rounded to nearest)
      npy_to_f64(&a, &p)  float dtypes only: malloc'd double copy (exact)
      npy_to_i64(&a, &p)  integer dtypes only ('i', 'u'): malloc'd int64_t copy (exact)
      npy_free(&a)        releases a.data; safe on a zeroed or already freed array
   The helpers refuse to cross kinds (float <-> int), so a golden file of the wrong kind is
   an error instead of a silent conversion. All pointers returned are free()d by the caller;
   the helpers never return NULL with NPY_OK (a 0-element array still gets a 1-byte block).

   WHAT IS ACCEPTED
      Format versions 1.0 (2-byte header length), 2.0 and 3.0 (4-byte header length; 3.0
      only allows UTF-8 in the header, which does not matter for the keys read here).
      The header must be exactly one Python dict literal with exactly the keys 'descr',
      'fortran_order' and 'shape' (any order, ' or " quotes, optional trailing commas,
      whitespace anywhere Python allows it), followed only by whitespace -- the same keys
      numpy.lib.format insists on.
      descr: an optional byte-order character then f4, f8, i4, i8 or u2. '<' is little-endian,
      '>' big-endian; '=', '|' or no character mean the byte order of the reading host
      (what numpy.dtype('f4') means). Values are byte-swapped to the host order, which is
      detected at run time, so big-endian hosts (s390x) read little-endian files correctly.
      fortran_order must be False (the tests only deal with C-order data).
      shape: a tuple of non-negative decimal integers ("(3,)" but not "(3)", which is an
      int in Python; a trailing L from Python 2 era files is accepted).
      The data must be exactly count * itemsize bytes: both a short file and trailing
      bytes are errors (np.save never writes either).

   ROBUSTNESS
      Every length is checked before it is used, the shape product and byte count are
      checked for size_t overflow, and nothing is read outside [buf, buf + len): a
      malformed or hostile file gives an error status, never a crash. (npy_load_mem is the
      fuzzing entry point.)

   C99 or C++; no global state; thread-safe.
*/
#ifndef NPY_H_INCLUDED
#define NPY_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#ifndef NPYDEF
#ifdef NPY_STATIC
#define NPYDEF static
#else
#define NPYDEF extern
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define NPY_MAX_DIMS 32   /* numpy 1.x's NPY_MAXDIMS */

enum {
    NPY_OK             =   0,
    NPY_ERR_IO         =  -1,  /* cannot open or read the file */
    NPY_ERR_NOMEM      =  -2,  /* malloc failed */
    NPY_ERR_MAGIC      =  -3,  /* not "\x93NUMPY" */
    NPY_ERR_VERSION    =  -4,  /* format version other than 1.0, 2.0, 3.0 */
    NPY_ERR_TRUNCATED  =  -5,  /* the file ends inside the preamble or the header */
    NPY_ERR_HEADER     =  -6,  /* the header is not a valid dict of the expected keys */
    NPY_ERR_DTYPE      =  -7,  /* descr is not one of the supported dtypes */
    NPY_ERR_FORTRAN    =  -8,  /* fortran_order is True */
    NPY_ERR_SHAPE      =  -9,  /* bad shape tuple (negative, too many dims, ...) */
    NPY_ERR_OVERFLOW   = -10,  /* shape product or byte count does not fit in size_t */
    NPY_ERR_DATA_SHORT = -11,  /* fewer data bytes than the shape needs */
    NPY_ERR_DATA_LONG  = -12,  /* more data bytes than the shape needs */
    NPY_ERR_KIND       = -13,  /* conversion between float and integer kinds refused */
    NPY_ERR_ARG        = -14   /* a NULL argument */
};

typedef struct {
    char dtype;                   /* 'f' or 'i' */
    int itemsize;                 /* 4 or 8 */
    int ndim;
    size_t shape[NPY_MAX_DIMS];
    size_t count;                 /* number of elements */
    void *data;                   /* count * itemsize bytes, host byte order, malloc'd */
} npy_array;

NPYDEF const char *npy_status_string(int status);
NPYDEF int npy_load(const char *path, npy_array *out);
NPYDEF int npy_load_mem(const unsigned char *buf, size_t len, npy_array *out);
NPYDEF void npy_free(npy_array *a);
NPYDEF int npy_to_f32(const npy_array *a, float **out);
NPYDEF int npy_to_f64(const npy_array *a, double **out);
NPYDEF int npy_to_i64(const npy_array *a, int64_t **out);

#ifdef __cplusplus
}
#endif
#endif /* NPY_H_INCLUDED */

/* ======================================================================== */
#ifdef NPY_IMPLEMENTATION
#ifndef NPY_IMPLEMENTATION_DONE
#define NPY_IMPLEMENTATION_DONE

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

NPYDEF const char *npy_status_string(int status)
{
    switch (status) {
    case NPY_OK:             return "ok";
    case NPY_ERR_IO:         return "npy: cannot open or read the file";
    case NPY_ERR_NOMEM:      return "npy: out of memory";
    case NPY_ERR_MAGIC:      return "npy: bad magic (not a .npy file)";
    case NPY_ERR_VERSION:    return "npy: unsupported format version";
    case NPY_ERR_TRUNCATED:  return "npy: truncated preamble or header";
    case NPY_ERR_HEADER:     return "npy: malformed header dict";
    case NPY_ERR_DTYPE:      return "npy: unsupported dtype (want f4, f8, i4, i8)";
    case NPY_ERR_FORTRAN:    return "npy: fortran_order arrays are not supported";
    case NPY_ERR_SHAPE:      return "npy: malformed shape";
    case NPY_ERR_OVERFLOW:   return "npy: shape too large for size_t";
    case NPY_ERR_DATA_SHORT: return "npy: data shorter than the shape says";
    case NPY_ERR_DATA_LONG:  return "npy: trailing bytes after the data";
    case NPY_ERR_KIND:       return "npy: float/integer kind mismatch";
    case NPY_ERR_ARG:        return "npy: NULL argument";
    default:                 return "npy: unknown status";
    }
}

/* ---- header dict parsing ---------------------------------------------- */

/* A cursor over the header text [p, end). Never dereferenced at end. */
typedef struct { const unsigned char *p, *end; } npy__cur;

static void npy__ws(npy__cur *c)
{
    /* Python whitespace that numpy's writers and any sane editor would use. */
    while (c->p < c->end &&
           (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static int npy__eat(npy__cur *c, unsigned char ch)
{
    npy__ws(c);
    if (c->p < c->end && *c->p == ch) { c->p++; return 1; }
    return 0;
}

/* A quoted string without escapes into buf (NUL-terminated); 0 if malformed/too long. */
static int npy__string(npy__cur *c, char *buf, size_t cap)
{
    unsigned char q;
    size_t n = 0;
    npy__ws(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return 0;
    q = *c->p++;
    while (c->p < c->end && *c->p != q) {
        /* control bytes (NUL above all: 'descr\0junk' would read as 'descr') and
           escapes never occur in a header NumPy writes */
        if (*c->p < 0x20 || *c->p == '\\' || n + 1 >= cap) return 0;
        buf[n++] = (char)*c->p++;
    }
    if (c->p >= c->end) return 0;       /* unterminated */
    c->p++;
    buf[n] = '\0';
    return 1;
}

/* True / False. */
static int npy__bool(npy__cur *c, int *v)
{
    npy__ws(c);
    if ((size_t)(c->end - c->p) >= 4 && memcmp(c->p, "True", 4) == 0) {
        c->p += 4; *v = 1;
    } else if ((size_t)(c->end - c->p) >= 5 && memcmp(c->p, "False", 5) == 0) {
        c->p += 5; *v = 0;
    } else {
        return 0;
    }
    /* "Truex" is not True. */
    return !(c->p < c->end && (*c->p == '_' || (*c->p >= 'a' && *c->p <= 'z') ||
                               (*c->p >= 'A' && *c->p <= 'Z') ||
                               (*c->p >= '0' && *c->p <= '9')));
}

/* A non-negative decimal integer that fits in size_t, optionally followed by L. */
static int npy__size(npy__cur *c, size_t *v, int *overflow)
{
    size_t x = 0;
    const unsigned char *start;
    npy__ws(c);
    start = c->p;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        size_t d = (size_t)(*c->p - '0');
        if (x > ((size_t)-1 - d) / 10) *overflow = 1;
        else x = x * 10 + d;
        c->p++;
    }
    if (c->p == start) return 0;
    if (c->p < c->end && (*c->p == 'L' || *c->p == 'l')) c->p++;
    *v = x;
    return 1;
}

/* The shape tuple: "()", "(n,)", "(n, m)", "(n, m,)". */
static int npy__shape(npy__cur *c, npy_array *a)
{
    int overflow = 0;
    if (!npy__eat(c, '(')) return NPY_ERR_SHAPE;
    a->ndim = 0;
    if (npy__eat(c, ')')) return NPY_OK;
    for (;;) {
        size_t v;
        if (a->ndim >= NPY_MAX_DIMS) return NPY_ERR_SHAPE;
        if (!npy__size(c, &v, &overflow)) return NPY_ERR_SHAPE;
        a->shape[a->ndim++] = v;
        if (npy__eat(c, ')')) {
            /* (n) without a comma is an int in Python, not a tuple. */
            return a->ndim == 1 ? NPY_ERR_SHAPE : (overflow ? NPY_ERR_OVERFLOW : NPY_OK);
        }
        if (!npy__eat(c, ',')) return NPY_ERR_SHAPE;
        if (npy__eat(c, ')')) return overflow ? NPY_ERR_OVERFLOW : NPY_OK;
    }
}

/* descr -> dtype, itemsize, file byte order (1 = big-endian). */
static int npy__descr(const char *s, int host_big, npy_array *a, int *file_big)
{
    *file_big = host_big;
    if (*s == '<') { *file_big = 0; s++; }
    else if (*s == '>') { *file_big = 1; s++; }
    else if (*s == '=' || *s == '|') { s++; }
    if (s[0] == 'u' && s[1] == '2' && s[2] == '\0') {
        a->dtype = 'u';
        a->itemsize = 2;
        return NPY_OK;
    }
    if ((s[0] != 'f' && s[0] != 'i') || (s[1] != '4' && s[1] != '8') || s[2] != '\0')
        return NPY_ERR_DTYPE;
    a->dtype = s[0];
    a->itemsize = s[1] - '0';
    return NPY_OK;
}

static int npy__host_is_big_endian(void)
{
    const uint32_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    return first == 0;
}

/* Parse the header dict into a (dtype, itemsize, ndim, shape) and the file byte order. */
static int npy__header(const unsigned char *h, size_t n, npy_array *a, int *file_big)
{
    npy__cur c;
    int have_descr = 0, have_fortran = 0, have_shape = 0, fortran = 0, st;
    char key[32], descr[16];
    c.p = h;
    c.end = h + n;
    if (!npy__eat(&c, '{')) return NPY_ERR_HEADER;
    while (!npy__eat(&c, '}')) {
        if (!npy__string(&c, key, sizeof key) || !npy__eat(&c, ':')) return NPY_ERR_HEADER;
        if (strcmp(key, "descr") == 0 && !have_descr) {
            if (!npy__string(&c, descr, sizeof descr)) return NPY_ERR_DTYPE;
            have_descr = 1;
        } else if (strcmp(key, "fortran_order") == 0 && !have_fortran) {
            if (!npy__bool(&c, &fortran)) return NPY_ERR_HEADER;
            have_fortran = 1;
        } else if (strcmp(key, "shape") == 0 && !have_shape) {
            if ((st = npy__shape(&c, a)) != NPY_OK) return st;
            have_shape = 1;
        } else {
            return NPY_ERR_HEADER;      /* unknown or repeated key */
        }
        if (npy__eat(&c, ',')) continue;
        if (!npy__eat(&c, '}')) return NPY_ERR_HEADER;
        break;
    }
    npy__ws(&c);
    if (c.p != c.end) return NPY_ERR_HEADER;          /* junk after the dict */
    if (!have_descr || !have_fortran || !have_shape) return NPY_ERR_HEADER;
    if ((st = npy__descr(descr, npy__host_is_big_endian(), a, file_big)) != NPY_OK)
        return st;
    if (fortran) return NPY_ERR_FORTRAN;
    return NPY_OK;
}

/* ---- loading -------------------------------------------------------------- */

static const unsigned char npy__magic[6] = { 0x93, 'N', 'U', 'M', 'P', 'Y' };

NPYDEF void npy_free(npy_array *a)
{
    if (!a) return;
    free(a->data);
    memset(a, 0, sizeof *a);
}

NPYDEF int npy_load_mem(const unsigned char *buf, size_t len, npy_array *out)
{
    npy_array a;
    size_t hlen, pre, i, bytes, avail;
    int st, file_big;
    unsigned char *data;

    if (!out) return NPY_ERR_ARG;
    memset(out, 0, sizeof *out);
    if (!buf) return NPY_ERR_ARG;
    memset(&a, 0, sizeof a);

    if (len < 8) {       /* too short for magic + version: say which part is wrong */
        if (memcmp(buf, npy__magic, len < 6 ? len : 6) != 0) return NPY_ERR_MAGIC;
        return NPY_ERR_TRUNCATED;
    }
    if (memcmp(buf, npy__magic, 6) != 0) return NPY_ERR_MAGIC;
    if (buf[7] != 0 || buf[6] < 1 || buf[6] > 3) return NPY_ERR_VERSION;
    if (buf[6] == 1) {                  /* 1.0: uint16 little-endian header length */
        if (len < 10) return NPY_ERR_TRUNCATED;
        hlen = (size_t)buf[8] | (size_t)buf[9] << 8;
        pre = 10;
    } else {                            /* 2.0, 3.0: uint32 little-endian */
        uint32_t h32;
        if (len < 12) return NPY_ERR_TRUNCATED;
        h32 = (uint32_t)buf[8] | (uint32_t)buf[9] << 8 | (uint32_t)buf[10] << 16 |
              (uint32_t)buf[11] << 24;
        if ((uint64_t)h32 > (uint64_t)(len - 12)) return NPY_ERR_TRUNCATED;
        hlen = (size_t)h32;
        pre = 12;
    }
    if (hlen > len - pre) return NPY_ERR_TRUNCATED;

    if ((st = npy__header(buf + pre, hlen, &a, &file_big)) != NPY_OK) return st;

    a.count = 1;
    for (i = 0; i < (size_t)a.ndim; i++) {
        if (a.shape[i] != 0 && a.count > (size_t)-1 / a.shape[i]) {
            /* A zero dimension later would make the product 0; keep scanning for it. */
            size_t j;
            for (j = i + 1; j < (size_t)a.ndim; j++)
                if (a.shape[j] == 0) break;
            if (j == (size_t)a.ndim) return NPY_ERR_OVERFLOW;
            a.count = 0;
            break;
        }
        a.count *= a.shape[i];
    }
    if (a.count > (size_t)-1 / (size_t)a.itemsize) return NPY_ERR_OVERFLOW;
    bytes = a.count * (size_t)a.itemsize;
    avail = len - pre - hlen;
    if (avail < bytes) return NPY_ERR_DATA_SHORT;
    if (avail > bytes) return NPY_ERR_DATA_LONG;

    data = (unsigned char *)malloc(bytes ? bytes : 1);
    if (!data) return NPY_ERR_NOMEM;
    if (bytes) memcpy(data, buf + pre + hlen, bytes);
    if (file_big != npy__host_is_big_endian()) {
        size_t k, w = (size_t)a.itemsize;
        for (k = 0; k < bytes; k += w) {
            unsigned char *e = data + k;
            size_t lo, hi;
            for (lo = 0, hi = w - 1; lo < hi; lo++, hi--) {
                unsigned char t = e[lo];
                e[lo] = e[hi];
                e[hi] = t;
            }
        }
    }
    a.data = data;
    *out = a;
    return NPY_OK;
}

NPYDEF int npy_load(const char *path, npy_array *out)
{
    FILE *f;
    unsigned char *buf = NULL;
    size_t len = 0, cap = 0;
    int st;

    if (!out) return NPY_ERR_ARG;
    memset(out, 0, sizeof *out);
    if (!path) return NPY_ERR_ARG;
    f = fopen(path, "rb");
    if (!f) return NPY_ERR_IO;
    /* Read in growing chunks: no reliance on ftell (which is long, 32-bit on some hosts). */
    for (;;) {
        size_t got;
        if (len == cap) {
            size_t ncap = cap ? cap * 2 : 65536;
            unsigned char *nb;
            if (ncap < cap) { free(buf); fclose(f); return NPY_ERR_NOMEM; }
            nb = (unsigned char *)realloc(buf, ncap);
            if (!nb) { free(buf); fclose(f); return NPY_ERR_NOMEM; }
            buf = nb;
            cap = ncap;
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    st = ferror(f) ? NPY_ERR_IO : NPY_OK;
    fclose(f);
    if (st == NPY_OK) st = npy_load_mem(buf, len, out);
    free(buf);
    return st;
}

/* ---- conversions ---------------------------------------------------------- */

/* double -> float, round to nearest even, defined for every input: C leaves the cast
   undefined when the value is outside float's range, so overflow is decided here. */
static float npy__d2f(double v)
{
    /* Halfway between FLT_MAX and the next power of two: it and beyond round to inf
       (FLT_MAX has an odd significand, so the tie goes away from it). */
    const double lim = (double)FLT_MAX + ldexp(1.0, 103);
    if (!(v <= 0.0) && !(v >= 0.0)) return (float)v;  /* NaN stays NaN (v != v, -Wfloat-equal) */
    if (v >= lim) return (float)HUGE_VAL;
    if (v <= -lim) return -(float)HUGE_VAL;
    if (v > (double)FLT_MAX) return FLT_MAX;
    if (v < -(double)FLT_MAX) return -FLT_MAX;
    return (float)v;
}

static void *npy__alloc(size_t count, size_t size)
{
    if (count > (size_t)-1 / size) return NULL;
    return malloc(count ? count * size : 1);
}

NPYDEF int npy_to_f32(const npy_array *a, float **out)
{
    float *p;
    size_t i;
    if (!out) return NPY_ERR_ARG;
    *out = NULL;
    if (!a || !a->data) return NPY_ERR_ARG;
    if (a->dtype != 'f') return NPY_ERR_KIND;
    if (!(p = (float *)npy__alloc(a->count, sizeof *p))) return NPY_ERR_NOMEM;
    if (a->itemsize == 4) {
        if (a->count) memcpy(p, a->data, a->count * sizeof *p);
    } else {
        for (i = 0; i < a->count; i++) {
            double d;
            memcpy(&d, (const unsigned char *)a->data + i * 8, 8);
            p[i] = npy__d2f(d);
        }
    }
    *out = p;
    return NPY_OK;
}

NPYDEF int npy_to_f64(const npy_array *a, double **out)
{
    double *p;
    size_t i;
    if (!out) return NPY_ERR_ARG;
    *out = NULL;
    if (!a || !a->data) return NPY_ERR_ARG;
    if (a->dtype != 'f') return NPY_ERR_KIND;
    if (!(p = (double *)npy__alloc(a->count, sizeof *p))) return NPY_ERR_NOMEM;
    for (i = 0; i < a->count; i++) {
        if (a->itemsize == 8) {
            memcpy(p + i, (const unsigned char *)a->data + i * 8, 8);
        } else {
            float f;
            memcpy(&f, (const unsigned char *)a->data + i * 4, 4);
            p[i] = (double)f;
        }
    }
    *out = p;
    return NPY_OK;
}

NPYDEF int npy_to_i64(const npy_array *a, int64_t **out)
{
    int64_t *p;
    size_t i;
    if (!out) return NPY_ERR_ARG;
    *out = NULL;
    if (!a || !a->data) return NPY_ERR_ARG;
    if (a->dtype != 'i' && a->dtype != 'u') return NPY_ERR_KIND;
    if (!(p = (int64_t *)npy__alloc(a->count, sizeof *p))) return NPY_ERR_NOMEM;
    for (i = 0; i < a->count; i++) {
        if (a->itemsize == 8) {
            memcpy(p + i, (const unsigned char *)a->data + i * 8, 8);
        } else if (a->itemsize == 2) {
            uint16_t v;
            memcpy(&v, (const unsigned char *)a->data + i * 2, 2);
            p[i] = v;
        } else {
            int32_t v;
            memcpy(&v, (const unsigned char *)a->data + i * 4, 4);
            p[i] = v;
        }
    }
    *out = p;
    return NPY_OK;
}

#endif /* NPY_IMPLEMENTATION_DONE */
#endif /* NPY_IMPLEMENTATION */

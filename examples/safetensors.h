/* safetensors.h - a strict reader of Hugging Face's .safetensors files, in C99 (an example
   beside pe.h and ffn.h: examples/llama_mlp.c runs a Llama MLP layer read with it).
   Public domain or MIT, as pe.h and ffn.h. No warranty.

   Do this:
      #define SAFETENSORS_IMPLEMENTATION
   before you include this file in *one* C or C++ file to create the implementation.

   THE FORMAT (huggingface/safetensors, README "Format")
      8 bytes     N, an unsigned 64-bit little-endian integer: the header's length
      N bytes     the header: a UTF-8 JSON object, starting with '{', maybe padded with
                  spaces at the end:
                  { "NAME": {"dtype": "BF16", "shape": [172, 64],
                             "data_offsets": [BEGIN, END]}, ...,
                    "__metadata__": {"KEY": "VALUE", ...} }      (optional, strings only)
      the rest    the data section: each tensor's bytes at [BEGIN, END) of it, little-endian,
                  C order (row-major), END - BEGIN = product(shape) * the dtype's size.

   WHAT IS CHECKED (a file passes only if all of it holds; the first problem found, in
   about this order, is the status)
      - the file holds 8 + N bytes; 2 <= N <= 100,000,000 (the format's limit);
      - the header is JSON (RFC 8259) starting with '{', with nothing after the object
        but whitespace: strings with valid escapes (surrogate pairs paired) and valid
        UTF-8 (no overlong forms, no surrogates), no raw control characters;
      - its shape is the format's: every member an object with exactly "dtype" (a string),
        "shape" (an array of integers) and "data_offsets" (two integers), each once, or
        "__metadata__" (at most once) an object whose values are strings; no other keys;
      - every integer is unsigned, below 2^64, written without sign, fraction, exponent
        or leading zero; a shape has at most ST_MAX_DIMS dimensions;
      - the dtype is one of st_dtype_name's (the sub-byte F4 / F6 types are refused);
      - BEGIN <= END <= the data section's length; END - BEGIN = product(shape) * size,
        the product computed without overflow (a dimension 0: an empty tensor);
      - the tensors tile the data section: no two overlap, no byte belongs to none
        (no holes, no trailing bytes), an empty tensor sits at 0 or at another's end;
      - no name appears twice (compared after decoding escapes);
      - at most ST_MAX_TENSORS tensors.
      The JSON parser follows this one schema, so it needs no stack: nesting deeper than
      the format's is a schema error at its first token. Keys of __metadata__ are not
      checked for duplicates.

   NO ALLOCATION
      The caller gives the whole file in memory and an array of records; st_parse writes
      nothing (not the records, not *info) unless the file passes every check. A first
      call with no records asks for the count:

         st_info info;
         int s = st_parse(file, file_bytes, NULL, 0, &info);     // info.n_tensors
         st_tensor *t = malloc(info.n_tensors * sizeof *t);
         if (s == 0) s = st_parse(file, file_bytes, t, info.n_tensors, &info);
         if (s < 0) fprintf(stderr, "%s\n", st_status_string(s));
         const st_tensor *w = st_find(t, info.n_tensors, "model.layers.0.mlp.up_proj.weight");

      Records point into the file's bytes (names, data): keep the file while you use them.
      The checks between tensors (overlaps, duplicate names) compare every pair: without
      memory of its own the reader scans the header twice more for each 64 tensors, so
      a call costs about n^2 comparisons (measured here, -O2: 300 tensors 1.3 ms, 2000
      46 ms, 20000 4.3 s; a Llama-3-8B file has 291, a checkpoint shard a few thousand).

   API
      st_parse(file, bytes, tensors, cap, info)  check the whole file; on success fill
                  *info and, if tensors is not NULL, tensors[0 .. info->n_tensors) in the
                  header's order (cap too small: ST_ERR_CAPACITY). Returns 0 or a status < 0.
      st_find(tensors, n, name)     the record named name (UTF-8, NUL-terminated) or NULL
      st_dtype_name(dtype)          "BF16", ...; st_dtype_size(dtype): bytes an element
      st_status_string(status)      a static English message; never NULL

   OPTIONS (#define before including)
      SAFETENSORS_STATIC  make every function static (private to the file)
      ST_MAX_DIMS         the most dimensions a shape may have (default 8)
      ST_MAX_TENSORS      the most tensors a file may have (default 65536)
*/
#ifndef SAFETENSORS_H_INCLUDED
#define SAFETENSORS_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#ifndef STDEF
#ifdef SAFETENSORS_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define STDEF static __attribute__((unused))
#else
#define STDEF static
#endif
#else
#define STDEF extern
#endif
#endif

#ifndef ST_MAX_DIMS
#define ST_MAX_DIMS 8
#endif
#ifndef ST_MAX_TENSORS
#define ST_MAX_TENSORS 65536
#endif
#define ST_MAX_HEADER 100000000u   /* the format's limit on N */

#ifdef __cplusplus
extern "C" {
#endif

enum {                  /* st_tensor.dtype: the names of the format */
    ST_BOOL, ST_U8, ST_I8, ST_F8_E5M2, ST_F8_E4M3, ST_I16, ST_U16, ST_F16, ST_BF16,
    ST_I32, ST_U32, ST_F32, ST_I64, ST_U64, ST_F64, ST_NDTYPES
};

enum {                  /* statuses */
    ST_OK             = 0,
    ST_ERR_ARG        = -1,   /* file or info NULL, or cap > 0 without records */
    ST_ERR_TRUNCATED  = -2,   /* fewer than 8 + N bytes */
    ST_ERR_HEADER_SIZE = -3,  /* N < 2 or N > ST_MAX_HEADER */
    ST_ERR_JSON       = -4,   /* not JSON: syntax, escape, UTF-8, control character */
    ST_ERR_SCHEMA     = -5,   /* JSON, but not the format's keys and types */
    ST_ERR_NUMBER     = -6,   /* a shape or offset not an unsigned integer below 2^64 */
    ST_ERR_DTYPE      = -7,   /* an unknown dtype */
    ST_ERR_DIMS       = -8,   /* more than ST_MAX_DIMS dimensions */
    ST_ERR_OFFSETS    = -9,   /* data_offsets' END < BEGIN */
    ST_ERR_BOUNDS     = -10,  /* END past the end of the file */
    ST_ERR_SIZE       = -11,  /* END - BEGIN != product(shape) * dtype size (or overflow) */
    ST_ERR_OVERLAP    = -12,  /* two tensors share bytes */
    ST_ERR_HOLE       = -13,  /* bytes of the data section in no tensor */
    ST_ERR_DUPLICATE  = -14,  /* a name, or a key of an entry, twice */
    ST_ERR_TOO_MANY   = -15,  /* more than ST_MAX_TENSORS tensors */
    ST_ERR_CAPACITY   = -16   /* more tensors than cap */
};

typedef struct st_tensor {
    const char *name;           /* the name as the header writes it between its quotes:
                                   not NUL-terminated, JSON escapes not decoded */
    size_t name_len;
    int dtype;                  /* ST_BF16, ... */
    int ndim;                   /* 0 .. ST_MAX_DIMS (0: a scalar) */
    uint64_t shape[ST_MAX_DIMS];
    uint64_t count;             /* elements: the product of shape */
    size_t begin, end;          /* data_offsets: bytes into the data section */
    const unsigned char *data;  /* the end - begin bytes in the file (little-endian) */
} st_tensor;

typedef struct st_info {
    size_t header_bytes;        /* N */
    const unsigned char *data;  /* the data section: the file + 8 + N */
    size_t data_bytes;
    size_t n_tensors;
    const char *metadata;       /* the "__metadata__" object's JSON text, or NULL */
    size_t metadata_len;
    size_t n_metadata;          /* its entries */
} st_info;

STDEF int st_parse(const void *file, size_t file_bytes, st_tensor *tensors, size_t cap,
                   st_info *info);
STDEF const st_tensor *st_find(const st_tensor *tensors, size_t n, const char *name);
STDEF const char *st_dtype_name(int dtype);
STDEF size_t st_dtype_size(int dtype);
STDEF const char *st_status_string(int status);

#ifdef __cplusplus
}
#endif
#endif /* SAFETENSORS_H_INCLUDED */

#ifdef SAFETENSORS_IMPLEMENTATION
#ifndef SAFETENSORS_IMPLEMENTATION_DONE
#define SAFETENSORS_IMPLEMENTATION_DONE

#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

static const char *const st__names[ST_NDTYPES] = {
    "BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3", "I16", "U16", "F16", "BF16",
    "I32", "U32", "F32", "I64", "U64", "F64"
};
static const unsigned char st__sizes[ST_NDTYPES] = { 1, 1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 8, 8, 8 };

STDEF const char *st_dtype_name(int dtype)
{
    return dtype >= 0 && dtype < ST_NDTYPES ? st__names[dtype] : "?";
}

STDEF size_t st_dtype_size(int dtype)
{
    return dtype >= 0 && dtype < ST_NDTYPES ? st__sizes[dtype] : 0;
}

STDEF const char *st_status_string(int status)
{
    switch (status) {
    case ST_OK: return "ok";
    case ST_ERR_ARG: return "safetensors: NULL file or info, or a count of records without them";
    case ST_ERR_TRUNCATED: return "safetensors: the file is shorter than its 8-byte header length plus the header";
    case ST_ERR_HEADER_SIZE: return "safetensors: the header length is under 2 or over 100,000,000 bytes (the format's limit)";
    case ST_ERR_JSON: return "safetensors: the header is not JSON (no leading '{', a syntax error, a bad escape or UTF-8, a control character in a string, or bytes after the object)";
    case ST_ERR_SCHEMA: return "safetensors: the header is not {name: {\"dtype\", \"shape\", \"data_offsets\"}, ..., \"__metadata__\": {strings}}: a key missing or unknown, or a value of the wrong type";
    case ST_ERR_NUMBER: return "safetensors: a shape or offset is not an unsigned integer below 2^64 (sign, fraction, exponent, leading zero or overflow)";
    case ST_ERR_DTYPE: return "safetensors: unknown dtype (known: BOOL, U8, I8, F8_E5M2, F8_E4M3, I16, U16, F16, BF16, I32, U32, F32, I64, U64, F64)";
    case ST_ERR_DIMS: return "safetensors: a shape has more dimensions than ST_MAX_DIMS";
    case ST_ERR_OFFSETS: return "safetensors: data_offsets [begin, end] with end < begin";
    case ST_ERR_BOUNDS: return "safetensors: a tensor's data_offsets reach past the end of the file (truncated?)";
    case ST_ERR_SIZE: return "safetensors: a tensor's byte length (end - begin) is not the product of its shape times its dtype's size";
    case ST_ERR_OVERLAP: return "safetensors: tensors overlap (or an empty tensor lies inside another)";
    case ST_ERR_HOLE: return "safetensors: bytes of the data section belong to no tensor (holes or trailing bytes)";
    case ST_ERR_DUPLICATE: return "safetensors: a tensor name, or a key inside an entry, appears twice";
    case ST_ERR_TOO_MANY: return "safetensors: more tensors than ST_MAX_TENSORS";
    case ST_ERR_CAPACITY: return "safetensors: more tensors than the records given (ask for the count first)";
    default: return "safetensors: unknown status";
    }
}

/* ---- JSON: the header's grammar only ---------------------------------------------- */

typedef struct st__in {
    const unsigned char *p, *e;
} st__in;

static int st__peek(st__in *in)   /* the next byte after whitespace, or -1 at the end */
{
    while (in->p < in->e && (*in->p == ' ' || *in->p == '\t' || *in->p == '\n' || *in->p == '\r'))
        in->p++;
    return in->p < in->e ? *in->p : -1;
}

static int st__eat(st__in *in, int c)
{
    if (st__peek(in) != c) return 0;
    in->p++;
    return 1;
}

/* Where a value of another type was expected: a schema error if a JSON value starts
   here, a syntax error if nothing can. */
static int st__wrong(st__in *in)
{
    const int c = st__peek(in);
    return c == '{' || c == '[' || c == '"' || c == '-' || (c >= '0' && c <= '9') || c == 't' ||
                   c == 'f' || c == 'n'
               ? ST_ERR_SCHEMA
               : ST_ERR_JSON;
}

static int st__hex4(const unsigned char *p, unsigned long *v)
{
    int i;
    *v = 0;
    for (i = 0; i < 4; i++) {
        const unsigned c = p[i];
        unsigned d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else return 0;
        *v = *v << 4 | d;
    }
    return 1;
}

/* One UTF-8 sequence of 2 to 4 bytes at p (before e): its length and code point, or 0
   if it is not valid UTF-8 (overlong, a surrogate, past U+10FFFF, cut short). */
static size_t st__utf8(const unsigned char *p, const unsigned char *e, unsigned long *cp)
{
    const unsigned c = p[0];
    unsigned long v, min;
    size_t n, i;
    if (c >= 0xC2 && c <= 0xDF) { n = 2; v = c & 0x1Fu; min = 0x80; }
    else if (c >= 0xE0 && c <= 0xEF) { n = 3; v = c & 0x0Fu; min = 0x800; }
    else if (c >= 0xF0 && c <= 0xF4) { n = 4; v = c & 0x07u; min = 0x10000; }
    else return 0;
    if ((size_t)(e - p) < n) return 0;
    for (i = 1; i < n; i++) {
        if ((p[i] & 0xC0u) != 0x80u) return 0;
        v = v << 6 | (p[i] & 0x3Fu);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    *cp = v;
    return n;
}

/* A string: *s and *n its bytes between the quotes, checked. */
static int st__string(st__in *in, const unsigned char **s, size_t *n)
{
    const unsigned char *p;
    if (st__peek(in) != '"') return st__wrong(in);
    p = *s = ++in->p;
    for (;;) {
        unsigned long u, lo;
        if (p >= in->e) return ST_ERR_JSON;
        if (*p == '"') break;
        if (*p < 0x20) return ST_ERR_JSON;
        if (*p == '\\') {
            if (in->e - p < 2) return ST_ERR_JSON;
            switch (p[1]) {
            case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
                p += 2;
                break;
            case 'u':
                if (in->e - p < 6 || !st__hex4(p + 2, &u) || (u >= 0xDC00 && u <= 0xDFFF))
                    return ST_ERR_JSON;
                p += 6;
                if (u >= 0xD800 && u <= 0xDBFF) {   /* a high surrogate: its low one next */
                    if (in->e - p < 6 || p[0] != '\\' || p[1] != 'u' || !st__hex4(p + 2, &lo) ||
                        lo < 0xDC00 || lo > 0xDFFF)
                        return ST_ERR_JSON;
                    p += 6;
                }
                break;
            default: return ST_ERR_JSON;
            }
        } else if (*p < 0x80) {
            p++;
        } else {
            const size_t k = st__utf8(p, in->e, &u);
            if (!k) return ST_ERR_JSON;
            p += k;
        }
    }
    *n = (size_t)(p - *s);
    in->p = p + 1;
    return ST_OK;
}

/* The next code point of a checked string's bytes at *p. */
static unsigned long st__cp(const unsigned char **p)
{
    const unsigned char *q = *p;
    unsigned long v, lo;
    if (*q != '\\') {
        if (*q < 0x80) { *p = q + 1; return *q; }
        *p = q + st__utf8(q, q + 4, &v);
        return v;
    }
    switch (q[1]) {
    case 'b': v = 8; break;
    case 'f': v = 12; break;
    case 'n': v = 10; break;
    case 'r': v = 13; break;
    case 't': v = 9; break;
    case 'u':
        (void)st__hex4(q + 2, &v);
        q += 6;
        if (v >= 0xD800 && v <= 0xDBFF) {
            (void)st__hex4(q + 2, &lo);
            v = 0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00);
            q += 6;
        }
        *p = q;
        return v;
    default: v = q[1]; break;   /* " \ / */
    }
    *p = q + 2;
    return v;
}

/* A checked string's bytes equal the NUL-terminated UTF-8 s once decoded. */
static int st__is(const unsigned char *k, size_t n, const char *s)
{
    const unsigned char *e = k + n, *q = (const unsigned char *)s;
    while (k < e) {
        const unsigned long v = st__cp(&k);
        unsigned char b[4];
        size_t m, i;
        if (v < 0x80) { b[0] = (unsigned char)v; m = 1; }
        else if (v < 0x800) { b[0] = (unsigned char)(0xC0 | v >> 6); m = 2; }
        else if (v < 0x10000) { b[0] = (unsigned char)(0xE0 | v >> 12); m = 3; }
        else { b[0] = (unsigned char)(0xF0 | v >> 18); m = 4; }
        for (i = 1; i < m; i++) b[i] = (unsigned char)(0x80 | ((v >> (6 * (m - 1 - i))) & 0x3F));
        for (i = 0; i < m; i++, q++)
            if (*q == 0 || *q != b[i]) return 0;
    }
    return *q == 0;
}

/* Two checked strings decode to the same text. */
static int st__same(const unsigned char *a, size_t na, const unsigned char *b, size_t nb)
{
    const unsigned char *ea = a + na, *eb = b + nb;
    if (na == nb && memcmp(a, b, na) == 0) return 1;
    if (!memchr(a, '\\', na) && !memchr(b, '\\', nb)) return 0;
    while (a < ea && b < eb)
        if (st__cp(&a) != st__cp(&b)) return 0;
    return a == ea && b == eb;
}

/* An unsigned integer below 2^64 in JSON's form. */
static int st__u64(st__in *in, uint64_t *v)
{
    const int c = st__peek(in);
    const unsigned char *p = in->p;
    uint64_t x = 0;
    if (c == '-') return ST_ERR_NUMBER;
    if (c < '0' || c > '9') return st__wrong(in);
    if (p[0] == '0' && p + 1 < in->e && p[1] >= '0' && p[1] <= '9') return ST_ERR_NUMBER;
    for (; p < in->e && *p >= '0' && *p <= '9'; p++) {
        const unsigned d = (unsigned)(*p - '0');
        if (x > (UINT64_MAX - d) / 10) return ST_ERR_NUMBER;
        x = x * 10 + d;
    }
    if (p < in->e && (*p == '.' || *p == 'e' || *p == 'E')) return ST_ERR_NUMBER;
    in->p = p;
    *v = x;
    return ST_OK;
}

/* ---- the header's members ----------------------------------------------------------- */

typedef struct st__member {
    const unsigned char *key;
    size_t key_len;
    int meta;                           /* 1: "__metadata__" */
    st_tensor t;                        /* a tensor: its record (data not set) */
    const unsigned char *m0, *m1;       /* metadata: its object's text */
    size_t n_meta;
} st__member;

/* A tensor's object {"dtype", "shape", "data_offsets"} into t, checked against the data
   section's length D. */
static int st__entry(st__in *in, size_t D, st_tensor *t)
{
    const unsigned char *k, *v;
    size_t kn, vn, size;
    uint64_t off[2] = { 0, 0 }, bytes;
    int have = 0, i;
    if (st__peek(in) != '{') return st__wrong(in);
    in->p++;
    if (st__peek(in) == '}') return ST_ERR_SCHEMA;
    do {
        int s;
        if (st__peek(in) != '"') return ST_ERR_JSON;
        if ((s = st__string(in, &k, &kn)) < 0) return s;
        if (!st__eat(in, ':')) return ST_ERR_JSON;
        if (st__is(k, kn, "dtype")) {
            if (have & 1) return ST_ERR_DUPLICATE;
            have |= 1;
            if ((s = st__string(in, &v, &vn)) < 0) return s;
            for (i = 0; i < ST_NDTYPES && !st__is(v, vn, st__names[i]); i++) {}
            if (i == ST_NDTYPES) return ST_ERR_DTYPE;
            t->dtype = i;
        } else if (st__is(k, kn, "shape")) {
            if (have & 2) return ST_ERR_DUPLICATE;
            have |= 2;
            if (!st__eat(in, '[')) return st__wrong(in);
            t->ndim = 0;
            if (!st__eat(in, ']')) {
                do {
                    if (t->ndim == ST_MAX_DIMS) return ST_ERR_DIMS;
                    if ((s = st__u64(in, &t->shape[t->ndim])) < 0) return s;
                    t->ndim++;
                } while (st__eat(in, ','));
                if (!st__eat(in, ']')) return st__wrong(in);
            }
        } else if (st__is(k, kn, "data_offsets")) {
            if (have & 4) return ST_ERR_DUPLICATE;
            have |= 4;
            if (!st__eat(in, '[')) return st__wrong(in);
            if ((s = st__u64(in, &off[0])) < 0) return s;
            if (!st__eat(in, ',')) return st__wrong(in);
            if ((s = st__u64(in, &off[1])) < 0) return s;
            if (st__peek(in) == ',') return ST_ERR_SCHEMA;   /* more than two */
            if (!st__eat(in, ']')) return st__wrong(in);
        } else {
            return ST_ERR_SCHEMA;
        }
    } while (st__eat(in, ','));
    if (!st__eat(in, '}')) return ST_ERR_JSON;
    if (have != 7) return ST_ERR_SCHEMA;
    if (off[1] < off[0]) return ST_ERR_OFFSETS;
    if (off[1] > D) return ST_ERR_BOUNDS;
    t->count = 1;
    for (i = 0; i < t->ndim; i++)
        if (t->shape[i] == 0) t->count = 0;
    for (i = 0; i < t->ndim && t->count; i++) {
        if (t->shape[i] > UINT64_MAX / t->count) return ST_ERR_SIZE;
        t->count *= t->shape[i];
    }
    size = st__sizes[t->dtype];
    if (t->count > UINT64_MAX / size) return ST_ERR_SIZE;
    bytes = t->count * size;
    if (bytes != off[1] - off[0]) return ST_ERR_SIZE;
    t->begin = (size_t)off[0];
    t->end = (size_t)off[1];
    return ST_OK;
}

static int st__metadata(st__in *in, st__member *m)
{
    const unsigned char *k;
    size_t kn;
    if (st__peek(in) != '{') return st__wrong(in);
    m->m0 = in->p++;
    m->n_meta = 0;
    if (!st__eat(in, '}')) {
        do {
            int s;
            if (st__peek(in) != '"') return ST_ERR_JSON;
            if ((s = st__string(in, &k, &kn)) < 0) return s;
            if (!st__eat(in, ':')) return ST_ERR_JSON;
            if ((s = st__string(in, &k, &kn)) < 0) return s;
            m->n_meta++;
        } while (st__eat(in, ','));
        if (!st__eat(in, '}')) return ST_ERR_JSON;
    }
    m->m1 = in->p;
    return ST_OK;
}

typedef struct st__iter {
    st__in in;
    size_t D;
    int first;
} st__iter;

static int st__start(st__iter *it, const unsigned char *h, size_t n, size_t D)
{
    if (*h != '{') return ST_ERR_JSON;
    it->in.p = h + 1;
    it->in.e = h + n;
    it->D = D;
    it->first = 1;
    return ST_OK;
}

/* The next member into m: 1, or 0 after the last (and only whitespace after the
   object), or a status < 0. */
static int st__next(st__iter *it, st__member *m)
{
    const int more = it->first ? st__peek(&it->in) != '}' : st__eat(&it->in, ',');
    int s;
    if (!more) {
        if (!st__eat(&it->in, '}')) return ST_ERR_JSON;
        (void)st__peek(&it->in);
        return it->in.p == it->in.e ? 0 : ST_ERR_JSON;   /* only whitespace after it */
    }
    it->first = 0;
    if (st__peek(&it->in) != '"') return ST_ERR_JSON;
    if ((s = st__string(&it->in, &m->key, &m->key_len)) < 0) return s;
    if (!st__eat(&it->in, ':')) return ST_ERR_JSON;
    m->meta = st__is(m->key, m->key_len, "__metadata__");
    s = m->meta ? st__metadata(&it->in, m) : st__entry(&it->in, it->D, &m->t);
    return s < 0 ? s : 1;
}

/* ---- the checks between tensors -------------------------------------------------------- */

#define ST__BATCH 64

/* For each tensor i of a batch, against every other tensor j: names differ; and the
   tensors tile [0, D): a non-empty i ending before D is followed by exactly one
   non-empty j (begin j = end i), one starting after 0 follows exactly one (end j =
   begin i), an empty one starts at 0 or at a non-empty one's end. With the lengths
   summing to D (checked before) that is a tiling: each offset inside (0, D) that a
   tensor starts or ends at is the end of one and the start of one, so the tensors form
   paths from 0 to D, each D bytes long, and the sum allows one. */
static int st__cross(const unsigned char *h, size_t n_header, size_t D, size_t n)
{
    struct {
        const unsigned char *key;
        size_t key_len, begin, end, next, prev;
    } b[ST__BATCH];
    st__iter it;
    st__member m;
    size_t start, nb, i, j, idx;
    for (start = 0; start < n; start += nb) {
        int s;
        (void)st__start(&it, h, n_header, D);
        for (idx = 0, nb = 0; nb < ST__BATCH && (s = st__next(&it, &m)) == 1;) {
            if (m.meta) continue;
            if (idx++ < start) continue;
            b[nb].key = m.key;
            b[nb].key_len = m.key_len;
            b[nb].begin = m.t.begin;
            b[nb].end = m.t.end;
            b[nb].next = b[nb].prev = 0;
            nb++;
        }
        (void)st__start(&it, h, n_header, D);
        for (j = 0; (s = st__next(&it, &m)) == 1;) {
            if (m.meta) continue;
            for (i = 0; i < nb; i++) {
                if (j == start + i) continue;
                if (st__same(b[i].key, b[i].key_len, m.key, m.key_len)) return ST_ERR_DUPLICATE;
                if (m.t.begin == m.t.end) continue;
                if (m.t.begin == b[i].end) b[i].next++;
                if (m.t.end == b[i].begin) b[i].prev++;
            }
            j++;
        }
        for (i = 0; i < nb; i++) {
            if (b[i].begin == b[i].end) {
                if (b[i].begin != 0 && b[i].prev == 0) return ST_ERR_OVERLAP;
            } else if ((b[i].end != D && b[i].next != 1) || (b[i].begin != 0 && b[i].prev != 1)) {
                return ST_ERR_OVERLAP;
            }
        }
    }
    return ST_OK;
}

STDEF int st_parse(const void *file, size_t file_bytes, st_tensor *tensors, size_t cap,
                   st_info *info)
{
    const unsigned char *f = (const unsigned char *)file, *h, *m0 = NULL, *m1 = NULL;
    uint64_t N = 0;
    size_t D, n = 0, n_meta = 0, sum = 0;
    st__iter it;
    st__member m;
    int s, i, have_meta = 0;
    if (!file || !info || (!tensors && cap)) return ST_ERR_ARG;
    if (file_bytes < 8) return ST_ERR_TRUNCATED;
    for (i = 7; i >= 0; i--) N = N << 8 | f[i];
    if (N < 2 || N > ST_MAX_HEADER) return ST_ERR_HEADER_SIZE;
    if (N > file_bytes - 8) return ST_ERR_TRUNCATED;
    h = f + 8;
    D = file_bytes - 8 - (size_t)N;
    if ((s = st__start(&it, h, (size_t)N, D)) < 0) return s;
    while ((s = st__next(&it, &m)) == 1) {
        if (m.meta) {
            if (have_meta) return ST_ERR_DUPLICATE;
            have_meta = 1;
            m0 = m.m0;
            m1 = m.m1;
            n_meta = m.n_meta;
            continue;
        }
        if (n == ST_MAX_TENSORS) return ST_ERR_TOO_MANY;
        n++;
        if (m.t.end - m.t.begin > D - sum) return ST_ERR_OVERLAP;   /* more bytes than D */
        sum += m.t.end - m.t.begin;
    }
    if (s < 0) return s;
    if (sum < D) return ST_ERR_HOLE;
    if ((s = st__cross(h, (size_t)N, D, n)) < 0) return s;
    if (tensors && cap < n) return ST_ERR_CAPACITY;
    if (tensors) {
        size_t k;
        (void)st__start(&it, h, (size_t)N, D);
        for (k = 0; st__next(&it, &m) == 1;) {
            if (m.meta) continue;
            m.t.name = (const char *)m.key;
            m.t.name_len = m.key_len;
            m.t.data = h + N + m.t.begin;
            tensors[k++] = m.t;
        }
    }
    info->header_bytes = (size_t)N;
    info->data = h + N;
    info->data_bytes = D;
    info->n_tensors = n;
    info->metadata = (const char *)m0;
    info->metadata_len = have_meta ? (size_t)(m1 - m0) : 0;
    info->n_metadata = n_meta;
    return ST_OK;
}

STDEF const st_tensor *st_find(const st_tensor *tensors, size_t n, const char *name)
{
    size_t i;
    if (!tensors || !name) return NULL;
    for (i = 0; i < n; i++)
        if (st__is((const unsigned char *)tensors[i].name, tensors[i].name_len, name))
            return tensors + i;
    return NULL;
}

#ifdef __cplusplus
}
#endif
#endif /* SAFETENSORS_IMPLEMENTATION_DONE */
#endif /* SAFETENSORS_IMPLEMENTATION */

/* License: the same as pe.h's and ffn.h's (see the end of either): MIT or public domain
   (www.unlicense.org), your choice. */

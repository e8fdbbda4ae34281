/* tests/test_safetensors.c - examples/safetensors.h on the committed checkpoint and on bad
   files made from it in memory: each bad one must give its precise status and leave the
   records and the info as they were (the reader writes nothing on error).
       test_safetensors [reference/goldens/llama_mlp.safetensors]
   Last line: "N passed, N failed". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SAFETENSORS_IMPLEMENTATION
#include "../examples/safetensors.h"

enum { CAP = 16 };
static int passed, failed;
static unsigned char *good;
static size_t good_bytes, good_n;

static void ok(int cond, const char *what)
{
    if (cond) passed++;
    else { failed++; printf("FAIL %s\n", what); }
}

static uint64_t header_len(const unsigned char *f)
{
    uint64_t n = 0;
    int i;
    for (i = 7; i >= 0; i--) n = n << 8 | f[i];
    return n;
}

static void set_len(unsigned char *f, uint64_t n)
{
    int i;
    for (i = 0; i < 8; i++) f[i] = (unsigned char)(n >> (8 * i));
}

/* good with the header's first occurrence of from replaced by to (N adjusted), and
   extra bytes added to (or, negative, removed from) the file's end. */
static unsigned char *edit(const char *from, const char *to, long extra, size_t *bytes)
{
    const size_t N = (size_t)header_len(good), lf = strlen(from), lt = strlen(to);
    const char *h = (const char *)good + 8;
    unsigned char *f;
    size_t at, n;
    for (at = 0; at + lf <= N && memcmp(h + at, from, lf) != 0; at++) {}
    if (at + lf > N) {
        printf("test_safetensors: no \"%s\" in the header\n", from);
        exit(1);
    }
    n = good_bytes - lf + lt;
    f = (unsigned char *)calloc(n + (extra > 0 ? (size_t)extra : 0) + 1, 1);
    if (!f) exit(1);
    memcpy(f + 8, h, at);
    memcpy(f + 8 + at, to, lt);
    memcpy(f + 8 + at + lt, h + at + lf, good_bytes - 8 - at - lf);
    set_len(f, N - lf + lt);
    *bytes = extra < 0 ? n - (size_t)-extra : n + (size_t)extra;
    return f;
}

/* st_parse(file, bytes) returns want; on error nothing of records or info written. */
static void expect(const char *what, const unsigned char *file, size_t bytes, int want)
{
    st_tensor rec[CAP], rec0[CAP];
    st_info info, info0;
    char msg[300];
    int s, q;
    memset(rec0, 0xA5, sizeof rec0);
    memset(&info0, 0x5A, sizeof info0);
    memcpy(rec, rec0, sizeof rec);
    memcpy(&info, &info0, sizeof info);
    s = st_parse(file, bytes, rec, CAP, &info);
    snprintf(msg, sizeof msg, "%s: status %d (%s), want %d (%s)", what, s, st_status_string(s),
             want, st_status_string(want));
    ok(s == want, msg);
    q = st_parse(file, bytes, NULL, 0, &info);
    snprintf(msg, sizeof msg, "%s: count query status %d, want %d", what, q, want);
    ok(q == want || (want == ST_ERR_CAPACITY && q == ST_OK), msg);
    if (want != ST_OK) {
        snprintf(msg, sizeof msg, "%s: records or info written on error", what);
        ok(memcmp(rec, rec0, sizeof rec) == 0 && memcmp(&info, &info0, sizeof info) == 0, msg);
    }
}

static void expect_edit(const char *what, const char *from, const char *to, long extra, int want)
{
    size_t n;
    unsigned char *f = edit(from, to, extra, &n);
    expect(what, f, n, want);
    free(f);
}

static unsigned char *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    unsigned char *b;
    long len;
    if (!f || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
        !(b = (unsigned char *)malloc((size_t)len + 1)) || fread(b, 1, (size_t)len, f) != (size_t)len) {
        printf("test_safetensors: cannot read %s\n", path);
        exit(1);
    }
    fclose(f);
    *n = (size_t)len;
    return b;
}

static void test_good(void)
{
    st_tensor rec[CAP], rec2[CAP];
    st_info info;
    const st_tensor *t;
    size_t bytes;
    unsigned char *f;
    ok(st_parse(good, good_bytes, NULL, 0, &info) == ST_OK && info.n_tensors == 5,
       "good: the count query gives 5 tensors");
    good_n = info.n_tensors;
    ok(st_parse(good, good_bytes, rec, good_n, &info) == ST_OK, "good: parses with cap = count");
    ok(info.header_bytes + 8 + info.data_bytes == good_bytes && info.data == good + 8 + info.header_bytes,
       "good: header and data section lengths");
    ok(info.n_metadata == 4 && info.metadata && info.metadata[0] == '{' &&
           info.metadata[info.metadata_len - 1] == '}',
       "good: __metadata__, 4 entries");
    t = st_find(rec, good_n, "model.layers.0.mlp.down_proj.weight");
    ok(t && t->dtype == ST_BF16 && t->ndim == 2 && t->shape[0] == 64 && t->shape[1] == 172 &&
           t->count == 64 * 172 && t->end - t->begin == 2 * 64 * 172 && t->data == info.data + t->begin,
       "good: down_proj BF16 (64, 172) and its bytes");
    t = st_find(rec, good_n, "y_torch");
    ok(t && t->dtype == ST_F32 && t->end == info.data_bytes, "good: y_torch F32, last in the data");
    ok(st_find(rec, good_n, "y_torc") == NULL && st_find(rec, good_n, "y_torch2") == NULL &&
           st_find(rec, good_n, "") == NULL,
       "good: st_find refuses prefixes and extensions");
    ok(st_dtype_size(ST_BF16) == 2 && st_dtype_size(ST_F64) == 8 && st_dtype_size(99) == 0 &&
           strcmp(st_dtype_name(ST_F8_E4M3), "F8_E4M3") == 0,
       "dtype names and sizes");
    /* the escaped name "\u0078" is x; a name with a non-ASCII letter and a surrogate pair */
    f = edit("\"x\":", "\"\\u0078\":", 0, &bytes);
    ok(st_parse(f, bytes, rec2, CAP, &info) == ST_OK && st_find(rec2, 5, "x") != NULL &&
           rec2[3].name_len == 6,
       "escaped name found by its decoded text");
    free(f);
    f = edit("\"y_torch\":{", "\"y_\\u00e9\\ud83d\\ude00\xc3\xa9\":{", 0, &bytes);
    ok(st_parse(f, bytes, rec2, CAP, &info) == ST_OK &&
           st_find(rec2, 5, "y_\xc3\xa9\xf0\x9f\x98\x80\xc3\xa9") != NULL,
       "escapes and UTF-8 in a name decode to the same text");
    free(f);
    /* empty tensors: at 0, at the end of the data, between two tensors */
    expect_edit("empty tensor at 0", "\"x\":", "\"e\":{\"dtype\":\"F32\",\"shape\":[3,0],\"data_offsets\":[0,0]},\"x\":", 0, ST_OK);
    expect_edit("empty tensor at the end", "\"x\":", "\"e\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[68608,68608]},\"x\":", 0, ST_OK);
    expect_edit("empty tensor between two", "\"x\":", "\"e\":{\"shape\":[0],\"dtype\":\"U8\",\"data_offsets\":[22016,22016]},\"x\":", 0, ST_OK);
    expect_edit("a scalar (shape [])", "\"x\":", "\"s\":{\"dtype\":\"F64\",\"shape\":[],\"data_offsets\":[68608,68616]},\"x\":", 8, ST_OK);
    expect_edit("whitespace between tokens", "\"x\":{", " \"x\" :\t{\n", 0, ST_OK);
    expect_edit("no __metadata__", "\"__metadata__\":{\"format\":\"pt\",", "\"__metadata__\":{", 0, ST_OK);
}

static void test_bad(void)
{
    unsigned char *f = (unsigned char *)malloc(good_bytes + 16);
    const uint64_t N = header_len(good);
    int j;
    if (!f) exit(1);
    /* the length field and the header */
    expect("7 bytes", good, 7, ST_ERR_TRUNCATED);
    expect("only the length", good, 8, ST_ERR_TRUNCATED);
    expect("cut inside the header", good, 8 + (size_t)N - 1, ST_ERR_TRUNCATED);
    expect("cut inside the data", good, good_bytes - 1, ST_ERR_BOUNDS);
    {
        const uint64_t lens[] = { 0, 1, 100000001u, (uint64_t)1 << 40, UINT64_MAX };
        char what[64];
        for (j = 0; j < 5; j++) {
            memcpy(f, good, good_bytes);
            set_len(f, lens[j]);
            snprintf(what, sizeof what, "header length %llu", (unsigned long long)lens[j]);
            expect(what, f, good_bytes, ST_ERR_HEADER_SIZE);
        }
        memcpy(f, good, good_bytes);
        set_len(f, good_bytes);
        expect("header length past the file", f, good_bytes, ST_ERR_TRUNCATED);
        set_len(f, N - 1);   /* a padding space less: the data start a byte early */
        expect("header length one short", f, good_bytes, ST_ERR_HOLE);
        set_len(f, N + 1);   /* the data's first byte read as header, the data a byte short:
                                the entries are checked before what follows the object */
        expect("header length one long", f, good_bytes, ST_ERR_BOUNDS);
    }
    free(f);
    /* JSON */
    expect_edit("leading space", "{\"__metadata__\"", " {\"__metadata__\"", 0, ST_ERR_JSON);
    expect_edit("bytes after the object", "]}}", "]}}x", 0, ST_ERR_JSON);
    expect_edit("missing comma", "},\"x\":", "}\"x\":", 0, ST_ERR_JSON);
    expect_edit("trailing comma", "[5,64]}}", "[5,64]},}", 0, ST_ERR_JSON);
    expect_edit("unterminated array", "\"shape\":[5,64]},\"y", "\"shape\":[5,64},\"y", 0, ST_ERR_JSON);
    expect_edit("bad escape", "\"x\":", "\"\\q\":", 0, ST_ERR_JSON);
    expect_edit("lone low surrogate", "\"x\":", "\"\\udc00\":", 0, ST_ERR_JSON);
    expect_edit("high surrogate alone", "\"x\":", "\"\\ud800x\":", 0, ST_ERR_JSON);
    expect_edit("short \\u escape", "\"x\":", "\"\\u12\":", 0, ST_ERR_JSON);
    expect_edit("control character", "\"x\":", "\"\x01\":", 0, ST_ERR_JSON);
    expect_edit("overlong UTF-8", "\"x\":", "\"\xc0\xb8\":", 0, ST_ERR_JSON);
    expect_edit("UTF-8 surrogate", "\"x\":", "\"\xed\xa0\x80\":", 0, ST_ERR_JSON);
    expect_edit("cut UTF-8", "\"x\":", "\"\xe2\x82\":", 0, ST_ERR_JSON);
    expect_edit("unquoted key", "\"x\":", "x:", 0, ST_ERR_JSON);
    /* the format's shape of JSON */
    expect_edit("a key missing", "\"dtype\":\"BF16\",\"shape\":[64,172]", "\"shape\":[64,172]", 0, ST_ERR_SCHEMA);
    expect_edit("an unknown key", "\"dtype\":\"BF16\",\"shape\":[64,172]", "\"dtype\":\"BF16\",\"offset\":0,\"shape\":[64,172]", 0, ST_ERR_SCHEMA);
    expect_edit("shape a string", "\"shape\":[64,172]", "\"shape\":\"64,172\"", 0, ST_ERR_SCHEMA);
    expect_edit("dtype a number", "\"dtype\":\"BF16\"", "\"dtype\":16", 0, ST_ERR_SCHEMA);
    expect_edit("three offsets", "[0,22016]", "[0,22016,0]", 0, ST_ERR_SCHEMA);
    expect_edit("nested arrays", "[0,22016]", "[[0],22016]", 0, ST_ERR_SCHEMA);
    expect_edit("metadata value a number", "\"format\":\"pt\"", "\"format\":1", 0, ST_ERR_SCHEMA);
    expect_edit("tensor not an object", "\"x\":{", "\"x\":[],\"z\":{", 0, ST_ERR_SCHEMA);
    expect_edit("empty entry", "\"x\":{", "\"w\":{},\"x\":{", 0, ST_ERR_SCHEMA);
    /* numbers */
    expect_edit("negative offset", "[0,22016]", "[-0,22016]", 0, ST_ERR_NUMBER);
    expect_edit("fraction", "[0,22016]", "[0.0,22016]", 0, ST_ERR_NUMBER);
    expect_edit("exponent", "[0,22016]", "[0,22016e0]", 0, ST_ERR_NUMBER);
    expect_edit("leading zero", "[0,22016]", "[00,22016]", 0, ST_ERR_NUMBER);
    expect_edit("2^64", "[0,22016]", "[0,18446744073709551616]", 0, ST_ERR_NUMBER);
    /* dtypes and shapes */
    expect_edit("unknown dtype", "\"BF16\"", "\"BX16\"", 0, ST_ERR_DTYPE);
    expect_edit("sub-byte dtype", "\"BF16\"", "\"F4\"", 0, ST_ERR_DTYPE);
    expect_edit("dtype F32 for BF16 bytes", "\"BF16\"", "\"F32\"", 0, ST_ERR_SIZE);
    expect_edit("wrong shape", "[64,172]", "[64,173]", 0, ST_ERR_SIZE);
    expect_edit("shape [] for a matrix", "[64,172]", "[]", 0, ST_ERR_SIZE);
    expect_edit("shape overflowing 2^64", "[64,172]", "[4294967296,4294967296,64,172]", 0, ST_ERR_SIZE);
    expect_edit("9 dimensions", "[64,172]", "[64,172,1,1,1,1,1,1,1]", 0, ST_ERR_DIMS);
    /* offsets */
    expect_edit("end before begin", "[66048,67328]", "[67328,66048]", 0, ST_ERR_OFFSETS);
    expect_edit("end past the file", "[67328,68608]", "[67328,99999999]", 0, ST_ERR_BOUNDS);
    expect_edit("offsets of the wrong length", "[66048,67328]", "[66048,67332]", 0, ST_ERR_SIZE);
    expect_edit("overlapping tensors", "[66048,67328]", "[66044,67324]", 0, ST_ERR_OVERLAP);
    expect_edit("two tensors on the same bytes", "[66048,67328]", "[67328,68608]", 0, ST_ERR_OVERLAP);
    expect_edit("more bytes than the data", "\"x\":", "\"e\":{\"dtype\":\"U8\",\"shape\":[5],\"data_offsets\":[0,5]},\"x\":", 0, ST_ERR_OVERLAP);
    expect_edit("a tensor moved onto another", "[66048,67328]", "[0,1280]", 0, ST_ERR_OVERLAP);
    expect_edit("trailing bytes", "\"x\"", "\"x\"", 3, ST_ERR_HOLE);
    expect_edit("a hole", "\"x\":{\"data_offsets\":[66048,67328],\"dtype\":\"F32\",\"shape\":[5,64]}",
                "\"x\":{\"data_offsets\":[66048,67320],\"dtype\":\"F32\",\"shape\":[318]}", 0, ST_ERR_HOLE);
    expect_edit("empty tensor inside another", "\"x\":", "\"e\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[100,100]},\"x\":", 0, ST_ERR_OVERLAP);
    /* names */
    expect_edit("duplicate name", "\"y_torch\":{", "\"x\":{", 0, ST_ERR_DUPLICATE);
    expect_edit("duplicate name, escaped", "\"y_torch\":{", "\"\\u0078\":{", 0, ST_ERR_DUPLICATE);
    expect_edit("duplicate key in an entry", "\"dtype\":\"BF16\",\"shape\":[64,172]", "\"dtype\":\"BF16\",\"dtype\":\"BF16\",\"shape\":[64,172]", 0, ST_ERR_DUPLICATE);
    expect_edit("__metadata__ twice", "\"x\":", "\"__metadata__\":{},\"x\":", 0, ST_ERR_DUPLICATE);
    /* the caller's side */
    {
        st_tensor rec[CAP], rec0[CAP];
        st_info info;
        memset(rec0, 0xA5, sizeof rec0);
        memcpy(rec, rec0, sizeof rec);
        ok(st_parse(good, good_bytes, rec, good_n - 1, &info) == ST_ERR_CAPACITY &&
               memcmp(rec, rec0, sizeof rec) == 0,
           "one record too few: ST_ERR_CAPACITY, nothing written");
        ok(st_parse(NULL, good_bytes, rec, CAP, &info) == ST_ERR_ARG &&
               st_parse(good, good_bytes, rec, CAP, NULL) == ST_ERR_ARG &&
               st_parse(good, good_bytes, NULL, 3, &info) == ST_ERR_ARG,
           "NULL file, NULL info, a count without records: ST_ERR_ARG");
        ok(strcmp(st_status_string(0), "ok") == 0 &&
               strstr(st_status_string(ST_ERR_OVERLAP), "overlap") != NULL &&
               strcmp(st_status_string(-99), "safetensors: unknown status") == 0,
           "status strings");
    }
}

int main(int argc, char **argv)
{
    good = read_all(argc > 1 ? argv[1] : "reference/goldens/llama_mlp.safetensors", &good_bytes);
    test_good();
    test_bad();
    free(good);
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}

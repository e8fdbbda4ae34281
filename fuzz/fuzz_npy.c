/* fuzz target: the test suite's .npy reader, npy_load_mem() of tests/npy.h, on
   arbitrary (mostly malformed) files. Checks: no crash or sanitizer report, no read
   outside the buffer (libFuzzer's buffer is exactly the input), a documented status,
   the output zeroed on error; on success a consistent array (dtype, itemsize, ndim,
   count = product of shape) whose data are the file's last count * itemsize bytes in
   host byte order (byte-swapped when the header's byte order differs from the host's),
   and conversions that refuse the other kind and convert values exactly (f8 -> f32
   rounded). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NPY_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define NPYDEF static __attribute__((unused))
#endif
#define NPY_IMPLEMENTATION
#include "../tests/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FAIL(...) do { fprintf(stderr, "\nFUZZ CHECK FAILED at %s:%d: ", __FILE__, __LINE__); \
        fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); abort(); } while (0)
#define CHECK(c, ...) do { if (!(c)) FAIL(__VA_ARGS__); } while (0)

static int host_big(void)
{
    const uint16_t one = 1;
    unsigned char c;
    memcpy(&c, &one, 1);
    return c == 0;
}

/* The byte-order character of an accepted header's descr ('<', '>', or 0 for native). */
static int file_order(const uint8_t *h, size_t n)
{
    size_t i;
    for (i = 0; i + 5 <= n; i++) {
        if (memcmp(h + i, "descr", 5) != 0) continue;
        for (i += 6; i < n && h[i] != '\'' && h[i] != '"'; i++) {}   /* the value's quote */
        if (i + 1 < n && (h[i + 1] == '<' || h[i + 1] == '>')) return h[i + 1];
        return 0;
    }
    return -1;
}

static void check_ok(const uint8_t *buf, size_t len, const npy_array *a)
{
    size_t i, k, count = 1, bytes, w, pre, hlen;
    const uint8_t *payload;
    int order, swap;
    CHECK(a->dtype == 'f' || a->dtype == 'i', "dtype %d", a->dtype);
    CHECK(a->itemsize == 4 || a->itemsize == 8, "itemsize %d", a->itemsize);
    CHECK(a->ndim >= 0 && a->ndim <= NPY_MAX_DIMS, "ndim %d", a->ndim);
    for (i = 0; i < (size_t)a->ndim; i++) {
        if (a->shape[i] == 0) { count = 0; break; }
    }
    if (count) {
        for (i = 0; i < (size_t)a->ndim; i++) {
            CHECK(a->shape[i] <= (size_t)-1 / count, "count overflows");
            count *= a->shape[i];
        }
    }
    CHECK(count == a->count, "count %zu, product of shape %zu", a->count, count);
    CHECK(a->data != NULL, "data NULL with NPY_OK");
    w = (size_t)a->itemsize;
    bytes = count * w;
    CHECK(len >= bytes, "more data than the file");
    payload = buf + len - bytes;
    /* The header: version 1 has a 2-byte length at 8, versions 2 and 3 a 4-byte one. */
    pre = buf[6] == 1 ? 10 : 12;
    hlen = buf[6] == 1 ? (size_t)buf[8] | (size_t)buf[9] << 8
                       : (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 |
                             (size_t)buf[11] << 24;
    CHECK(pre + hlen + bytes == len, "header %zu + data %zu != file %zu", pre + hlen, bytes,
          len);
    /* numpy headers are text: a NUL inside would make a key like 'descr\0junk' pass a C
       string comparison as 'descr' although Python would reject it */
    CHECK(memchr(buf + pre, 0, hlen) == NULL, "accepted a header with a NUL byte inside");
    order = file_order(buf + pre, hlen);
    CHECK(order >= 0, "accepted a header without descr");
    swap = order == '<' ? host_big() : order == '>' ? !host_big() : 0;
    for (i = 0; i < count; i++)
        for (k = 0; k < w; k++)
            CHECK(((const uint8_t *)a->data)[i * w + k] == payload[i * w + (swap ? w - 1 - k : k)],
                  "element %zu byte %zu (swap %d)", i, k, swap);
}

static void check_conversions(const npy_array *a)
{
    float *f = NULL;
    double *d = NULL;
    int64_t *q = NULL;
    size_t i;
    if (a->dtype == 'f') {
        CHECK(npy_to_i64(a, &q) == NPY_ERR_KIND && q == NULL, "float -> int64 accepted");
        CHECK(npy_to_f64(a, &d) == NPY_OK && d, "to_f64");
        CHECK(npy_to_f32(a, &f) == NPY_OK && f, "to_f32");
        for (i = 0; i < a->count; i++) {
            double v;
            if (a->itemsize == 4) {
                float s;
                memcpy(&s, (const char *)a->data + 4 * i, 4);
                v = s;
                CHECK(memcmp(&s, f + i, 4) == 0, "f4 -> f32 changed element %zu", i);
            } else {
                memcpy(&v, (const char *)a->data + 8 * i, 8);
            }
            CHECK((v != v && d[i] != d[i]) || memcmp(&v, d + i, 8) == 0,
                  "to_f64 element %zu", i);
            if (v != v) CHECK(f[i] != f[i], "NaN lost at %zu", i);
            else if (fabs(v) <= FLT_MAX) CHECK(f[i] == (float)v, "f8 -> f32 element %zu", i);
            else CHECK(fabs((double)f[i]) >= FLT_MAX && (f[i] > 0) == (v > 0),
                       "f8 -> f32 overflow element %zu: %g -> %g", i, v, (double)f[i]);
        }
    } else {
        CHECK(npy_to_f32(a, &f) == NPY_ERR_KIND && f == NULL, "int -> f32 accepted");
        CHECK(npy_to_f64(a, &d) == NPY_ERR_KIND && d == NULL, "int -> f64 accepted");
        CHECK(npy_to_i64(a, &q) == NPY_OK && q, "to_i64");
        for (i = 0; i < a->count; i++) {
            int64_t v;
            if (a->itemsize == 8) {
                memcpy(&v, (const char *)a->data + 8 * i, 8);
            } else {
                int32_t s;
                memcpy(&s, (const char *)a->data + 4 * i, 4);
                v = s;
            }
            CHECK(q[i] == v, "to_i64 element %zu", i);
        }
    }
    free(f);
    free(d);
    free(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    npy_array a, zero;
    int st;
    memset(&zero, 0, sizeof zero);
    memset(&a, 0x5a, sizeof a);
    st = npy_load_mem(data, size, &a);
    CHECK(st <= 0 && st >= NPY_ERR_ARG && st != NPY_ERR_IO && st != NPY_ERR_KIND,
          "status %d", st);
    CHECK(strlen(npy_status_string(st)) > 0, "empty status string");
    if (st != NPY_OK) {
        CHECK(memcmp(&a, &zero, sizeof a) == 0, "output not zeroed on error %d", st);
        return 0;
    }
    check_ok(data, size, &a);
    check_conversions(&a);
    npy_free(&a);
    CHECK(a.data == NULL && a.count == 0, "npy_free left data");
    npy_free(&a);
    CHECK(npy_load_mem(NULL, size, &a) == NPY_ERR_ARG, "NULL buffer accepted");
    CHECK(npy_load_mem(data, size, NULL) == NPY_ERR_ARG, "NULL output accepted");
    return 0;
}

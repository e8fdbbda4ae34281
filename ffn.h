/* ffn.h - v1.0.0 - the transformer feed-forward block (Linear -> ReLU -> Linear) in C.
   Public domain or MIT (see the end of the file). No warranty.

   Do this:
      #define FFN_IMPLEMENTATION
   before you include this file in *one* C or C++ file to create the implementation.

   QUICK START (weights straight from a PyTorch state_dict, nn.Linear layout)

      size_t n = ffn_block_scratch_floats(rows, D, H);
      float *scratch = malloc(n * sizeof(float));            // you own all memory
      int st = ffn_block(y, x, fc1_w, fc1_b, fc2_w, fc2_b, rows, D, H, scratch, n);
      if (st < 0) fprintf(stderr, "%s\n", ffn_status_string(st));

   WHAT IT COMPUTES (shapes are PyTorch shapes, row-major, C order)

      ffn_linear   y (rows, out) = x (rows, in) @ weight^T + bias
                   torch.nn.functional.linear(x, weight, bias); weight (out, in) as in
                   nn.Linear.weight, bias (out) or NULL. rows may be batch*seq: torch
                   gives bit-identical results for (B, S, in) and (B*S, in).
      ffn_relu     y = torch.relu(x): NaN stays NaN, -0.0 stays -0.0, -inf gives 0.
                   (x > 0 ? x : 0 and fmaxf(x, 0) both lose NaN.)
      ffn_block    y = fc2(relu(fc1(x))): FeedForwardNN.forward of source document 000.
                   x, y (rows, d_model); fc1 weight (hidden, d_model), bias (hidden);
                   fc2 weight (d_model, hidden), bias (d_model).

   NUMERICAL CONTRACT
      Each output element of a Linear is a float32 dot product of length K = in plus a
      bias. Its error against exact arithmetic stays within sqrt(K) * 2^-23 * S, with
      S = |b| + sum_k |x_k| |w_k|; torch's own result is within the same bound, which
      is what the golden tests check (per layer). Summation order is fixed for a given
      build, so results do not depend on the number of threads.

   ERRORS
      Every function returns FFN_OK (0) or a negative status, and on error writes
      nothing to any output. ffn_status_string() names a status. Checked, in order:
         FFN_ERR_NULL       a required pointer is NULL (only bias pointers may be NULL)
         FFN_ERR_ZERO_SIZE  a size argument is 0
         FFN_ERR_OVERFLOW   a buffer's size in bytes does not fit in size_t
         FFN_ERR_SCRATCH    scratch_floats < ffn_block_scratch_floats(...)
         FFN_ERR_ALIAS      an output overlaps an input or the scratch (see below)

   MEMORY, THREADS, ALIASING
      No allocation, no global state: every function is thread-safe on distinct
      outputs. Buffers need float alignment only. ffn_relu and ffn_block accept y == x;
      ffn_linear's y must not overlap anything; no other overlap is accepted.

   OPTIONS (#define before including)
      FFN_STATIC       make every function static (private to the file)
      FFN_ASSERT(x)    your assert for internal invariants (default: assert.h)
      FFN_NO_SIMD      use the plain C path only (the readable specification)
*/
#ifndef FFN_H_INCLUDED
#define FFN_H_INCLUDED

#include <stddef.h>

#define FFN_VERSION_MAJOR 1
#define FFN_VERSION_MINOR 0
#define FFN_VERSION_PATCH 0
#define FFN_VERSION_STRING "1.0.0"

#ifndef FFNDEF
#ifdef FFN_STATIC
#define FFNDEF static
#else
#define FFNDEF extern
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

enum {
    FFN_OK            =  0,
    FFN_ERR_NULL      = -1,
    FFN_ERR_ZERO_SIZE = -2,
    FFN_ERR_OVERFLOW  = -3,
    FFN_ERR_SCRATCH   = -4,
    FFN_ERR_ALIAS     = -5
};

/* A static English message for a status ("ok", "ffn: ..."); never NULL. */
FFNDEF const char *ffn_status_string(int status);

/* y is (rows, out_features); x (rows, in_features); weight (out_features, in_features);
   bias (out_features) or NULL.  torch: F.linear(x, weight, bias). */
FFNDEF int ffn_linear(float *y, const float *x, const float *weight, const float *bias,
                      size_t rows, size_t in_features, size_t out_features);

/* y, x are (n); y may equal x.  torch: torch.relu(x). */
FFNDEF int ffn_relu(float *y, const float *x, size_t n);

/* How many floats of scratch ffn_block needs for this shape; 0 if a size is 0 or
   the count overflows. */
FFNDEF size_t ffn_block_scratch_floats(size_t rows, size_t d_model, size_t hidden);

/* y, x are (rows, d_model); w1 (hidden, d_model); b1 (hidden) or NULL;
   w2 (d_model, hidden); b2 (d_model) or NULL. y may equal x.
   torch (000): FeedForwardNN(d_model, hidden).forward(x). */
FFNDEF int ffn_block(float *y, const float *x, const float *w1, const float *b1,
                     const float *w2, const float *b2, size_t rows, size_t d_model,
                     size_t hidden, float *scratch, size_t scratch_floats);

#ifdef __cplusplus
}
#endif
#endif /* FFN_H_INCLUDED */

/* ======================================================================== */
#ifdef FFN_IMPLEMENTATION
#ifndef FFN_IMPLEMENTATION_DONE
#define FFN_IMPLEMENTATION_DONE

#include <stdint.h>

#ifndef FFN_ASSERT
#include <assert.h>
#define FFN_ASSERT(x) assert(x)
#endif

#if defined(__cplusplus)
#define FFN__RESTRICT __restrict
#else
#define FFN__RESTRICT restrict
#endif

/* ---- argument checks -------------------------------------------------- */

/* *n = a * b * sizeof(float) in bytes; 0 when it does not fit in size_t. */
static int ffn__bytes(size_t *n, size_t a, size_t b)
{
    const size_t max = (size_t)-1;
    if (a > max / b || a * b > max / sizeof(float)) return 0;
    *n = a * b * sizeof(float);
    return 1;
}

/* Byte ranges share a byte; a NULL range (an absent bias) overlaps nothing. Compared
   as integers: relational operators on pointers into different objects are undefined. */
static int ffn__overlap(const void *a, size_t an, const void *b, size_t bn)
{
    uintptr_t ua = (uintptr_t)a, ub = (uintptr_t)b;
    return a && b && ua < ub + bn && ub < ua + an;
}

FFNDEF const char *ffn_status_string(int status)
{
    switch (status) {
    case FFN_OK:            return "ok";
    case FFN_ERR_NULL:      return "ffn: a required pointer argument is NULL";
    case FFN_ERR_ZERO_SIZE: return "ffn: a size argument is zero";
    case FFN_ERR_OVERFLOW:  return "ffn: a buffer size overflows size_t";
    case FFN_ERR_SCRATCH:   return "ffn: the scratch buffer is too small";
    case FFN_ERR_ALIAS:     return "ffn: an output buffer overlaps an input buffer";
    default:                return "ffn: unknown status";
    }
}

/* Sizes of a Linear's buffers in bytes, or FFN_ERR_ZERO_SIZE / FFN_ERR_OVERFLOW. */
typedef struct { size_t x, y, w, b; } ffn__linear_bytes;

static int ffn__linear_sizes(ffn__linear_bytes *n, size_t rows, size_t in, size_t out)
{
    if (!rows || !in || !out) return FFN_ERR_ZERO_SIZE;
    if (!ffn__bytes(&n->x, rows, in) || !ffn__bytes(&n->y, rows, out) ||
        !ffn__bytes(&n->w, out, in))
        return FFN_ERR_OVERFLOW;
    n->b = out * sizeof(float);
    return FFN_OK;
}

/* ---- the scalar path: the readable specification ------------------------ */

/* y[r,o] = b[o] + sum_k x[r,k] w[o,k], summed in k order. */
static void ffn__linear_scalar(float *FFN__RESTRICT y, const float *FFN__RESTRICT x,
                               const float *FFN__RESTRICT w, const float *FFN__RESTRICT b,
                               size_t rows, size_t in, size_t out)
{
    size_t r, o, k;
    for (r = 0; r < rows; r++) {
        const float *xr = x + r * in;
        for (o = 0; o < out; o++) {
            const float *wo = w + o * in;
            float acc = b ? b[o] : 0.0f;
            for (k = 0; k < in; k++) acc += xr[k] * wo[k];
            y[r * out + o] = acc;
        }
    }
}

/* torch.relu is clamp_min(x, 0): only values below zero change. NaN and -0.0 compare
   false and pass through, as torch's do. */
static float ffn__relu1(float v) { return v < 0.0f ? 0.0f : v; }

static void ffn__relu_scalar(float *y, const float *x, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) y[i] = ffn__relu1(x[i]);
}

/* ---- public functions -------------------------------------------------- */

FFNDEF int ffn_linear(float *y, const float *x, const float *weight, const float *bias,
                      size_t rows, size_t in_features, size_t out_features)
{
    ffn__linear_bytes n;
    int st;
    if (!y || !x || !weight) return FFN_ERR_NULL;
    st = ffn__linear_sizes(&n, rows, in_features, out_features);
    if (st) return st;
    if (ffn__overlap(y, n.y, x, n.x) || ffn__overlap(y, n.y, weight, n.w) ||
        ffn__overlap(y, n.y, bias, n.b))
        return FFN_ERR_ALIAS;
    ffn__linear_scalar(y, x, weight, bias, rows, in_features, out_features);
    return FFN_OK;
}

FFNDEF int ffn_relu(float *y, const float *x, size_t n)
{
    size_t bytes;
    if (!y || !x) return FFN_ERR_NULL;
    if (!n) return FFN_ERR_ZERO_SIZE;
    if (!ffn__bytes(&bytes, n, 1)) return FFN_ERR_OVERFLOW;
    if (y != x && ffn__overlap(y, bytes, x, bytes)) return FFN_ERR_ALIAS;
    ffn__relu_scalar(y, x, n);
    return FFN_OK;
}

FFNDEF size_t ffn_block_scratch_floats(size_t rows, size_t d_model, size_t hidden)
{
    size_t bytes;
    if (!rows || !d_model || !hidden || !ffn__bytes(&bytes, rows, hidden)) return 0;
    return rows * hidden;
}

FFNDEF int ffn_block(float *y, const float *x, const float *w1, const float *b1,
                     const float *w2, const float *b2, size_t rows, size_t d_model,
                     size_t hidden, float *scratch, size_t scratch_floats)
{
    ffn__linear_bytes n1, n2;
    size_t need;
    int st;
    if (!y || !x || !w1 || !w2 || !scratch) return FFN_ERR_NULL;
    if ((st = ffn__linear_sizes(&n1, rows, d_model, hidden)) != FFN_OK ||
        (st = ffn__linear_sizes(&n2, rows, hidden, d_model)) != FFN_OK)
        return st;
    need = ffn_block_scratch_floats(rows, d_model, hidden);
    FFN_ASSERT(need != 0);
    if (scratch_floats < need) return FFN_ERR_SCRATCH;
    /* y may be x: x is read completely by fc1 before fc2 writes y. */
    if ((y != x && ffn__overlap(y, n2.y, x, n1.x)) ||
        ffn__overlap(y, n2.y, w1, n1.w) || ffn__overlap(y, n2.y, b1, n1.b) ||
        ffn__overlap(y, n2.y, w2, n2.w) || ffn__overlap(y, n2.y, b2, n2.b) ||
        ffn__overlap(scratch, n1.y, y, n2.y) || ffn__overlap(scratch, n1.y, x, n1.x) ||
        ffn__overlap(scratch, n1.y, w1, n1.w) || ffn__overlap(scratch, n1.y, b1, n1.b) ||
        ffn__overlap(scratch, n1.y, w2, n2.w) || ffn__overlap(scratch, n1.y, b2, n2.b))
        return FFN_ERR_ALIAS;

    ffn__linear_scalar(scratch, x, w1, b1, rows, d_model, hidden);
    ffn__relu_scalar(scratch, scratch, rows * hidden);
    ffn__linear_scalar(y, scratch, w2, b2, rows, hidden, d_model);
    return FFN_OK;
}

#endif /* FFN_IMPLEMENTATION_DONE */
#endif /* FFN_IMPLEMENTATION */

/*
------------------------------------------------------------------------------
This software is available under 2 licenses -- choose whichever you prefer.
------------------------------------------------------------------------------
ALTERNATIVE A - MIT License
Copyright (c) 2026 the pe.h and ffn.h authors
Permission is hereby granted, free of charge, to any person obtaining a copy of
this software and associated documentation files (the "Software"), to deal in
the Software without restriction, including without limitation the rights to
use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies
of the Software, and to permit persons to whom the Software is furnished to do
so, subject to the following conditions:
The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.
THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
------------------------------------------------------------------------------
ALTERNATIVE B - Public Domain (www.unlicense.org)
This is free and unencumbered software released into the public domain.
Anyone is free to copy, modify, publish, use, compile, sell, or distribute this
software, either in source code form or as a compiled binary, for any purpose,
commercial or non-commercial, and by any means.
In jurisdictions that recognize copyright law, the author or authors of this
software dedicate any and all copyright interest in the software to the public
domain. We make this dedication for the benefit of the public at large and to
the detriment of our heirs and successors. We intend this dedication to be an
overt act of relinquishment in perpetuity of all present and future rights to
this software under copyright law.
------------------------------------------------------------------------------
*/

/* bench/plain.c - plain C loops, the baseline a user would write by hand.
   Built with -O3 -march=native (and -ffp-contract=fast, the default of gcc's GNU
   modes, so that -std=c99 does not forbid FMA contraction). No intrinsics, no
   OpenMP, no validation. */
#include "plain.h"

#include <math.h>

void plain_linear(float *y, const float *x, const float *wt, const float *b,
                  size_t rows, size_t in, size_t out)
{
    size_t i, k, j;
    for (i = 0; i < rows; i++) {
        float *yi = y + i * out;
        const float *xi = x + i * in;
        for (j = 0; j < out; j++) yi[j] = b[j];
        for (k = 0; k < in; k++) {
            const float xk = xi[k];
            const float *wk = wt + k * out;
            for (j = 0; j < out; j++) yi[j] += xk * wk[j];
        }
    }
}

void plain_ffn_block(float *y, const float *x, const float *w1t, const float *b1,
                     const float *w2t, const float *b2, size_t rows, size_t d, size_t h,
                     float *scratch)
{
    size_t i, n = rows * h;
    plain_linear(scratch, x, w1t, b1, rows, d, h);
    for (i = 0; i < n; i++) scratch[i] = scratch[i] < 0.0f ? 0.0f : scratch[i];
    plain_linear(y, scratch, w2t, b2, rows, h, d);
}

void plain_add_batch_first(float *out, const float *x, const float *table,
                           size_t batch, size_t seq, size_t d)
{
    size_t b, i, n = seq * d;
    for (b = 0; b < batch; b++)
        for (i = 0; i < n; i++) out[b * n + i] = x[b * n + i] + table[i];
}

void plain_add_batch_first_inplace(float *x, const float *table,
                                   size_t batch, size_t seq, size_t d)
{
    size_t b, i, n = seq * d;
    for (b = 0; b < batch; b++)
        for (i = 0; i < n; i++) x[b * n + i] += table[i];
}

void plain_add_seq_first(float *out, const float *x, const float *table,
                         size_t seq, size_t batch, size_t d)
{
    size_t s, b, j;
    for (s = 0; s < seq; s++)
        for (b = 0; b < batch; b++) {
            const size_t o = (s * batch + b) * d;
            for (j = 0; j < d; j++) out[o + j] = x[o + j] + table[s * d + j];
        }
}

void plain_add_seq_first_inplace(float *x, const float *table,
                                 size_t seq, size_t batch, size_t d)
{
    size_t s, b, j;
    for (s = 0; s < seq; s++)
        for (b = 0; b < batch; b++) {
            const size_t o = (s * batch + b) * d;
            for (j = 0; j < d; j++) x[o + j] += table[s * d + j];
        }
}

/* The embedding and its gradient, for int32 and int64 ids alike. */
#define PLAIN_EMBED(name, id_t) \
    void name(float *out, const id_t *ids, const float *wte, const float *wpe, size_t batch, \
              size_t seq, size_t d) \
    { \
        size_t b, s, j; \
        for (b = 0; b < batch; b++) \
            for (s = 0; s < seq; s++) { \
                const float *t = wte + (size_t)ids[b * seq + s] * d; \
                float *o = out + (b * seq + s) * d; \
                for (j = 0; j < d; j++) o[j] = t[j] + wpe[s * d + j]; \
            } \
    } \
    void name##_backward(float *dwte, float *dwpe, const float *dout, const id_t *ids, \
                         size_t batch, size_t seq, size_t d) \
    { \
        size_t t, j; \
        for (t = 0; t < batch * seq; t++) { \
            float *r = dwte + (size_t)ids[t] * d; \
            for (j = 0; j < d; j++) r[j] += dout[t * d + j]; \
        } \
        plain_add_batch_first_backward(dwpe, dout, batch, seq, d); \
    }
void plain_table(float *table, size_t max_len, size_t d)
{
    const float scale = (float)(-log(10000.0) / (double)d);
    size_t p, i;
    for (p = 0; p < max_len; p++)
        for (i = 0; i < d / 2; i++) {
            const float div = expf((float)(2 * i) * scale);
            const float a = (float)p * div;
            table[p * d + 2 * i] = sinf(a);
            table[p * d + 2 * i + 1] = cosf(a);
        }
}

void plain_table_exact(float *table, size_t max_len, size_t d)
{
    const double scale = -log(10000.0) / (double)d;
    size_t p, i;
    for (p = 0; p < max_len; p++)
        for (i = 0; i < d / 2; i++) {
            const double a = (double)p * exp((double)(2 * i) * scale);
            table[p * d + 2 * i] = (float)sin(a);
            table[p * d + 2 * i + 1] = (float)cos(a);
        }
}

/* The rotation (sign 1) or its inverse (-1, the gradient), in place. */
static void rope_half(float *x, const float *cos_c, const float *sin_c, size_t tokens,
                      size_t heads, size_t hd, size_t rot, size_t start, float sign)
{
    const size_t half = rot / 2;
    size_t t, h, i;
    for (t = 0; t < tokens; t++) {
        const float *c = cos_c + (start + t) * half, *s = sin_c + (start + t) * half;
        for (h = 0; h < heads; h++) {
            float *r = x + (t * heads + h) * hd;
            for (i = 0; i < half; i++) {
                const float a = r[i], b = r[i + half];
                r[i] = a * c[i] - sign * b * s[i];
                r[i + half] = b * c[i] + sign * a * s[i];
            }
        }
    }
}

void plain_rope_half_inplace(float *x, const float *cos_c, const float *sin_c, size_t tokens,
                             size_t heads, size_t hd, size_t rot, size_t start)
{
    rope_half(x, cos_c, sin_c, tokens, heads, hd, rot, start, 1.0f);
}

void plain_add_batch_first_backward(float *dtable, const float *dout, size_t batch,
                                    size_t seq, size_t d)
{
    size_t b, i, n = seq * d;
    for (b = 0; b < batch; b++)
        for (i = 0; i < n; i++) dtable[i] += dout[b * n + i];
}

void plain_add_seq_first_backward(float *dtable, const float *dout, size_t seq, size_t batch,
                                  size_t d)
{
    size_t s, b, j;
    for (s = 0; s < seq; s++)
        for (b = 0; b < batch; b++)
            for (j = 0; j < d; j++) dtable[s * d + j] += dout[(s * batch + b) * d + j];
}

void plain_rope_half_backward_inplace(float *g, const float *cos_c, const float *sin_c,
                                      size_t tokens, size_t heads, size_t hd, size_t rot,
                                      size_t start)
{
    rope_half(g, cos_c, sin_c, tokens, heads, hd, rot, start, -1.0f);
}

PLAIN_EMBED(plain_embed, int32_t)
PLAIN_EMBED(plain_embed_i64, int64_t)

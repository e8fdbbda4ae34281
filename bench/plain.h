/* bench/plain.h - the "plain C loop" baselines: what a straightforward loop compiled
   with cc -O3 -march=native gives, for comparison with the libraries. Single thread. */
#ifndef BENCH_PLAIN_H
#define BENCH_PLAIN_H

#include <stddef.h>
#include <stdint.h>

/* FFN block with i-k-j loops on transposed weights: w1t (d, h) = fc1.weight^T,
   w2t (h, d) = fc2.weight^T (transposed once by the caller, not timed).
   scratch holds rows * h floats. */
void plain_ffn_block(float *y, const float *x, const float *w1t, const float *b1,
                     const float *w2t, const float *b2, size_t rows, size_t d, size_t h,
                     float *scratch);
/* y (rows, out) = x (rows, in) @ wt (in, out) + b, i-k-j. */
void plain_linear(float *y, const float *x, const float *wt, const float *b,
                  size_t rows, size_t in, size_t out);

void plain_add_batch_first(float *out, const float *x, const float *table,
                           size_t batch, size_t seq, size_t d);
void plain_add_batch_first_inplace(float *x, const float *table,
                                   size_t batch, size_t seq, size_t d);
void plain_add_seq_first(float *out, const float *x, const float *table,
                         size_t seq, size_t batch, size_t d);
void plain_add_seq_first_inplace(float *x, const float *table,
                                 size_t seq, size_t batch, size_t d);
void plain_embed(float *out, const int32_t *ids, const float *wte, const float *wpe,
                 size_t batch, size_t seq, size_t d);
void plain_embed_i64(float *out, const int64_t *ids, const float *wte, const float *wpe,
                     size_t batch, size_t seq, size_t d);
/* The sinusoidal table with the torch-mode float32 formula (expf, sinf, cosf). */
void plain_table(float *table, size_t max_len, size_t d);
/* The same formula in double, rounded once to float. */
void plain_table_exact(float *table, size_t max_len, size_t d);

/* RoPE, half-split pairs, in place: x (tokens, heads, hd), cos/sin (positions, rot/2),
   token t at position start + t (one batch, BSHD). */
void plain_rope_half_inplace(float *x, const float *cos_c, const float *sin_c, size_t tokens,
                             size_t heads, size_t hd, size_t rot, size_t start);

/* The gradients (training), accumulated: dtable[s] += dout[b, s] (batch-first, dout
   (batch, seq, d)) or dout[s, b] (seq-first); the embedding's dwte[ids[t]] += dout[t] and
   dwpe[s] += dout[b, s]; RoPE's inverse rotation in place (as plain_rope_half_inplace). */
void plain_add_batch_first_backward(float *dtable, const float *dout, size_t batch,
                                    size_t seq, size_t d);
void plain_add_seq_first_backward(float *dtable, const float *dout, size_t seq, size_t batch,
                                  size_t d);
void plain_embed_backward(float *dwte, float *dwpe, const float *dout, const int32_t *ids,
                          size_t batch, size_t seq, size_t d);
void plain_embed_i64_backward(float *dwte, float *dwpe, const float *dout, const int64_t *ids,
                              size_t batch, size_t seq, size_t d);
void plain_rope_half_backward_inplace(float *g, const float *cos_c, const float *sin_c,
                                      size_t tokens, size_t heads, size_t hd, size_t rot,
                                      size_t start);

#endif /* BENCH_PLAIN_H */

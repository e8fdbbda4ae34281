/* tests/unit.h - a private build of pe.h + ffn.h seen through a table of function pointers,
   for the programs that run two builds of the same code side by side in one process:
   bench/ (a plain -O2 build beside the -march=native one) and tools/fastmath_check.c
   (a -ffast-math build beside a strict one). Everything else includes the headers
   directly and picks paths with pe_set_path / ffn_set_path (tests/harness.h).

   tests/unit.c, compiled with -DUNIT_GETTER=<name> and the build's flags, holds a
   private (PE_STATIC / FFN_STATIC) copy of both libraries and exports only <name>(). */
#ifndef TESTS_UNIT_H
#define TESTS_UNIT_H

#include <stddef.h>
#include <stdint.h>

typedef struct unit {
    const char *flags;      /* UNIT_FLAGS, as the build was compiled */
    int openmp;             /* compiled with OpenMP */

    const char *(*pe_status_string)(int status);
    const char *(*pe_path)(void);
    int (*pe_set_path)(const char *name);
    const char *(*pe_path_name)(int i);
    int (*pe_sinusoidal_table)(float *table, size_t max_len, size_t d_model);
    int (*pe_sinusoidal_table_exact)(float *table, size_t max_len, size_t d_model);
    int (*pe_sinusoidal_table_fast)(float *table, size_t max_len, size_t d_model);
    int (*pe_add_batch_first)(float *out, const float *x, const float *table,
                              size_t batch, size_t seq, size_t d_model, size_t max_len);
    int (*pe_add_batch_first_inplace)(float *x, const float *table, size_t batch,
                                      size_t seq, size_t d_model, size_t max_len);
    int (*pe_add_seq_first)(float *out, const float *x, const float *table,
                            size_t seq, size_t batch, size_t d_model, size_t max_len);
    int (*pe_add_seq_first_inplace)(float *x, const float *table, size_t seq,
                                    size_t batch, size_t d_model, size_t max_len);
    int (*pe_embed)(float *out, const int32_t *ids, const float *wte, const float *wpe,
                    size_t batch, size_t seq, size_t d_model, size_t vocab, size_t ctx);
    int (*pe_embed_i64)(float *out, const int64_t *ids, const float *wte,
                        const float *wpe, size_t batch, size_t seq, size_t d_model,
                        size_t vocab, size_t ctx);

    const char *(*ffn_status_string)(int status);
    const char *(*ffn_path)(void);
    int (*ffn_set_path)(const char *name);
    const char *(*ffn_path_name)(int i);
    int (*ffn_linear)(float *y, const float *x, const float *w, const float *b,
                      size_t rows, size_t in, size_t out);
    int (*ffn_relu)(float *y, const float *x, size_t n);
    size_t (*ffn_block_scratch_floats)(size_t rows, size_t d_model, size_t hidden);
    int (*ffn_block)(float *y, const float *x, const float *w1, const float *b1,
                     const float *w2, const float *b2, size_t rows, size_t d_model,
                     size_t hidden, float *scratch, size_t scratch_floats);
    size_t (*ffn_pack_floats)(size_t in, size_t out);
    int (*ffn_pack_weight)(float *packed, size_t packed_floats, const float *w,
                           size_t in, size_t out);
    int (*ffn_linear_packed)(float *y, const float *x, const float *packed,
                             const float *b, size_t rows, size_t in, size_t out);
    int (*ffn_block_packed)(float *y, const float *x, const float *w1p, const float *b1,
                            const float *w2p, const float *b2, size_t rows,
                            size_t d_model, size_t hidden, float *scratch,
                            size_t scratch_floats);
    int (*ffn_activation)(float *y, const float *x, size_t n, int act);
    int (*ffn_block_act)(float *y, const float *x, const float *w1, const float *b1,
                         const float *w2, const float *b2, size_t rows, size_t d_model,
                         size_t hidden, int act, float *scratch, size_t scratch_floats);
    int (*ffn_block_act_packed)(float *y, const float *x, const float *w1p,
                                const float *b1, const float *w2p, const float *b2,
                                size_t rows, size_t d_model, size_t hidden, int act,
                                float *scratch, size_t scratch_floats);
    size_t (*ffn_gated_scratch_floats)(size_t rows, size_t d_model, size_t hidden);
    int (*ffn_gated)(float *y, const float *x, const float *wg, const float *bg,
                     const float *wu, const float *bu, const float *wd, const float *bd,
                     size_t rows, size_t d_model, size_t hidden, int act, float *scratch,
                     size_t scratch_floats);
    int (*ffn_gated_packed)(float *y, const float *x, const float *wg, const float *bg,
                            const float *wu, const float *bu, const float *wd,
                            const float *bd, size_t rows, size_t d_model, size_t hidden,
                            int act, float *scratch, size_t scratch_floats);
    int (*ffn_pack_weight_in_out)(float *packed, size_t packed_floats, const float *w,
                                  size_t in, size_t out);
    size_t (*ffn_linear_backward_scratch_floats)(size_t rows, size_t in, size_t out);
    int (*ffn_linear_backward)(float *dx, float *dw, float *db, const float *dy,
                               const float *x, const float *w, size_t rows, size_t in,
                               size_t out, float *scratch, size_t scratch_floats);
    int (*pe_rope_inv_freq)(float *inv_freq, size_t rot, double theta);
    int (*pe_rope_cache)(float *cos_out, float *sin_out, const float *inv_freq, size_t rot,
                         float attention_factor, const int64_t *pos, int64_t start, size_t n);
    int (*pe_rope_apply)(float *out, const float *x, size_t batch, size_t seq, size_t heads,
                         size_t head_dim, size_t rot, int layout, int pairing,
                         const float *cos_c, const float *sin_c, size_t cache_len,
                         const int64_t *pos, int64_t start);
    int (*pe_rope_apply_direct)(float *out, const float *x, size_t batch, size_t seq,
                                size_t heads, size_t head_dim, size_t rot, int layout,
                                int pairing, const float *inv_freq, float attention_factor,
                                const int64_t *pos, int64_t start);
    /* ffn.h 1.7: the blocks' backwards */
    size_t (*ffn_block_backward_scratch_floats)(size_t rows, size_t d_model, size_t hidden);
    int (*ffn_block_act_backward)(float *dx, float *dw1, float *db1, float *dw2, float *db2,
                                  const float *dy, const float *x, const float *h,
                                  const float *w1, const float *w2, size_t rows,
                                  size_t d_model, size_t hidden, int act, float *scratch,
                                  size_t scratch_floats);
    size_t (*ffn_gated_backward_scratch_floats)(size_t rows, size_t d_model, size_t hidden);
    int (*ffn_gated_backward)(float *dx, float *dw_gate, float *db_gate, float *dw_up,
                              float *db_up, float *dw_down, float *db_down, const float *dy,
                              const float *x, const float *gate_h, const float *up_h,
                              const float *w_gate, const float *w_up, const float *w_down,
                              size_t rows, size_t d_model, size_t hidden, int act,
                              float *scratch, size_t scratch_floats);
    /* pe.h 1.4: the backward functions (NULL in a PREV build of an older pe.h) */
    int (*pe_add_batch_first_backward)(float *dtable, const float *dout, size_t batch,
                                       size_t seq, size_t d_model, size_t max_len);
    int (*pe_add_seq_first_backward)(float *dtable, const float *dout, size_t seq,
                                     size_t batch, size_t d_model, size_t max_len);
    int (*pe_embed_backward)(float *dwte, float *dwpe, const float *dout, const int32_t *ids,
                             size_t batch, size_t seq, size_t d_model, size_t vocab,
                             size_t ctx);
    int (*pe_embed_i64_backward)(float *dwte, float *dwpe, const float *dout,
                                 const int64_t *ids, size_t batch, size_t seq, size_t d_model,
                                 size_t vocab, size_t ctx);
    int (*pe_rope_apply_backward)(float *dx, const float *dout, size_t batch, size_t seq,
                                  size_t heads, size_t head_dim, size_t rot, int layout,
                                  int pairing, const float *cos_c, const float *sin_c,
                                  size_t cache_len, const int64_t *pos, int64_t start);
    int (*pe_rope_apply_direct_backward)(float *dx, const float *dout, size_t batch,
                                         size_t seq, size_t heads, size_t head_dim, size_t rot,
                                         int layout, int pairing, const float *inv_freq,
                                         float attention_factor, const int64_t *pos,
                                         int64_t start);
    /* pe.h 1.3: ALiBi and the timestep embedding (NULL in a PREV build of an older pe.h) */
    int (*pe_alibi_bias)(float *bias, const float *slopes, size_t heads, size_t q_len,
                         size_t k_len, size_t offset, int causal);
    int (*pe_timestep_embedding)(float *out, const float *timesteps, size_t n, size_t dim,
                                 int flip_sin_to_cos, double downscale_freq_shift, double scale,
                                 double max_period);
} unit;

#endif /* TESTS_UNIT_H */

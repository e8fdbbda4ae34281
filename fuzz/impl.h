/* fuzz/impl.h - one build of pe.h + ffn.h seen through a table of function pointers.

   impl_fast.c compiles the headers' default path (whatever SIMD the flags enable),
   impl_scalar.c the plain C path (-DPE_NO_SIMD -DFFN_NO_SIMD). Both use PE_STATIC /
   FFN_STATIC, so the two copies live in one fuzz binary without clashing, and each
   exports one getter. The fuzz targets call both and compare. */
#ifndef FUZZ_IMPL_H
#define FUZZ_IMPL_H

#include <stddef.h>
#include <stdint.h>

typedef struct fz_impl {
    const char *name;      /* "fast" or "scalar" */
    const char *ffn_path;  /* FFN_SIMD_NAME of this build, or "v1" */
    const char *pe_path;   /* PE_SIMD_NAME, or "v1" */

    const char *(*pe_status_string)(int status);
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
    int (*ffn_linear)(float *y, const float *x, const float *w, const float *b,
                      size_t rows, size_t in, size_t out);
    int (*ffn_relu)(float *y, const float *x, size_t n);
    size_t (*ffn_block_scratch_floats)(size_t rows, size_t d_model, size_t hidden);
    int (*ffn_block)(float *y, const float *x, const float *w1, const float *b1,
                     const float *w2, const float *b2, size_t rows, size_t d_model,
                     size_t hidden, float *scratch, size_t scratch_floats);
    /* The packed-weight API; NULL when this ffn.h does not have it. */
    size_t (*ffn_pack_floats)(size_t in, size_t out);
    int (*ffn_pack_weight)(float *packed, size_t packed_floats, const float *w,
                           size_t in, size_t out);
    int (*ffn_linear_packed)(float *y, const float *x, const float *packed,
                             const float *b, size_t rows, size_t in, size_t out);
    int (*ffn_block_packed)(float *y, const float *x, const float *w1p, const float *b1,
                            const float *w2p, const float *b2, size_t rows,
                            size_t d_model, size_t hidden, float *scratch,
                            size_t scratch_floats);
} fz_impl;

const fz_impl *fz_impl_fast(void);   /* impl_fast.c */
const fz_impl *fz_impl_scalar(void); /* impl_scalar.c */

#endif

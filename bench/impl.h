/* bench/impl.h - one build of pe.h + ffn.h, seen through a table of function pointers.

   Each library path is compiled in its own translation unit with PE_STATIC / FFN_STATIC,
   so several copies of the library (the default fast path and the -DFFN_NO_SIMD
   -DPE_NO_SIMD scalar path) live in one program without name clashes. The only
   exported symbol of such a unit is its getter, bench_impl_fast() / bench_impl_scalar(). */
#ifndef BENCH_IMPL_H
#define BENCH_IMPL_H

#include <stddef.h>
#include <stdint.h>

typedef struct bench_impl {
    const char *name;     /* "fast" or "scalar" */
    const char *ffn_path; /* FFN_SIMD_NAME of this build, or "v1" if the header has none */
    const char *pe_path;  /* PE_SIMD_NAME, or "v1" */
    int openmp;           /* 1 if this unit was compiled with OpenMP (_OPENMP) */

    int (*ffn_linear)(float *y, const float *x, const float *w, const float *b,
                      size_t rows, size_t in, size_t out);
    size_t (*ffn_block_scratch_floats)(size_t rows, size_t d, size_t h);
    int (*ffn_block)(float *y, const float *x, const float *w1, const float *b1,
                     const float *w2, const float *b2, size_t rows, size_t d, size_t h,
                     float *scratch, size_t scratch_floats);
    /* The prepacked-weight API; NULL when this ffn.h does not have it yet. */
    size_t (*ffn_pack_floats)(size_t in, size_t out);
    int (*ffn_pack_weight)(float *packed, size_t packed_floats, const float *w,
                           size_t in, size_t out);
    int (*ffn_linear_packed)(float *y, const float *x, const float *packed, const float *b,
                             size_t rows, size_t in, size_t out);
    int (*ffn_block_packed)(float *y, const float *x, const float *w1p, const float *b1,
                            const float *w2p, const float *b2, size_t rows, size_t d,
                            size_t h, float *scratch, size_t scratch_floats);

    int (*pe_table)(float *table, size_t max_len, size_t d);
    int (*pe_table_exact)(float *table, size_t max_len, size_t d);
    int (*pe_table_fast)(float *table, size_t max_len, size_t d);
    int (*pe_add_batch_first)(float *out, const float *x, const float *table,
                              size_t batch, size_t seq, size_t d, size_t max_len);
    int (*pe_add_batch_first_inplace)(float *x, const float *table,
                                      size_t batch, size_t seq, size_t d, size_t max_len);
    int (*pe_add_seq_first)(float *out, const float *x, const float *table,
                            size_t seq, size_t batch, size_t d, size_t max_len);
    int (*pe_add_seq_first_inplace)(float *x, const float *table,
                                    size_t seq, size_t batch, size_t d, size_t max_len);
    int (*pe_embed)(float *out, const int32_t *ids, const float *wte, const float *wpe,
                    size_t batch, size_t seq, size_t d, size_t vocab, size_t ctx);
    int (*pe_embed_i64)(float *out, const int64_t *ids, const float *wte, const float *wpe,
                        size_t batch, size_t seq, size_t d, size_t vocab, size_t ctx);
    const char *(*ffn_status_string)(int status);
    const char *(*pe_status_string)(int status);
} bench_impl;

const bench_impl *bench_impl_fast(void);   /* impl_fast.c: the default build */
const bench_impl *bench_impl_scalar(void); /* impl_scalar.c: -DFFN_NO_SIMD -DPE_NO_SIMD */

#endif /* BENCH_IMPL_H */

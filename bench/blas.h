/* bench/blas.h - the OpenBLAS baseline: blas.c, built with BLAS=1 (links -lopenblas), which
   defines BENCH_BLAS; without it stubs that are never called, so the bench has one form. */
#ifndef BENCH_BLAS_H
#define BENCH_BLAS_H

#include <stddef.h>

#ifndef BENCH_BLAS
#define BENCH_HAVE_BLAS 0
static void bench_blas_none(const void *p, ...) { (void)p; }
#define bench_blas_corename() "none"
#define bench_blas_config() "none"
#define bench_blas_set_threads(n) ((void)(n))
#define bench_blas_linear bench_blas_none
#define bench_blas_ffn_block bench_blas_none
#define bench_blas_linear_backward bench_blas_none
#else
#define BENCH_HAVE_BLAS 1

/* The core OpenBLAS chose (or was forced to with OPENBLAS_CORETYPE), and its config. */
const char *bench_blas_corename(void);
const char *bench_blas_config(void);
/* Ask OpenBLAS for n threads; returns what openblas_get_num_threads() then reports. */
int bench_blas_set_threads(int n);

/* y (rows, out) = x @ w^T + b with one cblas_sgemm (RowMajor, NoTrans x, Trans w). */
void bench_blas_linear(float *y, const float *x, const float *w, const float *b,
                       size_t rows, size_t in, size_t out);
/* The FFN block: two sgemm calls plus bias and relu loops; scratch holds rows * h. */
void bench_blas_ffn_block(float *y, const float *x, const float *w1, const float *b1,
                          const float *w2, const float *b2, size_t rows, size_t d,
                          size_t h, float *scratch);

/* The Linear's backward as two sgemm calls: dx = dy @ w, dw += dy^T @ x (beta 1). */
void bench_blas_linear_backward(float *dx, float *dw, const float *dy, const float *x,
                                const float *w, size_t rows, size_t in, size_t out);

#endif
#endif /* BENCH_BLAS_H */

/* bench/blas.c - the FFN through cblas_sgemm (OpenBLAS). See blas.h. */
#define BENCH_BLAS
#include "blas.h"

#include <cblas.h>

const char *bench_blas_corename(void) { return openblas_get_corename(); }
const char *bench_blas_config(void) { return openblas_get_config(); }

int bench_blas_set_threads(int n)
{
    openblas_set_num_threads(n);
    return openblas_get_num_threads();
}

/* Bias first, then C = 1 * x w^T + 1 * C: the bias costs one pass over y, as in torch's
   addmm. The bias add and relu are plain loops, as a user of cblas would write them. */
void bench_blas_linear(float *y, const float *x, const float *w, const float *b,
                       size_t rows, size_t in, size_t out)
{
    size_t i, j;
    for (i = 0; i < rows; i++)
        for (j = 0; j < out; j++) y[i * out + j] = b[j];
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (blasint)rows, (blasint)out,
                (blasint)in, 1.0f, x, (blasint)in, w, (blasint)in, 1.0f, y, (blasint)out);
}

void bench_blas_ffn_block(float *y, const float *x, const float *w1, const float *b1,
                          const float *w2, const float *b2, size_t rows, size_t d,
                          size_t h, float *scratch)
{
    size_t i, n = rows * h;
    bench_blas_linear(scratch, x, w1, b1, rows, d, h);
    for (i = 0; i < n; i++) scratch[i] = scratch[i] < 0.0f ? 0.0f : scratch[i];
    bench_blas_linear(y, scratch, w2, b2, rows, h, d);
}

void bench_blas_linear_backward(float *dx, float *dw, const float *dy, const float *x,
                                const float *w, size_t rows, size_t in, size_t out)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)rows, (blasint)in,
                (blasint)out, 1.0f, dy, (blasint)out, w, (blasint)in, 0.0f, dx, (blasint)in);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (blasint)out, (blasint)in,
                (blasint)rows, 1.0f, dy, (blasint)out, x, (blasint)in, 1.0f, dw, (blasint)in);
}

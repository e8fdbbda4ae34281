/* fuzz target: ffn_block_scratch_floats. 0 exactly when a size is 0 or the count
   overflows; otherwise at least rows * hidden (the scalar path needs exactly that);
   and for small shapes, ffn_block accepts exactly that many floats and refuses one
   fewer with FFN_ERR_SCRATCH (fast and scalar builds, each with its own count). */
#include "fz.h"

static void check_block(const fz_impl *I, size_t rows, size_t d, size_t h)
{
    size_t need = I->ffn_block_scratch_floats(rows, d, h), k;
    float *y = (float *)calloc(rows * d, 4), *x = (float *)calloc(rows * d, 4);
    float *w1 = (float *)calloc(h * d, 4), *w2 = (float *)calloc(d * h, 4);
    float *s = (float *)malloc(need * 4);
    int st;
    FZ_CHECK(y && x && w1 && w2 && s, "malloc");
    for (k = 0; k < rows * d; k++) x[k] = (float)k;
    st = I->ffn_block(y, x, w1, NULL, w2, NULL, rows, d, h, s, need - 1);
    FZ_CHECK(st == -4, "%s ffn_block(%zu, %zu, %zu) with %zu - 1 scratch floats: %s",
             I->name, rows, d, h, need, fz_ffn_name(st));
    st = I->ffn_block(y, x, w1, NULL, w2, NULL, rows, d, h, s, need);
    FZ_CHECK(st == 0, "%s ffn_block(%zu, %zu, %zu) with %zu scratch floats: %s", I->name,
             rows, d, h, need, fz_ffn_name(st));
    for (k = 0; k < rows * d; k++) FZ_CHECK(y[k] == 0.0f, "zero weights, y[%zu] != 0", k);
    free(y); free(x); free(w1); free(w2); free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const fz_impl *F = fz_impl_fast(), *S = fz_impl_scalar();
    fz_t f;
    size_t rows, d, h, nf, ns, rh;
    int valid;
    fz_init(&f, data, size);
    if (fz_byte(&f) % 2) {
        rows = fz_size_huge(&f);
        d = fz_size_huge(&f);
        h = fz_size_huge(&f);
    } else {
        rows = fz_dim(&f, 12);
        d = fz_dim(&f, 40);
        h = fz_dim(&f, 70);
    }
    valid = rows && d && h && fz_fbytes_ok(rows, h);
    rh = valid ? rows * h : 0;
    nf = F->ffn_block_scratch_floats(rows, d, h);
    ns = S->ffn_block_scratch_floats(rows, d, h);
    FZ_CHECK(ns == rh, "scalar ffn_block_scratch_floats(%zu, %zu, %zu) = %zu, want %zu",
             rows, d, h, ns, rh);
    if (!valid)
        FZ_CHECK(nf == 0, "fast ffn_block_scratch_floats(%zu, %zu, %zu) = %zu, want 0",
                 rows, d, h, nf);
    else
        /* The fast path may need more; 0 only if that larger count overflows. */
        FZ_CHECK(nf >= rh || (nf == 0 && rh > (size_t)-1 / 64),
                 "fast ffn_block_scratch_floats(%zu, %zu, %zu) = %zu < rows * hidden %zu",
                 rows, d, h, nf, rh);
    if (valid && rows <= 64 && d <= 256 && h <= 256 && rows * d <= 4096 && h * d <= 16384 &&
        rh <= 4096) {
        check_block(F, rows, d, h);
        check_block(S, rows, d, h);
    }
    return 0;
}

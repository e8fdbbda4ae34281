/* test_two_tu_b.c - the second translation unit of the two-TU test (see test_two_tu_a.c):
   the headers without their implementation, so every call here links against TU a.
   Compiles as C99 and as C++. */
#include <stdlib.h>
#include <string.h>

#include "../pe.h"
#include "../ffn.h"
#include "../pe.h"

#include "test_two_tu.h"

/* Weights: multiples of 1/8 (exact), the same data for both TUs. */
void two_tu_weights(two_tu_weights_t *w)
{
    size_t i;
    for (i = 0; i < TWO_TU_H * TWO_TU_D; i++) w->w1[i] = (float)((int)(i % 11) - 5) / 8.0f;
    for (i = 0; i < TWO_TU_D * TWO_TU_H; i++) w->w2[i] = (float)((int)(i % 7) - 3) / 8.0f;
    for (i = 0; i < TWO_TU_H; i++) w->b1[i] = (float)((int)(i % 5) - 2) / 8.0f;
    for (i = 0; i < TWO_TU_D; i++) w->b2[i] = (float)((int)(i % 3) - 1) / 8.0f;
}

int two_tu_b_run(two_tu_result *r)
{
    float x[TWO_TU_ROWS * TWO_TU_D];
    size_t i, n = ffn_block_scratch_floats(TWO_TU_ROWS, TWO_TU_D, TWO_TU_H);
    float *scratch = (float *)malloc((n ? n : 1) * sizeof *scratch);
    two_tu_weights_t w;
    int st;
    if (!scratch || !n) { free(scratch); return -100; }
    two_tu_weights(&w);
    st = pe_sinusoidal_table(r->table, TWO_TU_MAX_LEN, TWO_TU_D);
    for (i = 0; i < TWO_TU_ROWS * TWO_TU_D; i++) x[i] = (float)((int)(i % 9) - 4) / 4.0f;
    if (st == PE_OK)
        st = pe_add_batch_first_inplace(x, r->table, 1, TWO_TU_ROWS, TWO_TU_D, TWO_TU_MAX_LEN);
    if (st == PE_OK)
        st = ffn_block(r->y, x, w.w1, w.b1, w.w2, w.b2, TWO_TU_ROWS,
                       TWO_TU_D, TWO_TU_H, scratch, n);
    free(scratch);
    r->status_string = pe_status_string;
    r->block = ffn_block;
    r->version = PE_VERSION_STRING;
    return st;
}

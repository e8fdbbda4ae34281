/* test_two_tu_a.c + test_two_tu_b.c - pe.h and ffn.h used from two translation units
   linked into one program, the way a real project uses an STB-style header: this file
   holds the implementation (PE_IMPLEMENTATION, FFN_IMPLEMENTATION), the other only the
   declarations. Both call the functions; results must agree bit for bit, and both must
   see the very same function (one definition, no duplicate symbols at link time).
   The headers are included twice here to exercise the include and implementation guards.
   tests.mk also builds the pair with test_two_tu_b.c compiled as C++ (extern "C"). */
#define PE_IMPLEMENTATION
#include "../pe.h"
#include "../pe.h"
#define FFN_IMPLEMENTATION
#include "../ffn.h"
#include "../ffn.h"
#include "../support/harness.h"
#include "test_two_tu.h"

int main(void)
{
    float table[TWO_TU_MAX_LEN * TWO_TU_D], x[TWO_TU_ROWS * TWO_TU_D], y[TWO_TU_ROWS * TWO_TU_D];
    float scratch[TWO_TU_ROWS * TWO_TU_H * 2];
    two_tu_result b;
    two_tu_weights_t w;
    size_t i, n = ffn_block_scratch_floats(TWO_TU_ROWS, TWO_TU_D, TWO_TU_H);
    int st;

    /* The same computation here and in the other TU. */
    two_tu_weights(&w);
    st = pe_sinusoidal_table(table, TWO_TU_MAX_LEN, TWO_TU_D);
    for (i = 0; i < TWO_TU_ROWS * TWO_TU_D; i++) x[i] = (float)((int)(i % 9) - 4) / 4.0f;
    st |= pe_add_batch_first_inplace(x, table, 1, TWO_TU_ROWS, TWO_TU_D, TWO_TU_MAX_LEN);
    st |= n <= sizeof scratch / sizeof *scratch ? 0 : -100;
    if (st == 0)
        st |= ffn_block(y, x, w.w1, w.b1, w.w2, w.b2, TWO_TU_ROWS,
                        TWO_TU_D, TWO_TU_H, scratch, n);
    th_check(st == 0, "TU a: pe_sinusoidal_table, pe_add_batch_first_inplace, ffn_block -> OK");

    st = two_tu_b_run(&b);
    th_check(st == 0, "TU b: the same calls through the declarations only -> OK");
    th_check(memcmp(b.table, table, sizeof table) == 0, "TU a and TU b tables are bit-identical");
    th_check(memcmp(b.y, y, sizeof y) == 0, "TU a and TU b ffn_block outputs are bit-identical");
    /* One definition: TU b's function pointers are this TU's functions. */
    th_check(b.status_string == pe_status_string && b.block == ffn_block,
             "both TUs call the single definition of pe_status_string and ffn_block");
    th_check(strcmp(b.version, PE_VERSION_STRING) == 0, "both TUs see the same PE_VERSION_STRING");

    return th_summary();
}

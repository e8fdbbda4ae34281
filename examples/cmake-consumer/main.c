/* A first program with pe.h and ffn.h from their package: a sinusoidal table, then
   one feed-forward block over it. Exits 0 when both calls succeed. */
#include <stdio.h>
#include <stdlib.h>

#define PE_IMPLEMENTATION
#include "pe.h"
#define FFN_IMPLEMENTATION
#include "ffn.h"

enum { ROWS = 4, D = 8, H = 32 };

int main(void)
{
    static float table[ROWS * D], w1[H * D], b1[H], w2[D * H], b2[D], y[ROWS * D];
    size_t i, n = ffn_block_scratch_floats(ROWS, D, H);
    float *scratch = (float *)malloc(n * sizeof *scratch);
    ffn_mlp m;    /* fc2(relu(fc1(x))), nn.Linear's (out, in) float32 weights */
    int st;

    for (i = 0; i < H * D; i++) {
        w1[i] = (float)(i % 7) * 0.125f - 0.375f;
        w2[i] = (float)(i % 5) * 0.125f - 0.25f;
    }
    if (!scratch) return 1;
    st = pe_sinusoidal_table(table, ROWS, D);
    if (st < 0) { fprintf(stderr, "%s\n", pe_status_string(st)); return 1; }
    m.fc1 = ffn_weight_of(w1, FFN_F32, FFN_OUT_IN);
    m.fc2 = ffn_weight_of(w2, FFN_F32, FFN_OUT_IN);
    m.b1 = b1; m.b2 = b2; m.d_model = D; m.hidden = H; m.act = FFN_RELU;
    st = ffn_mlp_forward(y, table, ROWS, &m, scratch, n);
    if (st < 0) { fprintf(stderr, "%s\n", ffn_status_string(st)); return 1; }
    printf("pe.h %s (%s), ffn.h %s (%s): y[0] = %g\n", PE_VERSION_STRING, pe_path(),
           FFN_VERSION_STRING, ffn_path(), (double)y[0]);
    free(scratch);
    return 0;
}

/* support/shapes.h - the FFN shapes bench/bench.c measures, in one place: the bench reads
   them from here, tests/test_schedule.c checks ffn.h's thread schedule on every one of
   them (T = 1..64), and bench/bench_torch.py repeats them (keep its shapes() in step).

   Every FFN op (the Linear, the block plain and packed, the block with other activations,
   the gated block, the Linear's and the blocks' backward) runs at each of `rows` and each
   thread count of --threads. --large adds 4096 rows, and the gated block of Llama 7B; --quick is the
   CI smoke run's few small shapes. */
#ifndef BENCH_SHAPES_H
#define BENCH_SHAPES_H

#include <stddef.h>

typedef struct bench_shapes {
    size_t rows[8];
    int nrows;
    size_t block[4][2];     /* the block (d_model, hidden); the Linear on each fc1 */
    int nblock;
    size_t act[2];          /* the block's other activations: GPT-2 small's MLP */
    size_t gated[2][2];     /* the gated block (SiLU, no biases): TinyLlama's, Llama 7B's */
    int ngated;
    size_t bwd[2];          /* the Linear's backward (in, out) and the blocks' backward */
} bench_shapes;

static void bench_shapes_get(bench_shapes *s, int quick, int large)
{
    static const size_t rows_full[] = {1, 4, 16, 512, 4096}, rows_quick[] = {1, 16, 128};
    static const size_t block_full[3][2] = {{256, 1024}, {512, 2048}, {768, 3072}};
    int i;
    if (quick) {
        for (i = 0; i < 3; i++) s->rows[i] = rows_quick[i];
        s->nrows = 3;
        s->block[0][0] = 256; s->block[0][1] = 1024;
        s->nblock = 1;
        s->act[0] = 256; s->act[1] = 1024;
        s->gated[0][0] = 512; s->gated[0][1] = 1408;
        s->ngated = 1;
        s->bwd[0] = 256; s->bwd[1] = 1024;
        return;
    }
    s->nrows = large ? 5 : 4;
    for (i = 0; i < s->nrows; i++) s->rows[i] = rows_full[i];
    for (i = 0; i < 3; i++) { s->block[i][0] = block_full[i][0]; s->block[i][1] = block_full[i][1]; }
    s->nblock = 3;
    s->act[0] = 768; s->act[1] = 3072;
    s->gated[0][0] = 2048; s->gated[0][1] = 5632;
    s->gated[1][0] = 4096; s->gated[1][1] = 11008;
    s->ngated = large ? 2 : 1;
    s->bwd[0] = 768; s->bwd[1] = 3072;
}

#endif

/* The input stage of a GPT-style model in a page of C:
     token ids -> token embedding + sinusoidal positional encoding -> feed-forward block
   as in "Attention is all you need"-style PyTorch code (PositionalEncoding +
   FeedForwardNN) and GPT-2 (token + position embedding).
   Build and run: make example   (or: cc -O2 examples/gpt_input.c -I. -lm && ./a.out)

   The weights here are made up by a tiny generator so the program needs no files; in
   a real model they are a state_dict's tensors, used as they are (nn.Linear layout). */
#include <stdio.h>
#include <stdlib.h>

#define PE_IMPLEMENTATION
#include "pe.h"
#define FFN_IMPLEMENTATION
#include "ffn.h"

enum { BATCH = 2, SEQ = 8, VOCAB = 1000, D_MODEL = 64, HIDDEN = 256, MAX_LEN = 128 };

/* Deterministic stand-in weights in [-scale, scale). */
static void fill(float *p, size_t n, float scale, unsigned *state)
{
    size_t i;
    for (i = 0; i < n; i++) {
        *state = *state * 1664525u + 1013904223u;
        p[i] = scale * ((float)(*state >> 8) / 8388608.0f - 1.0f);
    }
}

/* One handler for both headers: their status codes are disjoint (pe.h -1xx, ffn.h -2xx). */
static int check(int status, const char *what)
{
    if (status < 0)
        fprintf(stderr, "%s: %s\n", what,
                status > -200 ? pe_status_string(status) : ffn_status_string(status));
    return status < 0;
}

int main(void)
{
    static int32_t ids[BATCH * SEQ];
    static float wte[VOCAB * D_MODEL], table[MAX_LEN * D_MODEL];
    static float fc1_w[HIDDEN * D_MODEL], fc1_b[HIDDEN], fc2_w[D_MODEL * HIDDEN], fc2_b[D_MODEL];
    static float x[BATCH * SEQ * D_MODEL], y[BATCH * SEQ * D_MODEL];
    unsigned state = 42;
    size_t i, rows = BATCH * SEQ, n_scratch = ffn_block_scratch_floats(rows, D_MODEL, HIDDEN);
    float *scratch = (float *)malloc(n_scratch * sizeof(float));   /* the caller owns memory */
    double checksum = 0.0;
    ffn_mlp mlp;
    int st;

    for (i = 0; i < BATCH * SEQ; i++) ids[i] = (int32_t)((i * 37 + 11) % VOCAB);
    fill(wte, VOCAB * D_MODEL, 1.0f, &state);
    fill(fc1_w, HIDDEN * D_MODEL, 0.125f, &state);          /* ~ 1/sqrt(d_model) */
    fill(fc1_b, HIDDEN, 0.125f, &state);
    fill(fc2_w, D_MODEL * HIDDEN, 0.0625f, &state);         /* ~ 1/sqrt(hidden) */
    fill(fc2_b, D_MODEL, 0.0625f, &state);
    if (!scratch) return 1;

    /* The sinusoidal table, bit for bit PyTorch's PositionalEncoding buffer. */
    if (check(pe_sinusoidal_table(table, MAX_LEN, D_MODEL), "table")) return 1;

    /* x (B,S,D) = wte[ids] + table[:S]: the position table can be any table, learned
       (GPT-2's wpe) or sinusoidal, so the gather and the add are one pass. */
    if (check(pe_embed(x, ids, wte, table, BATCH, SEQ, D_MODEL, VOCAB, MAX_LEN), "embed"))
        return 1;
    printf("ids        (%d, %d)\n", BATCH, SEQ);
    printf("embeddings (%d, %d, %d)   wte (%d, %d)   pe table (%d, %d)\n",
           BATCH, SEQ, D_MODEL, VOCAB, D_MODEL, MAX_LEN, D_MODEL);

    /* y = fc2(relu(fc1(x))) over all B*S rows at once: the weights as descriptors (a
       checkpoint's bfloat16 tensor would be FFN_BF16, read as it is). */
    mlp.fc1 = ffn_weight_of(fc1_w, FFN_F32, FFN_OUT_IN);
    mlp.fc2 = ffn_weight_of(fc2_w, FFN_F32, FFN_OUT_IN);
    mlp.b1 = fc1_b;
    mlp.b2 = fc2_b;
    mlp.d_model = D_MODEL;
    mlp.hidden = HIDDEN;
    mlp.act = FFN_RELU;
    st = ffn_mlp_forward(y, x, rows, &mlp, scratch, n_scratch);
    if (check(st, "ffn_mlp_forward")) return 1;
    printf("ffn output (%d, %d, %d)   fc1 (%d, %d)   fc2 (%d, %d)   scratch %zu floats\n",
           BATCH, SEQ, D_MODEL, HIDDEN, D_MODEL, D_MODEL, HIDDEN, n_scratch);

    /* Errors are values, not crashes: an id outside the vocabulary is refused. */
    ids[3] = VOCAB;
    st = pe_embed(x, ids, wte, table, BATCH, SEQ, D_MODEL, VOCAB, MAX_LEN);
    printf("bad id     -> %d (%s)\n", st, pe_status_string(st));

    for (i = 0; i < rows * D_MODEL; i++) checksum += y[i];
    printf("checksum   sum(y) = %.6f   y[0,0,:4] = %.6f %.6f %.6f %.6f\n",
           checksum, y[0], y[1], y[2], y[3]);
    /* The paths were chosen at run time, for this CPU. */
    printf("ran        pe.h %s (%s path), ffn.h %s (%s path)\n", PE_VERSION_STRING, pe_path(),
           FFN_VERSION_STRING, ffn_path());
    free(scratch);
    return 0;
}

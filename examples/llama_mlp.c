/* One Llama MLP layer read from a .safetensors checkpoint and run in bfloat16 with ffn.h:
      y = down_proj(silu(gate_proj(x)) * up_proj(x))       (transformers' LlamaMLP)
   Build and run: make example-llama   (or: cc -O2 -I. examples/llama_mlp.c -lm && ./a.out)

   The file (reference/goldens/llama_mlp.safetensors, written from torch tensors by
   reference/make_safetensors.py) holds model.layers.0.mlp.{gate,up,down}_proj.weight in
   BF16, an input x (rows, d_model) F32 and torch's output y_torch F32 for it: the module
   in float32 on the widened weights, F.linear(x, w.float()). The weights are packed as
   they are, 16 bits an element (ffn_pack: half the bytes of float32), and run with
   ffn_glu_forward; the program checks
     1. the packed bfloat16 weights are half the bytes of float32 ones (ffn_pack_bytes);
     2. the result has the bits of the float32 block on the widened weights (ffn_gated):
        ffn.h widens a 16-bit weight exactly and sums in the same order;
     3. it is within the error bound of float32 arithmetic of torch's y_torch (below).
   Exit status 0 when all hold; one summary line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FFN_IMPLEMENTATION
#include "ffn.h"
#define SAFETENSORS_IMPLEMENTATION
#include "examples/safetensors.h"

/* ---- reading the checkpoint --------------------------------------------------------- */

static unsigned char *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    long len;
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = (unsigned char *)malloc((size_t)len + 1)) != NULL &&
        fread(buf, 1, (size_t)len, f) != (size_t)len) {
        free(buf);
        buf = NULL;
    }
    if (buf) *n = (size_t)len;
    fclose(f);
    return buf;
}

/* The tensor name with dtype and shape (rows, cols), or NULL after saying why not. */
static const st_tensor *tensor(const st_tensor *t, size_t n, const char *name, int dtype,
                               size_t rows, size_t cols)
{
    const st_tensor *p = st_find(t, n, name);
    if (!p) fprintf(stderr, "llama_mlp: no tensor %s in the file\n", name);
    else if (p->dtype != dtype || p->ndim != 2 || p->shape[0] != rows || p->shape[1] != cols)
        fprintf(stderr, "llama_mlp: %s is %s of %d dimensions, not %s (%zu, %zu)\n", name,
                st_dtype_name(p->dtype), p->ndim, st_dtype_name(dtype), rows, cols);
    else return p;
    return NULL;
}

/* The file's little-endian bfloat16 bits and float32 values, in host order. */
static void bf16_bits(uint16_t *out, const st_tensor *t)
{
    size_t i;
    for (i = 0; i < t->count; i++)
        out[i] = (uint16_t)(t->data[2 * i] | t->data[2 * i + 1] << 8);
}

static void f32_values(float *out, const st_tensor *t)
{
    size_t i;
    for (i = 0; i < t->count; i++) {
        const unsigned char *b = t->data + 4 * i;
        const uint32_t u = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                           (uint32_t)b[3] << 24;
        memcpy(out + i, &u, 4);
    }
}

/* ---- how far from torch ---------------------------------------------------------------
   ffn.h and torch both compute in float32 from the same inputs (the weights widened
   exactly), but sum the dot products in different orders, so their bits differ. The
   bound is the one README's NUMERICAL CONTRACT uses for ffn_gated against torch (and
   tests/test_golden.c for the block backwards): a float32 sum of K terms in ffn.h's
   order (blocks of kb FMAs, superblocks of sb blocks) puts any term through at most
   n(K) = min(K, kb) + min(sb, B) - 1 + ceil(B / sb) roundings (B = ceil(K / kb)), so it is
   within gamma_n S of the exact sum, gamma_n = n u / (1 - n u), u = 2^-24, S = sum |x_k w_k|;
   torch's order is not known here and any order is within gamma_K S (Higham, Accuracy
   and Stability of Numerical Algorithms, 3.1). The two are within (gamma_n(K) + gamma_K) S.
   Through the block, per hidden unit (G = gate(x), U = up(x), A = silu(G), H = A U as
   ffn.h computes them):
      tol_G, tol_U   that bound with K = d_model
      tol_A = 1.1 tol_G + 4 2^-23 |G|    (silu is 1.1-Lipschitz; each side's silu is
                                         within 2 ulps of |G|: torch's vectorised one too)
      tol_H = |A| tol_U + (|U| + tol_U) tol_A + 2^-23 |H|   (one product rounding a side)
   and per output, with K = hidden:
      tol_y = (gamma_n(K) + gamma_K) sum_j |W_down| (|H_j| + tol_H_j) + sum_j |W_down| tol_H_j
   A worst case: the typical error is about sqrt(K) u S, a few hundredths of it. */
static double gamma_of(double n) { return n * 0x1p-24 / (1.0 - n * 0x1p-24); }

static double sum_bound(size_t K)
{
    const size_t kb = K < 64 ? 8 : K < 256 ? 16 : K < 1024 ? 32 : 64, sb = K < 1024 ? 8 : 4;
    const size_t B = (K + kb - 1) / kb;
    const size_t n = (K < kb ? K : kb) + (B < sb ? B : sb) - 1 + (B + sb - 1) / sb;
    return gamma_of((double)n) + gamma_of((double)K);
}

/* sum_k |x_k| |w(o, k)|, w bfloat16 bits (out, in) */
static double abs_dot(const float *x, const uint16_t *w, size_t o, size_t in)
{
    double s = 0.0;
    size_t k;
    for (k = 0; k < in; k++) {
        const uint32_t u = (uint32_t)w[o * in + k] << 16;
        float wf;
        memcpy(&wf, &u, 4);
        s += fabs((double)x[k]) * fabs((double)wf);
    }
    return s;
}

static int check(int status, const char *what)
{
    if (status < 0) fprintf(stderr, "llama_mlp: %s: %s\n", what, ffn_status_string(status));
    return status >= 0;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "reference/goldens/llama_mlp.safetensors";
    size_t file_bytes = 0, n, rows, d, h, i, j, bytes16, bytes32, sf, bad = 0;
    unsigned char *file = read_file(path, &file_bytes);
    st_tensor recs[16];
    st_info info;
    const st_tensor *tg, *tu, *td, *tx, *ty;
    uint16_t *wg, *wu, *wd;
    float *x, *y_torch, *y, *y32, *wf, *scratch, *G, *U, *A, *H, *Y;
    void *pg, *pu, *pd;
    double *tolH, worst = 0.0, maxdiff = 0.0;
    ffn_weight wdesc[3];
    ffn_glu glu, g32;
    int s;

    if (!file) {
        fprintf(stderr, "llama_mlp: cannot read %s\n", path);
        return 1;
    }
    s = st_parse(file, file_bytes, recs, sizeof recs / sizeof recs[0], &info);
    if (s < 0) {
        fprintf(stderr, "llama_mlp: %s: %s\n", path, st_status_string(s));
        return 1;
    }
    n = info.n_tensors;
    tx = st_find(recs, n, "x");
    if (!tx || tx->ndim != 2) {
        fprintf(stderr, "llama_mlp: no tensor x (rows, d_model) in %s\n", path);
        return 1;
    }
    rows = (size_t)tx->shape[0];
    d = (size_t)tx->shape[1];
    tg = st_find(recs, n, "model.layers.0.mlp.gate_proj.weight");
    h = tg && tg->ndim == 2 ? (size_t)tg->shape[0] : 0;
    tg = tensor(recs, n, "model.layers.0.mlp.gate_proj.weight", ST_BF16, h, d);
    tu = tensor(recs, n, "model.layers.0.mlp.up_proj.weight", ST_BF16, h, d);
    td = tensor(recs, n, "model.layers.0.mlp.down_proj.weight", ST_BF16, d, h);
    tx = tensor(recs, n, "x", ST_F32, rows, d);
    ty = tensor(recs, n, "y_torch", ST_F32, rows, d);
    if (!tg || !tu || !td || !tx || !ty || !rows || !d || !h) return 1;

    /* 1. the weights as the file has them, packed in bfloat16: half of float32's bytes */
    bytes16 = ffn_pack_bytes(d, h, FFN_BF16);
    bytes32 = ffn_pack_bytes(d, h, FFN_F32);
    if (bytes16 == 0 || bytes16 * 2 != bytes32 || ffn_pack_bytes(h, d, FFN_BF16) * 2 !=
                                                     ffn_pack_bytes(h, d, FFN_F32)) {
        fprintf(stderr, "llama_mlp: packed bf16 %zu bytes, f32 %zu: not half\n", bytes16, bytes32);
        return 1;
    }
    wg = (uint16_t *)malloc(h * d * 2);
    wu = (uint16_t *)malloc(h * d * 2);
    wd = (uint16_t *)malloc(h * d * 2);
    x = (float *)malloc(rows * d * sizeof(float));
    y_torch = (float *)malloc(rows * d * sizeof(float));
    y = (float *)malloc(rows * d * sizeof(float));
    y32 = (float *)malloc(rows * d * sizeof(float));
    Y = (float *)malloc(rows * d * sizeof(float));
    wf = (float *)malloc(3 * h * d * sizeof(float));
    G = (float *)malloc(4 * rows * h * sizeof(float));
    tolH = (double *)malloc(h * sizeof(double));
    pg = malloc(bytes16);
    pu = malloc(bytes16);
    pd = malloc(ffn_pack_bytes(h, d, FFN_BF16));
    sf = ffn_gated_scratch_floats(rows, d, h);
    scratch = (float *)malloc(sf * sizeof(float));
    if (!wg || !wu || !wd || !x || !y_torch || !y || !y32 || !Y || !wf || !G || !tolH || !pg ||
        !pu || !pd || !scratch) {
        fprintf(stderr, "llama_mlp: out of memory\n");
        goto fail;
    }
    U = G + rows * h;
    A = U + rows * h;
    H = A + rows * h;
    bf16_bits(wg, tg);
    bf16_bits(wu, tu);
    bf16_bits(wd, td);
    f32_values(x, tx);
    f32_values(y_torch, ty);
    wdesc[0] = ffn_weight_of(wg, FFN_BF16, FFN_OUT_IN);
    wdesc[1] = ffn_weight_of(wu, FFN_BF16, FFN_OUT_IN);
    wdesc[2] = ffn_weight_of(wd, FFN_BF16, FFN_OUT_IN);
    if (!check(ffn_pack(pg, bytes16, FFN_BF16, &wdesc[0], d, h), "pack gate") ||
        !check(ffn_pack(pu, bytes16, FFN_BF16, &wdesc[1], d, h), "pack up") ||
        !check(ffn_pack(pd, ffn_pack_bytes(h, d, FFN_BF16), FFN_BF16, &wdesc[2], h, d),
               "pack down"))
        goto fail;

    /* the layer: y = down(silu(gate(x)) * up(x)), no biases */
    memset(&glu, 0, sizeof glu);
    glu.gate = ffn_weight_of(pg, FFN_BF16, FFN_PACKED);
    glu.up = ffn_weight_of(pu, FFN_BF16, FFN_PACKED);
    glu.down = ffn_weight_of(pd, FFN_BF16, FFN_PACKED);
    glu.d_model = d;
    glu.hidden = h;
    glu.act = FFN_SILU;
    if (!check(ffn_glu_forward(y, x, rows, &glu, scratch, sf), "ffn_glu_forward")) goto fail;

    /* 2. the bits of the float32 block on the widened weights */
    for (i = 0; i < h * d; i++) {
        const uint32_t a = (uint32_t)wg[i] << 16, b = (uint32_t)wu[i] << 16,
                       c = (uint32_t)wd[i] << 16;
        memcpy(wf + i, &a, 4);
        memcpy(wf + h * d + i, &b, 4);
        memcpy(wf + 2 * h * d + i, &c, 4);
    }
    g32 = glu;
    g32.gate = ffn_weight_of(wf, FFN_F32, FFN_OUT_IN);
    g32.up = ffn_weight_of(wf + h * d, FFN_F32, FFN_OUT_IN);
    g32.down = ffn_weight_of(wf + 2 * h * d, FFN_F32, FFN_OUT_IN);
    if (!check(ffn_glu_forward(y32, x, rows, &g32, scratch, sf), "ffn_glu_forward (float32)"))
        goto fail;
    if (memcmp(y, y32, rows * d * sizeof(float)) != 0) {
        fprintf(stderr, "llama_mlp: bf16 result differs from the float32 one on the widened weights\n");
        goto fail;
    }

    /* 3. against torch: the hidden layer as ffn.h computes it (the composition of its
       public calls has the block's bits: checked), then each output's bound */
    if (!check(ffn_linear_w(G, x, &glu.gate, NULL, rows, d, h), "gate") ||
        !check(ffn_linear_w(U, x, &glu.up, NULL, rows, d, h), "up") ||
        !check(ffn_activation(A, G, rows * h, FFN_SILU), "silu"))
        goto fail;
    for (i = 0; i < rows * h; i++) H[i] = A[i] * U[i];
    if (!check(ffn_linear_w(Y, H, &glu.down, NULL, rows, h, d), "down")) goto fail;
    if (memcmp(Y, y, rows * d * sizeof(float)) != 0) {
        fprintf(stderr, "llama_mlp: the block differs from its public calls composed\n");
        goto fail;
    }
    for (i = 0; i < rows; i++) {
        const float *xi = x + i * d, *Gi = G + i * h, *Ui = U + i * h, *Ai = A + i * h,
                    *Hi = H + i * h;
        for (j = 0; j < h; j++) {
            const double tg_ = sum_bound(d) * abs_dot(xi, wg, j, d);
            const double tu_ = sum_bound(d) * abs_dot(xi, wu, j, d);
            const double ta = 1.1 * tg_ + 4.0 * 0x1p-23 * fabs((double)Gi[j]);
            tolH[j] = fabs((double)Ai[j]) * tu_ + (fabs((double)Ui[j]) + tu_) * ta +
                      0x1p-23 * fabs((double)Hi[j]);
        }
        for (j = 0; j < d; j++) {
            double S = 0.0, C = 0.0, tol, diff;
            size_t k;
            for (k = 0; k < h; k++) {
                const uint32_t u = (uint32_t)wd[j * h + k] << 16;
                float w;
                memcpy(&w, &u, 4);
                S += fabs((double)w) * (fabs((double)Hi[k]) + tolH[k]);
                C += fabs((double)w) * tolH[k];
            }
            tol = sum_bound(h) * S + C + (double)h * 0x1p-149;
            diff = fabs((double)y[i * d + j] - (double)y_torch[i * d + j]);
            if (!(diff <= tol)) {
                if (bad++ < 5)
                    fprintf(stderr, "llama_mlp: y[%zu][%zu] = %.9g, torch %.9g: %.3g > bound %.3g\n",
                            i, j, (double)y[i * d + j], (double)y_torch[i * d + j], diff, tol);
            }
            if (diff > maxdiff) maxdiff = diff;
            if (diff / tol > worst) worst = diff / tol;
        }
    }
    printf("llama_mlp: %s: %zu tensors; x (%zu, %zu) -> %zu -> %zu in bf16 (packed %zu bytes a "
           "projection, f32 %zu), float32 bits on the widened weights; vs torch max |diff| "
           "%.3g, worst %.3f of the bound; %s\n",
           path, n, rows, d, h, d, bytes16, bytes32, maxdiff, worst,
           bad ? "FAILED" : "ok");
    if (0) {
fail:   /* (a call failed: check printed which) */
        bad = 1;
    }
    free(file); free(wg); free(wu); free(wd); free(x); free(y_torch); free(y); free(y32);
    free(Y); free(wf); free(G); free(tolH); free(pg); free(pu); free(pd); free(scratch);
    return bad ? 1 : 0;
}

/* Training in C with pe.h and ffn.h, step for step beside PyTorch.
   A toy model (token embedding + position table -> residual FFN block -> linear head,
   cross-entropy; examples/train.h) learns y[s] = (x[s] + s) mod 16 with AdamW for 300
   steps, from the initial weights torch drew, on the same batches torch saw. It prints
   the loss curve beside torch's (reference/goldens: train_learned / train_sinusoidal).
   Build and run: make example-train  (also writes build/train.png when matplotlib is
   there), or: cc -O2 -I. examples/train.c -o train -lm && ./train [--sinusoidal]

   usage: train [--sinusoidal] [--goldens DIR] [--tsv FILE] [--every N]
      --sinusoidal  the fixed sinusoidal position table instead of a learned one
      --goldens     the golden directory (default reference/goldens)
      --tsv         also write every step: step, C loss, torch loss, torch float64 loss
      --every       print every N-th step (default 20; the first and last always) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PE_IMPLEMENTATION
#include "pe.h"
#define FFN_IMPLEMENTATION
#include "ffn.h"
#define NPY_IMPLEMENTATION
#include "../support/npy.h"
#include "examples/train.h"

/* DIR/NAME.KEY.npy, which must hold n values of kind 'f': a malloc'd copy as double. */
static double *load(const char *dir, const char *name, const char *key, size_t n)
{
    char path[4096];
    npy_array a;
    double *p = NULL;
    int st;
    snprintf(path, sizeof path, "%s/%s.%s.npy", dir, name, key);
    if ((st = npy_load(path, &a)) != NPY_OK) {
        fprintf(stderr, "%s: %s (make reference writes the goldens)\n", path, npy_status_string(st));
        return NULL;
    }
    if (a.ndim != 1 || a.count != n)
        fprintf(stderr, "%s: %zu values, expected %zu (for examples/train.h's config)\n", path,
                a.count, n);
    else if ((st = npy_to_f64(&a, &p)) != NPY_OK)
        fprintf(stderr, "%s: %s\n", path, npy_status_string(st));
    npy_free(&a);
    return p;
}

int main(int argc, char **argv)
{
    const char *dir = "reference/goldens", *tsv_path = NULL, *name;
    int sinusoidal = 0, i, st;
    long every = 20, t;
    train_config c;
    train_model m;
    double *init64, *torch32, *torch64, d32 = 0, d64 = 0, dref = 0;
    float *loss;
    FILE *tsv = NULL;
    clock_t t0;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--sinusoidal") == 0) sinusoidal = 1;
        else if (strcmp(argv[i], "--goldens") == 0 && i + 1 < argc) dir = argv[++i];
        else if (strcmp(argv[i], "--tsv") == 0 && i + 1 < argc) tsv_path = argv[++i];
        else if (strcmp(argv[i], "--every") == 0 && i + 1 < argc) every = atol(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--sinusoidal] [--goldens DIR] [--tsv FILE] [--every N]\n",
                    argv[0]);
            return 2;
        }
    }
    if (every < 1) every = 1;
    c = train_default_config(sinusoidal);
    name = sinusoidal ? "train_sinusoidal" : "train_learned";

    /* torch's initial parameters (one flat array) and its losses, float32 and float64 */
    if ((st = train_init(&m, &c)) < 0) {
        fprintf(stderr, "train_init: %s\n", train_status_string(st));
        return 1;
    }
    init64 = load(dir, name, "params", m.n_params);
    torch32 = load(dir, name, "loss32", (size_t)c.steps);
    torch64 = load(dir, name, "loss64", (size_t)c.steps);
    loss = (float *)malloc((size_t)c.steps * sizeof(float));
    if (!init64 || !torch32 || !torch64 || !loss) return 1;
    for (i = 0; i < (int)m.n_params; i++) m.params[i] = (float)init64[i];
    if (tsv_path && !(tsv = fopen(tsv_path, "w"))) {
        perror(tsv_path);
        return 1;
    }

    printf("%s: V %zu, S %zu, D %zu, H %zu, batch %zu, %ld AdamW steps (lr %g), %s position "
           "table, %zu parameters\n", name, c.vocab, c.seq, c.d_model, c.hidden, c.batch,
           c.steps, (double)c.lr, sinusoidal ? "sinusoidal" : "learned", m.n_params);
    printf("%6s %12s %12s %11s\n", "step", "C loss", "torch loss", "|C - torch|");
    t0 = clock();
    for (t = 0; t < c.steps; t++) {
        if ((st = train_step(&m, &loss[t])) < 0) {
            fprintf(stderr, "step %ld: %s\n", t, train_status_string(st));
            return 1;
        }
    }
    for (t = 0; t < c.steps; t++) {
        const double e32 = fabs(loss[t] - torch32[t]), e64 = fabs(loss[t] - torch64[t]);
        d32 = e32 > d32 ? e32 : d32;
        d64 = e64 > d64 ? e64 : d64;
        if (fabs(torch32[t] - torch64[t]) > dref) dref = fabs(torch32[t] - torch64[t]);
        if (t % every == 0 || t == c.steps - 1)
            printf("%6ld %12.7f %12.7f %11.2e\n", t, (double)loss[t], torch32[t], e32);
        if (tsv) fprintf(tsv, "%ld\t%.9g\t%.9g\t%.17g\n", t, (double)loss[t], torch32[t], torch64[t]);
    }
    printf("final loss: C %.7f, torch %.7f (from %.4f at step 0)\n", (double)loss[c.steps - 1],
           torch32[c.steps - 1], (double)loss[0]);
    printf("max over the run: |C - torch| %.2e, |C - torch float64| %.2e, |torch - torch "
           "float64| %.2e\n", d32, d64, dref);
    printf("%ld steps in %.3f s; pe.h %s (%s path), ffn.h %s (%s path)\n", c.steps,
           (double)(clock() - t0) / CLOCKS_PER_SEC, PE_VERSION_STRING, pe_path(),
           FFN_VERSION_STRING, ffn_path());
    if (tsv) fclose(tsv);
    train_free(&m);
    free(init64);
    free(torch32);
    free(torch64);
    free(loss);
    return 0;
}

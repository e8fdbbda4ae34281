/* tools/fastmath_check.c - what changes when pe.h / ffn.h are compiled with -ffast-math.

   Two builds of the same code (support/unit.c, compiled once strictly as fm_impl_strict
   and once with the fast-math flags as fm_impl_fastmath) are run side by side by this
   program, which is itself compiled strictly (so its NaN tests are not folded away), on
   every path both builds run (each set to the same path). Every line says `same` or
   `DIFFERS` with the details: the checks of features/ (FEATURE_FASTMATH: the sinusoidal
   tables' bits, NaN / infinity / denormal / -0.0 handling, the Linear's and the block's
   results, RoPE's cache and rotation) against the strict build.
   Exit status: 0 if nothing differs, 1 otherwise (the make rule decides what that means).

   A program *linked* with -ffast-math (gcc, x86) also starts with the SSE flush-to-zero
   and denormals-are-zero modes on (crtfastmath.o), for all code; run it both ways. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support/unit.h"

const unit *fm_impl_strict(void);
const unit *fm_impl_fastmath(void);

static int differs;

static uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float fbits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static int same(float a, float b) { return (a != a && b != b) || bits(a) == bits(b); }

static void report(const char *what, long bad, const char *detail)
{
    if (bad) differs = 1;
    printf("%-8s %-44s %s\n", bad ? "DIFFERS" : "same", what, bad ? detail : "");
}

static uint64_t rng = 88172645463325252ull;
static float frand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((int64_t)(rng >> 40) - (1 << 23)) / (float)(1 << 22);   /* [-2, 2) */
}

/* Special inputs: NaN (two payloads, both signs), +-inf, +-0, denormals, FLT_MAX. */
static const uint32_t special[] = { 0x7fc00000u, 0xffc00000u, 0x7fc12345u, 0x7f800000u,
                                    0xff800000u, 0x00000000u, 0x80000000u, 0x00000001u,
                                    0x807fffffu, 0x007fffffu, 0x7f7fffffu, 0x3f800000u,
                                    0xbf800000u, 0x00800000u, 0x80800000u, 0x40490fdbu };
#define NSPEC (sizeof special / sizeof special[0])

/* x, t (NSPEC, NSPEC): x's rows, t's columns every special value (every special + every
   special). */
static void fm_specials(float *x, float *t)
{
    size_t i, j;
    for (i = 0; i < NSPEC; i++)
        for (j = 0; j < NSPEC; j++) {
            x[i * NSPEC + j] = fbits(special[j]);
            t[i * NSPEC + j] = fbits(special[i]);
        }
}

/* n values in [-2, 2); if rows, then row i of width row has a NaN or an inf at 3 i. */
static void fm_fill(float *v, size_t n, size_t row, size_t rows)
{
    size_t i;
    for (i = 0; i < n; i++) v[i] = frand();
    for (i = 0; i < rows; i++) v[i * row + 3 * i] = fbits(special[i % 5]);
}

/* The n results a of the strict build and b of the fast-math one: one line. exact: NaNs
   of other payloads differ too. */
static void compare(const char *what, const float *a, const float *b, size_t n, int exact)
{
    size_t i, bad = 0, cls = 0, first = 0;
    double worst = 0;
    char detail[200];
    for (i = 0; i < n; i++)
        if (exact ? bits(a[i]) != bits(b[i]) : !same(a[i], b[i])) {
            if (!bad++) first = i;
            if ((a[i] != a[i]) != (b[i] != b[i]) || isinf(a[i]) != isinf(b[i])) cls++;
            else if (fabs((double)a[i] - b[i]) > worst) worst = fabs((double)a[i] - b[i]);
        }
    snprintf(detail, sizeof detail, "%zu of %zu (%.2f%%), %zu change class (NaN/inf), max |diff| "
             "%.3g; e.g. [%zu]: strict 0x%08x, fast-math 0x%08x", bad, n,
             100.0 * (double)bad / (double)n, cls, worst, first, (unsigned)bits(a[first]),
             (unsigned)bits(b[first]));
    report(what, (long)bad, detail);
}

/* What a check of features/ runs on: LIBM once (no path involved), PE / FFN on every
   path of that header that both builds run. */
enum { FM_LIBM, FM_PE, FM_FFN };

/* FEATURE_FASTMATH_CHECKS rows: a check and its argument; FEATURE_FASTMATH_PATHS rows: a
   header's path list and setter (as its unit reaches them). */
typedef struct {
    int when;
    void (*run)(const unit *S, const unit *F, int arg);
    int arg;
} fm_check;
typedef struct {
    const char *header;
    int when;
    const char *(*name)(const unit *u, int i);
    int (*set)(const unit *u, const char *name);
} fm_paths;

#define FEATURE_FASTMATH
#include "../features/all.inc"
#undef FEATURE_FASTMATH

static const fm_check checks[] = {
#define FEATURE_FASTMATH_CHECKS
#include "../features/all.inc"
#undef FEATURE_FASTMATH_CHECKS
};
static const fm_paths libs[] = {
#define FEATURE_FASTMATH_PATHS
#include "../features/all.inc"
#undef FEATURE_FASTMATH_PATHS
};

static void run_checks(const unit *S, const unit *F, int when)
{
    size_t k;
    for (k = 0; k < sizeof checks / sizeof checks[0]; k++)
        if (checks[k].when == when) checks[k].run(S, F, checks[k].arg);
}

int main(void)
{
    const unit *S = fm_impl_strict(), *F = fm_impl_fastmath();
    volatile float d = fbits(0x00000001u), zero = 0.0f, sum;
    const char *name;
    size_t l;
    int i;
    sum = d + zero;   /* at run time: 0 when the FPU treats denormals as zero */
    printf("# denormals in this process: %s\n",
           sum == 0.0f ? "flushed to zero (FTZ/DAZ, as after linking with -ffast-math)"
                       : "kept (IEEE)");
    run_checks(S, F, FM_LIBM);
    for (l = 0; l < sizeof libs / sizeof libs[0]; l++)
        for (i = 0; (name = libs[l].name(F, i)) != NULL; i++) {
            if (libs[l].set(S, name) || libs[l].set(F, name)) continue;
            printf("# %s path %s, both builds\n", libs[l].header, name);
            run_checks(S, F, libs[l].when);
        }
    puts(differs ? "fastmath_check: the fast-math build DIFFERS from the strict one"
                 : "fastmath_check: identical results");
    return differs;
}

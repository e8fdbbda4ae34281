/* tools/fastmath_check.c - what changes when pe.h / ffn.h are compiled with -ffast-math.

   Two builds of the same code (support/unit.c, compiled once strictly as fm_impl_strict
   and once with the fast-math flags as fm_impl_fastmath) are run side by side by this
   program, which is itself compiled strictly (so its NaN tests are not folded away), on
   every path both builds run (each set to the same path). Every line says `same` or
   `DIFFERS` with the details: the sinusoidal tables' bits, NaN / infinity / denormal /
   -0.0 handling of every function, and the Linear results against the strict build.
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

static void tables(const unit *S, const unit *F, int exact)
{
    static const size_t shapes[][2] = { { 5000, 512 }, { 2048, 768 }, { 100000, 64 } };
    size_t s;
    for (s = 0; s < 3; s++) {
        size_t L = shapes[s][0], D = shapes[s][1], n = L * D, i, bad = 0;
        float *a = (float *)malloc(n * 4), *b = (float *)malloc(n * 4);
        double worst = 0, rel = 0;
        char what[96], detail[160];
        if (!a || !b) { puts("out of memory"); exit(2); }
        if (exact) { S->pe_sinusoidal_table_exact(a, L, D); F->pe_sinusoidal_table_exact(b, L, D); }
        else { S->pe_sinusoidal_table(a, L, D); F->pe_sinusoidal_table(b, L, D); }
        for (i = 0; i < n; i++) {
            if (bits(a[i]) != bits(b[i])) {
                double d = fabs((double)a[i] - (double)b[i]);
                size_t pos = i / D;
                bad++;
                if (d > worst) worst = d;
                if (pos && d / ((double)pos * ldexp(1.0, -24)) > rel)
                    rel = d / ((double)pos * ldexp(1.0, -24));
            }
        }
        snprintf(what, sizeof what, "pe_sinusoidal_table%s (%zu, %zu) bits", exact ? "_exact" : "", L, D);
        snprintf(detail, sizeof detail, "%zu of %zu values (%.2f%%), max |diff| %.3g = %.2f * pos * 2^-24",
                 bad, n, 100.0 * (double)bad / (double)n, worst, rel);
        report(what, (long)bad, detail);
        free(a);
        free(b);
    }
}

/* Special inputs: NaN (two payloads, both signs), +-inf, +-0, denormals, FLT_MAX. */
static const uint32_t special[] = { 0x7fc00000u, 0xffc00000u, 0x7fc12345u, 0x7f800000u,
                                    0xff800000u, 0x00000000u, 0x80000000u, 0x00000001u,
                                    0x807fffffu, 0x007fffffu, 0x7f7fffffu, 0x3f800000u,
                                    0xbf800000u, 0x00800000u, 0x80800000u, 0x40490fdbu };
#define NSPEC (sizeof special / sizeof special[0])

static void adds_and_relu(const unit *S, const unit *F)
{
    float x[NSPEC * NSPEC], t[NSPEC * NSPEC], a[NSPEC * NSPEC], b[NSPEC * NSPEC];
    float wte[NSPEC * NSPEC], wpe[NSPEC * NSPEC];
    int32_t ids[NSPEC];
    size_t i, j, n = NSPEC * NSPEC, bad = 0;
    char detail[200] = "";
    /* every special + every special: x is (1, NSPEC, NSPEC), table (NSPEC, NSPEC) */
    for (i = 0; i < NSPEC; i++)
        for (j = 0; j < NSPEC; j++) {
            x[i * NSPEC + j] = fbits(special[j]);
            t[i * NSPEC + j] = fbits(special[i]);
        }
    S->pe_add_batch_first(a, x, t, 1, NSPEC, NSPEC, NSPEC);
    F->pe_add_batch_first(b, x, t, 1, NSPEC, NSPEC, NSPEC);
    for (i = 0; i < n; i++)
        if (!same(a[i], b[i]) && !bad++)
            snprintf(detail, sizeof detail, "e.g. 0x%08x + 0x%08x: strict 0x%08x, fast-math 0x%08x",
                     (unsigned)bits(x[i]), (unsigned)bits(t[i]), (unsigned)bits(a[i]), (unsigned)bits(b[i]));
    report("pe_add_* on NaN/inf/denormal/-0 sums", (long)bad, detail);

    for (i = 0; i < NSPEC; i++) ids[i] = (int32_t)i;
    memcpy(wte, x, sizeof wte);
    memcpy(wpe, t, sizeof wpe);
    bad = 0;
    S->pe_embed(a, ids, wte, wpe, 1, NSPEC, NSPEC, NSPEC, NSPEC);
    F->pe_embed(b, ids, wte, wpe, 1, NSPEC, NSPEC, NSPEC, NSPEC);
    for (i = 0; i < n; i++)
        if (!same(a[i], b[i]) && !bad++)
            snprintf(detail, sizeof detail, "e.g. element %zu: strict 0x%08x, fast-math 0x%08x", i,
                     (unsigned)bits(a[i]), (unsigned)bits(b[i]));
    report("pe_embed on special values", (long)bad, detail);

    bad = 0;
    detail[0] = '\0';
    S->ffn_relu(a, x, NSPEC);
    F->ffn_relu(b, x, NSPEC);
    for (i = 0; i < NSPEC; i++)
        if (!same(a[i], b[i])) {
            size_t len = strlen(detail);
            bad++;
            if (len < 150)
                snprintf(detail + len, sizeof detail - len, "%srelu(0x%08x) = 0x%08x not 0x%08x",
                         len ? "; " : "", (unsigned)bits(x[i]), (unsigned)bits(b[i]),
                         (unsigned)bits(a[i]));
        }
    report("ffn_relu on NaN/inf/denormal/-0", (long)bad, detail);
}

static void linear(const unit *S, const unit *F, int specials)
{
    enum { R = 7, K = 300, O = 37, H = 45 };
    static float x[R * K], w[O * K], bias[O], a[R * O], b[R * O];
    static float w1[H * K], b1[H], w2[K * H], b2[K], ya[R * K], yb[R * K], sc[R * H];
    size_t i, bad = 0, cls = 0;
    char what[80], detail[200] = "";
    double worst = 0;
    for (i = 0; i < R * K; i++) x[i] = frand();
    for (i = 0; i < O * K; i++) w[i] = frand();
    for (i = 0; i < O; i++) bias[i] = frand();
    for (i = 0; i < H * K; i++) w1[i] = frand();
    for (i = 0; i < K * H; i++) w2[i] = frand();
    for (i = 0; i < H; i++) b1[i] = frand();
    for (i = 0; i < K; i++) b2[i] = frand();
    if (specials)
        for (i = 0; i < R; i++) x[i * K + 3 * i] = fbits(special[i % 5]);   /* NaN, inf */
    S->ffn_linear(a, x, w, bias, R, K, O);
    F->ffn_linear(b, x, w, bias, R, K, O);
    for (i = 0; i < R * O; i++) {
        if (bits(a[i]) != bits(b[i])) {
            bad++;
            if ((a[i] != a[i]) != (b[i] != b[i]) || (isinf(a[i]) != isinf(b[i]))) cls++;
            else if (fabs((double)a[i] - b[i]) > worst) worst = fabs((double)a[i] - b[i]);
        }
    }
    snprintf(what, sizeof what, "ffn_linear bits%s", specials ? " (NaN/inf inputs)" : "");
    snprintf(detail, sizeof detail, "%zu of %d outputs, %zu change class (NaN/inf), max |diff| %.3g",
             bad, R * O, cls, worst);
    report(what, (long)bad, detail);

    bad = cls = 0;
    worst = 0;
    S->ffn_block(ya, x, w1, b1, w2, b2, R, K, H, sc, R * H);
    F->ffn_block(yb, x, w1, b1, w2, b2, R, K, H, sc, R * H);
    for (i = 0; i < R * K; i++) {
        if (bits(ya[i]) != bits(yb[i])) {
            bad++;
            if ((ya[i] != ya[i]) != (yb[i] != yb[i]) || (isinf(ya[i]) != isinf(yb[i]))) cls++;
            else if (fabs((double)ya[i] - yb[i]) > worst) worst = fabs((double)ya[i] - yb[i]);
        }
    }
    snprintf(what, sizeof what, "ffn_block bits%s", specials ? " (NaN/inf inputs)" : "");
    snprintf(detail, sizeof detail, "%zu of %d outputs, %zu change class (NaN/inf), max |diff| %.3g",
             bad, R * K, cls, worst);
    report(what, (long)bad, detail);
}

/* RoPE: the cos/sin cache (libm, positions up to 4096) and the rotation from it (the
   path's kernels; a fast-math build may fuse the products into FMAs). */
static void rope(const unit *S, const unit *F, int cache)
{
    enum { L = 4096, HD = 128, HALF = 64, SEQ = 64, HEADS = 8 };
    static float inv[HALF], ca[L * HALF], sa[L * HALF], cb[L * HALF], sb[L * HALF];
    static float x[SEQ * HEADS * HD], a[SEQ * HEADS * HD], b[SEQ * HEADS * HD];
    size_t i, n = (size_t)SEQ * HEADS * HD, bad = 0;
    double worst = 0;
    char detail[160];
    if (!S->pe_rope_cache || !F->pe_rope_cache) return;
    S->pe_rope_inv_freq(inv, HD, 10000.0);
    S->pe_rope_cache(ca, sa, inv, HD, 1.0f, NULL, 0, L);
    F->pe_rope_cache(cb, sb, inv, HD, 1.0f, NULL, 0, L);
    if (cache) {
        for (i = 0; i < (size_t)L * HALF; i++) {
            if (bits(ca[i]) != bits(cb[i]) || bits(sa[i]) != bits(sb[i])) bad++;
            worst = fmax(worst, fmax(fabs((double)ca[i] - cb[i]), fabs((double)sa[i] - sb[i])));
        }
        snprintf(detail, sizeof detail, "%zu of %d cos/sin pairs, max |diff| %.3g", bad, L * HALF, worst);
        report("pe_rope_cache (4096, 64) bits", (long)bad, detail);
        return;
    }
    for (i = 0; i < n; i++) x[i] = frand();
    memcpy(a, x, sizeof x);
    memcpy(b, x, sizeof x);
    /* both from the strict cache: only the rotation differs */
    S->pe_rope_apply(a, a, 1, SEQ, HEADS, HD, HD, 1, 2, ca, sa, L, NULL, L - SEQ);
    F->pe_rope_apply(b, b, 1, SEQ, HEADS, HD, HD, 1, 2, ca, sa, L, NULL, L - SEQ);
    for (i = 0; i < n; i++)
        if (!same(a[i], b[i])) {
            bad++;
            worst = fmax(worst, fabs((double)a[i] - b[i]));
        }
    snprintf(detail, sizeof detail, "%zu of %zu values, max |diff| %.3g", bad, n, worst);
    report("pe_rope_apply (1, 64, 8, 128) from one cache", (long)bad, detail);
}

int main(void)
{
    const unit *S = fm_impl_strict(), *F = fm_impl_fastmath();
    volatile float d = fbits(0x00000001u), zero = 0.0f, sum;
    const char *name;
    int i;
    sum = d + zero;   /* at run time: 0 when the FPU treats denormals as zero */
    printf("# denormals in this process: %s\n",
           sum == 0.0f ? "flushed to zero (FTZ/DAZ, as after linking with -ffast-math)"
                       : "kept (IEEE)");
    tables(S, F, 0);    /* libm only: no path involved */
    tables(S, F, 1);
    rope(S, F, 1);      /* libm only */
    for (i = 0; (name = F->pe_path_name(i)) != NULL; i++) {
        if (S->pe_set_path(name) || F->pe_set_path(name)) continue;
        printf("# pe path %s, both builds\n", name);
        adds_and_relu(S, F);
        rope(S, F, 0);
    }
    for (i = 0; (name = F->ffn_path_name(i)) != NULL; i++) {
        if (S->ffn_set_path(name) || F->ffn_set_path(name)) continue;
        printf("# ffn path %s, both builds\n", name);
        linear(S, F, 0);
        linear(S, F, 1);
    }
    puts(differs ? "fastmath_check: the fast-math build DIFFERS from the strict one"
                 : "fastmath_check: identical results");
    return differs;
}

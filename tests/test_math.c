/* tests/test_math.c - the rare paths of pe.h's and ffn.h's own correctly rounded math,
   which tools/exhaustive.c checks over every float input but the other parts never
   reach (a fast path decides nearly every input):
   - ffn.h's double-double slow paths (ffn__expf_slow, _tanhf_slow, _erff_slow) against
     the fast functions: both correctly rounded, so the same bits;
   - pe.h's float functions (pe__sinf, _cosf, _expf, _powf, _sincos_d2f) against its
     double ones rounded to float where that cannot round twice (not a midpoint), and
     pe__expf against ffn__expf;
   - C99 Annex F's special values (pow, sin/cos of infinities) by the Annex's rules;
   - pe__sqrt of tiny and subnormal doubles against the C library's (IEC 60559: correctly
     rounded), pe__pow and pe__log2 on exact powers of two into the subnormals;
   - on every path of ffn.h, features/' checks (FEATURE_MATH).

     cc -std=c99 tests/test_math.c support/unit.c -lm     (or as part of make test) */
#include <float.h>
#include <stdint.h>

#include "../pe.h"
#include "../ffn.h"
#include "../support/harness.h"

/* the headers' private functions, exported by support/unit.c */
#include "../support/unit_math.h"

/* a deterministic pseudo-random sequence */
static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_u64(void) { return th_xorshift(&rng); }
static double uniform(double lo, double hi)
{
    return lo + (hi - lo) * (double)(next_u64() >> 11) * (1.0 / 9007199254740992.0);
}

static uint64_t dbits(double d) { uint64_t u; memcpy(&u, &d, sizeof u); return u; }
#define same_f th_same
static int same_d(double a, double b) { return dbits(a) == dbits(b) || (a != a && b != b); }

/* d rounded to float equals the float nearest the exact value that d is the correctly
   rounded double of, unless d lies exactly halfway between two floats (double rounding).
   Returns 1 where (float)d is therefore the correctly rounded float. */
static int float_round_safe(double d)
{
    const float f = (float)d;
    float g;
    if (!(fabs(d) <= (double)FLT_MAX) || (double)f == d) return 1;
    g = nextafterf(f, (double)f < d ? HUGE_VALF : -HUGE_VALF);
    return !(fabs((double)f + ((double)g - (double)f) * 0.5 - d) <= 0.0);
}

/* ---- ffn.h: slow paths against the fast functions ---- */
static void test_ffn_slow(void)
{
    /* skip: 1 skips x == 0, 2 also |x| >= hi */
    static const struct {
        const char *name, *range;
        float (*slow)(float), (*fast)(float);
        double lo, hi;
        int skip;
    } fns[] = {{"expf", "[-87, 88.7]", unit_ffn_expf_slow, unit_ffn_expf, -87.0, 88.7, 0}, /* e^-87 > 2^-126 */
               {"tanhf", "[-10, 10]", unit_ffn_tanhf_slow, unit_ffn_tanhf, -10.0, 10.0, 1},
               {"erff", "(-4, 4)", unit_ffn_erff_slow, unit_ffn_erff, -4.0, 4.0, 2}};
    int i, k, bad = 0, n = 0;
    float worst = 0.0f;
    for (k = 0; k < 3; k++) {
        bad = n = 0;
        for (i = 0; i < 2000; i++, n++) {
            const float x = (float)uniform(fns[k].lo, fns[k].hi);
            if ((fns[k].skip && x == 0.0f) || (fns[k].skip > 1 && fabsf(x) >= (float)fns[k].hi))
                continue;
            if (!same_f(fns[k].slow(x), fns[k].fast(x)) && !bad++) worst = x;
        }
        th_check(!bad, "ffn__%s_slow == ffn__%s bitwise, %d x in %s (%d differ, first %a)",
                 fns[k].name, fns[k].name, n, fns[k].range, bad, (double)worst);
    }
    /* tiny arguments: the series' first term dominates */
    bad = n = 0;
    for (i = 0; i < 200; i++, n++) {
        const float x = (float)ldexp(uniform(1.0, 2.0), -(int)(next_u64() % 120) - 1);
        if (!same_f(unit_ffn_erff_slow(x), unit_ffn_erff(x)) || !same_f(unit_ffn_tanhf_slow(-x), unit_ffn_tanhf(-x)))
            bad++;
    }
    th_check(!bad, "erff/tanhf slow == fast on %d tiny x (2^-121 .. 2^-1) (%d differ)", n, bad);
}

/* ---- pe.h: float functions against the double ones ---- */
static void test_pe_float(void)
{
    int i, bad = 0, n = 0, skipped = 0;
    double worst = 0.0;
    for (i = 0; i < 3000; i++) {
        /* |a| from 2^-30 to 2^40, both signs: the reduction's small and large branches */
        const float a = (float)(ldexp(uniform(1.0, 2.0), (int)(next_u64() % 70) - 30) *
                                (next_u64() & 1 ? -1.0 : 1.0));
        const double s = unit_pe_sin((double)a), c = unit_pe_cos((double)a);
        if (!float_round_safe(s) || !float_round_safe(c)) { skipped++; continue; }
        n++;
        if ((!same_f(unit_pe_sinf(a), (float)s) || !same_f(unit_pe_cosf(a), (float)c)) && !bad++)
            worst = (double)a;
    }
    th_check(!bad, "pe__sinf/pe__cosf == (float)pe__sin/pe__cos, %d a (%d midpoints skipped; "
             "%d differ, first %a)", n, skipped, bad, worst);
    bad = n = skipped = 0;
    for (i = 0; i < 3000; i++) {
        const double x = ldexp(uniform(1.0, 2.0), (int)(next_u64() % 80) - 30) *
                         (next_u64() & 1 ? -1.0 : 1.0);
        const double s = unit_pe_sin(x), c = unit_pe_cos(x);
        float fs, fc;
        if (!float_round_safe(s) || !float_round_safe(c)) { skipped++; continue; }
        n++;
        unit_pe_sincos_d2f(x, &fs, &fc);
        if ((!same_f(fs, (float)s) || !same_f(fc, (float)c)) && !bad++) worst = x;
    }
    th_check(!bad, "pe__sincos_d2f == (float)pe__sin/pe__cos, %d x (%d midpoints skipped; "
             "%d differ, first %a)", n, skipped, bad, worst);
    bad = n = skipped = 0;
    for (i = 0; i < 3000; i++) {
        const float x = (float)uniform(-110.0, 90.0);
        const double e = unit_pe_exp((double)x);
        if (!float_round_safe(e)) { skipped++; continue; }
        n++;
        if ((!same_f(unit_pe_expf(x), (float)e) || !same_f(unit_pe_expf(x), unit_ffn_expf(x))) && !bad++)
            worst = (double)x;
    }
    th_check(!bad, "pe__expf == (float)pe__exp == ffn__expf, %d x in [-110, 90] (%d midpoints "
             "skipped; %d differ, first %a)", n, skipped, bad, worst);
    bad = n = skipped = 0;
    for (i = 0; i < 3000; i++) {
        const float x = (float)uniform(0.0, 8.0), y = (float)uniform(-60.0, 60.0);
        const double p = unit_pe_pow((double)x, (double)y);
        if (!float_round_safe(p)) { skipped++; continue; }
        n++;
        if (!same_f(unit_pe_powf(x, y), (float)p) && !bad++) worst = (double)x;
    }
    th_check(!bad, "pe__powf == (float)pe__pow, %d (x, y) in [0, 8] x [-60, 60] (%d midpoints "
             "skipped; %d differ, first x %a)", n, skipped, bad, worst);
}

/* ---- C99 Annex F special values ---- */

/* pow(x, y) where Annex F (F.9.4.4, C11 F.10.4.4) gives the result; *defined = 0
   elsewhere. */
static double annex_f_pow(double x, double y, int *defined)
{
    const int yint = isfinite(y) && floor(y) == y;
    const int yodd = yint && fabs(y) < 9007199254740992.0 && fmod(y, 2.0) != 0.0;
    *defined = 1;
    if (x == 1.0 || y == 0.0) return 1.0;           /* pow(+1, y), pow(x, +-0): 1, NaN too */
    if (isnan(x) || isnan(y)) return x + y;         /* otherwise NaN in, NaN out */
    if (x == 0.0) {                                 /* pow(+-0, y) */
        const double r = y < 0.0 ? HUGE_VAL : 0.0;
        return yodd ? copysign(r, x) : r;           /* odd integer y keeps the zero's sign */
    }
    if (x == -1.0 && isinf(y)) return 1.0;          /* pow(-1, +-inf) */
    if (isinf(y))                                   /* by |x| against 1 */
        return (fabs(x) < 1.0) == (y < 0.0) ? HUGE_VAL : 0.0;
    if (isinf(x)) {                                 /* pow(+-inf, y) */
        const double r = y < 0.0 ? 0.0 : HUGE_VAL;
        return x < 0.0 && yodd ? -r : r;
    }
    if (x < 0.0 && !yint) return NAN;               /* finite x < 0, finite non-integer y */
    *defined = 0;
    return 0.0;
}

static void test_pe_special(void)
{
    const double xs[] = {0.0, 0.25, 0.5, 1.0, 2.0, 3.0, 1e-310, 1e300, HUGE_VAL, NAN};
    const double ys[] = {0.0, 0.5, 1.0, 2.0, 3.0, 2.5, 7.0, 1e300, 9007199254740993.0,
                         HUGE_VAL, NAN, 1e-320};
    int i, j, sx, sy, bad = 0, n = 0, bad_sym = 0, n_sym = 0;
    for (i = 0; i < (int)(sizeof xs / sizeof xs[0]); i++)
        for (j = 0; j < (int)(sizeof ys / sizeof ys[0]); j++)
            for (sx = 0; sx < 2; sx++)
                for (sy = 0; sy < 2; sy++) {
                    const double x = sx ? -xs[i] : xs[i], y = sy ? -ys[j] : ys[j];
                    int def;
                    const double want = annex_f_pow(x, y, &def);
                    if (def) {
                        const float wf = (float)want;
                        n++;
                        if (!same_d(unit_pe_pow(x, y), want)) {
                            if (!bad++) printf("# unit_pe_pow(%a, %a) = %a, Annex F: %a\n", x, y,
                                               unit_pe_pow(x, y), want);
                        }
                        /* (float) of +-0, +-inf, 1, NaN is exact; the float inputs are
                           the same class of value where the double ones are */
                        if (fabs(x) <= (double)FLT_MAX && x != 0.0 && (double)(float)x == 0.0) continue;
                        if (!same_f(unit_pe_powf((float)x, (float)y), wf) &&
                            (double)(float)x == x && (double)(float)y == y) {
                            if (!bad++) printf("# unit_pe_powf(%a, %a) = %a, Annex F: %a\n", x, y,
                                               (double)unit_pe_powf((float)x, (float)y), want);
                        }
                    } else if (x < 0.0 && isfinite(x) && isfinite(y)) {
                        /* integer y: pow(x, y) = pow(-x, y), negated for odd y (the
                           magnitude is |x|^y in both) */
                        const int odd = fabs(y) < 9007199254740992.0 && fmod(y, 2.0) != 0.0;
                        const double p = unit_pe_pow(-x, y);
                        n_sym++;
                        if (!same_d(unit_pe_pow(x, y), odd ? -p : p)) bad_sym++;
                    }
                }
    th_check(!bad, "pe__pow/pe__powf: %d Annex F special cases (+-0, +-1, +-inf, NaN, "
             "negative x) as the Annex's rules compute them (%d differ)", n, bad);
    th_check(!bad_sym && n_sym > 0, "unit_pe_pow(x < 0, integer y) == +-pow(-x, y) by y's parity, "
             "%d cases (%d differ)", n_sym, bad_sym);

    bad = 0;
    {
        const double inf[3] = {HUGE_VAL, -HUGE_VAL, NAN};
        for (i = 0; i < 3; i++) {
            float s, c;
            const float fi = (float)inf[i];
            unit_pe_sincos_d2f(inf[i], &s, &c);
            /* F.9.1.6/F.9.1.5 (C11 F.10.1.6/5): sin, cos of +-inf: NaN (and NaN in) */
            if (!isnan(s) || !isnan(c) || !isnan(unit_pe_sinf(fi)) || !isnan(unit_pe_cosf(fi)) ||
                !isnan(unit_pe_sin(inf[i])) || !isnan(unit_pe_cos(inf[i])))
                bad++;
        }
    }
    th_check(!bad, "sin/cos (pe__sinf, pe__cosf, pe__sincos_d2f, pe__sin, pe__cos) of +-inf "
             "and NaN: NaN (Annex F) (%d differ)", bad);
}

/* ---- tiny and subnormal doubles ---- */
static void test_pe_tiny(void)
{
    int i, k, bad = 0, n = 0;
    double worst = 0.0;
    for (i = 0; i < 2000; i++, n++) {
        /* any bit pattern below 1e-270: subnormals and the smallest normals */
        const uint64_t top = dbits(1.0e-270);
        double x;
        const uint64_t u = next_u64() % top;
        memcpy(&x, &u, sizeof x);
        if (x == 0.0) continue;
        if (!same_d(unit_pe_sqrt(x), sqrt(x)) && !bad++) worst = x;
    }
    th_check(!bad, "pe__sqrt == sqrt (correctly rounded by IEC 60559) on %d x below 1e-270 "
             "(%d differ, first %a)", n, bad, worst);
    bad = 0;
    for (k = -1074; k <= -1000; k++) {
        const double p = ldexp(1.0, k);            /* exact */
        /* 2^k exactly representable: the correctly rounded pow is it; log2 of it is k */
        if (!same_d(unit_pe_pow(2.0, (double)k), p) || !same_d(unit_pe_pow(0.5, (double)-k), p) ||
            !same_d(unit_pe_log2(p), (double)k))
            bad++;
    }
    /* a hair above 2^-1075 (halfway between 0 and 2^-1074): 2^-1074 */
    if (!same_d(unit_pe_pow(2.0, -1074.9999), ldexp(1.0, -1074))) bad++;
    /* m 2^-1074, m < 64: pow(x, 1) = x */
    for (k = 1; k < 64; k++) {
        const double p = ldexp((double)k, -1074);
        if (!same_d(unit_pe_pow(p, 1.0), p)) bad++;
    }
    th_check(!bad, "unit_pe_pow(2, k), unit_pe_pow(0.5, -k), unit_pe_log2(2^k) exact for k = -1074 .. "
             "-1000, pow(2, -1074.9999), pow(m 2^-1074, 1) (%d differ)", bad);
    /* Below the subnormals: 2^k for k = -1080 .. -1075 (double) and -155 .. -150 (float)
       rounds as ldexp does (IEC 60559: correctly rounded): 2^-1075 and 2^-150 lie halfway
       between 0 and the smallest subnormal and go to the even one, +0 (-0 for an odd power
       of a negative base). Through pow(2, k), pow(0.5, -k), pow(4, k / 2). */
    bad = 0;
    for (k = -1080; k <= -1070; k++) {
        const double p = ldexp(1.0, k);
        if (!same_d(unit_pe_pow(2.0, (double)k), p) || !same_d(unit_pe_pow(0.5, (double)-k), p) ||
            !same_d(unit_pe_pow(4.0, 0.5 * (double)k), p) ||
            !same_d(unit_pe_pow(-0.5, (double)-k), (-k) % 2 ? -p : p))
            bad++;
    }
    for (k = -155; k <= -145; k++) {
        const float p = ldexpf(1.0f, k);
        if (!same_f(unit_pe_powf(2.0f, (float)k), p) || !same_f(unit_pe_powf(0.5f, (float)-k), p) ||
            !same_f(unit_pe_powf(4.0f, 0.5f * (float)k), p) ||
            !same_f(unit_pe_powf(-0.5f, (float)-k), (-k) % 2 ? -p : p))
            bad++;
    }
    th_check(!bad, "pow and powf of powers of two at and below half the smallest subnormal "
             "round as ldexp (to even at the midpoint) (%d differ)", bad);
}

/* the per-path checks of features/ (FEATURE_MATH) */
#define FEATURE_MATH
#include "../features/all.inc"
#undef FEATURE_MATH

static void (*const per_ffn_path[])(void) = {
#define FEATURE_MATH_FFN
#include "../features/all.inc"
#undef FEATURE_MATH_FFN
};

int main(void)
{
    const char *pe_paths[TH_MAX_PATHS], *ffn_paths[TH_MAX_PATHS];
    int nf, p;
    th_paths(&th_pe, pe_paths, stdout);
    nf = th_paths(&th_ffn, ffn_paths, stdout);
    test_ffn_slow();
    test_pe_float();
    test_pe_special();
    test_pe_tiny();
    for (p = 0; p < nf; p++) {
        size_t k;
        th_use(&th_ffn, ffn_paths[p]);
        for (k = 0; k < sizeof per_ffn_path / sizeof per_ffn_path[0]; k++) per_ffn_path[k]();
    }
    return th_summary();
}

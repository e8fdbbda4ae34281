/* test_errors.c - every bad input of every public function of pe.h and ffn.h, and the
   aliases the headers promise to accept.

   The contract under test (the top doc blocks of pe.h and ffn.h): every function returns
   0 or a negative status, checks its arguments in a documented order (NULL, zero size,
   overflow, [odd d_model | scratch], seq length, aliasing, [id range]), and on error
   writes NOTHING to any output. So before each bad call every output buffer (and the
   arena that aliasing tests carve their buffers from) is filled with the byte 0xA5, and
   each check asserts both the exact status and that not one output byte changed.

   Valid calls (the permitted aliases, NULL biases, boundary sizes) are checked for their
   result. Their inputs are small multiples of 1/8, so every sum and product is exact in
   float32 whatever the summation order: the expected value is computed here in double
   and compared bit for bit, with no PyTorch value typed in (those live in the goldens).
   Each valid call is also checked for not writing past the end of its output.

   Output: one line per check, `ok   ...` or `FAIL ...`, then `N passed, N failed`;
   the exit status is non-zero on any failure. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../pe.h"
#include "../ffn.h"
#include "../support/harness.h"

#define check th_check

/* ---- fixtures ------------------------------------------------------------------ */

/* Small shapes: pe  batch B, seq S, d_model D, table max_len M, vocab V, context L;
                 ffn rows R, d_model D, hidden H. GUARD floats after each output catch
   writes past the end. */
enum { B = 2, S = 3, D = 4, M = 5, V = 7, L = 5, R = 3, H = 6, GUARD = 16, ARENA = 4096 };
/* Room for ffn_block's scratch, whatever ffn_block_scratch_floats asks for (up to this). */
enum { SCRATCH_CAP = 1024 };
/* Floats of the packed w1 (out H, in D) and w2 (out D, in H): panels of 16 outputs. */
enum { P1 = (H + 15) / 16 * 16 * D, P2 = (D + 15) / 16 * 16 * H };
#define SENTINEL 0xA5

/* inputs */
static float x[B * S * D], table[M * D], wte[V * D], wpe[L * D];
static int32_t ids32[B * S];
static int64_t ids64[B * S];
static float fx[R * D], w1[H * D], b1[H], w2[D * H], b2[D], w1p[P1], w2p[P2];
/* outputs (and the arena from which aliasing tests take overlapping buffers) */
static float tout[M * D + GUARD], out[B * S * D + GUARD], y[R * H + GUARD];
static float scratch[SCRATCH_CAP + GUARD], arena[ARENA];
/* their contents just before the call under test */
static float tout_s[M * D + GUARD], out_s[B * S * D + GUARD], y_s[R * H + GUARD];
static float scratch_s[SCRATCH_CAP + GUARD], arena_s[ARENA];

/* i-th small exact value: a multiple of 1/8 in [-1, 1]; sums of a few of their products
   are exact in float32, so any summation order gives the same bits. */
static float val(size_t i, size_t salt) { return (float)((int)((i * 7 + salt * 3) % 17) - 8) / 8.0f; }

/* The packed layout as ffn.h documents it, written independently of ffn_pack_weight:
   packed[(p * in + k) * 16 + j] = w[p * 16 + j][k], zero where p * 16 + j >= out. */
static void pack_ref(float *packed, const float *w, size_t in, size_t outf)
{
    size_t p, k, j, panels = (outf + 15) / 16;
    for (p = 0; p < panels; p++)
        for (k = 0; k < in; k++)
            for (j = 0; j < 16; j++)
                packed[(p * in + k) * 16 + j] = p * 16 + j < outf ? w[(p * 16 + j) * in + k] : 0.0f;
}

static void fill_inputs(void)
{
    size_t i;
    for (i = 0; i < B * S * D; i++) x[i] = val(i, 1);
    for (i = 0; i < M * D; i++) table[i] = val(i, 2);
    for (i = 0; i < V * D; i++) wte[i] = val(i, 3);
    for (i = 0; i < L * D; i++) wpe[i] = val(i, 4);
    for (i = 0; i < B * S; i++) {      /* covers 0 and V - 1 */
        ids32[i] = (int32_t)((i * 3) % V);
        ids64[i] = (int64_t)((i * 5 + 6) % V);
    }
    for (i = 0; i < R * D; i++) fx[i] = val(i, 5);
    for (i = 0; i < H * D; i++) w1[i] = val(i, 6);
    for (i = 0; i < H; i++) b1[i] = val(i, 7);
    for (i = 0; i < D * H; i++) w2[i] = val(i, 8);
    for (i = 0; i < D; i++) b2[i] = val(i, 9);
    pack_ref(w1p, w1, D, H);
    pack_ref(w2p, w2, H, D);
}

/* Remember every output buffer and the arena as they are now. */
static void snap(void)
{
    memcpy(tout_s, tout, sizeof tout);
    memcpy(out_s, out, sizeof out);
    memcpy(y_s, y, sizeof y);
    memcpy(scratch_s, scratch, sizeof scratch);
    memcpy(arena_s, arena, sizeof arena);
}

/* Reset before every test: inputs valid, every output and the arena sentinel-filled. */
static void setup(void)
{
    fill_inputs();
    memset(tout, SENTINEL, sizeof tout);
    memset(out, SENTINEL, sizeof out);
    memset(y, SENTINEL, sizeof y);
    memset(scratch, SENTINEL, sizeof scratch);
    memset(arena, SENTINEL, sizeof arena);
    snap();
}

/* Put valid input data into the arena (for a test whose buffers overlap there). */
static void put(size_t at_float, const void *src, size_t bytes)
{
    memcpy(arena + at_float, src, bytes);
    snap();
}

static int untouched(const void *p, size_t bytes)
{
    const unsigned char *b = (const unsigned char *)p;
    size_t i;
    for (i = 0; i < bytes; i++)
        if (b[i] != SENTINEL) return 0;
    return 1;
}

/* Which output buffer changed since setup()/put(), "" if none. */
static const char *written(void)
{
    if (memcmp(tout, tout_s, sizeof tout)) return "table output";
    if (memcmp(out, out_s, sizeof out)) return "out";
    if (memcmp(y, y_s, sizeof y)) return "y";
    if (memcmp(scratch, scratch_s, sizeof scratch)) return "scratch";
    if (memcmp(arena, arena_s, sizeof arena)) return "arena";
    return "";
}

static const char *pe_name(int st)
{
    switch (st) {
    case PE_OK: return "PE_OK";
    case PE_ERR_NULL: return "PE_ERR_NULL";
    case PE_ERR_ZERO_SIZE: return "PE_ERR_ZERO_SIZE";
    case PE_ERR_OVERFLOW: return "PE_ERR_OVERFLOW";
    case PE_ERR_ODD_D_MODEL: return "PE_ERR_ODD_D_MODEL";
    case PE_ERR_SEQ_TOO_LONG: return "PE_ERR_SEQ_TOO_LONG";
    case PE_ERR_ALIAS: return "PE_ERR_ALIAS";
    case PE_ERR_ID_RANGE: return "PE_ERR_ID_RANGE";
    case PE_ERR_PATH: return "PE_ERR_PATH";
    case PE_ERR_CPU: return "PE_ERR_CPU";
    case PE_ERR_ROT: return "PE_ERR_ROT";
    case PE_ERR_PARAM: return "PE_ERR_PARAM";
    case PE_ERR_POSITION: return "PE_ERR_POSITION";
    case PE_ERR_ENUM: return "PE_ERR_ENUM";
    default: return "?";
    }
}

static const char *ffn_name(int st)
{
    switch (st) {
    case FFN_OK: return "FFN_OK";
    case FFN_ERR_NULL: return "FFN_ERR_NULL";
    case FFN_ERR_ZERO_SIZE: return "FFN_ERR_ZERO_SIZE";
    case FFN_ERR_OVERFLOW: return "FFN_ERR_OVERFLOW";
    case FFN_ERR_SCRATCH: return "FFN_ERR_SCRATCH";
    case FFN_ERR_ALIAS: return "FFN_ERR_ALIAS";
    case FFN_ERR_PATH: return "FFN_ERR_PATH";
    case FFN_ERR_CPU: return "FFN_ERR_CPU";
    case FFN_ERR_ARG: return "FFN_ERR_ARG";
    case FFN_ERR_LR: return "FFN_ERR_LR";
    case FFN_ERR_MOMENTUM: return "FFN_ERR_MOMENTUM";
    case FFN_ERR_DAMPENING: return "FFN_ERR_DAMPENING";
    case FFN_ERR_WEIGHT_DECAY: return "FFN_ERR_WEIGHT_DECAY";
    case FFN_ERR_NESTEROV: return "FFN_ERR_NESTEROV";
    case FFN_ERR_BETA1: return "FFN_ERR_BETA1";
    case FFN_ERR_BETA2: return "FFN_ERR_BETA2";
    case FFN_ERR_EPS: return "FFN_ERR_EPS";
    case FFN_ERR_STEP: return "FFN_ERR_STEP";
    case FFN_ERR_THREADS: return "FFN_ERR_THREADS";
    default: return "?";
    }
}

/* A bad-input check: the exact status, and no output byte changed. */
static void bad_pe(const char *what, int got, int want)
{
    const char *w = written();
    if (got == want && !*w) check(1, "%s -> %s, outputs untouched", what, pe_name(want));
    else check(0, "%s: got %d %s, want %s%s%s", what, got, pe_name(got), pe_name(want),
               *w ? "; wrote to " : "", w);
}

static void bad_ffn(const char *what, int got, int want)
{
    const char *w = written();
    if (got == want && !*w) check(1, "%s -> %s, outputs untouched", what, ffn_name(want));
    else check(0, "%s: got %d %s, want %s%s%s", what, got, ffn_name(got), ffn_name(want),
               *w ? "; wrote to " : "", w);
}

/* One bad call: setup() (every output sentinel-filled), pre (statements putting valid
   inputs in place), the call, and bad_pe / bad_ffn (by want's prefix) on its status; the
   arguments after want name the check, printf-style. */
#define BADS(pre, call, want, ...)                                                          \
    do {                                                                                    \
        char what_[256];                                                                    \
        setup();                                                                            \
        pre;                                                                                \
        snprintf(what_, sizeof what_, __VA_ARGS__);                                         \
        (#want[0] == 'P' ? bad_pe : bad_ffn)(what_, (call), (want));                        \
    } while (0)
#define BAD(call, want, ...) BADS((void)0, call, want, __VA_ARGS__)

static uint32_t fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Index of the first element where got and want differ in bits, or -1. */
static long first_diff(const float *got, const float *want, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (fbits(got[i]) != fbits(want[i])) return (long)i;
    return -1;
}

/* A valid call: status OK, n results equal to want bit for bit, guard after them intact. */
static void good(const char *what, int got, const float *res, const float *want, size_t n,
                 const float *guard_end)
{
    long at = first_diff(res, want, n);
    int guard_ok = !guard_end || untouched(res + n, (size_t)(guard_end - (res + n)) * sizeof *res);
    if (got == 0 && at < 0 && guard_ok) {
        check(1, "%s -> OK, result exact", what);
    } else if (got != 0) {
        check(0, "%s: status %d", what, got);
    } else if (at >= 0) {
        check(0, "%s: element %ld is %.9g, want %.9g", what, at, (double)res[at], (double)want[at]);
    } else {
        check(0, "%s: wrote past the end of its output", what);
    }
}

/* A valid call after setup() and pre: good() on its result, the check named printf-style. */
#define GOOD(pre, got, res, want, n, guard_end, ...)                                        \
    do {                                                                                    \
        char what_[256];                                                                    \
        setup();                                                                            \
        pre;                                                                                \
        snprintf(what_, sizeof what_, __VA_ARGS__);                                         \
        good(what_, got, res, want, n, guard_end);                                          \
    } while (0)

/* ---- status strings and version macros ----------------------------------------------- */

#define STR_(a) #a
#define STR(a) STR_(a)

static void test_strings_and_versions(void)
{
    static const int pe_st[] = { PE_OK, PE_ERR_NULL, PE_ERR_ZERO_SIZE, PE_ERR_OVERFLOW,
                                 PE_ERR_ODD_D_MODEL, PE_ERR_SEQ_TOO_LONG, PE_ERR_ALIAS,
                                 PE_ERR_ID_RANGE, PE_ERR_PATH, PE_ERR_CPU, PE_ERR_ROT,
                                 PE_ERR_PARAM, PE_ERR_POSITION, PE_ERR_ENUM };
    static const int ffn_st[] = { FFN_OK, FFN_ERR_NULL, FFN_ERR_ZERO_SIZE, FFN_ERR_OVERFLOW,
                                  FFN_ERR_SCRATCH, FFN_ERR_ALIAS, FFN_ERR_PATH, FFN_ERR_CPU,
                                  FFN_ERR_ARG, FFN_ERR_LR, FFN_ERR_MOMENTUM,
                                  FFN_ERR_DAMPENING, FFN_ERR_WEIGHT_DECAY, FFN_ERR_NESTEROV,
                                  FFN_ERR_BETA1, FFN_ERR_BETA2, FFN_ERR_EPS, FFN_ERR_STEP,
                                  FFN_ERR_THREADS };
    static const int unknown[] = { 1, 42, -100, INT_MIN, INT_MAX };
    size_t i, j, np = sizeof pe_st / sizeof *pe_st, nf = sizeof ffn_st / sizeof *ffn_st;
    int distinct = 1;

    for (i = 0; i < np; i++) {
        const char *s = pe_status_string(pe_st[i]);
        check(s && *s && !strstr(s, "unknown"), "pe_status_string(%s) = \"%s\"",
              pe_name(pe_st[i]), s ? s : "(null)");
        for (j = 0; j < i && s; j++)
            if (pe_status_string(pe_st[j]) && strcmp(s, pe_status_string(pe_st[j])) == 0)
                distinct = 0;
    }
    check(distinct, "pe_status_string: %zu distinct strings", np);
    for (i = 0; i < sizeof unknown / sizeof *unknown; i++) {
        const char *s = pe_status_string(unknown[i]);
        check(s && strstr(s, "unknown") != NULL, "pe_status_string(%d) says unknown", unknown[i]);
    }
    {   /* PE_ERR_ENUM is the last code: the one after it must be unknown */
        const char *s = pe_status_string(PE_ERR_ENUM - 1);
        check(s && strstr(s, "unknown") != NULL, "pe_status_string(%d) says unknown",
              PE_ERR_ENUM - 1);
    }

    distinct = 1;
    for (i = 0; i < nf; i++) {
        const char *s = ffn_status_string(ffn_st[i]);
        check(s && *s && !strstr(s, "unknown"), "ffn_status_string(%s) = \"%s\"",
              ffn_name(ffn_st[i]), s ? s : "(null)");
        for (j = 0; j < i && s; j++)
            if (ffn_status_string(ffn_st[j]) && strcmp(s, ffn_status_string(ffn_st[j])) == 0)
                distinct = 0;
    }
    check(distinct, "ffn_status_string: %zu distinct strings", nf);
    for (i = 0; i < sizeof unknown / sizeof *unknown; i++) {
        const char *s = ffn_status_string(unknown[i]);
        check(s && strstr(s, "unknown") != NULL, "ffn_status_string(%d) says unknown", unknown[i]);
    }
    {   /* FFN_ERR_THREADS is the last code: the one after it must be unknown */
        const char *s = ffn_status_string(FFN_ERR_THREADS - 1);
        check(s && strstr(s, "unknown") != NULL, "ffn_status_string(%d) says unknown",
              FFN_ERR_THREADS - 1);
    }

    /* The version string is the three numbers, so the macros cannot drift apart. */
    check(strcmp(PE_VERSION_STRING, STR(PE_VERSION_MAJOR) "." STR(PE_VERSION_MINOR) "."
                 STR(PE_VERSION_PATCH)) == 0 && PE_VERSION_MAJOR >= 1,
          "PE_VERSION_STRING \"%s\" == MAJOR.MINOR.PATCH", PE_VERSION_STRING);
    check(strcmp(FFN_VERSION_STRING, STR(FFN_VERSION_MAJOR) "." STR(FFN_VERSION_MINOR) "."
                 STR(FFN_VERSION_PATCH)) == 0 && FFN_VERSION_MAJOR >= 1,
          "FFN_VERSION_STRING \"%s\" == MAJOR.MINOR.PATCH", FFN_VERSION_STRING);
}

/* ---- pe_sinusoidal_table, _exact and _fast --------------------------------------------- */

static void test_tables(void)
{
    typedef int (*table_fn)(float *, size_t, size_t);
    static const table_fn fn[3] = { pe_sinusoidal_table, pe_sinusoidal_table_exact,
                                    pe_sinusoidal_table_fast };
    static const char *const name[3] = { "pe_sinusoidal_table", "pe_sinusoidal_table_exact",
                                         "pe_sinusoidal_table_fast" };
    const size_t big = SIZE_MAX / 2, quarter = SIZE_MAX / 8;
    int k;
    for (k = 0; k < 3; k++) {
        size_t odd[3] = { 1, 3, 5 }, i;
        BAD(fn[k](NULL, M, D), PE_ERR_NULL, "%s: NULL table", name[k]);
        BAD(fn[k](tout, 0, D), PE_ERR_ZERO_SIZE, "%s: max_len 0", name[k]);
        BAD(fn[k](tout, M, 0), PE_ERR_ZERO_SIZE, "%s: d_model 0", name[k]);
        BAD(fn[k](NULL, M, 0), PE_ERR_NULL, "%s: NULL and d_model 0 (NULL is checked first)", name[k]);
        /* Overflow only in the product: each size alone is a valid size_t. */
        BAD(fn[k](tout, big, 4), PE_ERR_OVERFLOW, "%s: max_len SIZE_MAX/2 x d_model 4 (element count)", name[k]);
        BAD(fn[k](tout, quarter, 4), PE_ERR_OVERFLOW, "%s: max_len SIZE_MAX/8 x d_model 4 (bytes only)", name[k]);
        BAD(fn[k](tout, big, 3), PE_ERR_OVERFLOW, "%s: overflow with odd d_model 3 (overflow first)", name[k]);
        for (i = 0; i < 3; i++)
            BAD(fn[k](tout, M, odd[i]), PE_ERR_ODD_D_MODEL, "%s: odd d_model %zu", name[k], odd[i]);
        /* max_len 1, d 2: row 0 is sin(0), cos(0) = 0, 1 exactly in every mode, and the
           call writes exactly max_len * d_model floats. */
        {
            const float want[2] = { 0.0f, 1.0f };
            GOOD((void)0, fn[k](tout, 1, 2), tout, want, 2, tout + M * D + GUARD, "%s: max_len 1, d_model 2 is [0, 1]", name[k]);
        }
        {   /* a full table: row 0 is [0,1,0,1,...]; nothing written past M * D */
            float want[D];
            for (i = 0; i < D; i++) want[i] = (float)(i % 2);
            GOOD((void)0, fn[k](tout, M, D), tout, want, D, NULL, "%s: (%d, %d) row 0 is [0, 1, ...], no overrun", name[k], M, D);
            check(untouched(tout + M * D, GUARD * sizeof(float)),
                  "%s: writes exactly max_len * d_model floats", name[k]);
        }
    }
}

/* ---- sin and cos on every path ------------------------------------------------------
   pe_rope_cache at position 1 takes sin and cos of the inv_freq values themselves (f32(1) *
   inv is inv): each path's vector lanes against the scalar specification, bit for bit, on
   angles whose fast double evaluation cannot decide the rounding (found by searching;
   the first, 9830.39844, is the one float in [2^-8, 2^20) whose fast double, unfused,
   rounds to the wrong float: the vector code must hand them to the scalar code), past
   the fast range (2^20), signed
   zeros, a subnormal, huge values, infinities and NaN, in every lane position. */
static void test_sincos_lanes(void)
{
    static const uint32_t hard[] = {0x46199998u, 0x3d0650eau, 0x3f8626a5u, 0x3faa2672u,
                                    0x4475404cu, 0x49800000u, 0x497fffffu, 0x00000001u,
                                    0x80000000u, 0x00000000u, 0x7f7fffffu, 0xff7fffffu,
                                    0x7f800000u, 0xff800000u, 0x7fc00000u, 0x4f000000u};
    enum { N = 61 };     /* not a multiple of 4 or 8: the scalar tails too */
    float a[N], c0[N], s0[N], c1[N], s1[N];
    const char *path = pe_path();
    size_t i, bad = 0;
    int st;
    for (i = 0; i < N; i++) {
        const uint32_t u = i % 3 == 0 ? hard[i / 3 % 16]
                                      : (uint32_t)(0x3a000000u + i * 0x0137b5a1u);
        memcpy(&a[i], &u, sizeof a[i]);
        if (i % 5 == 4) a[i] = -a[i];
    }
    a[N - 1] = -0.0f;                       /* (in a vector and in a tail) */
    a[N - 8] = -0.0f;
    pe_set_path("scalar");
    st = pe_rope_cache(c0, s0, a, 2 * N, 1.0f, NULL, 1, 1);
    pe_set_path(path);
    st |= pe_rope_cache(c1, s1, a, 2 * N, 1.0f, NULL, 1, 1);
    for (i = 0; i < N; i++)
        if (!((c0[i] != c0[i] && c1[i] != c1[i]) || fbits(c0[i]) == fbits(c1[i])) ||
            !((s0[i] != s0[i] && s1[i] != s1[i]) || fbits(s0[i]) == fbits(s1[i])))
            bad++;
    check(st == PE_OK && bad == 0, "pe_rope_cache's sin/cos on path %s equal the scalar "
          "specification's on hard, special and out-of-range angles (%zu of %d differ)",
          path, bad, N);
    for (i = 0, bad = 0; i < N; i++) {      /* C99 Annex F's special values */
        const uint32_t u = fbits(a[i]) & 0x7fffffffu;
        if (u == 0) bad += fbits(s1[i]) != fbits(a[i]) || fbits(c1[i]) != 0x3f800000u;
        if (u >= 0x7f800000u) bad += s1[i] == s1[i] || c1[i] == c1[i];
    }
    check(bad == 0, "sin(+-0) = +-0, cos(+-0) = 1, sin and cos of +-inf and NaN are NaN "
          "(path %s)", path);
}

/* ---- RoPE: pe_rope_inv_freq, pe_rope_cache(_exact), pe_rope_apply(_direct) ------------ */

/* x (B, S, 1 head, D) in x; the cache (M rows, D/2) in rope_cos / rope_sin; positions
   (B, S) in rope_pos; outputs: inv_freq -> y, cache -> tout (cos) and tout + M*D/2 (sin),
   rotation -> out. Valid results checked here are those fixed by the formula alone
   (position 0: cos 1, sin 0, a rotation by nothing); torch's values are the goldens'. */
static float rope_cos[M * D / 2], rope_sin[M * D / 2], rope_inv[D / 2];
static int64_t rope_pos[B * S];

static void rope_inputs(void)
{
    size_t i;
    for (i = 0; i < M * D / 2; i++) {
        rope_cos[i] = i < D / 2 ? 1.0f : val(i, 10);
        rope_sin[i] = i < D / 2 ? 0.0f : val(i, 11);
    }
    for (i = 0; i < D / 2; i++) rope_inv[i] = 1.0f / (float)(i + 1);   /* > 0: sin(+0) */
    for (i = 0; i < B * S; i++) rope_pos[i] = (int64_t)(i % M);
}

static void test_rope(void)
{
    const size_t big = SIZE_MAX / 2, H2 = M * D / 2;
    float *cs = tout, *sn = tout + H2;
    const double nan = (double)NAN, inf = (double)INFINITY;
    const double thetas[4] = { 0.0, -1.0, nan, inf };
    const int64_t maxp = PE_ROPE_MAX_POS;
    char what[160];
    size_t i;
    int k;

    /* pe_rope_inv_freq */
    BAD(pe_rope_inv_freq(NULL, D, 10000.0), PE_ERR_NULL, "pe_rope_inv_freq: NULL");
    BAD(pe_rope_inv_freq(y, 0, 10000.0), PE_ERR_ZERO_SIZE, "pe_rope_inv_freq: rot 0");
    BAD(pe_rope_inv_freq(y, 3, 10000.0), PE_ERR_ROT, "pe_rope_inv_freq: odd rot 3");
    for (k = 0; k < 4; k++)
        BAD(pe_rope_inv_freq(y, D, thetas[k]), PE_ERR_PARAM, "pe_rope_inv_freq: theta %g", thetas[k]);
    BAD(pe_rope_inv_freq(y, D, 1e39), PE_ERR_PARAM, "pe_rope_inv_freq: theta 1e39 (infinite as a float)");
    setup();
    {   /* frequency 0: theta^0 = 1 exactly; writes rot/2 floats */
        int st = pe_rope_inv_freq(y, D, 10000.0);
        check(st == 0 && y[0] == 1.0f && y[1] > 0.0f && y[1] < 1.0f && untouched(y + 2, 16 * sizeof *y),
              "pe_rope_inv_freq: rot 4: [1, theta^-1/2], nothing past rot/2");
    }

    /* pe_rope_cache and pe_rope_cache_exact */
    for (k = 0; k < 2; k++) {
        const char *name = k ? "pe_rope_cache_exact" : "pe_rope_cache";
#define CACHE(c_, s_, rot_, pos_, start_, n_)                                                 \
    (k ? pe_rope_cache_exact(c_, s_, rot_, 10000.0, pos_, start_, n_)                      \
       : pe_rope_cache(c_, s_, rope_inv, rot_, 1.0f, pos_, start_, n_))
        rope_inputs();
        BAD(CACHE(NULL, sn, D, NULL, 0, M), PE_ERR_NULL, "%s: NULL cos", name);
        BAD(CACHE(cs, NULL, D, NULL, 0, M), PE_ERR_NULL, "%s: NULL sin", name);
        if (!k)
            BAD(pe_rope_cache(cs, sn, NULL, D, 1.0f, NULL, 0, M), PE_ERR_NULL, "pe_rope_cache: NULL inv_freq");
        BAD(CACHE(cs, sn, D, NULL, 0, 0), PE_ERR_ZERO_SIZE, "%s: n 0", name);
        BAD(CACHE(cs, sn, 0, NULL, 0, M), PE_ERR_ZERO_SIZE, "%s: rot 0", name);
        BAD(CACHE(cs, sn, D, NULL, 0, big), PE_ERR_OVERFLOW, "%s: n SIZE_MAX/2 (bytes overflow)", name);
        BAD(CACHE(cs, sn, 3, NULL, 0, M), PE_ERR_ROT, "%s: odd rot 3", name);
        BAD(CACHE(cs, cs + 1, D, NULL, 0, M), PE_ERR_ALIAS, "%s: cos overlaps sin", name);
        BADS(put(0, rope_pos, sizeof rope_pos), CACHE(arena + 2, sn, D, (const int64_t *)(void *)arena, 0, B * S), PE_ERR_ALIAS, "%s: cos overlaps pos", name);
        BAD(CACHE(cs, sn, D, NULL, -1, M), PE_ERR_POSITION, "%s: negative start", name);
        BAD(CACHE(cs, sn, D, NULL, maxp - 3, M), PE_ERR_POSITION, "%s: start + n - 1 past PE_ROPE_MAX_POS", name);
        BADS(rope_pos[M - 1] = INT64_MAX, CACHE(cs, sn, D, rope_pos, 1, M), PE_ERR_POSITION, "%s: start + pos[i] overflows int64", name);
        rope_inputs();
        BADS(rope_pos[M - 1] = -1, CACHE(cs, sn, D, rope_pos, 0, M), PE_ERR_POSITION, "%s: a negative position in pos (the last)", name);
        rope_inputs();
        setup();
        snprintf(what, sizeof what, "%s: position 0 is cos 1, sin 0, nothing past n rows", name);
        {
            const float one[2] = { 1.0f, 1.0f }, zero[2] = { 0.0f, 0.0f };
            int st = CACHE(cs, sn, D, NULL, 0, 1);
            good(what, st, cs, one, 2, cs + H2);
            good(what, st, sn, zero, 2, sn + H2);
        }
#undef CACHE
    }
    rope_inputs();
    BAD(pe_rope_cache(cs, sn, rope_inv, D, NAN, NULL, 0, M), PE_ERR_PARAM, "pe_rope_cache: attention factor NaN");
    BAD(pe_rope_cache(cs, sn, rope_inv, D, 0.0f, NULL, 0, M), PE_ERR_PARAM, "pe_rope_cache: attention factor 0");
    BAD(pe_rope_cache(arena, sn, arena + 1, D, 1.0f, NULL, 0, M), PE_ERR_ALIAS, "pe_rope_cache: cos overlaps inv_freq");
    for (k = 0; k < 4; k++)
        BAD(pe_rope_cache_exact(cs, sn, D, thetas[k], NULL, 0, M), PE_ERR_PARAM, "pe_rope_cache_exact: theta %g", thetas[k]);

    /* pe_rope_apply (from the cache) and pe_rope_apply_direct */
    for (k = 0; k < 2; k++) {
        const char *name = k ? "pe_rope_apply_direct" : "pe_rope_apply";
#define APPLY(o_, x_, b_, s_, h_, d_, r_, lay_, pair_, pos_, start_)                          \
    (k ? pe_rope_apply_direct(o_, x_, b_, s_, h_, d_, r_, lay_, pair_, rope_inv, 1.0f, pos_, start_) \
       : pe_rope_apply(o_, x_, b_, s_, h_, d_, r_, lay_, pair_, rope_cos, rope_sin, M, pos_, start_))
        const int BS = PE_ROPE_BSHD, HF = PE_ROPE_HALF;
        rope_inputs();
        BAD(APPLY(NULL, x, B, S, 1, D, D, BS, HF, NULL, 0), PE_ERR_NULL, "%s: NULL out", name);
        BAD(APPLY(out, NULL, B, S, 1, D, D, BS, HF, NULL, 0), PE_ERR_NULL, "%s: NULL x", name);
        {
            const size_t sz[5][5] = { { 0, S, 1, D, D }, { B, 0, 1, D, D }, { B, S, 0, D, D },
                                      { B, S, 1, 0, D }, { B, S, 1, D, 0 } };
            for (i = 0; i < 5; i++)
                BAD(APPLY(out, x, sz[i][0], sz[i][1], sz[i][2], sz[i][3], sz[i][4], BS, HF, NULL, 0), PE_ERR_ZERO_SIZE, "%s: size %zu (batch, seq, heads, head_dim, rot) is 0", name, i);
        }
        BAD(APPLY(out, x, big, 1, 2, 4, 4, BS, HF, NULL, 0), PE_ERR_OVERFLOW, "%s: batch x heads x head_dim overflows", name);
        BAD(APPLY(out, x, B, S, 1, D, 3, BS, HF, NULL, 0), PE_ERR_ROT, "%s: odd rot 3", name);
        BAD(APPLY(out, x, B, S, 1, D, 6, BS, HF, NULL, 0), PE_ERR_ROT, "%s: rot 6 > head_dim 4", name);
        BAD(APPLY(out, x, B, S, 1, D, D, 0, HF, NULL, 0), PE_ERR_ENUM, "%s: layout 0", name);
        BAD(APPLY(out, x, B, S, 1, D, D, 3, HF, NULL, 0), PE_ERR_ENUM, "%s: layout 3", name);
        BAD(APPLY(out, x, B, S, 1, D, D, BS, 0, NULL, 0), PE_ERR_ENUM, "%s: pairing 0", name);
        BADS(put(0, x, sizeof x), APPLY(arena + 1, arena, B, S, 1, D, D, BS, HF, NULL, 0), PE_ERR_ALIAS, "%s: out overlaps x (not equal)", name);
        BADS(put(64, rope_pos, sizeof rope_pos), APPLY(arena + 60, x, B, S, 1, D, D, BS, HF, (const int64_t *)(void *)(arena + 64), 0), PE_ERR_ALIAS, "%s: out overlaps pos", name);
        BAD(APPLY(out, x, B, S, 1, D, D, BS, HF, NULL, -1), PE_ERR_POSITION, "%s: negative start", name);
        BADS(rope_pos[B * S - 1] = -1, APPLY(out, x, B, S, 1, D, D, BS, HF, rope_pos, 0), PE_ERR_POSITION, "%s: a negative position in pos (the last)", name);
        rope_inputs();
        BAD(APPLY(out, x, B, S, 1, D, D, BS, HF, NULL, k ? maxp - 1 : (int64_t)(M - S + 1)), PE_ERR_POSITION, "%s: start + s past %s", name, k ? "PE_ROPE_MAX_POS" : "the cache (M rows)");
        setup();
        snprintf(what, sizeof what, "%s: in place (out == x) at position 0 is the identity", name);
        {
            static float xin[B * S * D];
            for (i = 0; i < B * S; i++) rope_pos[i] = 0;
            memcpy(xin, x, sizeof x);
            good(what, APPLY(xin, xin, B, S, 1, D, D, BS, PE_ROPE_INTERLEAVED, rope_pos, 0), xin, x,
                 B * S * D, NULL);
        }
        rope_inputs();
        setup();
        snprintf(what, sizeof what, "%s: rot 2 of head_dim 4: dims 2, 3 pass through", name);
        {
            int st = APPLY(out, x, B * S, 1, 1, D, 2, PE_ROPE_BHSD, HF, rope_pos, 0);
            int ok = st == 0 && untouched(out + B * S * D, GUARD * sizeof *out);
            for (i = 0; ok && i < B * S; i++)
                ok = fbits(out[i * D + 2]) == fbits(x[i * D + 2]) &&
                     fbits(out[i * D + 3]) == fbits(x[i * D + 3]);
            check(ok, "%s", what);
        }
#undef APPLY
    }
    rope_inputs();
    BAD(pe_rope_apply(out, x, B, S, 1, D, D, PE_ROPE_BSHD, PE_ROPE_HALF, NULL, rope_sin, M, NULL, 0), PE_ERR_NULL, "pe_rope_apply: NULL cos");
    BAD(pe_rope_apply(out, x, B, S, 1, D, D, PE_ROPE_BSHD, PE_ROPE_HALF, rope_cos, rope_sin, 0, NULL, 0), PE_ERR_ZERO_SIZE, "pe_rope_apply: cache_len 0");
    BAD((rope_pos[B * S - 1] = M, pe_rope_apply(out, x, B, S, 1, D, D, PE_ROPE_BSHD, PE_ROPE_HALF, rope_cos, rope_sin, M, rope_pos, 0)), PE_ERR_POSITION, "pe_rope_apply: pos[last] == cache_len");
    rope_inputs();
    BADS(put(0, rope_cos, sizeof rope_cos), pe_rope_apply(arena + 4, x, B, S, 1, D, D, PE_ROPE_BSHD, PE_ROPE_HALF, arena, rope_sin, M, NULL, 0), PE_ERR_ALIAS, "pe_rope_apply: out overlaps cos");
    BAD(pe_rope_apply_direct(out, x, B, S, 1, D, D, PE_ROPE_BSHD, PE_ROPE_HALF, NULL, 1.0f, NULL, 0), PE_ERR_NULL, "pe_rope_apply_direct: NULL inv_freq");
    BAD(pe_rope_apply_direct(out, x, B, S, 1, D, D, PE_ROPE_BSHD, PE_ROPE_HALF, rope_inv, INFINITY, NULL, 0), PE_ERR_PARAM, "pe_rope_apply_direct: attention factor inf");
    BADS(put(0, rope_inv, sizeof rope_inv), pe_rope_apply_direct(arena, x, B, S, 1, D, D, PE_ROPE_BSHD, PE_ROPE_HALF, arena + 1, 1.0f, NULL, 0), PE_ERR_ALIAS, "pe_rope_apply_direct: out overlaps inv_freq");
}

/* ---- ALiBi: pe_alibi_slopes, pe_alibi_bias ------------------------------------------- */

static void test_alibi(void)
{
    static const float sl[2] = { 0.5f, 0.25f };
    char what[160];
    int m;
    for (m = PE_ALIBI_PAPER; m <= PE_ALIBI_BLOOM; m++) {
        BAD(pe_alibi_slopes(NULL, 8, m), PE_ERR_NULL, "pe_alibi_slopes mode %d: NULL", m);
        BAD(pe_alibi_slopes(y, 0, m), PE_ERR_ZERO_SIZE, "pe_alibi_slopes mode %d: heads 0", m);
        BAD(pe_alibi_slopes(y, SIZE_MAX, m), PE_ERR_OVERFLOW, "pe_alibi_slopes mode %d: heads SIZE_MAX", m);
        setup();
        snprintf(what, sizeof what, "pe_alibi_slopes mode %d: 8 heads are 2^-1 .. 2^-8", m);
        {   /* for 8 heads the base is 1/2: every slope a power of two, exact in any mode */
            const float want[8] = { 0.5f, 0.25f, 0.125f, 0.0625f, 0.03125f, 0.015625f,
                                    0.0078125f, 0.00390625f };
            good(what, pe_alibi_slopes(y, 8, m), y, want, 8, y + R * H + GUARD);
        }
    }
    BAD(pe_alibi_slopes(y, 8, 0), PE_ERR_ENUM, "pe_alibi_slopes: mode 0");
    BAD(pe_alibi_slopes(y, 8, 3), PE_ERR_ENUM, "pe_alibi_slopes: mode 3");

    BAD(pe_alibi_bias(NULL, sl, 2, 3, 4, 0, 1), PE_ERR_NULL, "pe_alibi_bias: NULL bias");
    BAD(pe_alibi_bias(out, NULL, 2, 3, 4, 0, 1), PE_ERR_NULL, "pe_alibi_bias: NULL slopes");
    BAD(pe_alibi_bias(out, sl, 0, 3, 4, 0, 1), PE_ERR_ZERO_SIZE, "pe_alibi_bias: heads 0");
    BAD(pe_alibi_bias(out, sl, 2, 0, 4, 0, 1), PE_ERR_ZERO_SIZE, "pe_alibi_bias: q_len 0");
    BAD(pe_alibi_bias(out, sl, 2, 3, 0, 0, 1), PE_ERR_ZERO_SIZE, "pe_alibi_bias: k_len 0");
    BAD(pe_alibi_bias(out, sl, 2, SIZE_MAX / 4, 4, 0, 1), PE_ERR_OVERFLOW, "pe_alibi_bias: heads x q x k overflows");
    BAD(pe_alibi_bias(out, sl, 2, 3, 4, SIZE_MAX - 1, 1), PE_ERR_OVERFLOW, "pe_alibi_bias: offset + q_len overflows");
    BAD(pe_alibi_bias(out, sl, 2, 3, 4, 0, 2), PE_ERR_ENUM, "pe_alibi_bias: causal 2");
    BADS(put(0, sl, sizeof sl), pe_alibi_bias(arena + 1, arena, 2, 3, 4, 0, 1), PE_ERR_ALIAS, "pe_alibi_bias: bias overlaps slopes");
    setup();
    {   /* 2 heads, q 3 at positions 1..3 (offset 1), k 4: -slope * |i + 1 - j|, -inf above */
        float want[2 * 3 * 4];
        size_t h, i, j;
        for (h = 0; h < 2; h++)
            for (i = 0; i < 3; i++)
                for (j = 0; j < 4; j++)
                    want[(h * 3 + i) * 4 + j] = j > i + 1 ? -INFINITY
                        : j == i + 1 ? 0.0f : -sl[h] * (float)(i + 1 - j);
        good("pe_alibi_bias: (2, 3, 4), offset 1, causal: exact, +0 on the diagonal",
             pe_alibi_bias(out, sl, 2, 3, 4, 1, 1), out, want, 24, out + B * S * D + GUARD);
    }
    {   /* 37 keys: the vector rows (4, 8, 16 keys at a time) and a tail of 5 on every path;
           the queries at 5..7 (the diagonal inside a vector), and at 2^24 - 2 .. 2^24,
           where the vector rows stop (the last query's row is scalar). A negative slope:
           slope * +0 is -0 on its diagonal. Expected: torch's slope * -|d| with the
           integer distance converted to float (exact: every distance is at most 2^24). */
        static const float sl2[2] = { 0.5f, -0.25f };
        static const size_t offs[2] = { 5, ((size_t)1 << 24) - 2 };
        enum { QA = 3, KA = 37 };
        float want[2 * QA * KA];
        size_t o, h, i, j;
        int c;
        for (o = 0; o < 2; o++)
            for (c = 0; c <= 1; c++) {
                for (h = 0; h < 2; h++)
                    for (i = 0; i < QA; i++)
                        for (j = 0; j < KA; j++) {
                            const size_t qp = i + offs[o], d = j > qp ? j - qp : qp - j;
                            want[(h * QA + i) * KA + j] = c && j > qp ? -INFINITY
                                : sl2[h] * (d ? -(float)d : 0.0f);
                        }
                GOOD((void)0, pe_alibi_bias(scratch, sl2, 2, QA, KA, offs[o], c), scratch, want, 2 * QA * KA, scratch + SCRATCH_CAP + GUARD, "pe_alibi_bias: (2, %d, %d), offset %zu, causal %d: " "exact, signed zeros", QA, KA, offs[o], c);
            }
    }
}

/* ---- pe_timestep_embedding ------------------------------------------------------------ */

static void test_timestep(void)
{
    static const float ts[3] = { 0.0f, 1.0f, 10.0f };
    const double nan = (double)NAN, inf = (double)INFINITY;
    const double bad_period[4] = { 0.0, -1.0, nan, inf };
    int k;
    BAD(pe_timestep_embedding(NULL, ts, 3, 4, 0, 1, 1, 1e4), PE_ERR_NULL, "pe_timestep_embedding: NULL out");
    BAD(pe_timestep_embedding(out, NULL, 3, 4, 0, 1, 1, 1e4), PE_ERR_NULL, "pe_timestep_embedding: NULL timesteps");
    BAD(pe_timestep_embedding(out, ts, 0, 4, 0, 1, 1, 1e4), PE_ERR_ZERO_SIZE, "pe_timestep_embedding: n 0");
    BAD(pe_timestep_embedding(out, ts, 3, 0, 0, 1, 1, 1e4), PE_ERR_ZERO_SIZE, "pe_timestep_embedding: dim 0");
    BAD(pe_timestep_embedding(out, ts, SIZE_MAX / 2, 4, 0, 1, 1, 1e4), PE_ERR_OVERFLOW, "pe_timestep_embedding: n x dim overflows");
    BAD(pe_timestep_embedding(out, ts, 3, 4, 2, 1, 1, 1e4), PE_ERR_ENUM, "pe_timestep_embedding: flip 2");
    for (k = 0; k < 4; k++)
        BAD(pe_timestep_embedding(out, ts, 3, 4, 0, 1, 1, bad_period[k]), PE_ERR_PARAM, "pe_timestep_embedding: max_period %g", bad_period[k]);
    BAD(pe_timestep_embedding(out, ts, 3, 4, 0, nan, 1, 1e4), PE_ERR_PARAM, "pe_timestep_embedding: shift NaN");
    BAD(pe_timestep_embedding(out, ts, 3, 4, 0, 1, inf, 1e4), PE_ERR_PARAM, "pe_timestep_embedding: scale inf");
    BADS(put(0, ts, sizeof ts), pe_timestep_embedding(arena + 2, arena, 3, 4, 0, 1, 1, 1e4), PE_ERR_ALIAS, "pe_timestep_embedding: out overlaps timesteps");
    setup();
    {   /* t = 0: every angle is 0, so [sin | cos] = [0, 0 | 1, 1] and the odd column 0 */
        static const float zero_t[2] = { 0.0f, 0.0f };
        const float want[10] = { 0, 0, 1, 1, 0, 0, 0, 1, 1, 0 };
        good("pe_timestep_embedding: t = 0, dim 5: [0 0 1 1 0], nothing past n * dim",
             pe_timestep_embedding(out, zero_t, 2, 5, 0, 1, 1, 1e4), out, want, 10,
             out + B * S * D + GUARD);
    }
}

/* ---- RoPE scaling: pe_rope_scaling_init, pe_rope_inv_freq_scaled ---------------------- */

/* A valid config of each type for rot 8 (inv_freq -> y, attention factor -> out[0]):
   linear factor 2; dynamic factor 2, max_pos 16; yarn factor 4, original 64; llama3
   factor 8, low 1, high 4, original 64; longrope original 16, max_pos 64, short factors
   1 and long factors 2 (4 each). */
static float rs_short[4] = { 1.0f, 1.0f, 1.0f, 1.0f }, rs_long[4] = { 2.0f, 2.0f, 2.0f, 2.0f };

static pe_rope_scaling rs_config(int type)
{
    pe_rope_scaling s;
    int st = pe_rope_scaling_init(&s, type == 0 || type > PE_ROPE_SCALING_LONGROPE
                                          ? PE_ROPE_SCALING_LINEAR : type);
    if (st != PE_OK) check(0, "rs_config: pe_rope_scaling_init failed");
    s.type = type;
    s.factor = type == PE_ROPE_SCALING_YARN ? 4.0 : type == PE_ROPE_SCALING_LLAMA3 ? 8.0 : 2.0;
    s.max_position_embeddings = type == PE_ROPE_SCALING_LONGROPE ? 64 : 16;
    s.original_max_position_embeddings = type == PE_ROPE_SCALING_LONGROPE ? 16 : 64;
    s.low_freq_factor = 1.0;
    s.high_freq_factor = 4.0;
    s.short_factor = rs_short;
    s.long_factor = rs_long;
    return s;
}

#define RS(inv_, af_, rot_, theta_, sc_, seq_)                                                 \
    pe_rope_inv_freq_scaled(inv_, af_, rot_, theta_, sc_, seq_)

static void test_rope_scaling(void)
{
    const double nan = (double)NAN, inf = (double)INFINITY;
    const double bad[5] = { 0.0, -1.0, nan, inf, 1e39 };
    char what[200];
    pe_rope_scaling s, s0;
    float *af = out;
    int t, k;

    /* pe_rope_scaling_init */
    BAD(pe_rope_scaling_init(NULL, PE_ROPE_SCALING_YARN), PE_ERR_NULL, "pe_rope_scaling_init: NULL");
    memset(&s, SENTINEL, sizeof s);
    memcpy(&s0, &s, sizeof s);
    check(pe_rope_scaling_init(&s, 7) == PE_ERR_ENUM && memcmp(&s, &s0, sizeof s) == 0,
          "pe_rope_scaling_init: type 7 -> PE_ERR_ENUM, struct untouched");
    check(pe_rope_scaling_init(&s, 0) == PE_ERR_ENUM, "pe_rope_scaling_init: type 0 -> PE_ERR_ENUM");
    check(pe_rope_scaling_init(&s, PE_ROPE_SCALING_YARN) == PE_OK && s.type == PE_ROPE_SCALING_YARN &&
          s.beta_fast == 32.0 && s.beta_slow == 1.0 && s.truncate == 1 && s.factor == 0.0 &&
          s.mscale == 0.0 && s.mscale_all_dim == 0.0 && s.attention_factor == 0.0 &&
          s.short_factor == NULL && s.long_factor == NULL && s.original_max_position_embeddings == 0,
          "pe_rope_scaling_init: HF's defaults (beta_fast 32, beta_slow 1, truncate 1), the rest 0");

    /* every type: the checks they share */
    for (t = PE_ROPE_SCALING_DEFAULT; t <= PE_ROPE_SCALING_LONGROPE; t++) {
        s = rs_config(t);
        BAD(RS(NULL, af, 8, 10000.0, &s, 32), PE_ERR_NULL, "pe_rope_inv_freq_scaled type %d: NULL inv_freq", t);
        BAD(RS(y, NULL, 8, 10000.0, &s, 32), PE_ERR_NULL, "pe_rope_inv_freq_scaled type %d: NULL attention_factor", t);
        BAD(RS(y, af, 8, 10000.0, NULL, 32), PE_ERR_NULL, "pe_rope_inv_freq_scaled type %d: NULL scaling", t);
        BAD(RS(y, af, 0, 10000.0, &s, 32), PE_ERR_ZERO_SIZE, "pe_rope_inv_freq_scaled type %d: rot 0", t);
        BAD(RS(y, af, SIZE_MAX - 1, 10000.0, &s, 32), PE_ERR_OVERFLOW, "pe_rope_inv_freq_scaled type %d: rot 2^64-2 (rot/2 floats overflow)", t);
        BAD(RS(y, af, 7, 10000.0, &s, 32), PE_ERR_ROT, "pe_rope_inv_freq_scaled type %d: odd rot 7", t);
        for (k = 0; k < 5; k++) {
            BAD(RS(y, af, 8, bad[k], &s, 32), PE_ERR_PARAM, "pe_rope_inv_freq_scaled type %d: theta %g", t, bad[k]);
            if (t == PE_ROPE_SCALING_DEFAULT || t == PE_ROPE_SCALING_LONGROPE) continue;
            s.factor = bad[k];
            BAD(RS(y, af, 8, 10000.0, &s, 32), PE_ERR_PARAM, "pe_rope_inv_freq_scaled type %d: factor %g", t, bad[k]);
            s = rs_config(t);
        }
        BAD(RS(arena, arena + 3, 8, 10000.0, &s, 32), PE_ERR_ALIAS, "pe_rope_inv_freq_scaled type %d: attention factor overlaps inv_freq", t);
        setup();
        {   /* valid: rot/2 floats written, nothing past them; a finite factor > 0 */
            int st = RS(y, af, 8, 10000.0, &s, 32);
            snprintf(what, sizeof what, "pe_rope_inv_freq_scaled type %d: valid, writes rot/2 floats", t);
            check(st == PE_OK && untouched(y + 4, 16 * sizeof *y) && untouched(out + 1, 16 * sizeof *out) &&
                  af[0] > 0.0f && af[0] < 2.0f && y[0] > 0.0f && y[3] > 0.0f && y[3] < y[0], "%s", what);
        }
    }
    for (k = 0; k < 2; k++) {
        s = rs_config(k ? 7 : 0);
        BAD(RS(y, af, 8, 10000.0, &s, 32), PE_ERR_ENUM, "pe_rope_inv_freq_scaled: type %d", k ? 7 : 0);
    }

    /* the default type, linear factor 1, dynamic at or below max_pos: HF's default */
    {
        float want[4], got[4];
        int st, ok;
        pe_rope_inv_freq(want, 8, 10000.0);
        s = rs_config(PE_ROPE_SCALING_DEFAULT);
        st = RS(got, af, 8, 10000.0, &s, 1);
        check(st == PE_OK && first_diff(got, want, 4) < 0 && af[0] == 1.0f,
              "pe_rope_inv_freq_scaled default: pe_rope_inv_freq's bits, attention factor 1");
        s = rs_config(PE_ROPE_SCALING_LINEAR);
        s.factor = 1.0;
        st = RS(got, af, 8, 10000.0, &s, 1);
        check(st == PE_OK && first_diff(got, want, 4) < 0, "pe_rope_inv_freq_scaled linear factor 1: default");
        s = rs_config(PE_ROPE_SCALING_DYNAMIC);
        st = RS(got, af, 8, 10000.0, &s, 16);
        check(st == PE_OK && first_diff(got, want, 4) < 0,
              "pe_rope_inv_freq_scaled dynamic: seq_len == max_pos: default (the bracket is 1)");
        st = RS(got, af, 8, 10000.0, &s, 17);
        check(st == PE_OK && got[0] == 1.0f && got[3] < want[3],
              "pe_rope_inv_freq_scaled dynamic: seq_len > max_pos: a larger base, lower frequencies");
        s = rs_config(PE_ROPE_SCALING_DYNAMIC);
        s.dynamic_as_module = 1;
        st = RS(got, af, 8, 10000.0, &s, 16);
        check(st == PE_OK && first_diff(got, want, 4) < 0,
              "pe_rope_inv_freq_scaled dynamic as the module: seq_len == max_pos: default");
        st = RS(got, af, 8, 10000.0, &s, 17);
        check(st == PE_OK && got[0] == 1.0f && got[3] < want[3],
              "pe_rope_inv_freq_scaled dynamic as the module: seq_len > max_pos: a larger base");
        /* longrope: short factors 1 give the default, long factors 2 half of it (exact) */
        s = rs_config(PE_ROPE_SCALING_LONGROPE);
        st = RS(got, af, 8, 10000.0, &s, 16);
        check(st == PE_OK && first_diff(got, want, 4) < 0,
              "pe_rope_inv_freq_scaled longrope: seq_len == original: the short factors");
        st = RS(got, af, 8, 10000.0, &s, 17);
        for (k = 0, ok = st == PE_OK; ok && k < 4; k++) ok = got[k] == want[k] / 2.0f;
        check(ok, "pe_rope_inv_freq_scaled longrope: seq_len == original + 1: the long factors");
    }

    /* type-specific sizes */
    s = rs_config(PE_ROPE_SCALING_DYNAMIC);
    BAD(RS(y, af, 8, 10000.0, &s, 0), PE_ERR_ZERO_SIZE, "pe_rope_inv_freq_scaled dynamic: seq_len 0");
    BAD(RS(y, af, 2, 10000.0, &s, 32), PE_ERR_ROT, "pe_rope_inv_freq_scaled dynamic: rot 2 (dim / (dim - 2) divides by 0)");
    s.max_position_embeddings = 0;
    BAD(RS(y, af, 8, 10000.0, &s, 32), PE_ERR_ZERO_SIZE, "pe_rope_inv_freq_scaled dynamic: max_position_embeddings 0");
    s = rs_config(PE_ROPE_SCALING_DYNAMIC);
    s.factor = 1e30;
    BAD(RS(y, af, 4, 10000.0, &s, 32), PE_ERR_PARAM, "pe_rope_inv_freq_scaled dynamic: factor 1e30 (the base overflows a float)");
    s = rs_config(PE_ROPE_SCALING_DYNAMIC);
    s.factor = 1e30;
    s.dynamic_as_module = 1;
    BAD(RS(y, af, 4, 10000.0, &s, 32), PE_ERR_PARAM, "pe_rope_inv_freq_scaled dynamic as the module: factor 1e30 (the power overflows a float)");
    s.factor = 2e17;
    BAD(RS(y, af, 4, 10000.0, &s, 32), PE_ERR_PARAM, "pe_rope_inv_freq_scaled dynamic as the module: factor 2e17 (theta * 4e34 overflows a float)");
    for (t = PE_ROPE_SCALING_YARN; t <= PE_ROPE_SCALING_LONGROPE; t++) {
        s = rs_config(t);
        s.original_max_position_embeddings = 0;
        BAD(RS(y, af, 8, 10000.0, &s, 32), PE_ERR_ZERO_SIZE, "pe_rope_inv_freq_scaled type %d: original_max_position_embeddings 0", t);
    }

    /* YaRN */
    s = rs_config(PE_ROPE_SCALING_YARN);
    s.truncate = 2;
    BAD(RS(y, af, 8, 10000.0, &s, 32), PE_ERR_ENUM, "pe_rope_inv_freq_scaled yarn: truncate 2");
    for (k = 0; k < 4; k++) {
        s = rs_config(PE_ROPE_SCALING_YARN);
        s.beta_fast = bad[k];
        BAD(RS(y, af, 8, 10000.0, &s, 32), PE_ERR_PARAM, "pe_rope_inv_freq_scaled yarn: beta_fast %g", bad[k]);
        s = rs_config(PE_ROPE_SCALING_YARN);
        s.beta_slow = bad[k];
        BAD(RS(y, af, 8, 10000.0, &s, 32), PE_ERR_PARAM, "pe_rope_inv_freq_scaled yarn: beta_slow %g", bad[k]);
        if (k == 0) continue;   /* 0 is None for these three */
        s = rs_config(PE_ROPE_SCALING_YARN);
        s.mscale = bad[k];
        BAD(RS(y, af, 8, 10000.0, &s, 32), PE_ERR_PARAM, "pe_rope_inv_freq_scaled yarn: mscale %g", bad[k]);
        s = rs_config(PE_ROPE_SCALING_YARN);
        s.mscale_all_dim = bad[k];
        BAD(RS(y, af, 8, 10000.0, &s, 32), PE_ERR_PARAM, "pe_rope_inv_freq_scaled yarn: mscale_all_dim %g", bad[k]);
        s = rs_config(PE_ROPE_SCALING_YARN);
        s.attention_factor = bad[k];
        BAD(RS(y, af, 8, 10000.0, &s, 32), PE_ERR_PARAM, "pe_rope_inv_freq_scaled yarn: attention_factor %g", bad[k]);
    }
    s = rs_config(PE_ROPE_SCALING_YARN);
    BAD(RS(y, af, 8, 1.0, &s, 32), PE_ERR_PARAM, "pe_rope_inv_freq_scaled yarn: theta 1 (ln(base) = 0: Python divides by zero)");
    BAD(RS(y, af, 8, 1.000000000001, &s, 32), PE_ERR_PARAM, "pe_rope_inv_freq_scaled yarn: theta 1 + 1e-12 (ln(base) ~ 1e-12: correction dims past 2^24)");
    s = rs_config(PE_ROPE_SCALING_YARN);
    s.beta_fast = 1.0;
    s.beta_slow = 32.0;     /* HF warns and computes: so does pe.h */
    check(RS(y, af, 8, 10000.0, &s, 32) == PE_OK, "pe_rope_inv_freq_scaled yarn: beta_fast < beta_slow is accepted");
    s = rs_config(PE_ROPE_SCALING_YARN);
    check(RS(y, af, 8, 10000.0, &s, 32) == PE_OK && af[0] == (float)(0.1 * log(4.0) + 1.0),
          "pe_rope_inv_freq_scaled yarn: attention factor 0.1 ln(factor) + 1");
    s.mscale = 1.0;
    s.mscale_all_dim = 1.0;
    check(RS(y, af, 8, 10000.0, &s, 32) == PE_OK && af[0] == 1.0f,
          "pe_rope_inv_freq_scaled yarn: mscale == mscale_all_dim: attention factor 1 (DeepSeek-V3)");
    s.attention_factor = 0.75;
    check(RS(y, af, 8, 10000.0, &s, 32) == PE_OK && af[0] == 0.75f,
          "pe_rope_inv_freq_scaled yarn: a given attention factor is returned as is");

    s = rs_config(PE_ROPE_SCALING_YARN);
    s.factor = 0.5;
    check(RS(y, af, 8, 10000.0, &s, 32) == PE_OK && af[0] == 1.0f,
          "pe_rope_inv_freq_scaled yarn: factor 0.5 <= 1: get_mscale is 1");
    s = rs_config(PE_ROPE_SCALING_YARN);
    s.mscale = 2.0;     /* without mscale_all_dim, HF ignores mscale */
    check(RS(y, af, 8, 10000.0, &s, 32) == PE_OK && af[0] == (float)(0.1 * log(4.0) + 1.0),
          "pe_rope_inv_freq_scaled yarn: mscale 2 without mscale_all_dim: 0.1 ln(factor) + 1");
    s = rs_config(PE_ROPE_SCALING_YARN);
    BAD(RS((float *)(void *)&s, af, 8, 10000.0, &s, 32), PE_ERR_ALIAS, "pe_rope_inv_freq_scaled yarn: inv_freq over the struct");
    BAD(RS(y, (float *)(void *)&s, 8, 10000.0, &s, 32), PE_ERR_ALIAS, "pe_rope_inv_freq_scaled yarn: attention factor over the struct");
    BAD(RS(y, af, 8, 1e-50, &s, 32), PE_ERR_PARAM, "pe_rope_inv_freq_scaled yarn: theta 1e-50 (0 as a float)");

    /* llama3 */
    {
        s = rs_config(PE_ROPE_SCALING_LLAMA3);
        s.low_freq_factor = 1e-40;     /* original / low past FLT_MAX */
        BAD(RS(y, af, 8, 10000.0, &s, 32), PE_ERR_PARAM, "pe_rope_inv_freq_scaled llama3: low 1e-40 (original / low overflows a float)");
        s.original_max_position_embeddings = 1;
        s.low_freq_factor = 3e-39;
        s.high_freq_factor = nextafter(3e-39, 1.0);
        BAD(RS(y, af, 8, 10000.0, &s, 32), PE_ERR_PARAM, "pe_rope_inv_freq_scaled llama3: high - low 0 as a float (a division by zero)");
        const double lows[4] = { 0.0, nan, 4.0, 5.0 }, highs[4] = { 4.0, 4.0, 4.0, 4.0 };
        for (k = 0; k < 4; k++) {
            s = rs_config(PE_ROPE_SCALING_LLAMA3);
            s.low_freq_factor = lows[k];
            s.high_freq_factor = highs[k];
            BAD(RS(y, af, 8, 10000.0, &s, 32), PE_ERR_PARAM, "pe_rope_inv_freq_scaled llama3: low %g high %g", lows[k], highs[k]);
        }
        s = rs_config(PE_ROPE_SCALING_LLAMA3);
        s.high_freq_factor = inf;
        BAD(RS(y, af, 8, 10000.0, &s, 32), PE_ERR_PARAM, "pe_rope_inv_freq_scaled llama3: high inf");
    }

    /* LongRoPE */
    s = rs_config(PE_ROPE_SCALING_LONGROPE);
    s.short_factor = NULL;
    BAD(RS(y, af, 8, 10000.0, &s, 32), PE_ERR_NULL, "pe_rope_inv_freq_scaled longrope: NULL short_factor");
    s = rs_config(PE_ROPE_SCALING_LONGROPE);
    s.long_factor = NULL;
    BAD(RS(y, af, 8, 10000.0, &s, 32), PE_ERR_NULL, "pe_rope_inv_freq_scaled longrope: NULL long_factor");
    s = rs_config(PE_ROPE_SCALING_LONGROPE);
    BAD(RS(y, af, 8, 10000.0, &s, 0), PE_ERR_ZERO_SIZE, "pe_rope_inv_freq_scaled longrope: seq_len 0");
    for (k = 0; k < 5; k++) {
        float f[4];
        memcpy(f, rs_long, sizeof f);
        f[3] = (float)bad[k];
        s = rs_config(PE_ROPE_SCALING_LONGROPE);
        s.long_factor = f;
        /* (the short ones chosen) */
        BAD(RS(y, af, 8, 10000.0, &s, 2), PE_ERR_PARAM, "pe_rope_inv_freq_scaled longrope: long_factor[3] %g", (double)f[3]);
        s = rs_config(PE_ROPE_SCALING_LONGROPE);
        s.short_factor = f;
        BAD(RS(y, af, 8, 10000.0, &s, 32), PE_ERR_PARAM, "pe_rope_inv_freq_scaled longrope: short_factor[3] %g", (double)f[3]);
        if (k == 0) continue;
        s = rs_config(PE_ROPE_SCALING_LONGROPE);
        s.attention_factor = bad[k];
        BAD(RS(y, af, 8, 10000.0, &s, 32), PE_ERR_PARAM, "pe_rope_inv_freq_scaled longrope: attention_factor %g", bad[k]);
    }
    s = rs_config(PE_ROPE_SCALING_LONGROPE);
    s.original_max_position_embeddings = 1;
    BAD(RS(y, af, 8, 10000.0, &s, 32), PE_ERR_PARAM, "pe_rope_inv_freq_scaled longrope: original 1 (ln 1 = 0: Python divides by zero)");
    s = rs_config(PE_ROPE_SCALING_LONGROPE);
    s.max_position_embeddings = 0;
    s.factor = 0.0;
    BAD(RS(y, af, 8, 10000.0, &s, 32), PE_ERR_PARAM, "pe_rope_inv_freq_scaled longrope: no max_position_embeddings and no factor");
    s.factor = 4.0;
    check(RS(y, af, 8, 10000.0, &s, 32) == PE_OK && af[0] == (float)sqrt(1.0 + log(4.0) / log(16.0)),
          "pe_rope_inv_freq_scaled longrope: factor 4, original 16: sqrt(1 + ln 4 / ln 16)");
    s = rs_config(PE_ROPE_SCALING_LONGROPE);
    check(RS(y, af, 8, 10000.0, &s, 32) == PE_OK && af[0] == (float)sqrt(1.0 + log(4.0) / log(16.0)),
          "pe_rope_inv_freq_scaled longrope: max 64, original 16: sqrt(1 + ln 4 / ln 16)");
    s = rs_config(PE_ROPE_SCALING_LONGROPE);
    s.max_position_embeddings = 8;
    check(RS(y, af, 8, 10000.0, &s, 32) == PE_OK && af[0] == 1.0f,
          "pe_rope_inv_freq_scaled longrope: max 8 <= original 16: attention factor 1");
    s = rs_config(PE_ROPE_SCALING_LONGROPE);
    BADS((put(0, rs_short, sizeof rs_short), s.short_factor = arena), RS(arena + 3, af, 8, 10000.0, &s, 32), PE_ERR_ALIAS, "pe_rope_inv_freq_scaled longrope: inv_freq overlaps short_factor");
    BADS(put(0, rs_short, sizeof rs_short), RS(y, arena + 3, 8, 10000.0, &s, 32), PE_ERR_ALIAS, "pe_rope_inv_freq_scaled longrope: attention factor inside short_factor");
    s = rs_config(PE_ROPE_SCALING_LONGROPE);
    BADS((put(0, rs_long, sizeof rs_long), s.long_factor = arena), RS(arena + 2, af, 8, 10000.0, &s, 32), PE_ERR_ALIAS, "pe_rope_inv_freq_scaled longrope: inv_freq overlaps long_factor");
    BADS(put(0, rs_long, sizeof rs_long), RS(y, arena + 1, 8, 10000.0, &s, 32), PE_ERR_ALIAS, "pe_rope_inv_freq_scaled longrope: attention factor inside long_factor");
}
#undef RS

/* ---- pe_add_batch_first / pe_add_seq_first and their _inplace twins ------------------- */

/* One of the four adds; `outer`/`inner` are (batch, seq) for batch-first and (seq, batch)
   for seq-first, in the order the function takes them. For _inplace, o is ignored. */
typedef struct {
    const char *name;
    int seq_first, inplace;
} add_fn;

static int call_add(const add_fn *f, float *o, const float *xi, const float *t, size_t batch,
                    size_t seq, size_t d, size_t max_len)
{
    if (!f->seq_first && !f->inplace) return pe_add_batch_first(o, xi, t, batch, seq, d, max_len);
    if (!f->seq_first) return pe_add_batch_first_inplace((float *)(uintptr_t)xi, t, batch, seq, d, max_len);
    if (!f->inplace) return pe_add_seq_first(o, xi, t, seq, batch, d, max_len);
    return pe_add_seq_first_inplace((float *)(uintptr_t)xi, t, seq, batch, d, max_len);
}

/* The expected result of an add of x (B, S, D) in f's layout, computed here. */
static void add_ref(const add_fn *f, float *want, const float *xi, const float *t, size_t seq)
{
    size_t i, n = B * seq * D;
    for (i = 0; i < n; i++) {
        size_t row = i / D, s = f->seq_first ? row / B : row % seq;
        want[i] = xi[i] + t[s * D + i % D];
    }
}

static void test_adds(void)
{
    static const add_fn fns[4] = { { "pe_add_batch_first", 0, 0 },
                                   { "pe_add_batch_first_inplace", 0, 1 },
                                   { "pe_add_seq_first", 1, 0 },
                                   { "pe_add_seq_first_inplace", 1, 1 } };
    const size_t big = SIZE_MAX / 2, sixteenth = SIZE_MAX / 16;
    char what[200];
    int k;
    for (k = 0; k < 4; k++) {
        const add_fn *f = &fns[k];
        const char *nm = f->name;
        float *xw = arena;                /* a writable x for the in-place forms */
        float want[B * S * D];
        /* For _inplace the output is x itself: use a copy in the arena so that "no
           output byte changed" is checkable; its content is the sentinel pattern, which
           is a valid float (-2.87e-16), fine for calls that must fail. */
        float *o = f->inplace ? xw : out;
        const float *xi = f->inplace ? xw : x;

        BAD(f->inplace ? call_add(f, NULL, NULL, table, B, S, D, M) : call_add(f, NULL, x, table, B, S, D, M), PE_ERR_NULL, "%s: NULL %s", nm, f->inplace ? "x" : "out");
        if (!f->inplace)
            BAD(call_add(f, out, NULL, table, B, S, D, M), PE_ERR_NULL, "%s: NULL x", nm);
        BAD(call_add(f, o, xi, NULL, B, S, D, M), PE_ERR_NULL, "%s: NULL table", nm);

        BAD(call_add(f, o, xi, table, 0, S, D, M), PE_ERR_ZERO_SIZE, "%s: batch 0", nm);
        BAD(call_add(f, o, xi, table, B, 0, D, M), PE_ERR_ZERO_SIZE, "%s: seq 0", nm);
        BAD(call_add(f, o, xi, table, B, S, 0, M), PE_ERR_ZERO_SIZE, "%s: d_model 0", nm);
        BAD(call_add(f, o, xi, table, B, S, D, 0), PE_ERR_ZERO_SIZE, "%s: max_len 0", nm);
        BAD(call_add(f, o, xi, NULL, B, 0, D, M), PE_ERR_NULL, "%s: NULL table and seq 0 (NULL first)", nm);

        /* Each size fits, the product does not. */
        BAD(call_add(f, o, xi, table, big, 3, 1, 3), PE_ERR_OVERFLOW, "%s: batch SIZE_MAX/2 x seq 3", nm);
        BAD(call_add(f, o, xi, table, sixteenth, 1, 8, M), PE_ERR_OVERFLOW, "%s: batch SIZE_MAX/16 x d_model 8 (bytes only)", nm);
        BAD(call_add(f, o, xi, table, 1, 1, 3, big), PE_ERR_OVERFLOW, "%s: table max_len SIZE_MAX/2 x d_model 3", nm);
        BAD(call_add(f, o, xi, table, big, 3, 1, 2), PE_ERR_OVERFLOW, "%s: overflow and seq > max_len (overflow first)", nm);

        BAD(call_add(f, o, xi, table, B, S, D, S - 1), PE_ERR_SEQ_TOO_LONG, "%s: seq %d > max_len %d", nm, S, S - 1);

        /* Aliasing. */
        if (!f->inplace) {
            BAD(call_add(f, arena + 1, arena, table, B, S, D, M), PE_ERR_ALIAS, "%s: out = x + 1 float (partial overlap)", nm);
            BAD(call_add(f, arena, arena + 1, table, B, S, D, M), PE_ERR_ALIAS, "%s: out = x - 1 float (partial overlap)", nm);
            BAD(call_add(f, arena, arena + B * S * D - 1, table, B, S, D, M), PE_ERR_ALIAS, "%s: out's last float is x's first", nm);
            BAD(call_add(f, arena + 2, x, arena, B, S, D, M), PE_ERR_ALIAS, "%s: out overlaps the table rows it reads", nm);
            setup();
            /* rows seq..max_len-1 are not read, but they are the caller's table: an
               output over them would silently corrupt it for the next call */
            snprintf(what, sizeof what, "%s: out overlaps table rows past seq", nm);
            bad_pe(what, call_add(f, arena + S * D, x, arena, B, S, D, M), PE_ERR_ALIAS);
            BAD(call_add(f, arena, x, arena, B, S, D, M), PE_ERR_ALIAS, "%s: out == table", nm);
            BAD(call_add(f, arena + 1, arena, table, B, S, D, S - 1), PE_ERR_SEQ_TOO_LONG, "%s: alias and seq > max_len (seq first)", nm);
        } else {
            BAD(call_add(f, NULL, arena + 2, arena, B, S, D, M), PE_ERR_ALIAS, "%s: x overlaps the table rows it reads", nm);
            BAD(call_add(f, NULL, arena, arena, B, S, D, M), PE_ERR_ALIAS, "%s: x == table", nm);
        }

        /* Valid calls. */
        setup();
        add_ref(f, want, x, table, S);
        if (f->inplace) {
            memcpy(arena, x, sizeof x);
            snprintf(what, sizeof what, "%s: valid (%d, %d, %d) in place", nm, B, S, D);
            good(what, call_add(f, NULL, arena, table, B, S, D, M), arena, want, B * S * D,
                 arena + B * S * D + GUARD);
        } else {
            snprintf(what, sizeof what, "%s: valid (%d, %d, %d) out of place", nm, B, S, D);
            good(what, call_add(f, out, x, table, B, S, D, M), out, want, B * S * D,
                 out + B * S * D + GUARD);
            GOOD(memcpy(arena, x, sizeof x), call_add(f, arena, arena, table, B, S, D, M), arena, want, B * S * D, arena + B * S * D + GUARD, "%s: out == x is allowed (in place)", nm);
            /* Touching but not overlapping: out right after x, then right before it. */
            GOOD(memcpy(arena, x, sizeof x), call_add(f, arena + B * S * D, arena, table, B, S, D, M), arena + B * S * D, want, B * S * D, arena + 2 * B * S * D + GUARD, "%s: out starts right after x ends (no overlap)", nm);
            GOOD(memcpy(arena + B * S * D, x, sizeof x), call_add(f, arena, arena + B * S * D, table, B, S, D, M), arena, want, B * S * D, NULL, "%s: out ends right before x starts (no overlap)", nm);
            GOOD(memcpy(arena, table, S * D * sizeof(float)), call_add(f, arena + S * D, x, arena, B, S, D, S), arena + S * D, want, B * S * D, arena + S * D + B * S * D + GUARD, "%s: out right after the table's last row read", nm);
        }
        GOOD((add_ref(f, want, x, table, S), memcpy(arena, x, sizeof x)), call_add(f, f->inplace ? NULL : out, f->inplace ? arena : x, table, B, S, D, S), f->inplace ? arena : out, want, B * S * D, NULL, "%s: seq == max_len is allowed", nm);
        /* with seq 1 the batch-first x is (B, 1, D) and seq-first is (1, B, D): same data */
        GOOD((add_ref(f, want, x, table, 1), memcpy(arena, x, sizeof x)), call_add(f, f->inplace ? NULL : out, f->inplace ? arena : x, table, B, 1, D, M), f->inplace ? arena : out, want, B * D, f->inplace ? NULL : out + B * S * D + GUARD, "%s: seq 1 reads table row 0 only", nm);
    }
}

/* ---- pe_embed / pe_embed_i64 -------------------------------------------------------- */

static int call_embed(int wide, float *o, const void *ids, const float *te, const float *pe_,
                      size_t batch, size_t seq, size_t d, size_t vocab, size_t ctx)
{
    return wide ? pe_embed_i64(o, (const int64_t *)ids, te, pe_, batch, seq, d, vocab, ctx)
                : pe_embed(o, (const int32_t *)ids, te, pe_, batch, seq, d, vocab, ctx);
}

static int64_t id_at(int wide, size_t i) { return wide ? ids64[i] : (int64_t)ids32[i]; }

static void set_id(int wide, size_t i, int64_t v)
{
    if (wide) ids64[i] = v;
    else ids32[i] = (int32_t)v;
}

static void test_embed(void)
{
    const size_t big = SIZE_MAX / 2;
    char what[200];
    int wide;
    for (wide = 0; wide < 2; wide++) {
        const char *nm = wide ? "pe_embed_i64" : "pe_embed";
        const void *ids = wide ? (const void *)ids64 : (const void *)ids32;
        const size_t id_size = wide ? sizeof(int64_t) : sizeof(int32_t);
        float want[B * S * D];
        size_t i;

        BAD(call_embed(wide, NULL, ids, wte, wpe, B, S, D, V, L), PE_ERR_NULL, "%s: NULL out", nm);
        BAD(call_embed(wide, out, NULL, wte, wpe, B, S, D, V, L), PE_ERR_NULL, "%s: NULL ids", nm);
        BAD(call_embed(wide, out, ids, NULL, wpe, B, S, D, V, L), PE_ERR_NULL, "%s: NULL wte", nm);
        BAD(call_embed(wide, out, ids, wte, NULL, B, S, D, V, L), PE_ERR_NULL, "%s: NULL wpe", nm);

        BAD(call_embed(wide, out, ids, wte, wpe, 0, S, D, V, L), PE_ERR_ZERO_SIZE, "%s: batch 0", nm);
        BAD(call_embed(wide, out, ids, wte, wpe, B, 0, D, V, L), PE_ERR_ZERO_SIZE, "%s: seq 0", nm);
        BAD(call_embed(wide, out, ids, wte, wpe, B, S, 0, V, L), PE_ERR_ZERO_SIZE, "%s: d_model 0", nm);
        BAD(call_embed(wide, out, ids, wte, wpe, B, S, D, 0, L), PE_ERR_ZERO_SIZE, "%s: vocab 0", nm);
        BAD(call_embed(wide, out, ids, wte, wpe, B, S, D, V, 0), PE_ERR_ZERO_SIZE, "%s: context_length 0", nm);

        BAD(call_embed(wide, out, ids, wte, wpe, big, 3, 1, V, 3), PE_ERR_OVERFLOW, "%s: batch SIZE_MAX/2 x seq 3", nm);
        BAD(call_embed(wide, out, ids, wte, wpe, SIZE_MAX / 16, 1, 8, V, L), PE_ERR_OVERFLOW, "%s: batch*seq x d_model overflows in bytes", nm);
        BAD(call_embed(wide, out, ids, wte, wpe, 1, 1, 3, big, L), PE_ERR_OVERFLOW, "%s: vocab SIZE_MAX/2 x d_model 3 (wte size)", nm);
        BAD(call_embed(wide, out, ids, wte, wpe, 1, 1, 3, V, big), PE_ERR_OVERFLOW, "%s: context_length SIZE_MAX/2 x d_model 3 (wpe size)", nm);
        if (wide) {
            /* batch*seq*4 bytes of output fit, but batch*seq int64 ids do not. */
            BAD(call_embed(wide, out, ids, wte, wpe, SIZE_MAX / 12, 2, 1, V, L), PE_ERR_OVERFLOW, "%s: batch*seq*8 bytes of ids overflow (out fits)", nm);
        }

        BAD(call_embed(wide, out, ids, wte, wpe, B, S, D, V, S - 1), PE_ERR_SEQ_TOO_LONG, "%s: seq %d > context_length %d", nm, S, S - 1);

        /* Bad ids, placed LAST so that an implementation writing as it goes would have
           written the earlier rows: "validated before anything is written". */
        {
            int64_t bad[6];
            const char *bad_name[6] = { "-1", "== vocab", "INT_MIN of its width", "vocab + 1",
                                        "INT64_MAX", "2^32 + 1 (valid if truncated to 32 bits)" };
            int nbad = wide ? 6 : 4, j;
            bad[0] = -1;
            bad[1] = V;
            bad[2] = wide ? INT64_MIN : (int64_t)INT32_MIN;
            bad[3] = V + 1;
            bad[4] = INT64_MAX;
            bad[5] = ((int64_t)1 << 32) + 1;
            for (j = 0; j < nbad; j++)
                BADS(set_id(wide, B * S - 1, bad[j]), call_embed(wide, out, ids, wte, wpe, B, S, D, V, L), PE_ERR_ID_RANGE, "%s: last id %s", nm, bad_name[j]);
            BADS(set_id(wide, 0, -1), call_embed(wide, out, ids, wte, wpe, B, S, D, V, L), PE_ERR_ID_RANGE, "%s: first id -1", nm);
            BADS(set_id(wide, B * S - 1, V), call_embed(wide, out, ids, wte, wpe, B, S, D, V, S - 1), PE_ERR_SEQ_TOO_LONG, "%s: bad id and seq > context_length (seq first)", nm);
        }

        /* Aliasing: out may overlap nothing. */
        BADS(put(0, wte, sizeof wte), call_embed(wide, arena + (V - 1) * D, ids, arena, wpe, B, S, D, V, L), PE_ERR_ALIAS, "%s: out overlaps wte's last row", nm);
        BADS(put(0, wte, sizeof wte), call_embed(wide, arena, ids, arena, wpe, B, S, D, V, L), PE_ERR_ALIAS, "%s: out == wte", nm);
        BAD(call_embed(wide, arena + 1, ids, wte, arena, B, S, D, V, L), PE_ERR_ALIAS, "%s: out overlaps the wpe rows it reads", nm);
        BAD(call_embed(wide, arena + S * D, ids, wte, arena, B, S, D, V, L), PE_ERR_ALIAS, "%s: out overlaps wpe rows past seq", nm);
        setup();
        /* ids inside the arena, copied there so they are valid ids */
        put(16, ids, B * S * id_size);   /* valid ids at byte 64 of the arena */
        snprintf(what, sizeof what, "%s: out overlaps ids", nm);
        bad_pe(what, call_embed(wide, arena, arena + 16, wte, wpe, B, S, D, V, L), PE_ERR_ALIAS);
        BADS((set_id(wide, B * S - 1, -1), put(0, wte, sizeof wte)), call_embed(wide, arena + 2, ids, arena, wpe, B, S, D, V, L), PE_ERR_ALIAS, "%s: alias and a bad id (alias first)", nm);

        /* Valid: every id from 0 to V - 1 appears in the fixtures. */
        setup();
        for (i = 0; i < B * S * D; i++)
            want[i] = wte[(size_t)id_at(wide, i / D) * D + i % D] + wpe[(i / D % S) * D + i % D];
        snprintf(what, sizeof what, "%s: valid (%d, %d, %d), ids 0..vocab-1", nm, B, S, D);
        good(what, call_embed(wide, out, ids, wte, wpe, B, S, D, V, L), out, want, B * S * D,
             out + B * S * D + GUARD);
        GOOD((void)0, call_embed(wide, out, ids, wte, wpe, B, S, D, V, S), out, want, B * S * D, out + B * S * D + GUARD, "%s: seq == context_length is allowed", nm);
        GOOD(memcpy(arena, wte, sizeof wte), call_embed(wide, arena + V * D, ids, arena, wpe, B, S, D, V, L), arena + V * D, want, B * S * D, arena + V * D + B * S * D + GUARD, "%s: out right after wte (no overlap)", nm);
    }
}

/* ---- training: pe_add_*_backward, pe_embed*_backward, pe_rope_apply*_backward -------- */

/* dout is the fixtures' x (B, S, D) seen in each layout; the table gradient goes to tout
   (M rows), the embedding's to the arena (dwte at 0, dwpe at 64). Valid results: every
   value a small multiple of 1/8, so every sum is exact in float in any order, and the
   expected value is computed here in double. */
static float tb_want[M * D];

/* dtable0 + the sum over the batch of dout, in f's layout (exact), rows >= seq as they were. */
static void add_bwd_ref(int seq_first, float *want, const float *d0, const float *g,
                        size_t batch, size_t seq)
{
    size_t s, b, j;
    memcpy(want, d0, M * D * sizeof *want);
    for (s = 0; s < seq; s++)
        for (j = 0; j < D; j++) {
            double t = d0[s * D + j];
            for (b = 0; b < batch; b++)
                t += g[(seq_first ? s * batch + b : b * seq + s) * D + j];
            want[s * D + j] = (float)t;
        }
}

static int call_add_bwd(int seq_first, float *dt, const float *g, size_t batch, size_t seq,
                        size_t d, size_t max_len)
{
    return seq_first ? pe_add_seq_first_backward(dt, g, seq, batch, d, max_len)
                     : pe_add_batch_first_backward(dt, g, batch, seq, d, max_len);
}

/* A long batch through every level of the cascade (4096 rows and more) and the tail
   columns: exact values give the exact sum on this path; values that round give the bits
   of the scalar path (the same operations lane by lane). */
static void add_bwd_long(int seq_first)
{
    enum { LB = 4100, LN = 70 };   /* batch; columns (seq * d): 64 by the cascade, 6 not */
    const char *nm = seq_first ? "pe_add_seq_first_backward" : "pe_add_batch_first_backward";
    const char *path = pe_path();
    static float g[LB * LN], dt[LN], ds[LN], want[LN];
    char what[160];
    size_t i, b;
    int st, k;
    for (k = 0; k < 2; k++) {
        for (i = 0; i < LB * LN; i++)
            g[i] = k ? val(i, 13) * 1.1f + 1e-3f * (float)(i % 29) : val(i, 13);
        for (i = 0; i < LN; i++) {
            double t = 0;
            for (b = 0; b < LB; b++) t += g[b * LN + i];
            want[i] = (float)t;
            dt[i] = ds[i] = 0.0f;
        }
        /* seq 1: (batch, 1, LN) batch-first and (1, batch, LN) seq-first are the same data */
        st = call_add_bwd(seq_first, dt, g, LB, 1, LN, 1);
        if (k == 0) {
            snprintf(what, sizeof what, "%s: batch %d x %d columns, exact sums", nm, LB, LN);
            good(what, st, dt, want, LN, NULL);
        } else {
            th_use(&th_pe, "scalar");
            st |= call_add_bwd(seq_first, ds, g, LB, 1, LN, 1);
            th_use(&th_pe, path);
            snprintf(what, sizeof what, "%s: batch %d x %d columns that round: the scalar "
                     "path's bits", nm, LB, LN);
            good(what, st, dt, ds, LN, NULL);
        }
    }
    if (!seq_first) {
        /* past 2^19 rows the cascade's chunks grow to 2^5 (p = ceil(log2 rows) / 4): 4
           columns (all by the cascade, n < 8), every value counted once (exact sums) */
        enum { HB = (1 << 19) + 3, HN = 4 };
        static float hg[(size_t)HB * HN];
        float hd[HN] = { 0.0f, 0.0f, 0.0f, 0.0f }, hw[HN];
        for (i = 0; i < (size_t)HB * HN; i++) hg[i] = val(i, 16);
        for (i = 0; i < HN; i++) {
            double t = 0;
            for (b = 0; b < HB; b++) t += hg[b * HN + i];
            hw[i] = (float)t;
        }
        snprintf(what, sizeof what, "%s: batch 2^19 + 3 (chunks of 32), exact sums", nm);
        good(what, call_add_bwd(0, hd, hg, HB, 1, HN, 1), hd, hw, HN, NULL);
    }
}

static void test_add_backward(void)
{
    const size_t big = SIZE_MAX / 2;
    char what[200];
    int sf;
    for (sf = 0; sf < 2; sf++) {
        const char *nm = sf ? "pe_add_seq_first_backward" : "pe_add_batch_first_backward";
        float d0[M * D];
        size_t i;
        BAD(call_add_bwd(sf, NULL, x, B, S, D, M), PE_ERR_NULL, "%s: NULL dtable", nm);
        BAD(call_add_bwd(sf, tout, NULL, B, S, D, M), PE_ERR_NULL, "%s: NULL dout", nm);
        BAD(call_add_bwd(sf, tout, x, 0, S, D, M), PE_ERR_ZERO_SIZE, "%s: batch 0", nm);
        BAD(call_add_bwd(sf, tout, x, B, 0, D, M), PE_ERR_ZERO_SIZE, "%s: seq 0", nm);
        BAD(call_add_bwd(sf, tout, x, B, S, 0, M), PE_ERR_ZERO_SIZE, "%s: d_model 0", nm);
        BAD(call_add_bwd(sf, tout, x, B, S, D, 0), PE_ERR_ZERO_SIZE, "%s: max_len 0", nm);
        BAD(call_add_bwd(sf, tout, NULL, 0, S, D, M), PE_ERR_NULL, "%s: NULL dout and batch 0 (NULL first)", nm);
        BAD(call_add_bwd(sf, tout, x, big, 3, 1, 3), PE_ERR_OVERFLOW, "%s: batch SIZE_MAX/2 x seq 3", nm);
        BAD(call_add_bwd(sf, tout, x, SIZE_MAX / 16, 1, 8, M), PE_ERR_OVERFLOW, "%s: batch SIZE_MAX/16 x d_model 8 (bytes only)", nm);
        BAD(call_add_bwd(sf, tout, x, 1, 1, 3, big), PE_ERR_OVERFLOW, "%s: table max_len SIZE_MAX/2 x d_model 3", nm);
        BAD(call_add_bwd(sf, tout, x, B, S, D, S - 1), PE_ERR_SEQ_TOO_LONG, "%s: seq %d > max_len %d", nm, S, S - 1);
        BADS(put(0, x, sizeof x), call_add_bwd(sf, arena + 1, arena, B, S, D, M), PE_ERR_ALIAS, "%s: dtable over dout (one float on)", nm);
        BADS(put(0, x, sizeof x), call_add_bwd(sf, arena, arena, B, S, D, M), PE_ERR_ALIAS, "%s: dtable == dout", nm);
        /* rows seq..max_len-1 are not written, but they are the caller's table */
        BADS(put(M * D - 1, x, sizeof x), call_add_bwd(sf, arena, arena + M * D - 1, B, S, D, M), PE_ERR_ALIAS, "%s: dout starts on dtable's last float (a row past seq)", nm);
        BADS(put(0, x, sizeof x), call_add_bwd(sf, arena + 1, arena, B, S, D, S - 1), PE_ERR_SEQ_TOO_LONG, "%s: alias and seq > max_len (seq first)", nm);

        /* valid: accumulated onto a non-zero table, rows >= seq untouched */
        setup();
        for (i = 0; i < M * D; i++) d0[i] = tout[i] = val(i, 12);
        add_bwd_ref(sf, tb_want, d0, x, B, S);
        snprintf(what, sizeof what, "%s: valid (%d, %d, %d), accumulated; rows >= seq kept", nm,
                 B, S, D);
        good(what, call_add_bwd(sf, tout, x, B, S, D, M), tout, tb_want, M * D, tout + M * D + GUARD);
        setup();
        for (i = 0; i < M * D; i++) d0[i] = tout[i] = val(i, 12);
        add_bwd_ref(sf, tb_want, d0, x, B, S);
        snprintf(what, sizeof what, "%s: seq == max_len is allowed", nm);
        good(what, call_add_bwd(sf, tout, x, B, S, D, S), tout, tb_want, M * D, NULL);
        setup();
        for (i = 0; i < M * D; i++) d0[i] = tout[i] = val(i, 12);
        add_bwd_ref(sf, tb_want, d0, x, 1, S);
        snprintf(what, sizeof what, "%s: batch 1", nm);
        good(what, call_add_bwd(sf, tout, x, 1, S, D, M), tout, tb_want, M * D, NULL);
        setup();
        memcpy(arena, x, sizeof x);
        for (i = 0; i < M * D; i++) d0[i] = arena[B * S * D + i] = val(i, 12);
        add_bwd_ref(sf, tb_want, d0, x, B, S);
        snprintf(what, sizeof what, "%s: dtable right after dout (no overlap)", nm);
        good(what, call_add_bwd(sf, arena + B * S * D, arena, B, S, D, M), arena + B * S * D,
             tb_want, M * D, arena + B * S * D + M * D + GUARD);
        add_bwd_long(sf);
    }
}

static int call_embed_bwd(int wide, float *te, float *pe_, const float *g, const void *ids,
                          size_t batch, size_t seq, size_t d, size_t vocab, size_t ctx)
{
    return wide ? pe_embed_i64_backward(te, pe_, g, (const int64_t *)ids, batch, seq, d, vocab, ctx)
                : pe_embed_backward(te, pe_, g, (const int32_t *)ids, batch, seq, d, vocab, ctx);
}

static void test_embed_backward(void)
{
    const size_t big = SIZE_MAX / 2;
    float *te = arena, *pe_ = arena + 64;
    char what[200];
    int wide;
    for (wide = 0; wide < 2; wide++) {
        const char *nm = wide ? "pe_embed_i64_backward" : "pe_embed_backward";
        const void *ids = wide ? (const void *)ids64 : (const void *)ids32;
        const size_t id_size = wide ? sizeof(int64_t) : sizeof(int32_t);
        static const int64_t rep[B * S] = { 1, 1, 6, 4, 1, 4 };   /* repeated ids */
        float want_te[V * D], want_pe[L * D];
        size_t i, j;
        int which;

        BAD(call_embed_bwd(wide, te, pe_, NULL, ids, B, S, D, V, L), PE_ERR_NULL, "%s: NULL dout", nm);
        BAD(call_embed_bwd(wide, te, pe_, x, NULL, B, S, D, V, L), PE_ERR_NULL, "%s: NULL ids", nm);
        BAD(call_embed_bwd(wide, NULL, NULL, x, ids, B, S, D, V, L), PE_ERR_NULL, "%s: dwte and dwpe both NULL", nm);
        {
            const size_t sz[5][5] = { { 0, S, D, V, L }, { B, 0, D, V, L }, { B, S, 0, V, L },
                                      { B, S, D, 0, L }, { B, S, D, V, 0 } };
            for (i = 0; i < 5; i++)
                BAD(call_embed_bwd(wide, te, pe_, x, ids, sz[i][0], sz[i][1], sz[i][2], sz[i][3], sz[i][4]), PE_ERR_ZERO_SIZE, "%s: size %zu (batch, seq, d, vocab, ctx) is 0", nm, i);
        }
        BAD(call_embed_bwd(wide, te, pe_, x, ids, big, 3, 1, V, 3), PE_ERR_OVERFLOW, "%s: batch SIZE_MAX/2 x seq 3", nm);
        BAD(call_embed_bwd(wide, te, pe_, x, ids, 1, 1, 3, big, L), PE_ERR_OVERFLOW, "%s: vocab SIZE_MAX/2 x d_model 3 (dwte size)", nm);
        BAD(call_embed_bwd(wide, te, pe_, x, ids, 1, 1, 3, V, big), PE_ERR_OVERFLOW, "%s: context_length SIZE_MAX/2 x d_model 3 (dwpe size)", nm);
        if (wide)
            BAD(call_embed_bwd(wide, te, pe_, x, ids, SIZE_MAX / 12, 2, 1, V, L), PE_ERR_OVERFLOW, "%s: batch*seq*8 bytes of ids overflow (dout fits)", nm);
        BAD(call_embed_bwd(wide, te, pe_, x, ids, B, S, D, V, S - 1), PE_ERR_SEQ_TOO_LONG, "%s: seq %d > context_length %d", nm, S, S - 1);

        /* aliasing: every output against every input and the other output */
        BADS(put(200, x, sizeof x), call_embed_bwd(wide, arena + 200 + B * S * D - 1, pe_, arena + 200, ids, B, S, D, V, L), PE_ERR_ALIAS, "%s: dwte over dout", nm);
        BADS(put(200, x, sizeof x), call_embed_bwd(wide, te, arena + 201, arena + 200, ids, B, S, D, V, L), PE_ERR_ALIAS, "%s: dwpe over dout", nm);
        BADS(put(200, ids, B * S * id_size), call_embed_bwd(wide, arena + 190, pe_, x, arena + 200, B, S, D, V, L), PE_ERR_ALIAS, "%s: dwte over ids", nm);
        BADS(put(200, ids, B * S * id_size), call_embed_bwd(wide, NULL, arena + 200, x, arena + 200, B, S, D, V, L), PE_ERR_ALIAS, "%s: dwpe over ids (dwte NULL)", nm);
        BAD(call_embed_bwd(wide, arena, arena + V * D - 1, x, ids, B, S, D, V, L), PE_ERR_ALIAS, "%s: dwte over dwpe", nm);
        BADS(set_id(wide, B * S - 1, -1), call_embed_bwd(wide, arena, arena, x, ids, B, S, D, V, L), PE_ERR_ALIAS, "%s: alias and a bad id (alias first)", nm);

        /* bad ids, the last one (so a function writing as it went would have written) */
        {
            int64_t bad[4];
            const char *bad_name[4] = { "-1", "== vocab", "INT_MIN of its width",
                                        "2^32 + 1 (valid if truncated to 32 bits)" };
            int nbad = wide ? 4 : 3, k;
            bad[0] = -1;
            bad[1] = V;
            bad[2] = wide ? INT64_MIN : (int64_t)INT32_MIN;
            bad[3] = ((int64_t)1 << 32) + 1;
            for (k = 0; k < nbad; k++)
                for (which = 0; which < 3; which++)
                    BADS(set_id(wide, B * S - 1, bad[k]), call_embed_bwd(wide, which == 2 ? NULL : te, which == 1 ? NULL : pe_, x, ids, B, S, D, V, L), PE_ERR_ID_RANGE, "%s: last id %s (%s)", nm, bad_name[k], which == 0 ? "both outputs" : which == 1 ? "dwte only" : "dwpe only");
        }

        /* valid: distinct ids (the fixtures), then repeated ones, accumulated onto non-zero
           tables; each output alone gives the same values */
        for (which = 0; which < 2; which++) {
            int64_t idv[B * S];
            int k;
            fill_inputs();
            for (i = 0; i < B * S; i++) idv[i] = which ? rep[i] : id_at(wide, i);
            for (i = 0; i < V * D; i++) want_te[i] = val(i, 14);
            for (i = 0; i < L * D; i++) want_pe[i] = val(i, 15);
            for (i = 0; i < B * S; i++)          /* exact: multiples of 1/8 below 2^20 */
                for (j = 0; j < D; j++) {
                    want_te[(size_t)idv[i] * D + j] += x[i * D + j];
                    want_pe[(i % S) * D + j] += x[i * D + j];
                }
            for (k = 0; k < 3; k++) {
                int st;
                setup();
                for (i = 0; i < B * S; i++) set_id(wide, i, idv[i]);
                for (i = 0; i < V * D; i++) te[i] = val(i, 14);
                for (i = 0; i < L * D; i++) pe_[i] = val(i, 15);
                snprintf(what, sizeof what, "%s: valid, %s ids, %s", nm,
                         which ? "repeated" : "distinct",
                         k == 0 ? "dwte and dwpe" : k == 1 ? "dwte alone" : "dwpe alone");
                st = call_embed_bwd(wide, k == 2 ? NULL : te, k == 1 ? NULL : pe_, x, ids, B, S,
                                    D, V, L);
                if (k != 2) good(what, st, te, want_te, V * D, NULL);
                if (k != 1) good(what, st, pe_, want_pe, L * D, pe_ + L * D + GUARD);
            }
        }
        fill_inputs();
    }
}

/* RoPE backward, with the fixtures of test_rope: a cache whose values are multiples of
   1/8 (row 0: cos 1, sin 0), so the inverse rotation (ga c + gb s, gb c - ga s) is exact
   and computed here. */
static void rope_bwd_ref(float *want, const float *g, size_t rot, int layout, int pairing,
                         const int64_t *pos)
{
    size_t r, i;
    const size_t half = rot / 2;
    memcpy(want, g, sizeof x);
    for (r = 0; r < B * S; r++) {   /* one head: rows are tokens in both layouts */
        const size_t p = (size_t)pos[r];
        (void)layout;
        for (i = 0; i < half; i++) {
            const size_t ia = pairing == PE_ROPE_HALF ? i : 2 * i;
            const size_t ib = pairing == PE_ROPE_HALF ? i + half : 2 * i + 1;
            const double c = rope_cos[p * (D / 2) + i], s = rope_sin[p * (D / 2) + i];
            const double ga = g[r * D + ia], gb = g[r * D + ib];
            want[r * D + ia] = (float)(ga * c + gb * s);
            want[r * D + ib] = (float)(gb * c - ga * s);
        }
    }
}

static void test_rope_backward(void)
{
    const size_t big = SIZE_MAX / 2;
    const int64_t maxp = PE_ROPE_MAX_POS;
    char what[200];
    int k;
    for (k = 0; k < 2; k++) {
        const char *name = k ? "pe_rope_apply_direct_backward" : "pe_rope_apply_backward";
#define RBWD(o_, g_, b_, s_, h_, d_, r_, lay_, pair_, pos_, start_)                            \
    (k ? pe_rope_apply_direct_backward(o_, g_, b_, s_, h_, d_, r_, lay_, pair_, rope_inv, 1.0f,  \
                                       pos_, start_)                                         \
       : pe_rope_apply_backward(o_, g_, b_, s_, h_, d_, r_, lay_, pair_, rope_cos, rope_sin, M,  \
                                pos_, start_))
        const int BS = PE_ROPE_BSHD, HF = PE_ROPE_HALF;
        size_t i;
        rope_inputs();
        BAD(RBWD(NULL, x, B, S, 1, D, D, BS, HF, NULL, 0), PE_ERR_NULL, "%s: NULL dx", name);
        BAD(RBWD(out, NULL, B, S, 1, D, D, BS, HF, NULL, 0), PE_ERR_NULL, "%s: NULL dout", name);
        {
            const size_t sz[5][5] = { { 0, S, 1, D, D }, { B, 0, 1, D, D }, { B, S, 0, D, D },
                                      { B, S, 1, 0, D }, { B, S, 1, D, 0 } };
            for (i = 0; i < 5; i++)
                BAD(RBWD(out, x, sz[i][0], sz[i][1], sz[i][2], sz[i][3], sz[i][4], BS, HF, NULL, 0), PE_ERR_ZERO_SIZE, "%s: size %zu (batch, seq, heads, head_dim, rot) is 0", name, i);
        }
        BAD(RBWD(out, x, big, 1, 2, 4, 4, BS, HF, NULL, 0), PE_ERR_OVERFLOW, "%s: batch x heads x head_dim overflows", name);
        BAD(RBWD(out, x, B, S, 1, D, 3, BS, HF, NULL, 0), PE_ERR_ROT, "%s: odd rot 3", name);
        BAD(RBWD(out, x, B, S, 1, D, 6, BS, HF, NULL, 0), PE_ERR_ROT, "%s: rot 6 > head_dim 4", name);
        BAD(RBWD(out, x, B, S, 1, D, D, 3, HF, NULL, 0), PE_ERR_ENUM, "%s: layout 3", name);
        BAD(RBWD(out, x, B, S, 1, D, D, BS, 0, NULL, 0), PE_ERR_ENUM, "%s: pairing 0", name);
        BADS(put(0, x, sizeof x), RBWD(arena + 1, arena, B, S, 1, D, D, BS, HF, NULL, 0), PE_ERR_ALIAS, "%s: dx overlaps dout (not equal)", name);
        BADS(put(64, rope_pos, sizeof rope_pos), RBWD(arena + 60, x, B, S, 1, D, D, BS, HF, (const int64_t *)(void *)(arena + 64), 0), PE_ERR_ALIAS, "%s: dx overlaps pos", name);
        BADS(rope_pos[B * S - 1] = -1, RBWD(out, x, B, S, 1, D, D, BS, HF, rope_pos, 0), PE_ERR_POSITION, "%s: a negative position in pos (the last)", name);
        rope_inputs();
        BAD(RBWD(out, x, B, S, 1, D, D, BS, HF, NULL, k ? maxp - 1 : (int64_t)(M - S + 1)), PE_ERR_POSITION, "%s: start + s past %s", name, k ? "PE_ROPE_MAX_POS" : "the cache (M rows)");
        setup();
        snprintf(what, sizeof what, "%s: in place at position 0 is the identity", name);
        {
            static float gin[B * S * D];
            for (i = 0; i < B * S; i++) rope_pos[i] = 0;
            memcpy(gin, x, sizeof x);
            good(what, RBWD(gin, gin, B, S, 1, D, D, BS, PE_ROPE_INTERLEAVED, rope_pos, 0), gin, x,
                 B * S * D, NULL);
        }
        rope_inputs();
        setup();
        snprintf(what, sizeof what, "%s: rot 2 of head_dim 4: dims 2, 3 copied", name);
        {
            int st = RBWD(out, x, B * S, 1, 1, D, 2, PE_ROPE_BHSD, HF, rope_pos, 0);
            int ok = st == 0 && untouched(out + B * S * D, GUARD * sizeof *out);
            for (i = 0; ok && i < B * S; i++)
                ok = fbits(out[i * D + 2]) == fbits(x[i * D + 2]) &&
                     fbits(out[i * D + 3]) == fbits(x[i * D + 3]);
            check(ok, "%s", what);
        }
#undef RBWD
    }
    /* the inverse rotation's values, exact: both pairings, both layouts (one head, so
       the rows are the tokens in either), in place and out of place */
    for (k = 0; k < 8; k++) {
        const int lay = k & 1 ? PE_ROPE_BHSD : PE_ROPE_BSHD;
        const int pair = k & 2 ? PE_ROPE_INTERLEAVED : PE_ROPE_HALF, inpl = k & 4;
        float want[B * S * D];
        int st;
        rope_inputs();
        setup();
        rope_bwd_ref(want, x, D, lay, pair, rope_pos);
        snprintf(what, sizeof what, "pe_rope_apply_backward: valid, %s, %s, %s: (ga c + gb s, "
                 "gb c - ga s)", lay == PE_ROPE_BHSD ? "BHSD" : "BSHD",
                 pair == PE_ROPE_HALF ? "half" : "interleaved", inpl ? "in place" : "out of place");
        if (inpl) {
            memcpy(arena, x, sizeof x);
            st = lay == PE_ROPE_BHSD
                 ? pe_rope_apply_backward(arena, arena, B * S, 1, 1, D, D, lay, pair, rope_cos,
                                          rope_sin, M, rope_pos, 0)
                 : pe_rope_apply_backward(arena, arena, B, S, 1, D, D, lay, pair, rope_cos, rope_sin, M,
                                          rope_pos, 0);
            good(what, st, arena, want, B * S * D, NULL);
        } else {
            /* BHSD with heads = S and seq 1 keeps the fixtures' rows as tokens of one head */
            st = lay == PE_ROPE_BHSD
                 ? pe_rope_apply_backward(out, x, B * S, 1, 1, D, D, lay, pair, rope_cos, rope_sin, M,
                                          rope_pos, 0)
                 : pe_rope_apply_backward(out, x, B, S, 1, D, D, lay, pair, rope_cos, rope_sin, M,
                                          rope_pos, 0);
            good(what, st, out, want, B * S * D, out + B * S * D + GUARD);
        }
    }
    rope_inputs();
    BAD(pe_rope_apply_backward(out, x, B, S, 1, D, D, PE_ROPE_BSHD, PE_ROPE_HALF, rope_cos, NULL, M, NULL, 0), PE_ERR_NULL, "pe_rope_apply_backward: NULL sin");
    BADS(put(0, rope_sin, sizeof rope_sin), pe_rope_apply_backward(arena + 4, x, B, S, 1, D, D, PE_ROPE_BSHD, PE_ROPE_HALF, rope_cos, arena, M, NULL, 0), PE_ERR_ALIAS, "pe_rope_apply_backward: dx overlaps sin");
    BAD(pe_rope_apply_direct_backward(out, x, B, S, 1, D, D, PE_ROPE_BSHD, PE_ROPE_HALF, rope_inv, 0.0f, NULL, 0), PE_ERR_PARAM, "pe_rope_apply_direct_backward: attention factor 0");
    BADS(put(0, rope_inv, sizeof rope_inv), pe_rope_apply_direct_backward(arena, x, B, S, 1, D, D, PE_ROPE_BSHD, PE_ROPE_HALF, arena + 1, 1.0f, NULL, 0), PE_ERR_ALIAS, "pe_rope_apply_direct_backward: dx overlaps inv_freq");
}

/* ---- ffn: exact references ------------------------------------------------------------- */

/* y = x w^T + b in double: exact for the fixtures' multiples of 1/8. */
static void linear_ref(float *out_, const float *xi, const float *w, const float *b, size_t rows,
                       size_t in, size_t outf)
{
    size_t r, o, k;
    for (r = 0; r < rows; r++)
        for (o = 0; o < outf; o++) {
            double acc = b ? (double)b[o] : 0.0;
            for (k = 0; k < in; k++) acc += (double)xi[r * in + k] * (double)w[o * in + k];
            out_[r * outf + o] = (float)acc;
        }
}

static void block_ref(float *out_, const float *xi, const float *bb1, const float *bb2)
{
    float h[R * H];
    size_t i;
    linear_ref(h, xi, w1, bb1, R, D, H);
    for (i = 0; i < R * H; i++) h[i] = h[i] < 0 ? 0.0f : h[i];
    linear_ref(out_, h, w2, bb2, R, H, D);
}

/* ---- ffn_linear / ffn_linear_packed ------------------------------------------------------ */

/* The unpacked or the packed form of a Linear; w is the matching weight buffer. */
static int lin(int packed, float *yo, const float *xi, const float *w, const float *b,
               size_t rows, size_t in, size_t outf)
{
    return packed ? ffn_linear_packed(yo, xi, w, b, rows, in, outf)
                  : ffn_linear(yo, xi, w, b, rows, in, outf);
}

static void test_linear(int packed)
{
    const size_t big = SIZE_MAX / 2;
    const char *nm = packed ? "ffn_linear_packed" : "ffn_linear";
    const float *w = packed ? w1p : w1;
    const size_t wfloats = packed ? P1 : H * D;   /* what the weight occupies */
    float want[R * H];
#define T(desc) (snprintf(what, sizeof what, "%s: %s", nm, desc), what)

    /* y (R, H) = fx (R, D) w1^T + b1: the block's first layer. */
    BAD(lin(packed, NULL, fx, w, b1, R, D, H), FFN_ERR_NULL, "%s: NULL y", nm);
    BAD(lin(packed, y, NULL, w, b1, R, D, H), FFN_ERR_NULL, "%s: NULL x", nm);
    BAD(lin(packed, y, fx, NULL, b1, R, D, H), FFN_ERR_NULL, "%s: NULL weight", nm);
    BAD(lin(packed, y, fx, w, b1, 0, D, H), FFN_ERR_ZERO_SIZE, "%s: rows 0", nm);
    BAD(lin(packed, y, fx, w, b1, R, 0, H), FFN_ERR_ZERO_SIZE, "%s: in_features 0", nm);
    BAD(lin(packed, y, fx, w, b1, R, D, 0), FFN_ERR_ZERO_SIZE, "%s: out_features 0", nm);
    BAD(lin(packed, y, fx, NULL, b1, 0, D, H), FFN_ERR_NULL, "%s: NULL weight and rows 0 (NULL first)", nm);
    BAD(lin(packed, y, fx, w, b1, 0, big, 3), FFN_ERR_ZERO_SIZE, "%s: rows 0 and an overflowing in x out (zero first)", nm);
    BAD(lin(packed, y, fx, w, b1, big, 3, 1), FFN_ERR_OVERFLOW, "%s: rows SIZE_MAX/2 x in 3 (x size)", nm);
    BAD(lin(packed, y, fx, w, b1, big, 1, 3), FFN_ERR_OVERFLOW, "%s: rows SIZE_MAX/2 x out 3 (y size)", nm);
    BAD(lin(packed, y, fx, w, b1, 1, big, 3), FFN_ERR_OVERFLOW, "%s: in SIZE_MAX/2 x out 3 (weight size)", nm);
    BAD(lin(packed, y, fx, w, b1, SIZE_MAX / 8, 3, 1), FFN_ERR_OVERFLOW, "%s: rows SIZE_MAX/8 x in 3 (bytes only)", nm);
    if (packed) {
        /* out * in fits in bytes, but the padded panels (out rounded up to 16) do not */
        BAD(lin(packed, y, fx, w, b1, 1, SIZE_MAX / 64 + 1, 1), FFN_ERR_OVERFLOW, "%s: in SIZE_MAX/64+1 x out 1: only the 16-wide padded weight overflows", nm);
    }

    /* Aliasing: y may overlap nothing, not even y == x. */
    BAD(lin(packed, arena, arena, w, b1, R, D, D), FFN_ERR_ALIAS, "%s: y == x (not allowed for linear)", nm);
    BAD(lin(packed, arena + 1, arena, w, b1, R, D, H), FFN_ERR_ALIAS, "%s: y = x + 1 float (partial overlap)", nm);
    BAD(lin(packed, arena, arena + R * H - 1, w, b1, R, D, H), FFN_ERR_ALIAS, "%s: y's last float is x's first", nm);
    BAD(lin(packed, arena + 5, fx, arena, b1, R, D, H), FFN_ERR_ALIAS, "%s: y overlaps weight", nm);
    BAD(lin(packed, arena + wfloats - 1, fx, arena, b1, R, D, H), FFN_ERR_ALIAS, "%s: y's first float is the weight's last", nm);
    BAD(lin(packed, arena, fx, w, arena + R * H - 1, R, D, H), FFN_ERR_ALIAS, "%s: y overlaps bias (bias is y's last float)", nm);
    BAD(lin(packed, arena + H - 1, fx, w, arena, R, D, H), FFN_ERR_ALIAS, "%s: y's first float is bias's last", nm);

    /* Valid, with and without bias; packed and unpacked give the same (exact) bits. */
    GOOD(linear_ref(want, fx, w1, b1, R, D, H), lin(packed, y, fx, w, b1, R, D, H), y, want, R * H, y + R * H + GUARD, "%s: " "valid (3x4 -> 3x6) with bias", nm);
    GOOD(linear_ref(want, fx, w1, NULL, R, D, H), lin(packed, y, fx, w, NULL, R, D, H), y, want, R * H, y + R * H + GUARD, "%s: " "bias NULL is valid (no bias)", nm);
    GOOD((linear_ref(want, fx, w1, b1, R, D, H), memcpy(arena, fx, sizeof fx)), lin(packed, arena + R * D, arena, w, b1, R, D, H), arena + R * D, want, R * H, arena + R * D + R * H + GUARD, "%s: " "y starts right after x (no overlap)", nm);
    GOOD(memcpy(arena + R * H, b1, sizeof b1), lin(packed, arena, fx, w, arena + R * H, R, D, H), arena, want, R * H, NULL, "%s: " "bias starts right after y (no overlap)", nm);
    GOOD(memcpy(arena, w, wfloats * sizeof(float)), lin(packed, arena + wfloats, fx, arena, b1, R, D, H), arena + wfloats, want, R * H, arena + wfloats + R * H + GUARD, "%s: " "y starts right after the weight (no overlap)", nm);
#undef T
}

/* ---- ffn_relu ------------------------------------------------------------------------------ */

/* ffn_relu(y, x, n), or ffn_activation(y, x, n, FFN_RELU) with via_act: the same checks. */
static int relu_via(int via_act, float *yo, const float *xi, size_t n)
{
    return via_act ? ffn_activation(yo, xi, n, FFN_RELU) : ffn_relu(yo, xi, n);
}
#define ffn_relu(yo, xi, n) relu_via(via_act, yo, xi, n)

static void test_relu(int via_act)
{
    float want[R * D];
    size_t i;
    BAD(ffn_relu(NULL, fx, R * D), FFN_ERR_NULL, "ffn_relu: NULL y");
    BAD(ffn_relu(y, NULL, R * D), FFN_ERR_NULL, "ffn_relu: NULL x");
    BAD(ffn_relu(y, fx, 0), FFN_ERR_ZERO_SIZE, "ffn_relu: n 0");
    BAD(ffn_relu(y, NULL, 0), FFN_ERR_NULL, "ffn_relu: NULL x and n 0 (NULL first)");
    /* one size only: its byte count is what overflows */
    BAD(ffn_relu(y, fx, SIZE_MAX / 4 + 1), FFN_ERR_OVERFLOW, "ffn_relu: n SIZE_MAX/4 + 1 (bytes overflow)");
    BAD(ffn_relu(y, fx, SIZE_MAX), FFN_ERR_OVERFLOW, "ffn_relu: n SIZE_MAX");
    BAD(ffn_relu(arena + 1, arena, R * D), FFN_ERR_ALIAS, "ffn_relu: y = x + 1 float (partial overlap)");
    BAD(ffn_relu(arena, arena + 1, R * D), FFN_ERR_ALIAS, "ffn_relu: y = x - 1 float (partial overlap)");

    /* Valid. The relu of these values needs no torch reference: x < 0 -> +0, else x. */
    setup();
    for (i = 0; i < R * D; i++) want[i] = fx[i] < 0 ? 0.0f : fx[i];
    good("ffn_relu: valid out of place", ffn_relu(y, fx, R * D), y, want, R * D,
         y + R * D + GUARD);
    GOOD(memcpy(arena, fx, sizeof fx), ffn_relu(arena, arena, R * D), arena, want, R * D, arena + R * D + GUARD, "ffn_relu: y == x is allowed (in place)");
    GOOD(memcpy(arena, fx, sizeof fx), ffn_relu(arena + R * D, arena, R * D), arena + R * D, want, R * D, arena + 2 * R * D + GUARD, "ffn_relu: y right after x (no overlap)");

    /* The special values ffn.h documents (torch.relu is clamp_min): NaN stays NaN, -0.0
       stays -0.0, -inf and negatives give +0.0, +inf stays. Out of place and in place. */
    {
        float v[6], r[6];
        int k, st;
        for (k = 0; k < 2; k++) {
            v[0] = -0.0f; v[1] = (float)NAN; v[2] = -(float)INFINITY; v[3] = (float)INFINITY;
            v[4] = -1.0f; v[5] = 1.5f;
            st = k ? ffn_relu(v, v, 6) : ffn_relu(r, v, 6);
            if (k) memcpy(r, v, sizeof r);
            check(st == FFN_OK && r[0] == 0 && signbit(r[0]) && isnan(r[1]) && r[2] == 0 &&
                  !signbit(r[2]) && isinf(r[3]) && r[3] > 0 && r[4] == 0 && !signbit(r[4]) &&
                  r[5] == 1.5f,
                  "ffn_relu%s: -0 -> -0, NaN -> NaN, -inf -> +0, inf -> inf, -1 -> +0, 1.5 -> 1.5",
                  k ? " in place" : "");
        }
    }
}
#undef ffn_relu

/* ffn_activation's own checks: act is checked first, and the other activations follow
   ffn_relu's rules (their values are the goldens' business). */
static void test_activation(void)
{
    static const int bad[] = {-1, 5, 1000, INT_MIN, INT_MAX, FFN_FAST | 5, FFN_FAST - 1,
                              FFN_FAST * 2, FFN_FAST | FFN_SIGMOID | 32};
    const int acts[] = {FFN_GELU, FFN_GELU_TANH, FFN_SILU, FFN_GELU | FFN_FAST,
                        FFN_GELU_TANH | FFN_FAST, FFN_SILU | FFN_FAST};
    size_t i;
    for (i = 0; i < sizeof bad / sizeof *bad; i++)
        BAD(ffn_activation(y, fx, R * D, bad[i]), FFN_ERR_ARG, "ffn_activation: act %d", bad[i]);
    BAD(ffn_activation(NULL, fx, R * D, 5), FFN_ERR_ARG, "ffn_activation: act 5 and NULL y (act checked first)");
    for (i = 0; i < sizeof acts / sizeof *acts; i++) {
        float v[4], r[4];
        int st;
        BAD(ffn_activation(y, NULL, R * D, acts[i]), FFN_ERR_NULL, "ffn_activation %d: NULL x", acts[i]);
        BAD(ffn_activation(y, fx, 0, acts[i]), FFN_ERR_ZERO_SIZE, "ffn_activation %d: n 0", acts[i]);
        BAD(ffn_activation(y, fx, SIZE_MAX, acts[i]), FFN_ERR_OVERFLOW, "ffn_activation %d: n SIZE_MAX", acts[i]);
        BAD(ffn_activation(arena + 1, arena, R * D, acts[i]), FFN_ERR_ALIAS, "ffn_activation %d: y = x + 1 float", acts[i]);
        /* the special values the header documents: NaN -> NaN, -0 -> -0, -inf -> NaN,
           inf -> inf (in place) */
        v[0] = (float)NAN; v[1] = -0.0f; v[2] = -(float)INFINITY; v[3] = (float)INFINITY;
        st = ffn_activation(v, v, 4, acts[i]);
        memcpy(r, v, sizeof r);
        check(st == FFN_OK && isnan(r[0]) && r[1] == 0 && signbit(r[1]) && isnan(r[2]) &&
              isinf(r[3]) && r[3] > 0,
              "ffn_activation %d: NaN -> NaN, -0 -> -0, -inf -> NaN, inf -> inf", acts[i]);
    }
    for (i = 0; i < 2; i++) {   /* the sigmoid: 1 / (1 + exp(-x)), libm's and FFN_FAST */
        const int act = i ? FFN_SIGMOID | FFN_FAST : FFN_SIGMOID;
        float v[4];
        int st;
        v[0] = (float)NAN; v[1] = -0.0f; v[2] = -(float)INFINITY; v[3] = (float)INFINITY;
        st = ffn_activation(v, v, 4, act);
        check(st == FFN_OK && isnan(v[0]) && v[1] == 0.5f && v[2] == 0 && !signbit(v[2]) &&
              v[3] == 1.0f, "ffn_activation %d (sigmoid): NaN -> NaN, -0 -> 0.5, -inf -> +0, "
              "inf -> 1", act);
    }
    {   /* FFN_RELU | FFN_FAST is the ReLU */
        float v[3] = {-1.0f, -0.0f, 2.0f};
        check(ffn_activation(v, v, 3, FFN_RELU | FFN_FAST) == FFN_OK && v[0] == 0 &&
                  !signbit(v[0]) && v[1] == 0 && signbit(v[1]) && v[2] == 2.0f,
              "ffn_activation FFN_RELU | FFN_FAST: torch.relu");
    }
}

/* ---- ffn_block_scratch_floats, ffn_block, ffn_block_packed ------------------------------- */

/* mode: 0 ffn_block, 1 ffn_block_packed, 2 ffn_block_act(FFN_RELU), 3 its packed twin:
   the same checks for all four. */
static int blk(int mode, float *yo, const float *xi, const float *a1, const float *c1,
               const float *a2, const float *c2, size_t rows, size_t d, size_t h, float *scr,
               size_t nscr)
{
    switch (mode) {
    case 0: return ffn_block(yo, xi, a1, c1, a2, c2, rows, d, h, scr, nscr);
    case 1: return ffn_block_packed(yo, xi, a1, c1, a2, c2, rows, d, h, scr, nscr);
    case 2: return ffn_block_act(yo, xi, a1, c1, a2, c2, rows, d, h, FFN_RELU, scr, nscr);
    default:
        return ffn_block_act_packed(yo, xi, a1, c1, a2, c2, rows, d, h, FFN_RELU, scr, nscr);
    }
}

static void test_scratch_floats(void)
{
    const size_t need = ffn_block_scratch_floats(R, D, H);
    check(ffn_block_scratch_floats(0, D, H) == 0, "ffn_block_scratch_floats: rows 0 -> 0");
    check(ffn_block_scratch_floats(R, 0, H) == 0, "ffn_block_scratch_floats: d_model 0 -> 0");
    check(ffn_block_scratch_floats(R, D, 0) == 0, "ffn_block_scratch_floats: hidden 0 -> 0");
    check(ffn_block_scratch_floats(SIZE_MAX / 2, 1, 3) == 0,
          "ffn_block_scratch_floats: rows SIZE_MAX/2 x hidden 3 -> 0");
    check(ffn_block_scratch_floats(SIZE_MAX / 8, 1, 3) == 0,
          "ffn_block_scratch_floats: rows SIZE_MAX/8 x hidden 3 (bytes) -> 0");
    check(need > 0 && need <= SCRATCH_CAP, "ffn_block_scratch_floats(%d, %d, %d) = %zu",
          R, D, H, need);
}

static void test_block(int mode)
{
    static const char *const names[] = {"ffn_block", "ffn_block_packed", "ffn_block_act",
                                        "ffn_block_act_packed"};
    const int packed = mode & 1;
    const size_t big = SIZE_MAX / 2;
    const size_t need = ffn_block_scratch_floats(R, D, H);
    const char *nm = names[mode];
    const float *a1 = packed ? w1p : w1, *a2 = packed ? w2p : w2;
    const size_t w2floats = packed ? P2 : D * H;
    float want[R * D], ref[R * D];
    char what[200];
#define T(desc) (snprintf(what, sizeof what, "%s: %s", nm, desc), what)

    if (need == 0 || need > SCRATCH_CAP) {
        check(0, "%s: not run, scratch size %zu does not fit the fixtures", nm, need);
        return;
    }
    BAD(blk(mode, NULL, fx, a1, b1, a2, b2, R, D, H, scratch, need), FFN_ERR_NULL, "%s: NULL y", nm);
    BAD(blk(mode, y, NULL, a1, b1, a2, b2, R, D, H, scratch, need), FFN_ERR_NULL, "%s: NULL x", nm);
    BAD(blk(mode, y, fx, NULL, b1, a2, b2, R, D, H, scratch, need), FFN_ERR_NULL, "%s: NULL w1", nm);
    BAD(blk(mode, y, fx, a1, b1, NULL, b2, R, D, H, scratch, need), FFN_ERR_NULL, "%s: NULL w2", nm);
    BAD(blk(mode, y, fx, a1, b1, a2, b2, R, D, H, NULL, need), FFN_ERR_NULL, "%s: NULL scratch", nm);
    BAD(blk(mode, y, fx, a1, b1, a2, b2, 0, D, H, scratch, need), FFN_ERR_ZERO_SIZE, "%s: rows 0", nm);
    BAD(blk(mode, y, fx, a1, b1, a2, b2, R, 0, H, scratch, need), FFN_ERR_ZERO_SIZE, "%s: d_model 0", nm);
    BAD(blk(mode, y, fx, a1, b1, a2, b2, R, D, 0, scratch, need), FFN_ERR_ZERO_SIZE, "%s: hidden 0", nm);
    BAD(blk(mode, y, fx, a1, b1, a2, b2, big, 3, 1, scratch, need), FFN_ERR_OVERFLOW, "%s: rows SIZE_MAX/2 x d_model 3 (x size)", nm);
    BAD(blk(mode, y, fx, a1, b1, a2, b2, 1, big, 3, scratch, need), FFN_ERR_OVERFLOW, "%s: d_model SIZE_MAX/2 x hidden 3 (weight size)", nm);
    BAD(blk(mode, y, fx, a1, b1, a2, b2, big, 1, 3, scratch, need), FFN_ERR_OVERFLOW, "%s: rows SIZE_MAX/2 x hidden 3 (hidden size)", nm);
    BAD(blk(mode, y, fx, a1, b1, a2, b2, SIZE_MAX / 8, 3, 1, scratch, need), FFN_ERR_OVERFLOW, "%s: rows SIZE_MAX/8 x d_model 3 (bytes only)", nm);

    BAD(blk(mode, y, fx, a1, b1, a2, b2, R, D, H, scratch, need - 1), FFN_ERR_SCRATCH, "%s: scratch_floats %zu (one float short)", nm, need - 1);
    BAD(blk(mode, y, fx, a1, b1, a2, b2, R, D, H, scratch, 0), FFN_ERR_SCRATCH, "%s: scratch_floats 0", nm);
    BAD(blk(mode, arena, fx, a1, b1, a2, b2, R, D, H, arena, need - 1), FFN_ERR_SCRATCH, "%s: short scratch that also aliases y (scratch checked first)", nm);

    /* Aliasing: y == x is the only overlap allowed. The arena holds the overlapping
       buffers; the others are the valid fixtures. */
    BAD(blk(mode, arena + 1, arena, a1, b1, a2, b2, R, D, H, scratch, need), FFN_ERR_ALIAS, "%s: y = x + 1 float (partial overlap)", nm);
    BAD(blk(mode, arena + 3, fx, arena, b1, a2, b2, R, D, H, scratch, need), FFN_ERR_ALIAS, "%s: y overlaps w1", nm);
    BAD(blk(mode, arena, fx, a1, arena + R * D - 1, a2, b2, R, D, H, scratch, need), FFN_ERR_ALIAS, "%s: " "y overlaps b1", nm);
    BAD(blk(mode, arena + w2floats - 1, fx, a1, b1, arena, b2, R, D, H, scratch, need), FFN_ERR_ALIAS, "%s: " "y's first float is w2's last", nm);
    BAD(blk(mode, arena + 2, fx, a1, b1, a2, arena, R, D, H, scratch, need), FFN_ERR_ALIAS, "%s: y overlaps b2", nm);
    BAD(blk(mode, arena, fx, a1, b1, a2, b2, R, D, H, arena + R * D - 1, need), FFN_ERR_ALIAS, "%s: scratch overlaps y", nm);
    BAD(blk(mode, y, arena + need - 1, a1, b1, a2, b2, R, D, H, arena, need), FFN_ERR_ALIAS, "%s: scratch overlaps x", nm);
    BAD(blk(mode, y, fx, arena + 1, b1, a2, b2, R, D, H, arena, need), FFN_ERR_ALIAS, "%s: scratch overlaps w1", nm);
    BAD(blk(mode, y, fx, a1, arena + need - 1, a2, b2, R, D, H, arena, need), FFN_ERR_ALIAS, "%s: scratch overlaps b1", nm);
    BAD(blk(mode, y, fx, a1, b1, arena + 4, b2, R, D, H, arena, need), FFN_ERR_ALIAS, "%s: scratch overlaps w2", nm);
    BAD(blk(mode, y, fx, a1, b1, a2, arena + need - 1, R, D, H, arena, need), FFN_ERR_ALIAS, "%s: scratch overlaps b2", nm);
    BAD(blk(mode, arena, arena, a1, b1, a2, b2, R, D, H, arena, need), FFN_ERR_ALIAS, "%s: scratch == x == y", nm);

    /* Valid calls; the exact reference is in double (exact for the fixtures), so the
       packed and unpacked forms are also checked to give the same bits. */
    GOOD(block_ref(want, fx, b1, b2), blk(mode, y, fx, a1, b1, a2, b2, R, D, H, scratch, need), y, want, R * D, y + R * H + GUARD, "%s: " "valid (3x4, hidden 6)", nm);
    snprintf(what, sizeof what, "%s: writes no scratch beyond scratch_floats(...)", nm);
    check(untouched(scratch + need, GUARD * sizeof(float)), "%s", what);
    memcpy(ref, y, sizeof ref);      /* the out-of-place bits */
    GOOD(memcpy(arena, fx, sizeof fx), blk(mode, arena, arena, a1, b1, a2, b2, R, D, H, scratch, need), arena, ref, R * D, arena + R * D + GUARD, "%s: " "y == x is allowed and gives the out-of-place bits", nm);
    GOOD((void)0, blk(mode, y, fx, a1, b1, a2, b2, R, D, H, scratch, need + GUARD), y, want, R * D, NULL, "%s: " "scratch larger than needed", nm);
    GOOD(block_ref(want, fx, NULL, b2), blk(mode, y, fx, a1, NULL, a2, b2, R, D, H, scratch, need), y, want, R * D, NULL, "%s: " "b1 NULL is valid", nm);
    GOOD(block_ref(want, fx, b1, NULL), blk(mode, y, fx, a1, b1, a2, NULL, R, D, H, scratch, need), y, want, R * D, NULL, "%s: " "b2 NULL is valid", nm);
    GOOD(block_ref(want, fx, NULL, NULL), blk(mode, y, fx, a1, NULL, a2, NULL, R, D, H, scratch, need), y, want, R * D, NULL, "%s: " "b1 and b2 NULL", nm);
    GOOD(block_ref(want, fx, b1, b2), blk(mode, arena, fx, a1, b1, a2, b2, R, D, H, arena + R * D, need), arena, want, R * D, NULL, "%s: " "scratch right after y (no overlap)", nm);
    if (mode >= 2) {    /* act: checked first, whatever else is wrong */
        static const int bad[] = {-1, 5, INT_MAX, FFN_FAST | 5};
        size_t i;
        for (i = 0; i < sizeof bad / sizeof *bad; i++)
            BAD(packed ? ffn_block_act_packed(y, fx, a1, b1, a2, b2, R, D, H, bad[i], scratch, need) : ffn_block_act(y, fx, a1, b1, a2, b2, R, D, H, bad[i], scratch, need), FFN_ERR_ARG, "%s: act %d", nm, bad[i]);
        BAD(packed ? ffn_block_act_packed(NULL, fx, a1, b1, a2, b2, R, D, H, -1, scratch, 0) : ffn_block_act(NULL, fx, a1, b1, a2, b2, R, D, H, -1, scratch, 0), FFN_ERR_ARG, "%s: " "act -1, NULL y and scratch short (act first)", nm);
    }
#undef T
}

/* ---- ffn_gated_scratch_floats, ffn_gated, ffn_gated_packed ------------------------------- */

/* down(act(gate x) * up x) with gate = up = w1, down = w2; FFN_RELU keeps it exact. */
static void gated_ref(float *out_, const float *xi, const float *bg, const float *bu,
                      const float *bd)
{
    float g[R * H], u[R * H];
    size_t i;
    linear_ref(g, xi, w1, bg, R, D, H);
    linear_ref(u, xi, w1, bu, R, D, H);
    for (i = 0; i < R * H; i++) g[i] = (g[i] < 0 ? 0.0f : g[i]) * u[i];
    linear_ref(out_, g, w2, bd, R, H, D);
}

static int gat(int packed, float *yo, const float *xi, const float *wg, const float *bg,
               const float *wu, const float *bu, const float *wd, const float *bd, size_t rows,
               size_t d, size_t h, int act, float *scr, size_t nscr)
{
    return packed ? ffn_gated_packed(yo, xi, wg, bg, wu, bu, wd, bd, rows, d, h, act, scr, nscr)
                  : ffn_gated(yo, xi, wg, bg, wu, bu, wd, bd, rows, d, h, act, scr, nscr);
}

static void test_gated(int packed)
{
    const size_t need = ffn_gated_scratch_floats(R, D, H), big = SIZE_MAX / 2;
    const char *nm = packed ? "ffn_gated_packed" : "ffn_gated";
    const float *a1 = packed ? w1p : w1, *a2 = packed ? w2p : w2;
    const size_t w1floats = packed ? P1 : H * D, w2floats = packed ? P2 : D * H;
    float want[R * D];
    char what[200];
#define T(desc) (snprintf(what, sizeof what, "%s: %s", nm, desc), what)
#define G(yo, xi, wg, bg, wu, bu, wd, bd, rows, d, h, act, scr, nscr) \
    gat(packed, yo, xi, wg, bg, wu, bu, wd, bd, rows, d, h, act, scr, nscr)

    check(ffn_gated_scratch_floats(0, D, H) == 0 && ffn_gated_scratch_floats(SIZE_MAX / 4, 1, 1) == 0,
          "ffn_gated_scratch_floats: rows 0 -> 0, rows SIZE_MAX/4 (twice its floats overflow) -> 0");
    if (need < 2 * R * H || need > SCRATCH_CAP) {
        check(0, "%s: not run, scratch size %zu does not fit the fixtures", nm, need);
        return;
    }
    BAD(G(y, fx, a1, b1, a1, b1, a2, b2, R, D, H, 6, scratch, need), FFN_ERR_ARG, "%s: act 6 (FFN_GPT_OSS + 1)", nm);
    BAD(G(y, fx, a1, b1, a1, b1, a2, b2, R, D, H, FFN_FAST | 6, scratch, need), FFN_ERR_ARG, "%s: act FFN_FAST | 6", nm);
    BAD(G(NULL, fx, a1, b1, a1, b1, a2, b2, R, D, H, -1, scratch, 0), FFN_ERR_ARG, "%s: act -1, NULL y, scratch 0 (act first)", nm);
    BAD(G(NULL, fx, a1, b1, a1, b1, a2, b2, R, D, H, FFN_SILU, scratch, need), FFN_ERR_NULL, "%s: NULL y", nm);
    BAD(G(y, NULL, a1, b1, a1, b1, a2, b2, R, D, H, FFN_SILU, scratch, need), FFN_ERR_NULL, "%s: NULL x", nm);
    BAD(G(y, fx, NULL, b1, a1, b1, a2, b2, R, D, H, FFN_SILU, scratch, need), FFN_ERR_NULL, "%s: NULL w_gate", nm);
    BAD(G(y, fx, a1, b1, NULL, b1, a2, b2, R, D, H, FFN_SILU, scratch, need), FFN_ERR_NULL, "%s: NULL w_up", nm);
    BAD(G(y, fx, a1, b1, a1, b1, NULL, b2, R, D, H, FFN_SILU, scratch, need), FFN_ERR_NULL, "%s: NULL w_down", nm);
    BAD(G(y, fx, a1, b1, a1, b1, a2, b2, R, D, H, FFN_SILU, NULL, need), FFN_ERR_NULL, "%s: NULL scratch", nm);
    BAD(G(y, fx, a1, b1, a1, b1, a2, b2, 0, D, H, FFN_SILU, scratch, need), FFN_ERR_ZERO_SIZE, "%s: rows 0", nm);
    BAD(G(y, fx, a1, b1, a1, b1, a2, b2, R, 0, H, FFN_SILU, scratch, need), FFN_ERR_ZERO_SIZE, "%s: d_model 0", nm);
    BAD(G(y, fx, a1, b1, a1, b1, a2, b2, R, D, 0, FFN_SILU, scratch, need), FFN_ERR_ZERO_SIZE, "%s: hidden 0", nm);
    BAD(G(y, fx, a1, b1, a1, b1, a2, b2, big, 3, 1, FFN_SILU, scratch, need), FFN_ERR_OVERFLOW, "%s: rows SIZE_MAX/2 x d_model 3", nm);
    BAD(G(y, fx, a1, b1, a1, b1, a2, b2, SIZE_MAX / 4, 1, 1, FFN_SILU, scratch, need), FFN_ERR_OVERFLOW, "%s: " "rows SIZE_MAX/4 x hidden 1 (the two hidden buffers' bytes)", nm);
    BAD(G(y, fx, a1, b1, a1, b1, a2, b2, R, D, H, FFN_SILU, scratch, need - 1), FFN_ERR_SCRATCH, "%s: scratch one float short", nm);
    BAD(G(y, fx, a1, b1, a1, b1, a2, b2, R, D, H, FFN_SILU, scratch, ffn_block_scratch_floats(R, D, H)), FFN_ERR_SCRATCH, "%s: " "scratch of ffn_block's size (half)", nm);
    BAD(G(arena + 1, arena, a1, b1, a1, b1, a2, b2, R, D, H, FFN_SILU, scratch, need), FFN_ERR_ALIAS, "%s: " "y = x + 1 float", nm);
    BAD(G(arena + 3, fx, arena, b1, a1, b1, a2, b2, R, D, H, FFN_SILU, scratch, need), FFN_ERR_ALIAS, "%s: " "y overlaps w_gate", nm);
    BAD(G(arena + w1floats - 1, fx, a1, b1, arena, b1, a2, b2, R, D, H, FFN_SILU, scratch, need), FFN_ERR_ALIAS, "%s: " "y's first float is w_up's last", nm);
    BAD(G(arena, fx, a1, b1, a1, arena + R * D - 1, a2, b2, R, D, H, FFN_SILU, scratch, need), FFN_ERR_ALIAS, "%s: " "y overlaps b_up", nm);
    BAD(G(arena + w2floats - 1, fx, a1, b1, a1, b1, arena, b2, R, D, H, FFN_SILU, scratch, need), FFN_ERR_ALIAS, "%s: " "y's first float is w_down's last", nm);
    BAD(G(arena + need - 1, fx, a1, b1, a1, b1, a2, b2, R, D, H, FFN_SILU, arena, need), FFN_ERR_ALIAS, "%s: " "scratch's last float is y's first", nm);
    BAD(G(y, arena + need - 1, a1, b1, a1, b1, a2, b2, R, D, H, FFN_SILU, arena, need), FFN_ERR_ALIAS, "%s: " "scratch overlaps x", nm);
    BAD(G(y, fx, a1, b1, arena + 2, b1, a2, b2, R, D, H, FFN_SILU, arena, need), FFN_ERR_ALIAS, "%s: scratch overlaps w_up", nm);
    BAD(G(y, fx, a1, b1, a1, b1, a2, arena + need - 1, R, D, H, FFN_SILU, arena, need), FFN_ERR_ALIAS, "%s: " "scratch overlaps b_down", nm);

    /* Valid calls: ReGLU (FFN_RELU) on the fixtures is exact in double. */
    GOOD(gated_ref(want, fx, b1, b1, b2), G(y, fx, a1, b1, a1, b1, a2, b2, R, D, H, FFN_RELU, scratch, need), y, want, R * D, y + R * H + GUARD, "%s: " "valid ReGLU (3x4, hidden 6)", nm);
    snprintf(what, sizeof what, "%s: writes no scratch beyond scratch_floats(...)", nm);
    check(untouched(scratch + need, GUARD * sizeof(float)), "%s", what);
    GOOD(memcpy(arena, fx, sizeof fx), G(arena, arena, a1, b1, a1, b1, a2, b2, R, D, H, FFN_RELU, scratch, need), arena, want, R * D, arena + R * D + GUARD, "%s: " "y == x is allowed", nm);
    GOOD(gated_ref(want, fx, NULL, NULL, NULL), G(y, fx, a1, NULL, a1, NULL, a2, NULL, R, D, H, FFN_RELU, scratch, need), y, want, R * D, NULL, "%s: " "no biases", nm);
    GOOD(gated_ref(want, fx, b1, NULL, b2), G(arena, fx, a1, b1, a1, NULL, a2, b2, R, D, H, FFN_RELU, arena + R * D, need), arena, want, R * D, NULL, "%s: " "scratch right after y, b_up NULL", nm);
#undef G
#undef T
}

/* ---- ffn_pack_floats, ffn_pack_weight ------------------------------------------------------ */

/* t 1: ffn_pack_weight_in_out on the transposed weights (GPT-2's Conv1D layout); t 2:
   ffn_pack_weight_strided on them interleaved with NaNs as GPT-OSS's gate in its fused
   gate_up (element (o, k) at 2 o + 2 out k): the very same packed buffers and statuses. */
static const char *pack_name(int t, const char *msg)
{
    static char buf[160];
    snprintf(buf, sizeof buf, "%s: %s", t == 0 ? "ffn_pack_weight" : t == 1 ?
             "ffn_pack_weight_in_out" : "ffn_pack_weight_strided (2, 2 out)", msg);
    return buf;
}

static float w1t[D * H], w1g[2 * D * H], w2g[48];
static int pack_any(int t, float *pk, size_t n, const float *w, size_t in, size_t out)
{
    if (t == 1) return ffn_pack_weight_in_out(pk, n, w == w1 ? w1t : w, in, out);
    if (t == 2) return ffn_pack_weight_strided(pk, n, w == w1 ? w1g : w == w2 ? w2g : w, in,
                                               out, 2, 2 * out);
    return ffn_pack_weight(pk, n, w, in, out);
}

static void test_pack(int t)
{
#define N(msg) pack_name(t, msg)
#define PW(pk, n, w, in, out) pack_any(t, pk, n, w, in, out)
    const size_t big = SIZE_MAX / 2;
    const size_t need = ffn_pack_floats(D, H);
    size_t i, k;
    for (i = 0; i < H; i++)
        for (k = 0; k < D; k++) {
            w1t[k * H + i] = w1[i * D + k];
            w1g[k * 2 * H + 2 * i] = w1[i * D + k];
            w1g[k * 2 * H + 2 * i + 1] = (float)NAN;    /* the up projection's place */
        }
    for (i = 0; i < 24; i++) {
        w2g[2 * i] = w2[i];
        w2g[2 * i + 1] = (float)NAN;
    }
    if (t == 2) {   /* the strides' own checks, and nn.Linear's and Conv1D's strides */
        float want[16 * D];
        pack_ref(want, w1, D, H);
        BAD(ffn_pack_weight_strided(arena, need, w1, D, H, 0, D), FFN_ERR_ZERO_SIZE, "%s", N("stride_out 0"));
        BAD(ffn_pack_weight_strided(arena, need, w1, D, H, 1, 0), FFN_ERR_ZERO_SIZE, "%s", N("stride_in 0"));
        BAD(ffn_pack_weight_strided(arena, need, w1, D, H, SIZE_MAX / 2, 1), FFN_ERR_OVERFLOW, "%s", N("stride_out SIZE_MAX/2 (span overflows)"));
        BAD(ffn_pack_weight_strided(arena, need, w1, D, 2, SIZE_MAX / 8, SIZE_MAX / 8 - 1), FFN_ERR_OVERFLOW, "%s", N("a span of more than SIZE_MAX/4 floats (its bytes overflow)"));
        GOOD((void)0, ffn_pack_weight_strided(arena, need, w1, D, H, D, 1), arena, want, need, arena + need + GUARD, "%s", N("strides (in, 1): ffn_pack_weight"));
        GOOD((void)0, ffn_pack_weight_strided(arena, need, w1t, D, H, 1, H), arena, want, need, arena + need + GUARD, "%s", N("strides (1, out): ffn_pack_weight_in_out"));
    }

    /* The size and layout are documented (a packed buffer may be saved and reloaded):
       ceil(out / 16) * 16 * in floats, packed[(p*in + k)*16 + j] = w[p*16 + j][k]. */
    check(ffn_pack_floats(0, H) == 0, "ffn_pack_floats: in 0 -> 0");
    check(ffn_pack_floats(D, 0) == 0, "ffn_pack_floats: out 0 -> 0");
    check(ffn_pack_floats(big, 3) == 0, "ffn_pack_floats: in SIZE_MAX/2 x out 3 -> 0");
    check(ffn_pack_floats(SIZE_MAX / 64 + 1, 1) == 0,
          "ffn_pack_floats: in SIZE_MAX/64+1 x out 1 -> 0 (padded to 16 outputs, bytes overflow)");
    check(ffn_pack_floats(D, H) == 16 * D && ffn_pack_floats(D, 16) == 16 * D &&
          ffn_pack_floats(D, 17) == 32 * D && ffn_pack_floats(1, 1) == 16,
          "ffn_pack_floats = ceil(out/16)*16*in (4x6 -> 64, 4x16 -> 64, 4x17 -> 128, 1x1 -> 16)");

    BAD(PW(NULL, need, w1, D, H), FFN_ERR_NULL, "%s", N("NULL packed"));
    BAD(PW(arena, need, NULL, D, H), FFN_ERR_NULL, "%s", N("NULL weight"));
    BAD(PW(arena, need, w1, 0, H), FFN_ERR_ZERO_SIZE, "%s", N("in_features 0"));
    BAD(PW(arena, need, w1, D, 0), FFN_ERR_ZERO_SIZE, "%s", N("out_features 0"));
    BAD(PW(arena, need, w1, big, 3), FFN_ERR_OVERFLOW, "%s", N("in SIZE_MAX/2 x out 3"));
    BAD(PW(arena, need, w1, SIZE_MAX / 64 + 1, 1), FFN_ERR_OVERFLOW, "%s", N("in SIZE_MAX/64+1 x out 1 (padded size overflows)"));
    BAD(PW(arena, need - 1, w1, D, H), FFN_ERR_SCRATCH, "%s", N("packed_floats one short"));
    BAD(PW(arena, 0, w1, D, H), FFN_ERR_SCRATCH, "%s", N("packed_floats 0"));
    BADS(put(need - 1, w1, sizeof w1), PW(arena, need, arena + need - 1, D, H), FFN_ERR_ALIAS, "%s", N("packed's last float is weight's first"));
    BADS(put(0, w1, sizeof w1), PW(arena + H * D - 1, need, arena, D, H), FFN_ERR_ALIAS, "%s", N("packed starts at weight's last float"));

    setup();
    {
        float want[16 * D];
        memset(want, 0, sizeof want);            /* +0.0 padding */
        for (i = 0; i < 16 * D; i++)
            if (i % 16 < H) want[i] = w1[(i % 16) * D + i / 16];
        good(N("6x4 weight -> documented layout, zero padded"),
             PW(arena, need, w1, D, H), arena, want, need, arena + need + GUARD);
    }
    setup();
    {   /* w2's 24 floats as a (24, 1) weight: two panels of 16, the second half padding */
        float want[32];
        memset(want, 0, sizeof want);
        for (i = 0; i < 24; i++) want[i] = w2[i];
        good(N("24x1 weight -> 2 panels of 16, zero padded"),
             PW(arena, 32, w2, 1, 24), arena, want, 32, arena + 32 + GUARD);
    }
    setup();
    {   /* the packed form must not depend on what was in the buffer before */
        float want[16 * D];
        pack_ref(want, w1, D, H);
        memset(arena, 0xFF, need * sizeof(float));      /* NaN everywhere */
        good(N("padding is written as 0, not left as it was"),
             PW(arena, need, w1, D, H), arena, want, need, NULL);
    }
#undef PW
#undef N
}

/* ---- ffn_linear_backward ------------------------------------------------------------ */

/* The fixtures' Linear fx (R, D) -> (R, H) with w1 (H, D), and dy = y's first R * H
   values: every gradient is a short sum of multiples of 1/64, exact in any order. */
static void test_linear_backward(void)
{
    const size_t ns = ffn_linear_backward_scratch_floats(R, D, H);
    float *dx = arena, *dw = arena + R * D, *db = arena + R * D + H * D;
    float dy[R * H], want_dx[R * D], want_dw[H * D], want_db[H];
    size_t r, k, o;
    char what[160];
#define LB(dx_, dw_, db_, dy_, x_, w_, rows, in, out_, s_, n_) \
    ffn_linear_backward(dx_, dw_, db_, dy_, x_, w_, rows, in, out_, s_, n_)
    for (k = 0; k < R * H; k++) dy[k] = val(k, 10);
    check(ffn_linear_backward_scratch_floats(0, D, H) == 0 &&
              ffn_linear_backward_scratch_floats(R, 0, H) == 0 &&
              ffn_linear_backward_scratch_floats(R, D, 0) == 0 &&
              ffn_linear_backward_scratch_floats(SIZE_MAX / 2, D, H) == 0,
          "ffn_linear_backward_scratch_floats: 0 for a zero size or an overflow");
    if (ns == 0 || ns > SCRATCH_CAP) {
        check(0, "ffn_linear_backward: not run, scratch %zu does not fit the fixtures", ns);
        return;
    }
    BAD(LB(dx, dw, db, NULL, fx, w1, R, D, H, scratch, ns), FFN_ERR_NULL, "ffn_linear_backward: NULL dy");
    BAD(LB(NULL, NULL, NULL, dy, fx, w1, R, D, H, scratch, ns), FFN_ERR_NULL, "ffn_linear_backward: no output (dx, dw, db all NULL)");
    BAD(LB(dx, NULL, NULL, dy, fx, NULL, R, D, H, scratch, ns), FFN_ERR_NULL, "ffn_linear_backward: dx without w");
    BAD(LB(NULL, dw, NULL, dy, NULL, w1, R, D, H, scratch, ns), FFN_ERR_NULL, "ffn_linear_backward: dw without x");
    BAD(LB(dx, dw, db, dy, fx, w1, R, D, H, NULL, ns), FFN_ERR_NULL, "ffn_linear_backward: NULL scratch");
    BAD(LB(dx, dw, db, dy, fx, w1, 0, D, H, scratch, ns), FFN_ERR_ZERO_SIZE, "ffn_linear_backward: rows 0");
    BAD(LB(dx, dw, db, dy, fx, w1, R, D, 0, scratch, ns), FFN_ERR_ZERO_SIZE, "ffn_linear_backward: out 0");
    BAD(LB(dx, dw, db, dy, fx, w1, SIZE_MAX / 2, D, H, scratch, ns), FFN_ERR_OVERFLOW, "ffn_linear_backward: rows SIZE_MAX/2");
    BAD(LB(dx, dw, db, dy, fx, w1, R, D, H, scratch, ns - 1), FFN_ERR_SCRATCH, "ffn_linear_backward: scratch one float short");
    BAD(LB((float *)dy, dw, db, dy, fx, w1, R, D, H, scratch, ns), FFN_ERR_ALIAS, "ffn_linear_backward: dx on dy");
    BAD(LB(dx, dx + R * D - 1, db, dy, fx, w1, R, D, H, scratch, ns), FFN_ERR_ALIAS, "ffn_linear_backward: dw overlaps dx's last float");
    BAD(LB(dx, dw, scratch + ns - 1, dy, fx, w1, R, D, H, scratch, ns), FFN_ERR_ALIAS, "ffn_linear_backward: db in the scratch");
    BAD(LB(dx, w1, db, dy, fx, w1, R, D, H, scratch, ns), FFN_ERR_ALIAS, "ffn_linear_backward: dw on w");
    BADS(put(0, fx, sizeof fx), LB(dx + ARENA / 2, NULL, NULL, dy, arena, w1, R, D, H, arena, ns), FFN_ERR_ALIAS, "ffn_linear_backward: scratch on x");
    /* valid: exact sums, dw and db accumulated onto what was there */
    for (r = 0; r < R; r++)
        for (k = 0; k < D; k++) {
            double s = 0;
            for (o = 0; o < H; o++) s += (double)dy[r * H + o] * w1[o * D + k];
            want_dx[r * D + k] = (float)s;
        }
    for (o = 0; o < H; o++) {
        double sb = val(o, 12);
        for (k = 0; k < D; k++) {
            double s = val(o * D + k, 11);
            for (r = 0; r < R; r++) s += (double)dy[r * H + o] * fx[r * D + k];
            want_dw[o * D + k] = (float)s;
        }
        for (r = 0; r < R; r++) sb += dy[r * H + o];
        want_db[o] = (float)sb;
    }
    setup();
    for (k = 0; k < H * D; k++) dw[k] = val(k, 11);
    for (k = 0; k < H; k++) db[k] = val(k, 12);
    snprintf(what, sizeof what, "ffn_linear_backward: dx exact");
    good(what, LB(dx, dw, db, dy, fx, w1, R, D, H, scratch, ns), dx, want_dx, R * D, NULL);
    good("ffn_linear_backward: dw accumulated, exact", 0, dw, want_dw, H * D, NULL);
    good("ffn_linear_backward: db accumulated, exact", 0, db, want_db, H, db + H + GUARD);
#undef LB
}

/* ---- ffn_activation_backward ------------------------------------------------------- */

static void test_activation_backward(void)
{
    float *dx = arena, dyv[R * D], want[R * D];
    size_t i;
    for (i = 0; i < R * D; i++) dyv[i] = val(i, 13);
    BAD(ffn_activation_backward(dx, dyv, fx, R * D, 5), FFN_ERR_ARG, "ffn_activation_backward: act 5");
    BAD(ffn_activation_backward(NULL, dyv, fx, R * D, -1), FFN_ERR_ARG, "ffn_activation_backward: act -1 and NULL dx (act first)");
    BAD(ffn_activation_backward(NULL, dyv, fx, R * D, FFN_GELU), FFN_ERR_NULL, "ffn_activation_backward: NULL dx");
    BAD(ffn_activation_backward(dx, NULL, fx, R * D, FFN_GELU), FFN_ERR_NULL, "ffn_activation_backward: NULL dy");
    BAD(ffn_activation_backward(dx, dyv, NULL, R * D, FFN_GELU), FFN_ERR_NULL, "ffn_activation_backward: NULL x");
    BAD(ffn_activation_backward(dx, dyv, fx, 0, FFN_SILU), FFN_ERR_ZERO_SIZE, "ffn_activation_backward: n 0");
    BAD(ffn_activation_backward(dx, dyv, fx, SIZE_MAX, FFN_SILU), FFN_ERR_OVERFLOW, "ffn_activation_backward: n SIZE_MAX");
    BADS(put(1, dyv, sizeof dyv), ffn_activation_backward(arena, arena + 1, fx, R * D, FFN_SILU), FFN_ERR_ALIAS, "ffn_activation_backward: dx = dy - 1 float");
    BADS(put(1, fx, sizeof fx), ffn_activation_backward(arena, dyv, arena + 1, R * D, FFN_SILU), FFN_ERR_ALIAS, "ffn_activation_backward: dx = x - 1 float");
    /* ReLU: dy where x > 0, +0 elsewhere (x = -0.0 too) */
    for (i = 0; i < R * D; i++) want[i] = fx[i] > 0 ? dyv[i] : 0.0f;
    GOOD((void)0, ffn_activation_backward(dx, dyv, fx, R * D, FFN_RELU), dx, want, R * D, dx + R * D + GUARD, "ffn_activation_backward FFN_RELU: dy where x > 0, else +0");
}

/* ---- ffn_sgd_step, ffn_adamw_step ------------------------------------------------------ */

static void test_opt_steps(void)
{
    float *p = arena, *b = arena + 64, *m = arena + 128, *v = arena + 192, g[8];
    size_t i;
    for (i = 0; i < 8; i++) g[i] = val(i, 14);
#define SGD(p_, b_, g_, n_, lr, mom, damp, wd, nest, first) \
    ffn_sgd_step(p_, b_, g_, n_, lr, mom, damp, wd, nest, first)
    BAD(SGD(NULL, b, g, 8, 0.1f, 0.9f, 0, 0, 0, 1), FFN_ERR_NULL, "ffn_sgd_step: NULL param");
    BAD(SGD(p, b, NULL, 8, 0.1f, 0, 0, 0, 0, 1), FFN_ERR_NULL, "ffn_sgd_step: NULL grad");
    BAD(SGD(p, NULL, g, 8, 0.1f, 0.9f, 0, 0, 0, 1), FFN_ERR_NULL, "ffn_sgd_step: momentum without a buffer");
    BAD(SGD(p, b, g, 0, 0.1f, 0.9f, 0, 0, 0, 1), FFN_ERR_ZERO_SIZE, "ffn_sgd_step: n 0");
    BAD(SGD(p, b, g, SIZE_MAX, 0.1f, 0.9f, 0, 0, 0, 1), FFN_ERR_OVERFLOW, "ffn_sgd_step: n SIZE_MAX");
    BAD(SGD(p, b, g, 8, -0.1f, 0.9f, 0, 0, 0, 1), FFN_ERR_LR, "ffn_sgd_step: lr < 0");
    BAD(SGD(p, b, g, 8, (float)NAN, 0.9f, 0, 0, 0, 1), FFN_ERR_LR, "ffn_sgd_step: lr NaN");
    BAD(SGD(p, b, g, 8, (float)INFINITY, 0.9f, 0, 0, 0, 1), FFN_ERR_LR, "ffn_sgd_step: lr inf");
    BAD(SGD(p, b, g, 8, 0.1f, -0.9f, 0, 0, 0, 1), FFN_ERR_MOMENTUM, "ffn_sgd_step: momentum < 0");
    BAD(SGD(p, b, g, 8, 0.1f, (float)NAN, 0, 0, 0, 1), FFN_ERR_MOMENTUM, "ffn_sgd_step: momentum NaN");
    BAD(SGD(p, b, g, 8, 0.1f, 0.9f, (float)INFINITY, 0, 0, 1), FFN_ERR_DAMPENING, "ffn_sgd_step: dampening inf");
    BAD(SGD(p, b, g, 8, 0.1f, 0.9f, 0, -0.01f, 0, 1), FFN_ERR_WEIGHT_DECAY, "ffn_sgd_step: weight_decay < 0");
    BAD(SGD(p, b, g, 8, 0.1f, 0.9f, 0.1f, 0, 1, 1), FFN_ERR_NESTEROV, "ffn_sgd_step: nesterov with dampening");
    BAD(SGD(p, b, g, 8, 0.1f, 0, 0, 0, 1, 1), FFN_ERR_NESTEROV, "ffn_sgd_step: nesterov without momentum");
    /* several faults: the first in the arguments' order is reported */
    BAD(SGD(p, b, g, 8, -0.1f, -0.9f, (float)NAN, -1.0f, 1, 1), FFN_ERR_LR, "ffn_sgd_step: lr, momentum, dampening, weight_decay, nesterov all bad");
    BAD(SGD(p, b, g, 8, 0.1f, 0.9f, (float)NAN, -1.0f, 1, 1), FFN_ERR_DAMPENING, "ffn_sgd_step: dampening, weight_decay, nesterov bad");
    BAD(SGD(p, p + 4, g, 8, 0.1f, 0.9f, 0, 0, 0, 1), FFN_ERR_ALIAS, "ffn_sgd_step: buffer overlaps param");
#undef SGD
    BAD(ffn_adamw_step(p, m, NULL, g, 8, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, 1), FFN_ERR_NULL, "ffn_adamw_step: NULL v");
    BAD(ffn_adamw_step(p, m, v, g, 0, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, 1), FFN_ERR_ZERO_SIZE, "ffn_adamw_step: n 0");
#define ADAMW(lr, b1, b2, eps, wd, t) ffn_adamw_step(p, m, v, g, 8, lr, b1, b2, eps, wd, t)
    BAD(ADAMW(-1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, 1), FFN_ERR_LR, "ffn_adamw_step: lr < 0");
    BAD(ADAMW(1e-3f, 1.0f, 0.999f, 1e-8f, 0.01f, 1), FFN_ERR_BETA1, "ffn_adamw_step: beta1 1");
    BAD(ADAMW(1e-3f, -0.1f, 0.999f, 1e-8f, 0.01f, 1), FFN_ERR_BETA1, "ffn_adamw_step: beta1 < 0");
    BAD(ADAMW(1e-3f, (float)NAN, 0.999f, 1e-8f, 0.01f, 1), FFN_ERR_BETA1, "ffn_adamw_step: beta1 NaN");
    BAD(ADAMW(1e-3f, 0.9f, 1.0f, 1e-8f, 0.01f, 1), FFN_ERR_BETA2, "ffn_adamw_step: beta2 1");
    BAD(ADAMW(1e-3f, 0.9f, (float)-INFINITY, 1e-8f, 0.01f, 1), FFN_ERR_BETA2, "ffn_adamw_step: beta2 -inf");
    BAD(ADAMW(1e-3f, 0.9f, 0.999f, -1e-8f, 0.01f, 1), FFN_ERR_EPS, "ffn_adamw_step: eps < 0");
    BAD(ADAMW(1e-3f, 0.9f, 0.999f, (float)INFINITY, 0.01f, 1), FFN_ERR_EPS, "ffn_adamw_step: eps inf");
    BAD(ADAMW(1e-3f, 0.9f, 0.999f, 1e-8f, (float)INFINITY, 1), FFN_ERR_WEIGHT_DECAY, "ffn_adamw_step: weight_decay inf");
    BAD(ADAMW(1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, 0), FFN_ERR_STEP, "ffn_adamw_step: step 0");
    BAD(ADAMW(1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, -5), FFN_ERR_STEP, "ffn_adamw_step: step < 0");
    /* several faults: the first in the arguments' order is reported */
    BAD(ADAMW(-1e-3f, 1.0f, 1.0f, -1e-8f, -0.01f, 0), FFN_ERR_LR, "ffn_adamw_step: lr, betas, eps, weight_decay, step all bad");
    BAD(ADAMW(1e-3f, 0.9f, 1.0f, -1e-8f, -0.01f, 0), FFN_ERR_BETA2, "ffn_adamw_step: beta2, eps, weight_decay, step bad");
    BAD(ADAMW(1e-3f, 0.9f, 0.999f, 1e-8f, -0.01f, 0), FFN_ERR_WEIGHT_DECAY, "ffn_adamw_step: weight_decay, step bad");
#undef ADAMW
    BAD(ffn_adamw_step(p, m, m, g, 8, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, 1), FFN_ERR_ALIAS, "ffn_adamw_step: m is v");
    {   /* exact: with lr 0 the parameter keeps its bits */
        float want[8];
        setup();
        for (i = 0; i < 8; i++) p[i] = want[i] = val(i, 15);
        good("ffn_sgd_step: lr 0 leaves the parameter", ffn_sgd_step(p, NULL, g, 8, 0.0f, 0.0f,
             0.0f, 0.0f, 0, 1), p, want, 8, p + 8 + GUARD);
    }
}

/* ---- ffn_block_act_train(_packed), ffn_gated_train(_packed) ------------------------------ */

/* mode 0 ffn_block_act_train, 1 its packed twin, 2 ffn_gated_train, 3 its packed twin (gate
   = up = w1, down = w2); pre2 (up_h) is unused by the block. */
static int trn(int mode, float *yo, float *pre1, float *pre2, const float *xi, const float *a1,
               const float *c1, const float *a2, const float *c2, size_t rows, size_t d,
               size_t h, int act, float *scr, size_t nscr)
{
    switch (mode) {
    case 0: return ffn_block_act_train(yo, pre1, xi, a1, c1, a2, c2, rows, d, h, act, scr, nscr);
    case 1:
        return ffn_block_act_train_packed(yo, pre1, xi, a1, c1, a2, c2, rows, d, h, act, scr, nscr);
    case 2:
        return ffn_gated_train(yo, pre1, pre2, xi, a1, c1, a1, c1, a2, c2, rows, d, h, act, scr,
                               nscr);
    default:
        return ffn_gated_train_packed(yo, pre1, pre2, xi, a1, c1, a1, c1, a2, c2, rows, d, h, act,
                                      scr, nscr);
    }
}

/* The pre-activations go to `out` (h, gate_h) and `tout` (up_h), watched outputs. */
static void test_train(int mode)
{
    static const char *const names[] = {"ffn_block_act_train", "ffn_block_act_train_packed",
                                        "ffn_gated_train", "ffn_gated_train_packed"};
    const int packed = mode & 1, gated = mode >= 2;
    const size_t need = gated ? ffn_gated_train_scratch_floats(R, D, H)
                              : ffn_block_scratch_floats(R, D, H), big = SIZE_MAX / 2;
    const char *nm = names[mode];
    const float *a1 = packed ? w1p : w1, *a2 = packed ? w2p : w2;
    float *p2 = gated ? tout : NULL, want[R * D], wanth[R * H];
    char what[200];
    size_t i;
    if (mode == 2)
        check(need == (size_t)R * H && ffn_gated_train_scratch_floats(0, D, H) == 0 &&
                  ffn_gated_train_scratch_floats(R, 0, H) == 0 &&
                  ffn_gated_train_scratch_floats(SIZE_MAX / 2, 1, 3) == 0,
              "ffn_gated_train_scratch_floats: rows * hidden (%zu), 0 for a size 0 or an "
              "overflow", need);
#define T(desc) (snprintf(what, sizeof what, "%s: %s", nm, desc), what)
#define TR(yo, h1, h2, xi, c1, c2, rows, d, h, act, scr, nscr) \
    trn(mode, yo, h1, h2, xi, a1, c1, a2, c2, rows, d, h, act, scr, nscr)

    BAD(TR(NULL, out, p2, fx, b1, b2, R, D, H, -1, scratch, 0), FFN_ERR_ARG, "%s: act -1, NULL y, scratch 0 (act first)", nm);
    BAD(TR(y, out, p2, fx, b1, b2, R, D, H, FFN_GPT_OSS, scratch, need), FFN_ERR_ARG, "%s: act FFN_GPT_OSS (no backward: refused)", nm);
    BAD(TR(NULL, out, p2, fx, b1, b2, R, D, H, FFN_SILU, scratch, need), FFN_ERR_NULL, "%s: NULL y", nm);
    BAD(TR(y, NULL, p2, fx, b1, b2, R, D, H, FFN_SILU, scratch, need), FFN_ERR_NULL, "%s: NULL h (gate_h)", nm);
    if (gated)
        BAD(TR(y, out, NULL, fx, b1, b2, R, D, H, FFN_SILU, scratch, need), FFN_ERR_NULL, "%s: NULL up_h", nm);
    BAD(TR(y, out, p2, NULL, b1, b2, R, D, H, FFN_SILU, scratch, need), FFN_ERR_NULL, "%s: NULL x", nm);
    BAD(trn(mode, y, out, p2, fx, NULL, b1, a2, b2, R, D, H, FFN_SILU, scratch, need), FFN_ERR_NULL, "%s: " "NULL w1 / w_gate", nm);
    BAD(trn(mode, y, out, p2, fx, a1, b1, NULL, b2, R, D, H, FFN_SILU, scratch, need), FFN_ERR_NULL, "%s: " "NULL w2 / w_down", nm);
    BAD(TR(y, out, p2, fx, b1, b2, R, D, H, FFN_SILU, NULL, need), FFN_ERR_NULL, "%s: NULL scratch", nm);
    BAD(TR(y, out, p2, fx, b1, b2, R, D, 0, FFN_SILU, scratch, need), FFN_ERR_ZERO_SIZE, "%s: hidden 0", nm);
    BAD(TR(y, out, p2, fx, b1, b2, big, 1, 3, FFN_SILU, scratch, need), FFN_ERR_OVERFLOW, "%s: rows SIZE_MAX/2 x hidden 3 (h's size)", nm);
    BAD(TR(y, out, p2, fx, b1, b2, R, D, H, FFN_SILU, scratch, need - 1), FFN_ERR_SCRATCH, "%s: scratch one float short", nm);
    BAD(TR(y, arena + 2, p2, arena, b1, b2, R, D, H, FFN_SILU, scratch, need), FFN_ERR_ALIAS, "%s: h (gate_h) overlaps x", nm);
    BAD(TR(arena, arena, p2, fx, b1, b2, R, D, H, FFN_SILU, scratch, need), FFN_ERR_ALIAS, "%s: h (gate_h) is y", nm);
    BAD(TR(y, arena, p2, fx, b1, b2, R, D, H, FFN_SILU, arena + R * H - 1, need), FFN_ERR_ALIAS, "%s: h's (gate_h's) last float is the scratch's first", nm);
    BAD(TR(y, arena, p2, fx, b1, arena + R * H - 1, R, D, H, FFN_SILU, scratch, need), FFN_ERR_ALIAS, "%s: " "h (gate_h) overlaps b2", nm);
    if (gated) {
        BAD(TR(y, arena, arena + R * H - 1, fx, b1, b2, R, D, H, FFN_SILU, scratch, need), FFN_ERR_ALIAS, "%s: " "up_h overlaps gate_h", nm);
        BAD(trn(mode, y, out, arena + 1, fx, arena, b1, a2, b2, R, D, H, FFN_SILU, scratch, need), FFN_ERR_ALIAS, "%s: " "up_h overlaps w_up (= w_gate)", nm);
    }
    BAD(TR(arena + 1, out, p2, arena, b1, b2, R, D, H, FFN_SILU, scratch, need), FFN_ERR_ALIAS, "%s: y = x + 1 float", nm);
    BAD(trn(mode, y, out, p2, fx, arena + 1, b1, a2, b2, R, D, H, FFN_SILU, arena, need), FFN_ERR_ALIAS, "%s: " "scratch overlaps w1", nm);

    /* valid (ReLU: exact): h = fc1(x), y as ffn_block / ffn_gated */
    if (gated) gated_ref(want, fx, b1, b1, b2);
    else block_ref(want, fx, b1, b2);
    linear_ref(wanth, fx, w1, b1, R, D, H);
    GOOD((void)0, TR(y, out, p2, fx, b1, b2, R, D, H, FFN_RELU, scratch, need), y, want, R * D, y + R * H + GUARD, "%s: " "valid ReLU (3x4, hidden 6): y", nm);
    good(T("valid: h (gate_h) = fc1(x)"), 0, out, wanth, R * H, out + B * S * D + GUARD);
    if (gated) good(T("valid: up_h = up(x)"), 0, tout, wanth, R * H, tout + M * D + GUARD);
    snprintf(what, sizeof what, "%s: writes no scratch beyond ffn_block_scratch_floats(...)", nm);
    check(untouched(scratch + need, GUARD * sizeof(float)), "%s", what);
    GOOD(memcpy(arena, fx, sizeof fx), TR(arena, out, p2, arena, b1, b2, R, D, H, FFN_RELU | FFN_FAST, scratch, need), arena, want, R * D, arena + R * D + GUARD, "%s: " "y == x is allowed", nm);
    if (gated) gated_ref(want, fx, NULL, NULL, NULL);
    else block_ref(want, fx, NULL, NULL);
    linear_ref(wanth, fx, w1, NULL, R, D, H);
    GOOD((void)0, TR(y, out, p2, fx, NULL, NULL, R, D, H, FFN_RELU, scratch, need), y, want, R * D, NULL, "%s: " "no biases", nm);
    for (i = 0; i < R * H && out[i] == wanth[i]; i++) {}
    check(i == R * H, "%s: no biases: h = x w1^T", nm);
#undef TR
#undef T
}

/* ---- ffn_block_act_backward, ffn_gated_backward ----------------------------------------- */

/* The fixtures' block (ReLU, w1 (H, D), w2 (D, H)) or ReGLU (gate = up = w1, down = w2) with
   dy = val(k, 10): every gradient is a short sum of multiples of 2^-15 below 2^9, exact in
   any order (float32 holds them all). g[0] dx, then each weight's and bias's gradient
   (block: w1, b1, w2, b2; gated: gate, up, down), added to g0 = val(k, 11 + j). */
static void backward_ref(int gated, float *const *g, const float *dyv)
{
    float hh[R * H], a[R * H], dg[R * H], du[R * H];
    const int nl = gated ? 3 : 2;
    size_t r, i, j, k, l;
    linear_ref(hh, fx, w1, b1, R, D, H);
    for (k = 0; k < R * H; k++) a[k] = hh[k] > 0 ? hh[k] : 0.0f;   /* act(gate) */
    for (r = 0; r < R; r++)
        for (j = 0; j < H; j++) {
            double s = 0;
            for (i = 0; i < D; i++) s += (double)dyv[r * D + i] * w2[i * H + j];
            dg[r * H + j] = hh[r * H + j] > 0 ? (float)(s * (gated ? hh[r * H + j] : 1.0f)) : 0.0f;
            du[r * H + j] = (float)(s * a[r * H + j]);
        }
    for (l = 0; l < (size_t)nl; l++) {      /* the layers: (w, b) gradients */
        const int last = l == (size_t)nl - 1;
        const float *coef = last ? dyv : l == 0 ? dg : du;       /* rows x out */
        const float *in = last ? a : fx;                         /* rows x in */
        const size_t out_ = last ? D : H, in_ = last ? H : D;
        float *gw = g[1 + 2 * l], *gb = g[2 + 2 * l];
        float pa[R * H];
        if (last && gated)
            for (k = 0; k < R * H; k++) pa[k] = a[k] * hh[k];   /* p = act(gate) * up */
        for (i = 0; i < out_; i++) {
            double sb = val(i, 12 + 2 * l);
            for (k = 0; k < in_; k++) {
                double s = val(i * in_ + k, 11 + 2 * l);
                for (r = 0; r < R; r++)
                    s += (double)coef[r * out_ + i] * (last && gated ? pa : in)[r * in_ + k];
                if (gw) gw[i * in_ + k] = (float)s;
            }
            for (r = 0; r < R; r++) sb += coef[r * out_ + i];
            if (gb) gb[i] = (float)sb;
        }
    }
    for (r = 0; r < R; r++)
        for (k = 0; k < D; k++) {
            double s = 0;
            for (j = 0; j < H; j++)
                s += (double)dg[r * H + j] * w1[j * D + k] +
                     (gated ? (double)du[r * H + j] * w1[j * D + k] : 0.0);
            g[0][r * D + k] = (float)s;
        }
}

/* gated 0: ffn_block_act_backward (outputs o[0..4]: dx, dw1, db1, dw2, db2), 1:
   ffn_gated_backward (o[0..6]: dx, dw_gate, db_gate, dw_up, db_up, dw_down, db_down), with
   gate_h = up_h = h and w_gate = w_up = w1. */
static int bwd(int gated, float *const *o, const float *dyv, const float *xi, const float *hh,
               const float *a1, const float *a2, size_t rows, size_t d, size_t h, int act,
               float *scr, size_t nscr)
{
    if (!gated)
        return ffn_block_act_backward(o[0], o[1], o[2], o[3], o[4], dyv, xi, hh, a1, a2, rows, d,
                                      h, act, scr, nscr);
    return ffn_gated_backward(o[0], o[1], o[2], o[3], o[4], o[5], o[6], dyv, xi, hh, hh, a1, a1,
                              a2, rows, d, h, act, scr, nscr);
}

static void test_backward(int gated)
{
    const char *nm = gated ? "ffn_gated_backward" : "ffn_block_act_backward";
    const size_t need = gated ? ffn_gated_backward_scratch_floats(R, D, H)
                              : ffn_block_backward_scratch_floats(R, D, H);
    const int no = gated ? 7 : 5;
    float dyv[R * D], hh[R * H], *o[7], *none[7] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    float wantbuf[2 * R * D + 3 * (H * D + H)], *want[7];
    size_t sz[7], at = 0, k;
    char what[200];
    int j;
#define T(desc) (snprintf(what, sizeof what, "%s: %s", nm, desc), what)
    for (k = 0; k < R * D; k++) dyv[k] = val(k, 10);
    linear_ref(hh, fx, w1, b1, R, D, H);
    for (j = 0; j < no; j++) {       /* the outputs, one after another in the arena */
        sz[j] = j == 0 ? R * D : j == no - 2 ? D * H : j == no - 1 ? D : j % 2 ? H * D : H;
        o[j] = arena + at;
        want[j] = wantbuf + at;
        at += sz[j];
    }
    check((gated ? ffn_gated_backward_scratch_floats(0, D, H)
                 : ffn_block_backward_scratch_floats(R, 0, H)) == 0 &&
              (gated ? ffn_gated_backward_scratch_floats(R, D, SIZE_MAX / 4)
                     : ffn_block_backward_scratch_floats(SIZE_MAX / 2, D, H)) == 0,
          "%s_scratch_floats: 0 for a zero size or an overflow",
          gated ? "ffn_gated_backward" : "ffn_block_backward");
    if (need == 0 || need > SCRATCH_CAP || at + need > ARENA) {
        check(0, "%s: not run, scratch %zu does not fit the fixtures", nm, need);
        return;
    }
    BAD(bwd(gated, o, NULL, fx, hh, w1, w2, R, D, H, -1, scratch, need), FFN_ERR_ARG, "%s: act -1 and NULL dy (act first)", nm);
    BAD(bwd(gated, o, dyv, fx, hh, w1, w2, R, D, H, FFN_GPT_OSS, scratch, need), FFN_ERR_ARG, "%s: act FFN_GPT_OSS (not supported)", nm);
    BAD(bwd(gated, o, NULL, fx, hh, w1, w2, R, D, H, FFN_GELU, scratch, need), FFN_ERR_NULL, "%s: NULL dy", nm);
    BAD(bwd(gated, o, dyv, NULL, hh, w1, w2, R, D, H, FFN_GELU, scratch, need), FFN_ERR_NULL, "%s: NULL x", nm);
    BAD(bwd(gated, o, dyv, fx, NULL, w1, w2, R, D, H, FFN_GELU, scratch, need), FFN_ERR_NULL, "%s: NULL h", nm);
    BAD(bwd(gated, o, dyv, fx, hh, NULL, w2, R, D, H, FFN_GELU, scratch, need), FFN_ERR_NULL, "%s: NULL w1 / w_gate", nm);
    BAD(bwd(gated, o, dyv, fx, hh, w1, NULL, R, D, H, FFN_GELU, scratch, need), FFN_ERR_NULL, "%s: NULL w2 / w_down", nm);
    BAD(bwd(gated, o, dyv, fx, hh, w1, w2, R, D, H, FFN_GELU, NULL, need), FFN_ERR_NULL, "%s: NULL scratch", nm);
    BAD(bwd(gated, none, dyv, fx, hh, w1, w2, R, D, H, FFN_GELU, scratch, need), FFN_ERR_NULL, "%s: no output (all NULL)", nm);
    if (gated) {
        BAD(ffn_gated_backward(o[0], o[1], o[2], o[3], o[4], o[5], o[6], dyv, fx, hh, NULL, w1, w1, w2, R, D, H, FFN_SILU, scratch, need), FFN_ERR_NULL, "%s: " "NULL up_h", nm);
        BAD(ffn_gated_backward(o[0], o[1], o[2], o[3], o[4], o[5], o[6], dyv, fx, hh, hh, w1, NULL, w2, R, D, H, FFN_SILU, scratch, need), FFN_ERR_NULL, "%s: " "NULL w_up", nm);
    }
    BAD(bwd(gated, o, dyv, fx, hh, w1, w2, 0, D, H, FFN_GELU, scratch, need), FFN_ERR_ZERO_SIZE, "%s: rows 0", nm);
    BAD(bwd(gated, o, dyv, fx, hh, w1, w2, R, 0, H, FFN_GELU, scratch, need), FFN_ERR_ZERO_SIZE, "%s: d_model 0", nm);
    BAD(bwd(gated, o, dyv, fx, hh, w1, w2, SIZE_MAX / 2, 3, 1, FFN_GELU, scratch, need), FFN_ERR_OVERFLOW, "%s: " "rows SIZE_MAX/2 x d_model 3", nm);
    BAD(bwd(gated, o, dyv, fx, hh, w1, w2, SIZE_MAX / 64, 1, 3, FFN_GELU, scratch, need), FFN_ERR_OVERFLOW, "%s: " "rows SIZE_MAX/64 x hidden 3 (the scratch's count)", nm);
    BAD(bwd(gated, o, dyv, fx, hh, w1, w2, R, D, H, FFN_GELU, scratch, need - 1), FFN_ERR_SCRATCH, "%s: " "scratch one float short", nm);
    BAD(bwd(gated, o, o[0], fx, hh, w1, w2, R, D, H, FFN_GELU, scratch, need), FFN_ERR_ALIAS, "%s: dx on dy", nm);
    BAD(bwd(gated, o, dyv, fx, o[0] + 1, w1, w2, R, D, H, FFN_GELU, scratch, need), FFN_ERR_ALIAS, "%s: " "dx over h", nm);
    {   /* the first weight gradient's last float is the next output's first */
        float *o2[7];
        memcpy(o2, o, sizeof o2);
        o2[2] = o2[1] + sz[1] - 1;
        BAD(bwd(gated, o2, dyv, fx, hh, w1, w2, R, D, H, FFN_GELU, scratch, need), FFN_ERR_ALIAS, "%s: " "db1 / db_gate starts on dw1's last float", nm);
        memcpy(o2, o, sizeof o2);
        o2[no - 2] = (float *)w2;
        BAD(bwd(gated, o2, dyv, fx, hh, w1, w2, R, D, H, FFN_GELU, scratch, need), FFN_ERR_ALIAS, "%s: " "dw2 / dw_down on w2", nm);
        memcpy(o2, o, sizeof o2);
        o2[no - 1] = scratch + need - 1;
        BAD(bwd(gated, o2, dyv, fx, hh, w1, w2, R, D, H, FFN_GELU, scratch, need), FFN_ERR_ALIAS, "%s: " "db2 / db_down in the scratch", nm);
    }
    BADS(put(ARENA - R * D, fx, sizeof fx), bwd(gated, o, dyv, arena + ARENA - R * D, hh, w1, w2, R, D, H, FFN_GELU, arena + ARENA - R * D - need + 1, need), FFN_ERR_ALIAS, "%s: " "scratch's last float on x", nm);

    /* valid: ReLU / ReGLU, exact; the gradients added to what the buffers held */
    for (j = 1; j < no; j++)
        for (k = 0; k < sz[j]; k++) want[j][k] = val(k, (size_t)(10 + j));
    backward_ref(gated, want, dyv);
    setup();
    for (j = 1; j < no; j++)
        for (k = 0; k < sz[j]; k++) o[j][k] = val(k, (size_t)(10 + j));
    snap();
    good(T("valid ReLU: dx"), bwd(gated, o, dyv, fx, hh, w1, w2, R, D, H, FFN_RELU, scratch, need),
         o[0], want[0], R * D, NULL);
    for (j = 1; j < no; j++) {
        snprintf(what, sizeof what, "%s: valid ReLU: gradient %d accumulated", nm, j);
        good(what, 0, o[j], want[j], sz[j], j == no - 1 ? o[j] + sz[j] + GUARD : NULL);
    }
    check(untouched(scratch + need, GUARD * sizeof(float)), "%s: no scratch written beyond "
          "its size query", nm);
    for (j = 0; j < no; j++) {  /* each alone: the same bits */
        float *only[7] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
        setup();
        only[j] = o[j];
        for (k = 0; j && k < sz[j]; k++) o[j][k] = val(k, (size_t)(10 + j));
        snprintf(what, sizeof what, "%s: output %d alone, the others NULL", nm, j);
        good(what, bwd(gated, only, dyv, fx, hh, w1, w2, R, D, H, FFN_RELU | FFN_FAST, scratch,
                       need), o[j], want[j], sz[j], o[j] + sz[j] + GUARD);
    }
#undef T
}

/* ---- README.md's status tables ------------------------------------------------------ */

/* The whole file, NUL-terminated, or NULL. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = (char *)malloc((size_t)n + 1)) != NULL) {
        if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        } else {
            buf[n] = '\0';
        }
    }
    fclose(f);
    return buf;
}

/* Every status of the header's enum (its lines "    PREFIX_OK = 0," and
   "    PREFIX_ERR_X = -N,", read from the header's text, so a code added there is seen
   here) is a row "| `NAME` | value | `message` | ..." of README.md, with the header's
   value and status_string's exact message; name() (this file's) knows it; and README has
   no row for a status that is not in the enum. Run from the repository root. */
static void test_readme_table(const char *header, const char *prefix,
                              const char *(*why)(int), const char *(*name)(int))
{
    char *h = slurp(header), *r = slurp("README.md"), *p, ok_name[32], err_pre[32];
    int codes = 0, rows = 0;
    check(h && r, "%s and README.md readable from the working directory", header);
    if (!h || !r) goto done;
    snprintf(ok_name, sizeof ok_name, "%s_OK", prefix);
    snprintf(err_pre, sizeof err_pre, "%s_ERR_", prefix);
    for (p = h; (p = strstr(p, "\n    ")) != NULL; p++) {
        char nm[64], row[80], msg[256], *end;
        const char *s = p + 5, *q, *e;
        long val, rval;
        size_t len;
        if (strncmp(s, ok_name, strlen(ok_name)) != 0 && strncmp(s, err_pre, strlen(err_pre)) != 0)
            continue;
        len = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789");
        q = s + len;
        while (*q == ' ') q++;
        if (*q != '=' || len >= sizeof nm) continue;        /* not an enumerator */
        memcpy(nm, s, len);
        nm[len] = '\0';
        val = strtol(q + 1, NULL, 10);
        codes++;
        check(strcmp(name((int)val), nm) == 0, "%s: %s = %ld is known to this test (%s)", header,
              nm, val, name((int)val));
        snprintf(row, sizeof row, "\n| `%s` | ", nm);
        q = strstr(r, row);
        if (!q) {
            check(0, "README.md has a row for %s", nm);
            continue;
        }
        q += strlen(row);
        rval = strtol(q, &end, 10);
        q = strstr(end, "| `");
        e = q ? strstr(q + 3, "` |") : NULL;
        if (!q || !e || (size_t)(e - (q + 3)) >= sizeof msg) {
            check(0, "README.md's row for %s has a `message` column", nm);
            continue;
        }
        memcpy(msg, q + 3, (size_t)(e - (q + 3)));
        msg[e - (q + 3)] = '\0';
        check(rval == val && strcmp(msg, why((int)val)) == 0,
              "README.md: %s | %ld | \"%s\" (header: %ld, \"%s\")", nm, rval, msg, val,
              why((int)val));
    }
    {   /* README's rows for this header's statuses: no more than the enum has */
        char row[40];
        snprintf(row, sizeof row, "\n| `%s_", prefix);
        for (p = r; (p = strstr(p, row)) != NULL; p++)
            if (strncmp(p + strlen(row), "OK`", 3) == 0 || strncmp(p + strlen(row), "ERR_", 4) == 0)
                rows++;
    }
    check(codes >= 10 && rows == codes, "README.md lists %d %s statuses, %s's enum has %d",
          rows, prefix, header, codes);
done:
    free(h);
    free(r);
}

/* ---- choosing a path ------------------------------------------------------------ */

/* lib's path API: the list (unique, ending with "scalar", NULL past both ends), "auto"
   and NULL pick the best, every listed name either switches (and the header then runs
   it) or fails with err_path / err_cpu and leaves the choice as it was, an unknown name
   is err_path. */
static void test_path_api(const th_lib *lib, int err_path, int err_cpu)
{
    const char *runs[TH_MAX_PATHS], *name, *before;
    const int nruns = th_paths(lib, runs, NULL);
    static const char *const bad[] = {"", "SCALAR", "scalar ", "avx3", "auto2", "neon!"};
    int i, j, n = 0, unique = 1, ok = 1;
    for (i = 0; (name = lib->name(i)) != NULL; i++, n++)
        for (j = 0; j < i; j++)
            if (strcmp(name, lib->name(j)) == 0) unique = 0;
    check(n >= 1 && unique && strcmp(lib->name(n - 1), "scalar") == 0 && !lib->name(-1) &&
              !lib->name(n + 100),
          "%s_path_name: %d unique names ending with \"scalar\", NULL outside", lib->header, n);
    check(lib->set(NULL) == 0 && strcmp(lib->now(), runs[0]) == 0 && lib->set("auto") == 0 &&
              strcmp(lib->now(), runs[0]) == 0,
          "%s_set_path(NULL) and (\"auto\") pick the best path here, \"%s\"", lib->header,
          runs[0]);
    for (i = 0; (name = lib->name(i)) != NULL; i++) {
        int st;
        lib->set("scalar");
        before = lib->now();
        st = lib->set(name);
        ok = ok && (st == 0 ? strcmp(lib->now(), name) == 0
                            : (st == err_path || st == err_cpu) && lib->now() == before);
    }
    check(ok && lib->set("scalar") == 0, "%s_set_path(each listed path): switches, or fails "
          "with PATH/CPU and keeps the path", lib->header);
    for (i = 0; i < (int)(sizeof bad / sizeof *bad); i++) {
        lib->set(runs[nruns - 1]);
        before = lib->now();
        check(lib->set(bad[i]) == err_path && lib->now() == before,
              "%s_set_path(\"%s\") -> PATH error, path unchanged", lib->header, bad[i]);
    }
    lib->set(NULL);
}

/* The two headers name an ISA alike: every path name they share means the same CPUs, so
   setting it gives the same answer in both; pe.h's old "avx" is "avx2"; the baseline
   macros name a listed path that runs here (the flags guarantee it). */
static void test_path_names(void)
{
    const char *name;
    int i, j, st_pe, st_ffn, st_old, shared = 0, agree = 1;
    for (i = 0; (name = pe_path_name(i)) != NULL; i++)
        for (j = 0; ffn_path_name(j); j++)
            if (strcmp(name, ffn_path_name(j)) == 0) {
                st_pe = pe_set_path(name);
                st_ffn = ffn_set_path(name);
                shared++;
                agree = agree && (st_pe == PE_OK) == (st_ffn == FFN_OK) &&
                        (st_pe == PE_ERR_PATH) == (st_ffn == FFN_ERR_PATH);
            }
    check(agree, "pe_set_path and ffn_set_path agree on the %d path names they share", shared);
#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__) || defined(_M_IX86)
    check(shared >= 3, "x86: avx512, avx2 and scalar are names of both headers (%d shared)",
          shared);
#endif
    pe_set_path("scalar");
    st_pe = pe_set_path("avx2");
    name = pe_path();
    pe_set_path("scalar");
    st_old = pe_set_path("avx");
    check(st_old == st_pe && strcmp(pe_path(), name) == 0,
          "pe_set_path(\"avx\") is pe_set_path(\"avx2\"): status %d, path %s", st_old, pe_path());
    pe_set_path(NULL);
    ffn_set_path(NULL);
    for (i = 0; pe_path_name(i) && strcmp(pe_path_name(i), PE_BASELINE_SIMD_NAME) != 0; i++) {}
    for (j = 0; ffn_path_name(j) && strcmp(ffn_path_name(j), FFN_BASELINE_SIMD_NAME) != 0; j++) {}
    check(pe_path_name(i) && pe_set_path(PE_BASELINE_SIMD_NAME) == PE_OK,
          "PE_BASELINE_SIMD_NAME \"%s\" is a listed path that runs here", PE_BASELINE_SIMD_NAME);
    check(ffn_path_name(j) && ffn_set_path(FFN_BASELINE_SIMD_NAME) == FFN_OK,
          "FFN_BASELINE_SIMD_NAME \"%s\" is a listed path that runs here",
          FFN_BASELINE_SIMD_NAME);
    check(strcmp(PE_SIMD_NAME, PE_BASELINE_SIMD_NAME) == 0 &&
              strcmp(FFN_SIMD_NAME, FFN_BASELINE_SIMD_NAME) == 0,
          "the old *_SIMD_NAME macros are the baseline names");
    pe_set_path(NULL);
    ffn_set_path(NULL);
}

/* ---- ffn_set_parallel_for: a bad n_threads is refused and the setting in force stays -- */

static int lent_calls;
static void serial_pool(void *pool, int n_tasks, ffn_task_fn task, void *arg)
{
    int i;
    (void)pool;
    lent_calls++;
    for (i = 0; i < n_tasks; i++) task(arg, i);
}

static void test_parallel_for(void)
{
    static float x[64 * 256], w[256 * 256], y[64 * 256];
    const int bad[] = {0, -1, 1025, INT_MIN, INT_MAX};
    size_t i;
    for (i = 0; i < sizeof x / sizeof *x; i++) x[i] = val(i, 3);
    for (i = 0; i < sizeof w / sizeof *w; i++) w[i] = val(i, 5);
    check(ffn_set_parallel_for(serial_pool, NULL, 4) == FFN_OK, "ffn_set_parallel_for(pool, 4)");
    for (i = 0; i < sizeof bad / sizeof *bad; i++)
        check(ffn_set_parallel_for(serial_pool, NULL, bad[i]) == FFN_ERR_THREADS,
              "ffn_set_parallel_for(pool, %d): FFN_ERR_THREADS", bad[i]);
    /* 8.4 Mflop: split into several tasks, so the pool still set is called (on a SIMD
       path: the scalar one, the specification, runs on the calling thread) */
    lent_calls = 0;
    if (strcmp(ffn_path(), "scalar") != 0)
        check(ffn_linear(y, x, w, NULL, 64, 256, 256) == FFN_OK && lent_calls > 0,
              "after the refused calls the pool lent before still runs the tasks (%d calls)",
              lent_calls);
    else
        check(ffn_linear(y, x, w, NULL, 64, 256, 256) == FFN_OK && lent_calls == 0,
              "the scalar path runs on the calling thread, pool or not");
    check(ffn_set_parallel_for(NULL, NULL, 0) == FFN_OK, "ffn_set_parallel_for(NULL, NULL, 0)");
    lent_calls = 0;
    check(ffn_linear(y, x, w, NULL, 64, 256, 256) == FFN_OK && lent_calls == 0,
          "no pool after ffn_set_parallel_for(NULL, ...)");
}

int main(void)
{
    const char *pe_paths[TH_MAX_PATHS], *ffn_paths[TH_MAX_PATHS];
    const int npe = th_paths(&th_pe, pe_paths, stdout);
    const int nffn = th_paths(&th_ffn, ffn_paths, stdout);
    int i;
    test_strings_and_versions();
    test_readme_table("pe.h", "PE", pe_status_string, pe_name);
    test_readme_table("ffn.h", "FFN", ffn_status_string, ffn_name);
    test_path_api(&th_pe, PE_ERR_PATH, PE_ERR_CPU);
    test_path_api(&th_ffn, FFN_ERR_PATH, FFN_ERR_CPU);
    test_path_names();
    test_parallel_for();
    /* The argument checks come before any path is involved; the valid calls' results
       are checked on every path. */
    for (i = 0; i < npe; i++) {
        th_use(&th_pe, pe_paths[i]);
        printf("# pe path %s\n", pe_paths[i]);
        test_tables();
        test_sincos_lanes();
        test_adds();
        test_embed();
        test_rope();
        test_alibi();
        test_timestep();
        test_rope_scaling();
        test_add_backward();
        test_embed_backward();
        test_rope_backward();
    }
    for (i = 0; i < nffn; i++) {
        th_use(&th_ffn, ffn_paths[i]);
        printf("# ffn path %s\n", ffn_paths[i]);
        test_linear(0);
        test_linear(1);
        test_relu(0);
        test_relu(1);
        test_activation();
        test_scratch_floats();
        test_block(0);
        test_block(1);
        test_block(2);
        test_block(3);
        test_gated(0);
        test_gated(1);
        test_pack(0);
        test_pack(1);
        test_pack(2);
        test_linear_backward();
        test_activation_backward();
        test_opt_steps();
        test_train(0);
        test_train(1);
        test_train(2);
        test_train(3);
        test_backward(0);
        test_backward(1);
    }
    return th_summary();
}

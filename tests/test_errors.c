/* test_errors.c - every bad input of every public function of pe.h and ffn.h, and the
   aliases the headers promise to accept.

   The contract (the top doc blocks of pe.h and ffn.h): every function returns 0 or a
   negative status, checks its arguments in a documented order (NULL, zero size,
   overflow, [odd d_model | scratch], seq length, aliasing, [id range]), and on error
   writes NOTHING: before each bad call every output (and the arena that aliasing tests
   carve buffers from) is filled with 0xA5, and each check asserts the exact status and
   that not one output byte changed.
   Valid calls (the permitted aliases, NULL biases, boundary sizes): inputs are small
   multiples of 1/8, so every sum is exact in float32 in any order, and the result is
   compared bit for bit with a value computed here in double (no PyTorch value typed
   in), and for not writing past the end of its output.
   Output: one line per check, then `N passed, N failed`; non-zero exit on a failure. */
#include <limits.h>

#include "../pe.h"
#include "../ffn.h"
#include "../support/harness.h"
#include "../support/api.h"

#define check th_check

/* ---- fixtures ------------------------------------------------------------------ */

/* Small shapes: pe  batch B, seq S, d_model D, table max_len M, vocab V, context L;
                 ffn rows R, d_model D, hidden H. GUARD floats after each output catch
   writes past the end. */ enum { B = 2, S = 3, D = 4, M = 5, V = 7, L = 5, R = 3, H = 6,
                                 GUARD = 16, ARENA = 4096 };
/* Room for the blocks' scratch, whatever their size queries ask for (up to this). */
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
static float val(size_t i,
                 size_t salt) { return (float)((int)((i * 7 + salt * 3) % 17) - 8) / 8.0f; }

/* The packed layout as ffn.h documents it, written independently of the packing:
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
    /* the float inputs: the k-th (from 1) gets val(i, k) */
    static const struct { float *p; size_t n; } in[] = {
        {x, B * S * D}, {table, M * D}, {wte, V * D}, {wpe, L * D},
        {fx, R * D}, {w1, H * D}, {b1, H}, {w2, D * H}, {b2, D}};
    size_t i, k;
    for (k = 0; k < sizeof in / sizeof *in; k++)
        for (i = 0; i < in[k].n; i++) in[k].p[i] = val(i, k + 1);
    for (i = 0; i < B * S; i++) {      /* covers 0 and V - 1 */
        ids32[i] = (int32_t)((i * 3) % V);
        ids64[i] = (int64_t)((i * 5 + 6) % V);
    }
    pack_ref(w1p, w1, D, H);
    pack_ref(w2p, w2, H, D);
}

/* The output buffers and the arena, their copies, and what written() calls them. */
static const struct { float *p, *copy; size_t bytes; const char *name; } outs[] = {
    {tout, tout_s, sizeof tout, "table output"}, {out, out_s, sizeof out, "out"},
    {y, y_s, sizeof y, "y"}, {scratch, scratch_s, sizeof scratch, "scratch"},
    {arena, arena_s, sizeof arena, "arena"}};
enum { NOUTS = sizeof outs / sizeof *outs };

/* Remember every output buffer and the arena as they are now. */
static void snap(void)
{
    int k;
    for (k = 0; k < NOUTS; k++) memcpy(outs[k].copy, outs[k].p, outs[k].bytes);
}

/* Reset before every test: inputs valid, every output and the arena sentinel-filled. */
static void setup(void)
{
    int k;
    fill_inputs();
    for (k = 0; k < NOUTS; k++) memset(outs[k].p, SENTINEL, outs[k].bytes);
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
    int k;
    for (k = 0; k < NOUTS; k++)
        if (memcmp(outs[k].p, outs[k].copy, outs[k].bytes)) return outs[k].name;
    return "";
}

#define ST_CODE(s) s,
#define ST_NAME(s) #s,
static const int pe_st[] = {PE_STATUSES(ST_CODE)}, ffn_st[] = {FFN_STATUSES(ST_CODE)};
static const char *const pe_stn[] = {PE_STATUSES(ST_NAME)},
                        *const ffn_stn[] = {FFN_STATUSES(ST_NAME)};
enum { NPE_ST = sizeof pe_st / sizeof *pe_st, NFFN_ST = sizeof ffn_st / sizeof *ffn_st };

static const char *st_name(const int *codes, const char *const *names, int n, int st)
{
    int i;
    for (i = 0; i < n; i++)
        if (codes[i] == st) return names[i];
    return "?";
}
static const char *pe_name(int st) { return st_name(pe_st, pe_stn, NPE_ST, st); }
static const char *ffn_name(int st) { return st_name(ffn_st, ffn_stn, NFFN_ST, st); }

/* The function a test's rows call through a wrapper (its rows' log lines start with it). */
static const char *who = "";

/* support/api.h's functions and the bad calls counted against each: a row's `who`, or
   without one the function its call's text starts with. The run ends asserting that each
   has some, or is declared (ERRORS_NO_BAD, in its feature's file) to have no bad input. */
#define API_NAME(name, ret, params) #name,
static const char *const api_names[] = {PEFFN_API(API_NAME)};
#undef API_NAME
enum { NAPI = sizeof api_names / sizeof *api_names };
static int api_bad[NAPI];

static int api_index(const char *text)
{
    const size_t len = strspn(text, "abcdefghijklmnopqrstuvwxyz_0123456789");
    int i;
    for (i = 0; i < NAPI; i++)
        if (strlen(api_names[i]) == len && strncmp(api_names[i], text, len) == 0) return i;
    return -1;
}

static void count_bad(const char *text)
{
    const int i = api_index(text);
    if (i >= 0) api_bad[i]++;
    else check(0, "a bad call of no listed function: %s", text);
}

/* A size query's bad input (a zero size, an overflow): 0. */
#define BADQ(call) (count_bad(#call), check((call) == 0, "%s -> 0", #call))

/* A bad-input check: the exact status, and no output byte changed. The log line is the
   row's own text: who, the statements before the call, the call, a note, the status. */
static void bad_row(const char *(*name)(int), const char *pre, const char *call,
                    const char *note, int got, int want)
{
    const char *w = written();
    char what[400];
    count_bad(*who ? who : call);
    snprintf(what, sizeof what, "%s%s%s%s%s%s%s", who, *who ? ": " : "", pre, *pre ? "; " : "",
             call, *note ? " " : "", note);
    if (got == want && !*w) check(1, "%s -> %s, outputs untouched", what, name(want));
    else check(0, "%s: got %d %s, want %s%s%s", what, got, name(got), name(want),
               *w ? "; wrote to " : "", w);
}

/* One bad call: setup() (every output sentinel-filled), pre (statements putting valid
   inputs in place), the call, and bad_row on its status. BADF and BADN add a printf-style
   note (a loop variable's value). The texts are taken here, before NULL is expanded. */
#define ROW_(pre, spre, call, scall, want, swant, ...)                                      \
    do {                                                                                    \
        char note_[160];                                                                    \
        setup();                                                                            \
        pre;                                                                                \
        snprintf(note_, sizeof note_, __VA_ARGS__);                                         \
        bad_row(swant[0] == 'P' ? pe_name : ffn_name, spre, scall, note_, (call), (want));  \
    } while (0)
#define BAD(call, want) ROW_((void)0, "", call, #call, want, #want, "%s", "")
#define BADF(call, want, ...) ROW_((void)0, "", call, #call, want, #want, __VA_ARGS__)
#define BADS(pre, call, want) ROW_(pre, #pre, call, #call, want, #want, "%s", "")
#define BADN(pre, call, want, ...) ROW_(pre, #pre, call, #call, want, #want, __VA_ARGS__)
/* A row of a test that keeps its valid arguments in a struct a0 and its call over a copy
   `a` in a macro CALL: the row's changes to a (and any statements), then the call. */
#define TRY(want, ...) \
    ROW_((a = a0, __VA_ARGS__), "", CALL, #__VA_ARGS__, want, #want, "%s", "")

/* Index of the first element where got and want differ in bits, or -1. */
static long first_diff(const float *got, const float *want, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (th_fbits(got[i]) != th_fbits(want[i])) return (long)i;
    return -1;
}

/* A valid call: status OK, n results equal to want bit for bit, guard after them intact;
   the check named printf-style. */
static void good(int got, const float *res, const float *want, size_t n, const float *guard_end,
                 const char *fmt, ...)
{
    long at = first_diff(res, want, n);
    int guard_ok = !guard_end || untouched(res + n, (size_t)(guard_end - (res + n)) * sizeof *res);
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
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

/* A valid call after setup() and pre: good(got, ...). */
#define GOOD(pre, ...) \
    do {               \
        setup();       \
        pre;           \
        good(__VA_ARGS__); \
    } while (0)

/* ---- status strings and version macros ----------------------------------------------- */

#define STR_(a) #a
#define STR(a) STR_(a)

/* Each status a distinct message; unknown codes (and the one after the newest) say so. */
static void test_strings(const th_lib *lib, const int *st, int n, const char *(*name)(int))
{
    static const int unknown[] = { 1, 42, -100, INT_MIN, INT_MAX };
    int i, j, distinct = 1;
    for (i = 0; i < n; i++) {
        const char *s = lib->why(st[i]);
        check(s && *s && !strstr(s, "unknown"), "%s_status_string(%s) = \"%s\"", lib->header,
              name(st[i]), s ? s : "(null)");
        for (j = 0; j < i && s; j++)
            if (lib->why(st[j]) && strcmp(s, lib->why(st[j])) == 0) distinct = 0;
    }
    check(distinct, "%s_status_string: %zu distinct strings", lib->header, (size_t)n);
    for (i = 0; i <= (int)(sizeof unknown / sizeof *unknown); i++) {
        const int u = i < (int)(sizeof unknown / sizeof *unknown) ? unknown[i] : st[n - 1] - 1;
        const char *s = lib->why(u);
        check(s && strstr(s, "unknown") != NULL, "%s_status_string(%d) says unknown", lib->header,
              u);
    }
}

/* The version string is the three numbers, so the macros cannot drift apart. */
#define CHECK_VERSION(P)                                                                   \
    check(strcmp(P##_VERSION_STRING, STR(P##_VERSION_MAJOR) "." STR(P##_VERSION_MINOR) "." \
                 STR(P##_VERSION_PATCH)) == 0 && P##_VERSION_MAJOR >= 1,                   \
          #P "_VERSION_STRING \"%s\" == MAJOR.MINOR.PATCH", P##_VERSION_STRING)

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

/* ---- training: the forward that keeps the pre-activations, and the backward ---------- */

/* A training forward (packed or not) through its piece's wrapper: the block's (pre2, up_h,
   unused) or the gated one's with gate = up = w1, down = w2. */
typedef int (*train_fn)(int packed, float *yo, float *pre1, float *pre2, const float *xi,
                        const float *a1, const float *c1, const float *a2, const float *c2,
                        size_t rows, size_t d, size_t h, int act, float *scr, size_t nscr);

/* The pre-activations go to `out` (h, gate_h) and `tout` (up_h), watched outputs. */
static void test_train(const char *nm, int packed, int gated, train_fn trn, size_t need)
{
    const size_t big = SIZE_MAX / 2;
    const float *a1 = packed ? w1p : w1, *a2 = packed ? w2p : w2;
    float *p2 = gated ? tout : NULL, want[R * D], wanth[R * H];
    size_t i;
    who = nm;
#define TR(yo, h1, h2, xi, c1, c2, rows, d, h, act, scr, nscr) \
    trn(packed, yo, h1, h2, xi, a1, c1, a2, c2, rows, d, h, act, scr, nscr)
    struct { float *y, *h1, *h2; const float *x, *w1, *b1, *w2, *b2; size_t rows, d, h; int act;
             float *scr; size_t n; } a,
        a0 = {y, out, p2, fx, a1, b1, a2, b2, R, D, H, FFN_SILU, scratch, need};
#define CALL trn(packed, a.y, a.h1, a.h2, a.x, a.w1, a.b1, a.w2, a.b2, a.rows, a.d, a.h, a.act, \
                 a.scr, a.n)
    TRY(FFN_ERR_ARG, a.y = NULL, a.act = -1, a.n = 0); TRY(FFN_ERR_ARG, a.act = FFN_GPT_OSS);
    TRY(FFN_ERR_NULL, a.y = NULL); TRY(FFN_ERR_NULL, a.h1 = NULL);
    if (gated) TRY(FFN_ERR_NULL, a.h2 = NULL);
    TRY(FFN_ERR_NULL, a.x = NULL); TRY(FFN_ERR_NULL, a.w1 = NULL); TRY(FFN_ERR_NULL, a.w2 = NULL);
    TRY(FFN_ERR_NULL, a.scr = NULL);
    TRY(FFN_ERR_ZERO_SIZE, a.h = 0);
    TRY(FFN_ERR_OVERFLOW, a.rows = big, a.d = 1, a.h = 3);
    TRY(FFN_ERR_SCRATCH, a.n = need - 1);
    TRY(FFN_ERR_ALIAS, a.h1 = arena + 2, a.x = arena);
    TRY(FFN_ERR_ALIAS, a.y = arena, a.h1 = arena);
    TRY(FFN_ERR_ALIAS, a.h1 = arena, a.scr = arena + R * H - 1);
    TRY(FFN_ERR_ALIAS, a.h1 = arena, a.b2 = arena + R * H - 1);
    if (gated) {
        TRY(FFN_ERR_ALIAS, a.h1 = arena, a.h2 = arena + R * H - 1);
        TRY(FFN_ERR_ALIAS, a.h2 = arena + 1, a.w1 = arena);
    }
    TRY(FFN_ERR_ALIAS, a.y = arena + 1, a.x = arena);
    TRY(FFN_ERR_ALIAS, a.w1 = arena + 1, a.scr = arena);
    /* valid (ReLU: exact): h = fc1(x), y as the inference forward */
    if (gated) gated_ref(want, fx, b1, b1, b2);
    else block_ref(want, fx, b1, b2);
    linear_ref(wanth, fx, w1, b1, R, D, H);
    GOOD((void)0, TR(y, out, p2, fx, b1, b2, R, D, H, FFN_RELU, scratch, need), y, want, R * D,
         y + R * H + GUARD, "%s: valid ReLU (3x4, hidden 6): y", nm);
    good(0, out, wanth, R * H, out + B * S * D + GUARD, "%s: valid: h (gate_h) = fc1(x)", nm);
    if (gated) good(0, tout, wanth, R * H, tout + M * D + GUARD, "%s: valid: up_h = up(x)", nm);
    check(untouched(scratch + need, GUARD * sizeof(float)),
          "%s: writes no scratch beyond ffn_block_scratch_floats(...)", nm);
    GOOD(memcpy(arena, fx, sizeof fx),
         TR(arena, out, p2, arena, b1, b2, R, D, H, FFN_RELU | FFN_FAST, scratch, need), arena,
         want, R * D, arena + R * D + GUARD, "%s: y == x is allowed", nm);
    if (gated) gated_ref(want, fx, NULL, NULL, NULL);
    else block_ref(want, fx, NULL, NULL);
    linear_ref(wanth, fx, w1, NULL, R, D, H);
    GOOD((void)0, TR(y, out, p2, fx, NULL, NULL, R, D, H, FFN_RELU, scratch, need), y, want, R * D,
         NULL, "%s: no biases", nm);
    for (i = 0; i < R * H && out[i] == wanth[i]; i++) {}
    check(i == R * H, "%s: no biases: h = x w1^T", nm);
#undef TR
#undef CALL
}

/* ---- the backward of the block and of the gated block ---------------------------------- */

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

/* A backward through its piece's wrapper: the block's (outputs o[0..4]: dx, dw1, db1, dw2,
   db2) or the gated one's (o[0..6]: dx, dw_gate, db_gate, dw_up, db_up, dw_down, db_down)
   with gate_h = up_h = h and w_gate = w_up = w1; extra: the piece's own bad calls. */
typedef int (*bwd_fn)(int gated, float *const *o, const float *dyv, const float *xi,
                      const float *hh, const float *a1, const float *a2, size_t rows, size_t d,
                      size_t h, int act, float *scr, size_t nscr);
typedef void (*bwd_extra_fn)(int gated, float *const *o, const float *dyv, const float *hh,
                             size_t need);

static void test_backward(const char *nm, int gated, bwd_fn bwd, size_t need, bwd_extra_fn extra)
{
    const int no = gated ? 7 : 5;
    who = nm;
    float dyv[R * D], hh[R * H], *o[7], *o2[7], *none[7] = {NULL};
    float wantbuf[2 * R * D + 3 * (H * D + H)], *want[7];
    size_t sz[7], at = 0, k;
    int j;
    for (k = 0; k < R * D; k++) dyv[k] = val(k, 10);
    linear_ref(hh, fx, w1, b1, R, D, H);
    for (j = 0; j < no; j++) {       /* the outputs, one after another in the arena */
        sz[j] = j == 0 ? R * D : j == no - 2 ? D * H : j == no - 1 ? D : j % 2 ? H * D : H;
        o[j] = arena + at;
        want[j] = wantbuf + at;
        at += sz[j];
    }
    if (need == 0 || need > SCRATCH_CAP || at + need > ARENA) {
        check(0, "%s: not run, scratch %zu does not fit the fixtures", nm, need);
        return;
    }
    {
    struct { float *const *o; const float *dy, *x, *h, *w1, *w2; size_t rows, d, hid; int act;
             float *scr; size_t n; } a,
        a0 = {o, dyv, fx, hh, w1, w2, R, D, H, FFN_GELU, scratch, need};
#define CALL bwd(gated, a.o, a.dy, a.x, a.h, a.w1, a.w2, a.rows, a.d, a.hid, a.act, a.scr, a.n)
    TRY(FFN_ERR_ARG, a.dy = NULL, a.act = -1); TRY(FFN_ERR_ARG, a.act = FFN_GPT_OSS);
    TRY(FFN_ERR_NULL, a.dy = NULL); TRY(FFN_ERR_NULL, a.x = NULL); TRY(FFN_ERR_NULL, a.h = NULL);
    TRY(FFN_ERR_NULL, a.w1 = NULL); TRY(FFN_ERR_NULL, a.w2 = NULL); TRY(FFN_ERR_NULL, a.scr = NULL);
    TRY(FFN_ERR_NULL, a.o = none);
    if (extra) extra(gated, o, dyv, hh, need);
    TRY(FFN_ERR_ZERO_SIZE, a.rows = 0); TRY(FFN_ERR_ZERO_SIZE, a.d = 0);
    TRY(FFN_ERR_OVERFLOW, a.rows = SIZE_MAX / 2, a.d = 3, a.hid = 1);
    TRY(FFN_ERR_OVERFLOW, a.rows = SIZE_MAX / 64, a.d = 1, a.hid = 3);
    TRY(FFN_ERR_SCRATCH, a.n = need - 1);
    TRY(FFN_ERR_ALIAS, a.dy = o[0]); TRY(FFN_ERR_ALIAS, a.h = o[0] + 1);
    /* outputs o2, o's but one: the first weight gradient's last float is the next
       output's first; the last weight gradient is w2; the last bias gradient's first
       float is scratch's last */
    TRY(FFN_ERR_ALIAS, memcpy(o2, o, sizeof o2), o2[2] = o2[1] + sz[1] - 1, a.o = o2);
    TRY(FFN_ERR_ALIAS, memcpy(o2, o, sizeof o2), o2[no - 2] = (float *)w2, a.o = o2);
    TRY(FFN_ERR_ALIAS, memcpy(o2, o, sizeof o2), o2[no - 1] = scratch + need - 1, a.o = o2);
    TRY(FFN_ERR_ALIAS, put(ARENA - R * D, fx, sizeof fx), a.x = arena + ARENA - R * D,
        a.scr = arena + ARENA - R * D - need + 1);
#undef CALL
    }
    /* valid: ReLU / ReGLU, exact; the gradients added to what the buffers held */
    for (j = 1; j < no; j++)
        for (k = 0; k < sz[j]; k++) want[j][k] = val(k, (size_t)(10 + j));
    backward_ref(gated, want, dyv);
    setup();
    for (j = 1; j < no; j++)
        for (k = 0; k < sz[j]; k++) o[j][k] = val(k, (size_t)(10 + j));
    snap();
    good(bwd(gated, o, dyv, fx, hh, w1, w2, R, D, H, FFN_RELU, scratch, need), o[0], want[0],
         R * D, NULL, "%s: valid ReLU: dx", nm);
    for (j = 1; j < no; j++) {
        good(0, o[j], want[j], sz[j], j == no - 1 ? o[j] + sz[j] + GUARD : NULL,
             "%s: valid ReLU: gradient %d accumulated", nm, j);
    }
    check(untouched(scratch + need, GUARD * sizeof(float)),
          "%s: no scratch written beyond its size query", nm);
    for (j = 0; j < no; j++) {  /* each alone: the same bits */
        float *only[7] = {NULL};
        setup();
        only[j] = o[j];
        for (k = 0; j && k < sz[j]; k++) o[j][k] = val(k, (size_t)(10 + j));
        good(bwd(gated, only, dyv, fx, hh, w1, w2, R, D, H, FFN_RELU | FFN_FAST, scratch, need),
             o[j], want[j], sz[j], o[j] + sz[j] + GUARD, "%s: output %d alone, the others NULL",
             nm, j);
    }
}

/* ---- every feature's bad and valid calls --------------------------------------------- */

#define FEATURE_ERRORS
#include "../features/all.inc"
#undef FEATURE_ERRORS

/* ---- README.md's status tables ------------------------------------------------------ */

/* Every status of the header's enum (its lines "    PREFIX_OK = 0," and
   "    PREFIX_ERR_X = -N,", read from the header's text, so a code added there is seen
   here) is a row "| `NAME` | value | `message` | ..." of README.md, with the header's
   value and status_string's exact message; name() (this file's) knows it; and README has
   no row for a status that is not in the enum. Run from the repository root. */
static void test_readme_table(const char *header, const char *prefix,
                              const char *(*why)(int), const char *(*name)(int))
{
    char *h = th_read_text(header), *r = th_read_text("README.md"), *p, pre[32], row[80];
    const size_t np = strlen(prefix) + 1;
    int codes = 0, rows = 0;
    check(h && r, "%s and README.md readable from the working directory", header);
    if (!h || !r) goto done;
    snprintf(pre, sizeof pre, "%s_", prefix);
    for (p = h; (p = strstr(p, "\n    ")) != NULL; p++) {
        char nm[64], msg[256];
        const char *q;
        long val, rval;
        /* an enumerator: "    PREFIX_OK = 0," or "    PREFIX_ERR_X = -N," */
        if (strncmp(p + 5, pre, np) != 0 ||
            (strncmp(p + 5 + np, "OK", 2) != 0 && strncmp(p + 5 + np, "ERR_", 4) != 0) ||
            sscanf(p + 5, "%63[ABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789] = %ld", nm, &val) != 2)
            continue;
        codes++;
        check(strcmp(name((int)val), nm) == 0, "%s: %s = %ld is known to this test (%s)", header,
              nm, val, name((int)val));
        snprintf(row, sizeof row, "\n| `%s` | ", nm);
        if (!(q = strstr(r, row))) {
            check(0, "README.md has a row for %s", nm);
            continue;
        }
        if (sscanf(q + strlen(row), "%ld | `%255[^`]` |", &rval, msg) != 2) {
            check(0, "README.md's row for %s has a `message` column", nm);
            continue;
        }
        check(rval == val && strcmp(msg, why((int)val)) == 0,
              "README.md: %s | %ld | \"%s\" (header: %ld, \"%s\")", nm, rval, msg, val,
              why((int)val));
    }
    /* README's rows for this header's statuses: no more than the enum has */
    snprintf(row, sizeof row, "\n| `%s", pre);
    for (p = r; (p = strstr(p, row)) != NULL; p++)
        if (strncmp(p + strlen(row), "OK`", 3) == 0 || strncmp(p + strlen(row), "ERR_", 4) == 0)
            rows++;
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
    char set_path[32];
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
    snprintf(set_path, sizeof set_path, "%s_set_path", lib->header);
    for (i = 0; i < (int)(sizeof bad / sizeof *bad); i++) {
        lib->set(runs[nruns - 1]);
        before = lib->now();
        count_bad(set_path);
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
    for (i = 0; (name = th_pe.name(i)) != NULL; i++)
        for (j = 0; th_ffn.name(j); j++)
            if (strcmp(name, th_ffn.name(j)) == 0) {
                st_pe = th_pe.set(name);
                st_ffn = th_ffn.set(name);
                shared++;
                agree = agree && (st_pe == PE_OK) == (st_ffn == FFN_OK) &&
                        (st_pe == PE_ERR_PATH) == (st_ffn == FFN_ERR_PATH);
            }
    check(agree, "%s_set_path and %s_set_path agree on the %d path names they share", th_pe.header,
          th_ffn.header, shared);
#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__) || defined(_M_IX86)
    check(shared >= 3, "x86: avx512, avx2 and scalar are names of both headers (%d shared)",
          shared);
#endif
    th_pe.set("scalar");
    st_pe = th_pe.set("avx2");
    name = th_pe.now();
    th_pe.set("scalar");
    st_old = th_pe.set("avx");
    check(st_old == st_pe && strcmp(th_pe.now(), name) == 0,
          "%s_set_path(\"avx\") is %s_set_path(\"avx2\"): status %d, path %s", th_pe.header,
          th_pe.header, st_old, th_pe.now());
    th_pe.set(NULL);
    th_ffn.set(NULL);
    for (i = 0; th_pe.name(i) && strcmp(th_pe.name(i), PE_BASELINE_SIMD_NAME) != 0; i++) {}
    for (j = 0; th_ffn.name(j) && strcmp(th_ffn.name(j), FFN_BASELINE_SIMD_NAME) != 0; j++) {}
    check(th_pe.name(i) && th_pe.set(PE_BASELINE_SIMD_NAME) == PE_OK,
          "PE_BASELINE_SIMD_NAME \"%s\" is a listed path that runs here", PE_BASELINE_SIMD_NAME);
    check(th_ffn.name(j) && th_ffn.set(FFN_BASELINE_SIMD_NAME) == FFN_OK,
          "FFN_BASELINE_SIMD_NAME \"%s\" is a listed path that runs here",
          FFN_BASELINE_SIMD_NAME);
    check(strcmp(PE_SIMD_NAME, PE_BASELINE_SIMD_NAME) == 0 &&
              strcmp(FFN_SIMD_NAME, FFN_BASELINE_SIMD_NAME) == 0,
          "the old *_SIMD_NAME macros are the baseline names");
    th_pe.set(NULL);
    th_ffn.set(NULL);
}

/* ---- the run ------------------------------------------------------------------------ */

/* Each feature's tests (features/<feature>.inc): 'o' runs once, 'p' on every pe path, 'f'
   on every ffn path; ERRORS_TESTN's test runs as fn(0) .. fn(n - 1). */
typedef struct {
    char when;
    void (*f0)(void);
    void (*f1)(int);
    int n;
    const char *no_bad, *why;   /* a function that has no bad input, and why */
} errors_test;
#define ERRORS_TEST(when, fn) {when, fn, NULL, 0, NULL, NULL},
#define ERRORS_TESTN(when, fn, n) {when, NULL, fn, n, NULL, NULL},
#define ERRORS_NO_BAD(fn, why) {0, NULL, NULL, 0, #fn, why},
static const errors_test tests[] = {
#define FEATURE_ERRORS_RUN
#include "../features/all.inc"
#undef FEATURE_ERRORS_RUN
};

static void run(char when)
{
    size_t i;
    int k;
    for (i = 0; i < sizeof tests / sizeof *tests; i++)
        if (tests[i].when != when) continue;
        else if (who = "", tests[i].f0) tests[i].f0();
        else for (k = 0; k < tests[i].n; k++, who = "") tests[i].f1(k);
}

/* Every listed function has its bad calls, or is declared to have no bad input (and then
   has none); every declaration names a listed function. */
static void test_api_rows(void)
{
    size_t i, k;
    for (i = 0; i < sizeof tests / sizeof *tests; i++)
        if (tests[i].no_bad)
            check(api_index(tests[i].no_bad) >= 0 && !api_bad[api_index(tests[i].no_bad)],
                  "%s has no bad input: %s", tests[i].no_bad, tests[i].why);
    for (k = 0; k < NAPI; k++) {
        for (i = 0; i < sizeof tests / sizeof *tests; i++)
            if (tests[i].no_bad && strcmp(tests[i].no_bad, api_names[k]) == 0) break;
        if (i == sizeof tests / sizeof *tests)
            check(api_bad[k] > 0, "%s: %d bad calls", api_names[k], api_bad[k]);
    }
}

int main(void)
{
    static const th_lib *const libs[2] = {&th_pe, &th_ffn};
    const char *paths[2][TH_MAX_PATHS];
    int n[2], l, i;
    for (l = 0; l < 2; l++) n[l] = th_paths(libs[l], paths[l], stdout);
    test_strings(&th_pe, pe_st, NPE_ST, pe_name);
    test_strings(&th_ffn, ffn_st, NFFN_ST, ffn_name);
    CHECK_VERSION(PE);
    CHECK_VERSION(FFN);
    test_readme_table("pe.h", "PE", th_pe.why, pe_name);
    test_readme_table("ffn.h", "FFN", th_ffn.why, ffn_name);
    test_path_api(&th_pe, PE_ERR_PATH, PE_ERR_CPU);
    test_path_api(&th_ffn, FFN_ERR_PATH, FFN_ERR_CPU);
    test_path_names();
    run('o');
    /* The argument checks come before any path is involved; the valid calls' results
       are checked on every path. */
    for (l = 0; l < 2; l++)
        for (i = 0; i < n[l]; i++) {
            th_use(libs[l], paths[l][i]);
            printf("# %s path %s\n", libs[l]->header, paths[l][i]);
            run("pf"[l]);
        }
    test_api_rows();
    return th_summary();
}

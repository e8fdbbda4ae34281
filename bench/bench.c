/* bench/bench.c - the microbenchmarks' engine (timing, the builds side by side, the limits,
   thread counts, PREV, the output); each feature's calls, shapes and byte or flop counts are
   its piece of features/ (FEATURE_BENCH*). README.md (Performance) says what is measured. */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* clock_gettime, popen, setenv, isatty under -std=c99 */
#endif

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timer.h"
#include "../support/unit.h"
#include "limits.h"
#include "plain.h"
#include "../support/shapes.h"
#include "blas.h"
#ifdef _OPENMP
#include <omp.h>
#define set_threads(t) omp_set_num_threads(t)
#else
#define set_threads(t) ((void)(t))
#endif
#if defined(_WIN32)
#include <io.h>
#define bench_isatty(fd) _isatty(fd)
#define bench_popen _popen
#define bench_pclose _pclose
#define strcasecmp _stricmp
#else
#include <strings.h>
#include <unistd.h>
#define bench_isatty(fd) isatty(fd)
#define bench_popen popen
#define bench_pclose pclose
#endif

#include "../pe.h"  /* declarations only: version strings */
#include "../ffn.h"

#ifndef BENCH_PLAIN_FLAGS
#define BENCH_PLAIN_FLAGS "(not recorded)"
#endif

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* support/unit.c built with the bench's flags, with plain -O2, and (PREV) against the headers
   of git revision BENCH_PREV (bench/bench.mk; without it, prev is NULL). */
const unit *bench_unit_native(void);
const unit *bench_unit_o2(void);
#ifdef BENCH_PREV
const unit *bench_unit_prev(void);
#else
#define bench_unit_prev() NULL
#define BENCH_PREV ""
#define BENCH_PREV_COMMIT ""
#define BENCH_PREV_PE_VERSION ""
#define BENCH_PREV_FFN_VERSION ""
#endif

/* ==== Options ================================================================================= */

#define MAX_THREADS_LIST 8
#define MAX_REPS 1024   /* repeats of one row, at the most */

typedef struct options {
    int json, quick, large, full, limits_only, blas_child, blas_probe; /* (blas_*: a child's) */
    int threads[MAX_THREADS_LIST], nthreads;
    const char *jsonl_path, *filter, *stream_bytes, *read_bytes, *blas_cores, *argv0;
    const char *budget_arg, *threads_arg;
    double budget, budget_main; /* skip a scalar / plain C (main: any other) row over it */
    double min_sample, target;  /* a repeat lasts >= min_sample; ~target s of repeats a row */
    int min_reps, max_reps;
    double pair_sample;         /* min_sample and max_reps of a pair's entries (run_group) */
    int pair_reps;
} options;

static options opt;
static bench_shapes shp;    /* the FFN shapes (support/shapes.h), by --quick and --large */

static void die(const char *fmt, ...)
{
    va_list ap;
    fputs("bench: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static void usage(void)
{
    puts("usage: bench [options]\n"
         "  --quick            few shapes and repeats (smoke test, < 30 s)\n"
         "  --full             measure everything, even calls estimated over the budget\n"
         "  --large            also the FFN ops at 4096 rows, and Llama 7B's gated block\n"
         "  --budget S         skip a scalar-path or plain-C row when 5 calls would take more\n"
         "                     than S seconds (default 5; 0.5 with --quick); the fast paths\n"
         "                     and OpenBLAS get 8 x S\n"
         "  --threads LIST     thread counts, e.g. 1,2 (default: 1 and all CPUs, with OpenMP)\n"
         "  --filter LIST      only ops whose name contains one of these substrings\n"
         "                     (e.g. _act_,_silu: the activations' cost)\n"
         "  --json             print JSON Lines (one object per measurement) instead of the table\n"
         "  --jsonl FILE       also write the JSON Lines to FILE\n"
         "  --blas-cores LIST  OPENBLAS_CORETYPE candidates for the forced OpenBLAS run\n"
         "                     (BLAS=1 builds; default Zen,Haswell,SkylakeX,Cooperlake,Sandybridge)\n"
         "  --limits-only      only the FMA peak and STREAM rows\n"
         "  --stream-bytes L   with --limits-only: STREAM byte counts to measure\n"
         "  --read-bytes L     with --limits-only: byte counts of the STREAM read (sum)");
}

/* The next item of a comma-separated list in buf; the rest of the list, or NULL at its end. */
static const char *list_next(const char *s, char *buf, size_t n)
{
    size_t len;
    if (!s || !*s) return NULL;
    len = strcspn(s, ",");
    snprintf(buf, n, "%.*s", (int)len, s);
    return s + len + (s[len] == ',');
}

static int parse_threads(const char *s)
{
    char item[32], *end;
    opt.nthreads = 0;
    while ((s = list_next(s, item, sizeof item))) {
        const long t = strtol(item, &end, 10);
        if (end == item || *end || t < 1 || t > 1024) return 0;
        if (opt.nthreads < MAX_THREADS_LIST) opt.threads[opt.nthreads++] = (int)t;
    }
    return opt.nthreads > 0;
}

static void parse_args(int argc, char **argv)
{
    static const struct { const char *name; int *set; } flags[] = {
        {"--json", &opt.json}, {"--quick", &opt.quick}, {"--full", &opt.full},
        {"--large", &opt.large}, {"--limits-only", &opt.limits_only},
        {"--blas-child", &opt.blas_child}, {"--blas-probe", &opt.blas_probe}};
    static const struct { const char *name; const char **set; } strings[] = {
        {"--jsonl", &opt.jsonl_path}, {"--filter", &opt.filter},
        {"--stream-bytes", &opt.stream_bytes}, {"--blas-cores", &opt.blas_cores},
        {"--read-bytes", &opt.read_bytes}, {"--budget", &opt.budget_arg},
        {"--threads", &opt.threads_arg}};
    int i;
    size_t f, s;
    opt.argv0 = argv[0];
    opt.blas_cores = "Zen,Haswell,SkylakeX,Cooperlake,Sandybridge";
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        for (f = 0; f < COUNT(flags) && strcmp(a, flags[f].name); f++) {}
        for (s = 0; s < COUNT(strings) && strcmp(a, strings[s].name); s++) {}
        if (f < COUNT(flags)) *flags[f].set = 1;
        else if (s < COUNT(strings) && i + 1 < argc) *strings[s].set = argv[++i];
        else if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(); exit(0); }
        else { usage(); die("unknown or incomplete option '%s'", a); }
    }
    opt.budget = opt.budget_arg ? atof(opt.budget_arg) : opt.quick ? 0.5 : 5.0;
    if (!(opt.budget > 0)) die("--budget wants a positive number of seconds");
    if (opt.threads_arg && !parse_threads(opt.threads_arg)) die("--threads wants a list like 1,2");
    opt.budget_main = 8.0 * opt.budget;
    opt.min_sample = opt.quick ? 0.002 : 0.01;
    opt.target = opt.quick ? 0.03 : 0.25;
    opt.min_reps = opt.quick ? 3 : 5;
    opt.max_reps = opt.quick ? 5 : 15;
    opt.pair_sample = opt.quick ? 0.001 : 0.00025;
    opt.pair_reps = opt.quick ? 8 : MAX_REPS;
}

/* Does the --filter list select this op? */
static int want(const char *op)
{
    const char *f = opt.filter;
    char item[64];
    if (!f || !*f) return 1;
    while ((f = list_next(f, item, sizeof item)))
        if (*item && strstr(op, item)) return 1;
    return 0;
}

/* ==== Memory: 64-byte aligned, owned by the suites and freed together (release) =============== */

static void *xalloc(size_t bytes)
{
    unsigned char *raw = (unsigned char *)malloc(bytes + 64 + sizeof(void *)), *p;
    if (!raw) die("out of memory (%zu bytes)", bytes);
    p = raw + sizeof(void *);
    p += (64 - (uintptr_t)p % 64) % 64;
    memcpy(p - sizeof(void *), &raw, sizeof raw); /* for xfree */
    return p;
}

static void xfree(void *p)
{
    void *raw;
    if (!p) return;
    memcpy(&raw, (unsigned char *)p - sizeof(void *), sizeof raw);
    free(raw);
}

static void **owned;
static size_t nowned, cap_owned;

static void *own(void *p)
{
    if (nowned == cap_owned) {
        cap_owned = cap_owned ? 2 * cap_owned : 64;
        owned = (void **)realloc(owned, cap_owned * sizeof *owned);
        if (!owned) die("out of memory");
    }
    return owned[nowned++] = p;
}

/* Frees what was allocated since nowned was mark. */
static void release(size_t mark)
{
    while (nowned > mark) xfree(owned[--nowned]);
}

static float *falloc(size_t n) { return (float *)own(xalloc(n * sizeof(float))); }

static float *fzero(size_t n) { return (float *)memset(falloc(n), 0, n * sizeof(float)); }

static float *fdup(const float *src, size_t n)
{
    return (float *)memcpy(falloc(n), src, n * sizeof(float));
}

static uint64_t rng_state = 0x9E3779B97F4A7C15u;

static uint64_t rng_next(void) /* xorshift64*: the same inputs in every run */
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Du;
}

/* n floats uniform in [-a, a). */
static float *frand(size_t n, float a)
{
    float *p = falloc(n);
    size_t i;
    for (i = 0; i < n; i++)
        p[i] = a * ((float)(rng_next() >> 40) * (2.0f / 16777216.0f) - 1.0f);
    return p;
}

/* ==== Results ================================================================================= */

enum { KIND_NONE, KIND_COMPUTE, KIND_MEMORY, KIND_LIMIT };

#define MAX_DIMS 6

typedef struct shape {
    int n;
    char name[MAX_DIMS][16];
    long val[MAX_DIMS];
} shape;

typedef struct result {
    char op[40], impl[24], label[48], path[40], note[64]; /* path: SIMD path or BLAS core */
    shape sh;
    int threads, kind, repeats, inner, skipped;
    double flops, bytes;  /* per call */
    double median, min, max;
    char fn[32], act[24]; /* the function it times, if set (fn_rank); an act row's activation */
    double limit, pct;    /* by finish_results (limit: unless own_limit, set beside it) */
    int own_limit, probe; /* probe: one of a pair measuring the cost of dispatch */
    char limit_kind[32];
    long pair;            /* the row it was paired with (run_group), or -1 */
    double vs, vs_lo, vs_hi; /* the pair's time / this row's: median and quartiles */
    double rbytes;        /* > 0: an FFN call at one row streaming this many bytes of weights */
    double rlimit, rpct;  /* the STREAM read of as many (bytes/s) at <= its threads, % of it */
    int rfrom;            /* the thread count that read was measured at */
} result;

static result *results;
static size_t nresults, cap_results;

/* Room for n more rows without moving the array: the rows of a group are all created before
   the first is measured, and the entries point into it. */
static void reserve_results(size_t n)
{
    if (nresults + n <= cap_results) return;
    while (nresults + n > cap_results) cap_results = cap_results ? 2 * cap_results : 256;
    results = (result *)realloc(results, cap_results * sizeof *results);
    if (!results) die("out of memory");
}

static result *new_result(const char *op, const shape *sh, const char *impl,
                          const char *label, const char *path, int threads, int kind)
{
    result *r;
    reserve_results(1);
    r = &results[nresults++];
    memset(r, 0, sizeof *r);
    snprintf(r->op, sizeof r->op, "%s", op);
    r->sh = *sh;
    snprintf(r->impl, sizeof r->impl, "%s", impl);
    snprintf(r->label, sizeof r->label, "%s", label);
    snprintf(r->path, sizeof r->path, "%s", path ? path : "");
    r->threads = threads;
    r->kind = kind;
    r->limit = r->pct = r->vs = r->vs_lo = r->vs_hi = r->rlimit = r->rpct = NAN;
    r->pair = -1;
    return r;
}

/* The shape of names (comma-separated) with the values v[perm[i] - '0'] (perm NULL: v[i]). */
static shape shape_named(const char *names, const char *perm, const size_t *v)
{
    shape s = {0};
    while (*names) {
        const int n = (int)strcspn(names, ",");
        if (s.n == MAX_DIMS) die("internal: too many dims");
        snprintf(s.name[s.n], sizeof s.name[0], "%.*s", n, names);
        s.val[s.n] = (long)v[perm ? perm[s.n] - '0' : s.n];
        s.n++;
        names += n + (names[n] == ',');
    }
    return s;
}

/* SHAPE("rows,in,out", rows, in, out) */
#define SHAPE(names, ...) shape_named(names, NULL, (const size_t[]){__VA_ARGS__})

static const char *short_name(const char *n)
{
    static const char *map[][2] = {
        {"d_model", "d"}, {"hidden", "h"}, {"batch", "B"}, {"seq", "S"},
        {"max_len", "L"}, {"vocab", "V"}, {"context_length", "ctx"}};
    size_t i;
    for (i = 0; i < COUNT(map); i++)
        if (!strcmp(n, map[i][0])) return map[i][1];
    return n;
}

/* A row's shape in the table's short form, "rows=512 d=768 h=3072" (JSON has the full names),
   then " 4t" if threads > 0; four calls in a row each get a buffer of their own. */
static const char *shape_of(const result *r, int threads)
{
    static char bufs[4][96];
    static int next;
    const shape *s = &r->sh;
    char *buf = bufs[next = (next + 1) % 4];
    size_t used = 0, n = sizeof bufs[0];
    int i;
    buf[0] = 0;
    for (i = 0; i < s->n && used < n; i++) {
        const char *nm = s->name[i];
        if (!strcmp(nm, "vocab") || !strcmp(nm, "context_length") ||
            (!strcmp(nm, "max_len") && s->n > 2))
            continue; /* max_len of the adds' table: in the JSON only */
        if (!strcmp(nm, "bytes"))
            used += (size_t)snprintf(buf + used, n - used, "%s%.1f MiB", used ? " " : "",
                                     (double)s->val[i] / 1048576.0);
        else
            used += (size_t)snprintf(buf + used, n - used, "%s%s=%ld", used ? " " : "",
                                     short_name(nm), s->val[i]);
    }
    if (threads > 0 && used < n) snprintf(buf + used, n - used, " %dt", threads);
    return buf;
}

/* ==== Timing ================================================================================== */

/* Everything a timed call needs; each call_* reads the fields it uses. */
typedef struct job {
    const unit *u;
    const char *path;    /* the path this row runs, or NULL: the unit's best (see use_path) */
    float *y, *x, *w1, *b1, *w2, *b2, *w1p, *w2p, *w1t, *w2t, *scratch;
    float *w3p, *wu;     /* the gated block: w1p gate, w3p up, w2p down; the up weight */
    void *w16[2][3];     /* the gated block's weights packed in bfloat16, float16 (ffn_pack) */
    float *dy, *dx, *hs[2], *g[6]; /* the backwards: saved gate and up (h), the gradients */
    float *out, *table, *wte, *wpe, *cosc, *sinc, *inv; /* RoPE's cache (max_len, hd / 2) */
    float *sa, *sb, *sc; /* STREAM arrays */
    int32_t *ids32;
    int64_t *ids64;
    size_t scratch_n, rows, d, h, batch, seq, max_len, vocab, ctx, heads, hd, start, sn;
    double cnt[3];       /* a pe_set's counts its rows' bytes are made of */
    long fma_iters;
    int act, fma_kernel, threads;
    int status;          /* OR of every call's return status */
    volatile float sink;
} job;

typedef void (*call_fn)(job *j);

/* call_*: one timed call; a library call ORs its status into j->status. */
#define LIB_CALL(name, call) static void name(job *j) { j->status |= j->u->call; }
#define PLAIN_CALL(name, call) static void name(job *j) { call; }
/* The arguments every FFN call passes: its shape, its scratch; a pe.h call's (batch, seq, d),
   batch-first, or seq-first. */
#define J_RDH j->rows, j->d, j->h
#define J_SCRATCH j->scratch, j->scratch_n
#define J_BSD j->batch, j->seq, j->d
#define J_SBD j->seq, j->batch, j->d
/* A scratch size (floats) of rows (d, h): u->call(rows, d, h). */
#define SCRATCH_FN(name, call) \
    static size_t name(const unit *u, size_t r, size_t d, size_t h) { return u->call(r, d, h); }

static const unit *native, *o2, *prev;

/* What the engine asks of a unit (its paths, its status strings, packing, scratch sizes),
   from the pieces of the features that own those functions. */
#define FEATURE_BENCH_UNIT
#include "../features/all.inc"
#undef FEATURE_BENCH_UNIT

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof v[0], cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* One repeat: seconds per call. */
static double sample(call_fn fn, job *j, int inner)
{
    const double t0 = bench_now();
    int k;
    for (k = 0; k < inner; k++) fn(j);
    return (bench_now() - t0) / inner;
}

/* How to time fn: a warm-up call, `inner` calls a repeat (>= min_sample), repeats for ~target
   s; est > 0: a call's expected time. 1: skipped (why), as 5 calls would exceed budget. */
static int calibrate(call_fn fn, job *j, double est, double budget, int paired,
                     int *inner_out, int *reps_out, char *why, size_t nwhy)
{
    const double min_sample = paired ? opt.pair_sample : opt.min_sample;
    const int max_reps = paired ? opt.pair_reps : opt.max_reps;
    double t1;
    int reps, inner = 1;
    if (!opt.full && est > 0 && est * (opt.min_reps + 1) > budget) {
        snprintf(why, nwhy, "skipped: est. %.3g s/call (--full)", est);
        return 1;
    }
    t1 = sample(fn, j, 1);
    if (!opt.full && t1 * opt.min_reps > budget) {
        snprintf(why, nwhy, "skipped: 1 call = %.3g s (--full)", t1);
        return 1;
    }
    if (t1 < min_sample) { /* a second warm-up at the batch size: a better per-call time */
        inner = (int)fmin(min_sample / fmax(t1, 1e-7) + 1, 1e6);
        t1 = sample(fn, j, inner);
        inner = (int)fmin(min_sample / fmax(t1, 1e-9) + 1, 1e6);
    }
    reps = (int)(opt.target / (t1 * inner));
    *reps_out = reps < opt.min_reps ? opt.min_reps : reps > max_reps ? max_reps : reps;
    *inner_out = inner;
    return 0;
}

/* ---- progress on stderr (after the first few seconds) -------------------- */

static double t_start, progress_last;
static int progress_shown;

static void progress(const result *r)
{
    const double now = bench_now(), el = now - t_start;
    const int tty = bench_isatty(2);
    if (el < 3.0 || (!tty && now - progress_last < 15.0)) return;
    progress_last = now;
    fprintf(stderr, "%s[bench %4.0f s] %s %s %s t=%d%s", tty ? "\r" : "", el, r->op,
            shape_of(r, 0), r->label, r->threads, tty ? "\033[K" : "\n");
    fflush(stderr);
    progress_shown = tty;
}

/* One row to measure: fn on job j, recorded in r; est as in calibrate. */
typedef struct entry {
    result *r;
    call_fn fn;
    job *j;
    double est;
    int inner, reps;
    int vs;             /* the entry of the group it is paired with, or -1 */
    double samples[MAX_REPS];
} entry;

static void set_entry(entry *e, result *r, call_fn fn, job *j, double est)
{
    e->r = r; e->fn = fn; e->j = j; e->est = est; e->vs = -1;
}

static void pair_entries(entry *g, int a, int b) { g[a].vs = b; g[b].vs = a; }

/* A row on another path than its unit's best (scalar) switches to it around its calls, so
   that the rows interleaved with it run on the best path. name NULL: back to the best. */
static void use_path(const job *j, const char *name)
{
    if (j->path && (bench_ffn_set_path(j->u, name) || bench_pe_set_path(j->u, name)))
        die("cannot switch to the %s path", name ? name : "best");
}

/* Rows compared with each other, their repeats interleaved (README.md: the host's phases
   fall on all alike). A pair (pair_entries) trades places every second round; its ratio
   (result.vs) is the median over pairs of rounds of one's time over the other's. */
static void run_group(entry *g, int n)
{
    int i, k, r, more = 1;
    for (i = 0; i < n; i++) {
        entry *e = &g[i];
        const int cheap = !strcmp(e->r->impl, "scalar") || !strcmp(e->r->impl, "plain_c");
        progress(e->r);
        e->j->status = 0;
        e->reps = 0;
        use_path(e->j, e->j->path);
        e->r->skipped = calibrate(e->fn, e->j, e->est, cheap ? opt.budget : opt.budget_main,
                                  e->vs >= 0, &e->inner, &e->reps, e->r->note, sizeof e->r->note);
        use_path(e->j, NULL);
    }
    /* a pair's rounds line up: as many of them (an even number), as many calls in each */
    for (i = 0; i < n; i++)
        if (g[i].vs >= 0 && (g[i].r->skipped || g[g[i].vs].r->skipped)) {
            g[i].vs = -1;
        } else if (g[i].vs > i) {
            const int v = g[i].vs, m = g[i].reps > g[v].reps ? g[i].reps : g[v].reps;
            g[i].reps = g[v].reps = m + m % 2 > MAX_REPS ? MAX_REPS : m + m % 2;
            g[i].inner = g[v].inner = g[i].inner > g[v].inner ? g[i].inner : g[v].inner;
        }
    for (r = 0; more; r++)
        for (more = k = 0; k < n; k++) {
            i = r % 2 && g[k].vs >= 0 ? g[k].vs : k;
            if (r >= g[i].reps) continue;
            use_path(g[i].j, g[i].j->path);
            g[i].samples[r] = sample(g[i].fn, g[i].j, g[i].inner);
            use_path(g[i].j, NULL);
            more = 1;
        }
    for (i = 0; i < n; i++) {
        result *res = g[i].r;
        const int v = g[i].vs, m = g[i].reps / 2;
        if (v >= 0) {
            double q[MAX_REPS / 2];
            for (k = 0; k < m; k++)
                q[k] = (g[v].samples[2 * k] + g[v].samples[2 * k + 1]) /
                       (g[i].samples[2 * k] + g[i].samples[2 * k + 1]);
            res->vs = median_of(q, m);
            res->vs_lo = q[m / 4];
            res->vs_hi = q[(3 * m) / 4 < m ? (3 * m) / 4 : m - 1];
            res->pair = (long)(g[v].r - results);
        }
    }
    for (i = 0; i < n; i++) { /* (after every ratio: this sorts the samples) */
        result *res = g[i].r;
        if (res->skipped) continue;
        if (g[i].j->status)
            die("%s (%s) returned status %d: %s", res->op, res->label, g[i].j->status,
                g[i].j->u ? bench_ffn_status(g[i].j->u, g[i].j->status) : "");
        res->median = median_of(g[i].samples, g[i].reps);
        res->min = g[i].samples[0];
        res->max = g[i].samples[g[i].reps - 1];
        res->repeats = g[i].reps;
        res->inner = g[i].inner;
    }
}

static void run(result *r, call_fn fn, job *j, double est)
{
    entry e;
    set_entry(&e, r, fn, j, est);
    run_group(&e, 1);
}

/* Seconds per flop of each (impl, threads) series so far: the next, larger shape's estimate,
   so that hopeless rows are skipped before they start. */
static struct { char impl[24]; int threads; double spu; } memo[64];
static int nmemo;

static int memo_find(const char *impl, int threads)
{
    int i;
    for (i = 0; i < nmemo && (memo[i].threads != threads || strcmp(memo[i].impl, impl)); i++) {}
    return i;
}

static void memo_put(const result *r, double units)
{
    const int i = memo_find(r->impl, r->threads);
    if (r->skipped || !(units > 0) || i == (int)COUNT(memo)) return;
    if (i == nmemo) {
        nmemo++;
        snprintf(memo[i].impl, sizeof memo[i].impl, "%s", r->impl);
        memo[i].threads = r->threads;
    }
    memo[i].spu = r->median / units;
}

/* ==== Limits: FMA peak and STREAM ============================================================= */

static double peak[MAX_THREADS_LIST]; /* the best FMA rate at opt.threads[k] */

PLAIN_CALL(call_fma, j->sink = bench_fma_run(j->fma_kernel, j->fma_iters, j->threads))

/* Every FMA kernel at every thread count: rows "fma_peak". */
static void measure_peaks(const char *when)
{
    const bench_fma_kernel *ks;
    const int nk = bench_fma_kernels(&ks);
    int k, ti;
    for (ti = 0; ti < opt.nthreads; ti++)
        for (k = 0; k < nk; k++) {
            const int t = opt.threads[ti];
            const shape s = SHAPE("chains_x_lanes", (size_t)(ks[k].flops_per_iter / 2));
            char label[48];
            result *r;
            job j = {0};
            j.fma_kernel = k; j.threads = t; j.fma_iters = 2000000; /* ~4 ms on one core */
            snprintf(label, sizeof label, "%s (%s)", ks[k].name, when);
            r = new_result("fma_peak", &s, ks[k].name, label, ks[k].desc, t, KIND_LIMIT);
            r->flops = ks[k].flops_per_iter * (double)j.fma_iters * t;
            set_threads(t);
            run(r, call_fma, &j, 0);
            if (!r->skipped && r->flops / r->min > peak[ti]) peak[ti] = r->flops / r->min;
        }
}

/* STREAM-like kernels moving `bytes` a call: copy on two arrays, add on three (an out-of-place
   op's footprint), update on one of bytes/2 (in place), read: the sum of `bytes` (an FFN call
   at one row, which streams its weights). */
enum { STREAM_COPY, STREAM_ADD, STREAM_UPDATE, STREAM_READ };
#define STREAMS_OF(op) (is_inplace(op) ? 7 : 3) /* copy and add, and update in place */
static const char *const stream_ops[] = {"stream_copy", "stream_add", "stream_update",
                                         "stream_read"};

/* The best rate (of the best repeat, as STREAM reports) per (bytes, threads), by STREAM_*;
   NAN: not measured. */
typedef struct stream_rec { double bytes; int threads; double rate[4]; } stream_rec;
static stream_rec streams[256];
static int nstreams;
static float *stream_pool;
static size_t stream_pool_n;

PLAIN_CALL(call_copy, bench_stream_copy(j->sb, j->sa, j->sn, j->threads))
PLAIN_CALL(call_add, bench_stream_add(j->sc, j->sa, j->sb, j->sn, j->threads))
PLAIN_CALL(call_update, bench_stream_update(j->sa, j->sn, j->threads))
PLAIN_CALL(call_read, j->sink = bench_stream_read(j->sa, j->sn, j->threads))

static int is_inplace(const char *op)
{
    const size_t n = strlen(op);
    return n > 8 && !strcmp(op + n - 8, "_inplace");
}

/* One STREAM kernel's row in e; beside: the op measured with it. region: the half of the pool
   it uses (rows interleaved must not find each other's data in cache). */
static void stream_entry(entry *e, job *j, int kind, double bytes, int threads,
                         const char *beside, int region)
{
    static const char *const label[] = {"stream copy b=a", "stream add c=a+b",
                                        "stream update a=a+1", "stream read sum(a)"};
    static const call_fn fn[] = {call_copy, call_add, call_update, call_read};
    const size_t n = (size_t)(bytes / 4);
    const shape s = SHAPE("bytes", (size_t)bytes);
    float *base;
    if (2 * n > stream_pool_n) {
        xfree(stream_pool);
        stream_pool = (float *)xalloc(2 * n * sizeof(float));
        stream_pool_n = 2 * n;
        bench_stream_init(stream_pool, 2 * n, 1.0f, opt.threads[opt.nthreads - 1]);
    }
    base = stream_pool + (size_t)region * n;
    memset(j, 0, sizeof *j);
    j->threads = threads;
    j->sn = kind == STREAM_ADD ? n / 3 : kind == STREAM_READ ? n : n / 2;
    j->sa = base; j->sb = base + j->sn; j->sc = base + 2 * j->sn;
    set_entry(e, new_result(stream_ops[kind], &s, "stream", label[kind], "", threads, KIND_LIMIT),
              fn[kind], j, 0);
    e->r->bytes = (kind == STREAM_ADD ? 12.0 : kind == STREAM_READ ? 4.0 : 8.0) * (double)j->sn;
    if (beside) snprintf(e->r->note, sizeof e->r->note, "beside %s", beside);
}

/* The record of (bytes, threads), created empty if new. */
static stream_rec *stream_slot(double bytes, int threads)
{
    int i;
    for (i = 0; i < nstreams; i++)
        if (streams[i].bytes == bytes && streams[i].threads == threads) return &streams[i];
    if (nstreams == 256) die("internal: too many STREAM sizes");
    streams[nstreams] = (stream_rec){bytes, threads, {NAN, NAN, NAN, NAN}};
    return &streams[nstreams++];
}

static void stream_keep(stream_rec *st, const result *r, int kind)
{
    const double rate = r->skipped ? NAN : r->bytes / r->min;
    if (isnan(st->rate[kind]) || rate > st->rate[kind]) st->rate[kind] = rate;
}

/* Measures, interleaved, the kernels of `kinds` (bits 1 << STREAM_*) that the record of
   (bytes, threads) lacks. */
static void stream_for(double bytes, int threads, int kinds)
{
    stream_rec *st = stream_slot(bytes, threads);
    entry g[4];
    job jobs[4];
    int kind[4], n = 0, k;
    for (k = 0; k < 4; k++)
        if ((kinds >> k & 1) && isnan(st->rate[k])) kind[n++] = k;
    set_threads(threads);
    reserve_results(4);
    for (k = 0; k < n; k++) stream_entry(&g[k], &jobs[k], kind[k], bytes, threads, NULL, 0);
    run_group(g, n);
    for (k = 0; k < n; k++) stream_keep(st, g[k].r, kind[k]);
}

/* An op's limit in a record: update for an in-place op, else the better of copy and add. */
static double stream_limit(const stream_rec *st, const char *op, const char **kind)
{
    const int k = is_inplace(op) ? STREAM_UPDATE
                  : st->rate[STREAM_ADD] > st->rate[STREAM_COPY] ? STREAM_ADD : STREAM_COPY;
    *kind = stream_ops[k];
    return st->rate[k];
}

/* % of the FMA peak or of the STREAM kernel with the same bytes and footprint; the limit at t
   threads is the best at <= t (a busy machine's many-thread limit can come out absurdly low). */
static void finish_results(void)
{
    size_t i;
    int k;
    for (i = 0; i < nresults; i++) {
        result *r = &results[i];
        int from = r->threads; /* own_limit: measured beside it */
        if (r->skipped || (r->kind != KIND_COMPUTE && r->kind != KIND_MEMORY)) continue;
        for (k = 0; r->rbytes > 0 && k < nstreams; k++)
            if (streams[k].bytes == r->rbytes && streams[k].threads <= r->threads &&
                !(streams[k].rate[STREAM_READ] <= r->rlimit)) {
                r->rlimit = streams[k].rate[STREAM_READ];
                r->rfrom = streams[k].threads;
            }
        if (!isnan(r->rlimit)) {
            const size_t n = strlen(r->note);
            char at[16] = "";
            if (r->rfrom != r->threads) snprintf(at, sizeof at, "@%dt", r->rfrom);
            r->rpct = 100.0 * (r->rbytes / r->median) / r->rlimit;
            snprintf(r->note + n, sizeof r->note - n, "%sweights %.0f%% of stream_read%s",
                     n ? "; " : "", r->rpct, at);
        }
        if (r->kind == KIND_COMPUTE) {
            for (k = 0; k < opt.nthreads; k++)
                if (opt.threads[k] <= r->threads && !(peak[k] <= r->limit)) {
                    r->limit = peak[k];
                    from = opt.threads[k];
                }
            snprintf(r->limit_kind, sizeof r->limit_kind, "fma_peak");
        } else if (!r->own_limit) {
            for (k = 0; k < nstreams; k++) {
                const char *kind = "";
                double l;
                if (streams[k].bytes != r->bytes || streams[k].threads > r->threads) continue;
                l = stream_limit(&streams[k], r->op, &kind);
                if (!(l <= r->limit)) {
                    r->limit = l;
                    from = streams[k].threads;
                    snprintf(r->limit_kind, sizeof r->limit_kind, "%s", kind);
                }
            }
        }
        if (isnan(r->limit)) continue;
        if (from != r->threads) {
            const size_t n = strlen(r->limit_kind);
            snprintf(r->limit_kind + n, sizeof r->limit_kind - n, "@%dt", from);
        }
        r->pct = 100.0 * ((r->flops > 0 ? r->flops : r->bytes) / r->median) / r->limit;
    }
}

/* ==== Implementations ========================================================================= */

/* The native build's best paths and OpenBLAS run at every thread count; the scalar path,
   the plain loop and the default build (no OpenMP) at one. */
static int threads_ok(const char *impl, int t)
{
    return t == 1 || (strcmp(impl, "scalar") && strcmp(impl, "plain_c") && strncmp(impl, "o2", 2));
}

/* A new row labelled "impl [path]" (just "impl" without a path), moving `bytes`. */
static result *lib_row(const char *op, const shape *s, const char *impl, const char *path,
                       int threads, int kind, double bytes)
{
    char label[48];
    result *r;
    snprintf(label, sizeof label, path && *path ? "%s [%s]" : "%s", impl, path);
    r = new_result(op, s, impl, label, path, threads, kind);
    r->bytes = bytes;
    return r;
}

static void mark_probe(result *r)
{
    r->probe = 1;
    snprintf(r->note, sizeof r->note, "dispatch-cost probe");
}

/* One call on two builds at one thread, a pair on j's data: native and default (vs_prev 0;
   probe: small enough to show the cost of dispatch), or this version and PREV's. */
static void run_pair(const char *op, const shape *s, double bytes, int kind, const job *j,
                     call_fn fn, int probe, int vs_prev)
{
    static const char *const impls[2][2] = {{"fast", "o2"}, {"fast_vs_prev", "prev"}};
    entry g[2];
    job jobs[2];
    const unit *other = vs_prev ? prev : o2;
    int c;
    if (!want(op) || !other) return;
    set_threads(1);
    if (kind == KIND_MEMORY) stream_for(bytes, 1, STREAMS_OF(op));
    reserve_results(2);
    for (c = 0; c < 2; c++) {   /* each on its pe.h or its ffn.h path */
        const unit *u = c ? other : native;
        const char *path = strncmp(op, "ffn", 3) ? bench_pe_path(u) : bench_ffn_path(u);
        jobs[c] = *j;
        jobs[c].u = u;
        set_entry(&g[c], lib_row(op, s, impls[vs_prev][c], path, 1, kind, bytes), fn, &jobs[c], 0);
        if (probe) mark_probe(g[c].r);
    }
    pair_entries(g, 0, 1);
    run_group(g, 2);
}

/* A pe.h op on every implementation: interleaved at one thread, native and default on j[0] (a
   pair), alt on j[1] (another), a memory-bound op's STREAM kernels (its limit); then scalar,
   the plain loop, and the native build at more threads. */
static void run_op(const char *op, const shape *s, double bytes, int kind, const job *j,
                   call_fn lib, call_fn alt, call_fn plain)
{
    static const char *const impls[] = {"fast", "o2", "table_fast", "o2_table_fast"};
    const call_fn fns[] = {lib, lib, alt, alt};
    const int inplace = is_inplace(op), n = alt ? 4 : 2;
    const int nk = kind != KIND_MEMORY ? 0 : inplace ? 1 : 2; /* update, or copy and add */
    const int stream[2] = {inplace ? STREAM_UPDATE : STREAM_COPY, STREAM_ADD};
    stream_rec beside = {0, 1, {NAN, NAN, NAN, NAN}};
    const char *limit_kind = "";
    double limit;
    entry g[6];
    job jobs[6];
    result *rows[6];
    int ti, i;
    if (!want(op)) return;
    set_threads(1);
    reserve_results((size_t)(n + 2 + nk));
    for (i = 0; i < n + 2; i++) {
        jobs[i] = j[i < n ? i / 2 : 0];
        jobs[i].u = i < n && i % 2 ? o2 : native;
        rows[i] = i < n ? lib_row(op, s, impls[i], bench_pe_path(jobs[i].u), 1, kind, bytes)
                        : lib_row(op, s, i == n ? "scalar" : "plain_c", i == n ? "scalar" : "",
                                  1, kind, bytes);
        if (i < n) set_entry(&g[i], rows[i], fns[i], &jobs[i], 0);
    }
    for (i = 0; i < n; i += 2) pair_entries(g, i, i + 1);
    for (i = 0; i < nk; i++) stream_entry(&g[n + i], &jobs[n + i], stream[i], bytes, 1, op, i);
    run_group(g, n + nk);
    for (i = 0; i < nk; i++) {
        stream_keep(&beside, g[n + i].r, stream[i]);
        stream_keep(stream_slot(bytes, 1), g[n + i].r, stream[i]);
    }
    limit = stream_limit(&beside, op, &limit_kind);
    for (i = 0; nk && i < n + 2; i++) {
        rows[i]->limit = limit;
        rows[i]->own_limit = 1;
        snprintf(rows[i]->limit_kind, sizeof rows[i]->limit_kind, "%s", limit_kind);
    }
    jobs[n] = j[0];
    jobs[n].u = native;
    jobs[n].path = "scalar";
    run(rows[n], lib, &jobs[n], 0);
    run(rows[n + 1], plain, &jobs[0], 0);
    for (ti = 0; ti < opt.nthreads; ti++) {
        const int t = opt.threads[ti];
        if (t == 1) continue;
        if (nk) stream_for(bytes, t, STREAMS_OF(op));
        set_threads(t);
        for (i = 0; i < n; i += 2)
            run(lib_row(op, s, impls[i], bench_pe_path(native), t, kind, bytes), fns[i], &jobs[i],
                0);
    }
}

/* A feature's pe.h ops, each at the shapes of its set as modes[shape] says: P a pair of
   builds on a call small enough to show the cost of dispatch, T a pair, M every
   implementation of a memory-bound op (run_op), O the same without a limit, '.' none. */
typedef struct pe_row {
    const char *op, *modes;
    call_fn lib, plain, alt;
    double c[3];             /* the bytes it moves: 4 * (c . the job's cnt) */
    int prev;                /* also this version against PREV's */
    const char *dims, *perm; /* its shape's names (NULL: the set's) and values (shape_named) */
} pe_row;

typedef struct pe_set {
    const char *dims;
    int nshapes;
    struct { int when; size_t v[5]; } shapes[5]; /* when: 1 --quick, 2 the full run, 3 both */
    void (*setup)(job j[2], const size_t *v);    /* the data of a shape, and cnt (j[1]: alt's) */
    int nrows;
    pe_row rows[6];
} pe_set;

static void run_pe_set(const pe_set *ps)
{
    int si, k, any;
    for (si = 0; si < ps->nshapes; si++) {
        const size_t *v = ps->shapes[si].v, mark = nowned;
        job j[2] = {{0}};
        for (any = k = 0; k < ps->nrows; k++)
            any |= ps->rows[k].modes[si] != '.' && want(ps->rows[k].op);
        if (!any || !(ps->shapes[si].when & (opt.quick ? 1 : 2))) continue;
        ps->setup(j, v);
        for (k = 0; k < ps->nrows; k++) {
            const pe_row *pr = &ps->rows[k];
            const char m = pr->modes[si];
            const double bytes = 4.0 * (pr->c[0] * j->cnt[0] + pr->c[1] * j->cnt[1] +
                                        pr->c[2] * j->cnt[2]);
            const shape s = shape_named(pr->dims ? pr->dims : ps->dims, pr->perm, v);
            if (m == 'P' || m == 'T')
                run_pair(pr->op, &s, bytes, KIND_NONE, j, pr->lib, m == 'P', 0);
            if (m == 'M' || m == 'O')
                run_op(pr->op, &s, bytes, m == 'M' ? KIND_MEMORY : KIND_NONE, j, pr->lib, pr->alt,
                       pr->plain);
            if (m != '.' && pr->prev) run_pair(pr->op, &s, bytes, KIND_NONE, j, pr->lib, 0, 1);
        }
        release(mark);
    }
}

/* ---- FFN -------------------------------------------------------------------- */

/* A compute-bound FFN row of `flops` a call in e, its skip estimate from its series' last
   shape (memo); label_fmt: a format taking the path, NULL: "impl [path]". */
static void ffn_entry(entry *e, const char *op, const shape *s, const char *impl,
                      const char *label_fmt, const char *path, int t, double flops, call_fn fn,
                      job *j)
{
    const int i = memo_find(impl, t);
    result *r = lib_row(op, s, impl, path, t, KIND_COMPUTE, 0);
    if (label_fmt) snprintf(r->label, sizeof r->label, label_fmt, path);
    r->flops = flops;
    set_entry(e, r, fn, j, i < nmemo ? memo[i].spu * flops : 0.0);
}

/* The rows' repeats are interleaved (run_group) at one thread, and at more where no row is
   OpenBLAS's; else one row (or pair: two entries side by side) after another (OpenBLAS's
   pool spins after its call and would take a core from the next row). */
static void run_rows(entry *g, int n, int t)
{
    int i, w, blas = 0;
    for (i = 0; i < n; i++) blas |= !strncmp(g[i].r->impl, "openblas", 8);
    if (t == 1 || !blas) {
        run_group(g, n);
        return;
    }
    for (i = 0; i < n; i += w) {
        w = g[i].vs == i + 1 ? 2 : 1;
        if (g[i].vs >= 0 && w == 1) die("internal: run_rows: a pair not side by side");
        if (w == 2) pair_entries(&g[i], 0, 1);
        run_group(&g[i], w);
    }
}

/* An FFN op's calls on every implementation (suite_ffn): the library's on plain and on
   packed weights, the plain loop's, OpenBLAS's; bwd: its backward's op. */
enum { CALL_LIB, CALL_PACKED, CALL_PLAIN, CALL_BLAS };
typedef struct ffn_op { const char *op, *bwd; call_fn c[4]; } ffn_op;
static char blas_core_default[64], blas_core_forced[64], blas_probe_log[512];

/* One row of a series of the native build (run_series) on one (d, h). */
typedef struct series_row {
    const char *op, *impl;
    call_fn call;
    double flops;          /* per rows * d * h */
    size_t (*scratch)(const unit *u, size_t rows, size_t d, size_t h);
    int act;               /* FFN_GELU, ... */
    const char *label, *dims; /* label: as in ffn_entry (NULL: "impl [path]"); dims: NULL: d, h */
    double rbytes;         /* the weights' bytes per d * h, read at one row */
    int ref;               /* measured whenever another row is (the ReLU block beside acts) */
    int blas, child;       /* OpenBLAS's (its core is the path); in the forced-core run too */
    const char *fn, *actname; /* the function it times (fn_rank); an activation's row: the act */
    int pair;              /* a pair with the row before (its ratio: paired rounds, quartiles) */
} series_row;

static int series_wanted(const series_row *sr, int n)
{
    int k;
    for (k = 0; k < n && (sr[k].ref || !want(sr[k].op)); k++) {}
    return k < n;
}

/* PREV where it is this ffn.h release (its packing: the same bytes), else NULL. */
static const unit *prev_of_release(void)
{
    const int same = !strcmp(BENCH_PREV_FFN_VERSION, FFN_VERSION_STRING);
    return prev && !opt.blas_child && same ? prev : NULL;
}

/* Rows of the native build (and OpenBLAS) on base's (d, h) at every row and thread count; at
   one row the STREAM read of their weights first. The forced-core child: its rows, renamed.
   pbase (PREV of the same ffn.h release, else NULL): each library row again as
   "<impl>_vs_prev", paired with PREV's "prev_<impl>" on pbase's weights. */
static void run_series(const job *base, const job *pbase, const series_row *sr, int n)
{
    const double dh = (double)base->d * (double)base->h;
    int ri, ti, k, m, ph, last;  /* last: the previous row's entry (a pair's first) */
    if (!series_wanted(sr, n)) return;
    for (ri = 0; ri < shp.nrows; ri++) {
        const size_t rows = shp.rows[ri];
        for (k = 0; rows == 1 && !opt.blas_child && k < n; k++)
            for (ti = 0; sr[k].rbytes > 0 && want(sr[k].op) && ti < opt.nthreads; ti++)
                stream_for(sr[k].rbytes * dh, opt.threads[ti], 1 << STREAM_READ);
        for (ti = 0; ti < opt.nthreads; ti++) {
            const int t = opt.threads[ti];
            job jobs[48];
            entry g[48];
            if (opt.blas_child && t != 1) continue;
            set_threads(t);
            bench_blas_set_threads(t);
            reserve_results(3 * (size_t)n);     /* a row, its PREV pair's two */
            if (3 * n > (int)COUNT(g)) die("run_series: %d rows, room for %d", n, (int)COUNT(g) / 3);
            /* the rows, then with PREV each row again beside PREV's, a pair (pairs side
               by side, for run_rows) */
            for (last = -1, m = ph = 0; ph < (pbase ? 2 : 1); ph++)
                for (k = 0; k < n; k++) {
                    const series_row *s = &sr[k];
                    const shape sh = SHAPE(s->dims ? s->dims : "rows,d_model,hidden", rows,
                                           base->d, base->h);
                    const char *path = s->blas ? bench_blas_corename() : bench_ffn_path(native);
                    const int forced = s->blas && opt.blas_child;
                    const int v1 = !ph ? 1 : !s->blas && !s->ref ? 3 : 0;
                    int v;
                    if ((!s->ref && !want(s->op)) || (opt.blas_child && !s->child) ||
                        (s->blas && !BENCH_HAVE_BLAS))
                        continue;
                    for (v = ph; v < v1; v++, m++) {
                        const char *const impls[] = {
                            forced ? "openblas_forced" : opt.blas_child ? "%s_paired" : "%s",
                            "%s_vs_prev", "prev_%s"};
                        const char *const labels[] = {
                            forced ? "openblas [%s, forced]" : s->label, NULL, "prev"};
                        char impl[32];
                        snprintf(impl, sizeof impl, impls[v], s->impl);
                        jobs[m] = v == 2 ? *pbase : *base;
                        jobs[m].rows = rows;
                        jobs[m].act = s->act;
                        ffn_entry(&g[m], s->op, &sh, impl, labels[v], path, t,
                                  s->flops * (double)rows * dh, s->call, &jobs[m]);
                    }
                    if (ph) {
                        if (v1 == 3) pair_entries(g, m - 2, m - 1);
                        continue;
                    }
                    if (s->pair && last >= 0) pair_entries(g, last, m - 1);
                    last = m - 1;
                    if (rows == 1 && s->rbytes > 0) g[m - 1].r->rbytes = s->rbytes * dh;
                    snprintf(g[m - 1].r->fn, sizeof g->r->fn, "%s", s->fn ? s->fn : "");
                    snprintf(g[m - 1].r->act, sizeof g->r->act, "%s",
                             s->actname ? s->actname : "");
                }
            run_rows(g, m, t);
            for (k = 0; k < m; k++) memo_put(g[k].r, g[k].r->flops);
        }
    }
}

/* weight (out, in) packed by u, or mine (this build's packing; NULL: none) where that gives
   the same bytes: a pair then reads one buffer (on two copies of one packing, PREV=HEAD's
   act rows read 0.94-0.96x: where each copy lies, not what runs). */
static float *packed_like(const unit *u, const float *w, size_t in, size_t out, float *mine)
{
    size_t n;
    float *p = bench_packed(u, w, in, out, &n);
    const int same = mine && n == bench_pack_floats(native, in, out) &&
                     !memcmp(p, mine, n * sizeof *p);
    return same ? mine : p;
}

/* A series on (d, h) on data for every row (forward and backward) at the most rows. */
static void run_series_on(size_t d, size_t h, const series_row *sr, int n)
{
    const size_t max_rows = shp.rows[shp.nrows - 1], mark = nowned;
    size_t k, np;
    job b = {0};
    if (!series_wanted(sr, n)) return;
    b.u = native; b.d = d; b.h = h;
    b.w1 = frand(h * d, 1.0f / sqrtf((float)d));  /* fc1 or gate (in d, out h) */
    b.w2 = frand(d * h, 1.0f / sqrtf((float)h));  /* fc2 or down (in h, out d) */
    b.wu = frand(h * d, 1.0f / sqrtf((float)d));  /* up (in d, out h) */
    b.w1p = bench_packed(native, b.w1, d, h, &np);
    b.w2p = bench_packed(native, b.w2, h, d, &np);
    b.w3p = bench_packed(native, b.wu, d, h, &np);
    b.b1 = frand(h, 1.0f / sqrtf((float)d));
    b.b2 = frand(d, 1.0f / sqrtf((float)h));
    b.x = frand(max_rows * d, 1.0f);
    b.y = fzero(max_rows * d);
    b.dy = frand(max_rows * h, 1.0f);  /* the Linear's dy (rows, out h), the blocks' (rows, d) */
    b.dx = fzero(max_rows * d);
    b.hs[0] = frand(max_rows * h, 1.0f);
    b.hs[1] = frand(max_rows * h, 1.0f);
    for (k = 0; k < 6; k++) b.g[k] = fzero(k % 2 ? (k == 5 ? d : h) : h * d);
    for (k = 0; k < (size_t)n; k++)   /* the most scratch any of the rows' calls needs */
        if (sr[k].scratch && sr[k].scratch(native, max_rows, d, h) > b.scratch_n)
            b.scratch_n = sr[k].scratch(native, max_rows, d, h);
    b.scratch = fzero(b.scratch_n);
    if (prev_of_release()) {
        job pb = b;   /* the same data, the weights packed by PREV (packed_like) */
        pb.u = prev;
        pb.w1p = packed_like(prev, b.w1, d, h, b.w1p);
        pb.w2p = packed_like(prev, b.w2, h, d, b.w2p);
        pb.w3p = packed_like(prev, b.wu, d, h, b.w3p);
        run_series(&b, &pb, sr, n);
    } else {
        run_series(&b, NULL, sr, n);
    }
    release(mark);
}

/* ==== The features' rows ====================================================================== */

#define FEATURE_BENCH
#include "../features/all.inc"
#undef FEATURE_BENCH

/* The features' backward rows on GPT-2 small's MLP; the gradients accumulate across repeats
   (the time does not depend on their values). */
static const series_row backward_rows[] = {
#define FEATURE_BENCH_BACKWARD
#include "../features/all.inc"
#undef FEATURE_BENCH_BACKWARD
};

static void suite_backward(void)
{
    run_series_on(shp.bwd[0], shp.bwd[1], backward_rows, (int)COUNT(backward_rows));
}

/* ---- every FFN implementation: the block, the Linear, packing --------------------- */

/* One implementation in suite_ffn. */
typedef struct ffn_impl {
    const char *impl, *label, *path; /* label: as in ffn_entry */
    int call;                 /* CALL_* */
    int linear;               /* also the Linear's row */
    const unit *u;            /* NULL: plain C or OpenBLAS */
    const char *force;        /* the path it runs instead of its unit's best (job.path) */
    int copy;                 /* its copy of the weights: COPY_* */
    int pair;                 /* a row of the default-vs-native comparison */
    int child;                /* measured in the forced-core OpenBLAS child only */
} ffn_impl;

enum { COPY_NATIVE, COPY_O2, COPY_BLAS, COPY_PREV, NCOPIES };

/* The weights of one (d, h), transposed for the plain loop, a copy per build packed by it,
   shared where they pack to the same bytes: a pair then finds them in the same caches. */
typedef struct ffn_weights {
    float *b1, *b2, *w1t, *w2t, *w1[NCOPIES], *w2[NCOPIES], *w1p[NCOPIES], *w2p[NCOPIES];
} ffn_weights;

static void transpose(float *dst, const float *src, size_t r, size_t c)
{
    size_t i, k;
    for (i = 0; i < r; i++)
        for (k = 0; k < c; k++) dst[k * r + i] = src[i * c + k];
}

static void weights_init(ffn_weights *w, size_t d, size_t h)
{
    int c;
    w->w1[0] = frand(h * d, 1.0f / sqrtf((float)d));
    w->b1 = frand(h, 1.0f / sqrtf((float)d));
    w->w2[0] = frand(d * h, 1.0f / sqrtf((float)h));
    w->b2 = frand(d, 1.0f / sqrtf((float)h));
    w->w1t = falloc(h * d); transpose(w->w1t, w->w1[0], h, d);
    w->w2t = falloc(d * h); transpose(w->w2t, w->w2[0], d, h);
    for (c = 0; c < NCOPIES && (c != COPY_PREV || prev); c++) {
        const unit *u = c == COPY_PREV ? prev : c == COPY_O2 ? o2 : native;
        if (c) {
            w->w1[c] = fdup(w->w1[0], h * d);
            w->w2[c] = fdup(w->w2[0], d * h);
        }
        w->w1p[c] = w->w2p[c] = NULL;
        if (c == COPY_BLAS) continue;
        w->w1p[c] = packed_like(u, w->w1[c], d, h, c ? w->w1p[0] : NULL);
        w->w2p[c] = packed_like(u, w->w2[c], h, d, c ? w->w2p[0] : NULL);
        if (c && w->w1p[c] == w->w1p[0] && w->w2p[c] == w->w2p[0]) {
            w->w1[c] = w->w1[0]; w->w2[c] = w->w2[0];   /* (the copies: freed by release) */
        }
    }
}

/* Points j at weight copy c of w. */
static void use_weights(job *j, const ffn_weights *w, int c)
{
    j->w1 = w->w1[c]; j->w2 = w->w2[c]; j->w1p = w->w1p[c]; j->w2p = w->w2p[c];
    j->b1 = w->b1; j->b2 = w->b2; j->w1t = w->w1t; j->w2t = w->w2t;
}

/* Pairs the entries of impls a and b among g[0..n), if both are there. */
static void pair_impls(entry *g, int n, const char *a, const char *b)
{
    int i, ia = -1, ib = -1;
    for (i = 0; i < n; i++) {
        if (!strcmp(g[i].r->impl, a)) ia = i;
        if (!strcmp(g[i].r->impl, b)) ib = i;
    }
    if (ia >= 0 && ib >= 0) pair_entries(g, ia, ib);
}

/* This version against PREV on one call at t threads, plain and packed: two pairs, in a group
   of their own (after a scalar or plain C row the first vector calls run slower). */
static void run_prev_group(const ffn_op *fo, const shape *s, const job *jn, const job *jp,
                           double units, int t)
{
    static const char *const impls[] = {"fast_vs_prev", "fast_packed_vs_prev", "prev",
                                        "prev_packed"};
    static const char *const labels[] = {"fast [%s], vs prev", "fast_packed [%s], vs prev",
                                         NULL, NULL};
    entry g[4];
    job jobs[4];
    int k;
    set_threads(t);
    reserve_results(4);
    for (k = 0; k < 4; k++) {
        jobs[k] = k < 2 ? *jn : *jp;
        ffn_entry(&g[k], fo->op, s, impls[k], labels[k], bench_ffn_path(jobs[k].u), t, units,
                  fo->c[k % 2], &jobs[k]);
    }
    pair_entries(g, 0, 2);
    pair_entries(g, 1, 3);
    run_group(g, 4);
    for (k = 0; k < 4 && fo == &bench_block; k++) memo_put(g[k].r, units);
}

/* The block and the Linear (fc1 of the largest (d, h)) on every implementation, at every row
   and thread count, shape-major; with PREV against the previous version; then packing. */
static void suite_ffn(void)
{
    const size_t nrows = (size_t)shp.nrows, ndh = (size_t)shp.nblock, mark = nowned;
    const size_t max_rows = shp.rows[nrows - 1];
    const size_t dmax = shp.block[ndh - 1][0], hmax = shp.block[ndh - 1][1];
    const int do_block = want(bench_block.op), do_linear = want(bench_linear.op);
    const int do_pack = want(bench_pack.op) && !opt.blas_child;
    const char *const npath = bench_ffn_path(native), *const opath = bench_ffn_path(o2);
    const ffn_impl all[] = {
        {"fast", NULL, npath, CALL_LIB, 1, native, NULL, COPY_NATIVE, 1, 0},
        {"fast_packed", NULL, npath, CALL_PACKED, 1, native, NULL, COPY_NATIVE, 1, 0},
        {"o2", NULL, opath, CALL_LIB, 0, o2, NULL, COPY_O2, 1, 0},
        {"o2_packed", NULL, opath, CALL_PACKED, 0, o2, NULL, COPY_O2, 1, 0},
        {"scalar", NULL, "scalar", CALL_LIB, 0, native, "scalar", COPY_NATIVE, 0, 0},
        {"plain_c", NULL, "i-k-j", CALL_PLAIN, 1, NULL, NULL, COPY_NATIVE, 0, 0},
        /* ours beside the forced core, interleaved: "vs blas*" compares the same moments */
        {"fast_packed_paired", "fast_packed [%.12s], blas* run", npath, CALL_PACKED, 1, native,
         NULL, COPY_NATIVE, 0, 1},
        {"openblas", "openblas [%s, default]", bench_blas_corename(), CALL_BLAS, 1, NULL, NULL,
         COPY_BLAS, 0, 0},
        {"openblas_forced", "openblas [%s, forced]", bench_blas_corename(), CALL_BLAS, 1, NULL,
         NULL, COPY_BLAS, 0, 1},
    };
    const ffn_impl *impls[8];
    ffn_weights wt[3];
    job base = {0}; /* what every row shares: x, y and scratch, sized for the most rows */
    int nimpl = 0, ii;
    job pbase; /* PREV's own x, y and scratch, and an input for each version's fc2 (xh) */
    float *xh = NULL;
    size_t di, ri, ti, wide = 0;
    if (!do_block && !do_linear && !do_pack) return;
    for (ii = 0; ii < (int)COUNT(all); ii++)
        if (all[ii].child == opt.blas_child && (all[ii].call != CALL_BLAS || BENCH_HAVE_BLAS))
            impls[nimpl++] = &all[ii];
    pbase = base;
    pbase.u = prev;
    for (di = 0; di < ndh; di++) {
        const size_t d = shp.block[di][0], h = shp.block[di][1];
        size_t need = bench_block_scratch(native, max_rows, d, h);
        if (need > base.scratch_n) base.scratch_n = need;
        need = prev ? bench_block_scratch(prev, max_rows, d, h) : 0;
        if (need > pbase.scratch_n) pbase.scratch_n = need;
        if (prev && d > wide) wide = d;
        if (prev && h > wide) wide = h;
        weights_init(&wt[di], d, h);
    }
    if (base.scratch_n < max_rows * hmax) base.scratch_n = max_rows * hmax;
    base.x = frand(max_rows * dmax, 1.0f);
    base.y = fzero(max_rows * hmax);
    base.scratch = fzero(base.scratch_n);
    if (prev) {
        pbase.x = frand(max_rows * wide, 1.0f);
        xh = fdup(pbase.x, max_rows * wide);
        pbase.y = fzero(max_rows * wide);
        pbase.scratch = fzero(pbase.scratch_n);
    }
    for (di = 0; di < ndh; di++) {
        const size_t d = shp.block[di][0], h = shp.block[di][1];
        for (ri = 0; ri < nrows; ri++) {
            const size_t rows = shp.rows[ri];
            const double flops = 4.0 * rows * d * h;
            const int linear = do_linear && di == ndh - 1;
            const shape sb = SHAPE("rows,d_model,hidden", rows, d, h);
            const shape sl = SHAPE("rows,in,out", rows, d, h);
            job jobs[8];
            entry blocks[8], linears[8];
            int nb = 0, nl = 0;
            base.rows = rows; base.d = d; base.h = h;
            /* one row streams the weights: their read at each count, first (it adds rows) */
            for (ti = 0; rows == 1 && !opt.blas_child && ti < (size_t)opt.nthreads; ti++) {
                if (do_block) stream_for(8.0 * d * h, opt.threads[ti], 1 << STREAM_READ);
                if (linear) stream_for(4.0 * d * h, opt.threads[ti], 1 << STREAM_READ);
            }
            reserve_results(2 * (size_t)nimpl * (size_t)opt.nthreads);
            for (ti = 0; ti < (size_t)opt.nthreads; ti++) {
                const int t = opt.threads[ti];
                set_threads(t);
                bench_blas_set_threads(t);
                for (ii = 0; ii < nimpl; ii++) {
                    const ffn_impl *fi = impls[ii];
                    job *j = &jobs[ii];
                    if (!threads_ok(fi->impl, t) || (opt.blas_child && t != 1)) continue;
                    *j = base;
                    j->u = fi->u; j->path = fi->force;
                    use_weights(j, &wt[di], fi->copy);
                    if (do_block) {
                        ffn_entry(&blocks[nb], bench_block.op, &sb, fi->impl, fi->label, fi->path,
                                  t, flops, bench_block.c[fi->call], j);
                        if (fi->pair && di == 0 && ri == 0) mark_probe(blocks[nb].r);
                        if (rows == 1) blocks[nb].r->rbytes = 8.0 * (double)d * (double)h;
                        nb++;
                    }
                    if (linear && fi->linear) {
                        ffn_entry(&linears[nl], bench_linear.op, &sl, fi->impl, fi->label,
                                  fi->path, t, flops / 2, bench_linear.c[fi->call], j);
                        if (rows == 1) linears[nl].r->rbytes = 4.0 * (double)d * (double)h;
                        nl++;
                    }
                }
                pair_impls(blocks, nb, "fast", "o2");
                pair_impls(blocks, nb, "fast_packed", "o2_packed");
                run_rows(blocks, nb, t);
                run_rows(linears, nl, t);
                for (ii = 0; ii < nb; ii++) memo_put(blocks[ii].r, flops);
                for (ii = 0; ii < nl && !do_block; ii++) memo_put(linears[ii].r, flops);
                nb = nl = 0;
            }
            /* The block, and both layers as the Linear: a difference traced to fc1 or fc2. */
            if (prev && !opt.blas_child) {
                job jn = base, jp = pbase;
                int layer;
                jn.u = native;
                use_weights(&jn, &wt[di], COPY_NATIVE);
                use_weights(&jp, &wt[di], COPY_PREV);
                jp.rows = rows; jp.d = d; jp.h = h;
                for (ti = 0; do_block && ti < (size_t)opt.nthreads; ti++)
                    run_prev_group(&bench_block, &sb, &jn, &jp, flops, opt.threads[ti]);
                for (layer = 0; layer < 2 && do_linear; layer++) {
                    const shape s = layer ? SHAPE("rows,in,out", rows, h, d) : sl;
                    if (layer) { /* fc2 through the fc1 fields, on an input of rows x h */
                        jn.d = jp.d = h; jn.h = jp.h = d;
                        jn.x = xh;
                        jn.w1 = jn.w2; jn.w1p = jn.w2p; jp.w1 = jp.w2; jp.w1p = jp.w2p;
                        jn.b1 = jp.b1 = wt[di].b2;
                    }
                    for (ti = 0; ti < (size_t)opt.nthreads; ti++)
                        run_prev_group(&bench_linear, &s, &jn, &jp, flops / 2, opt.threads[ti]);
                }
            }
        }
    }
    /* Packing (memory-bound): both builds on the same bytes (two copies did not fit L3). */
    for (di = 0; do_pack && di < ndh; di++) {
        const size_t d = shp.block[di][0], h = shp.block[di][1];
        const size_t n1 = bench_pack_floats(native, d, h);
        const shape s = SHAPE("in,out", d, h);
        job j = {0};
        j.d = d; j.h = h; j.scratch_n = n1;
        use_weights(&j, &wt[di], COPY_NATIVE);
        run_pair(bench_pack.op, &s, 4.0 * (double)(h * d + n1), KIND_MEMORY, &j,
                 bench_pack.c[CALL_LIB], 0, 0);
    }
    release(mark);
}

/* Every suite, in the order they run: a function or a set of pe.h rows. */
typedef struct suite { int order; void (*run)(void); const pe_set *set; } suite;
static const suite suites[] = {
    {0, suite_ffn, NULL}, {30, suite_backward, NULL},
#define FEATURE_BENCH_SUITES
#include "../features/all.inc"
#undef FEATURE_BENCH_SUITES
};

/* ==== Output ================================================================================== */

/* The order of the ops in the output: the limits (fma_peak, stream_ops), then by the public
   function an op's first row times, in support/api.h's order; ops of one function in the order
   they first ran. A row's function: result.fn where it names one, else the longest function
   its op is named after (pe_rope_apply_inplace: pe_rope_apply). */
#define API_NAME(name, ret, params) #name,
static const char *const api_order[] = {PEFFN_API(API_NAME)};
#undef API_NAME

static int fn_rank(const result *r)
{
    const char *name = r->fn[0] ? r->fn : r->op;
    size_t k, len = 0;
    int rank = 1000;
    if (!strcmp(name, "fma_peak")) return 0;
    for (k = 0; k < COUNT(stream_ops); k++)
        if (!strcmp(name, stream_ops[k])) return 1 + (int)k;
    for (k = 0; k < COUNT(api_order); k++) {
        const size_t n = strlen(api_order[k]);
        if (n > len && !strncmp(name, api_order[k], n) && (!name[n] || name[n] == '_')) {
            len = n;
            rank = 1 + (int)(COUNT(stream_ops) + k);
        }
    }
    return rank;
}

static const char *const impl_order[] = {
    "fast", "o2", "fast_vs_prev", "prev", "fast_vs_act", "fast_packed", "o2_packed",
    "fast_packed_vs_prev", "prev_packed", "fast_packed_vs_act", "table_fast", "o2_table_fast",
    "scalar", "plain_c", "openblas", "fast_packed_paired", "openblas_forced"};

typedef struct sort_key { int fn, op, shape, impl, threads, seq; } sort_key; /* op, seq: indices */

static int cmp_key(const void *a, const void *b)
{
    const sort_key *x = (const sort_key *)a, *y = (const sort_key *)b;
    return x->fn != y->fn ? x->fn - y->fn : x->op != y->op ? x->op - y->op
           : x->shape != y->shape ? x->shape - y->shape
           : x->impl != y->impl ? x->impl - y->impl : x->threads != y->threads
           ? x->threads - y->threads : x->seq - y->seq;
}

static int same_shape(const shape *a, const shape *b)
{
    int i;
    if (a->n != b->n) return 0;
    for (i = 0; i < a->n; i++)
        if (a->val[i] != b->val[i] || strcmp(a->name[i], b->name[i])) return 0;
    return 1;
}

/* Order for printing: op, then shape (in the order shapes were first measured; the STREAM
   rows by byte count), then implementation, then threads. */
static sort_key *sorted_order(void)
{
    sort_key *keys = (sort_key *)malloc((nresults + 1) * sizeof *keys);
    size_t i, k;
    if (!keys) die("out of memory");
    for (i = 0; i < nresults; i++) {
        const result *r = &results[i];
        sort_key *key = &keys[i];
        for (k = 0; strcmp(results[k].op, r->op); k++) {}
        key->op = (int)k;
        key->fn = k < i ? keys[k].fn : fn_rank(r);
        for (k = 0; k < COUNT(impl_order) && strcmp(r->impl, impl_order[k]); k++) {}
        key->impl = (int)k;
        key->threads = r->threads;
        key->seq = (int)i;
        for (k = 0; k < i && (strcmp(results[k].op, r->op) || !same_shape(&results[k].sh, &r->sh));
             k++) {}
        key->shape = (int)k;
        if (!strncmp(r->op, "stream_", 7)) key->shape = (int)(r->sh.val[0] / 1024), key->impl = 0;
        if (!strcmp(r->op, "fma_peak")) key->shape = 0, key->impl = (int)i;
    }
    qsort(keys, nresults, sizeof *keys, cmp_key);
    return keys;
}

static void fmt_time(char *b, size_t n, double s)
{
    if (s < 1e-6) snprintf(b, n, "%.1f ns", s * 1e9);
    else if (s < 1e-3) snprintf(b, n, "%.2f us", s * 1e6);
    else if (s < 1.0) snprintf(b, n, "%.2f ms", s * 1e3);
    else snprintf(b, n, "%.3f s", s);
}

static void fmt_rate(char *b, size_t n, const result *r, double v)
{
    if (isnan(v)) snprintf(b, n, "-");
    else snprintf(b, n, r->flops > 0 ? "%.1f GFLOP/s" : "%.1f GB/s", v / 1e9);
}

/* Ops: the rate of the median repeat; limit kernels: of the best (as STREAM does). */
static double rate_of(const result *r)
{
    if (r->skipped) return NAN;
    return (r->flops > 0 ? r->flops : r->bytes) / (r->kind == KIND_LIMIT ? r->min : r->median);
}

static void print_table(FILE *f)
{
    sort_key *order = sorted_order();
    size_t i;
    fprintf(f, "\n%-27s %-24s %-30s %3s %10s %14s %14s %7s  %s\n", "op", "shape",
            "implementation", "thr", "median", "rate", "limit", "%limit", "note");
    for (i = 0; i < nresults; i++) {
        const result *r = &results[order[i].seq];
        /* a skipped row: "-" in every column, its note says why */
        const char *tail = r->skipped ? "" : r->kind == KIND_MEMORY ? r->limit_kind
                           : r->kind == KIND_LIMIT ? "rate of the best repeat" : "";
        char med[24] = "-", rate[24], lim[24], pct[16] = "-";
        if (!i || strcmp(results[order[i - 1].seq].op, r->op)) fputc('\n', f);
        if (!r->skipped) fmt_time(med, sizeof med, r->median);
        fmt_rate(rate, sizeof rate, r, rate_of(r));
        fmt_rate(lim, sizeof lim, r, r->skipped ? NAN : r->limit);
        if (!r->skipped && !isnan(r->pct)) snprintf(pct, sizeof pct, "%.1f%%", r->pct);
        fprintf(f, "%-27s %-24s %-30s %3d %10s %14s %14s %7s  %s%s%s\n", r->op, shape_of(r, 0),
                r->label, r->threads, med, rate, lim, pct, r->note,
                r->note[0] && tail[0] ? "; " : "", tail);
    }
    free(order);
}

/* The row of (op, shape, impl, threads), or NULL if absent or skipped. */
static const result *find(const char *op, const shape *sh, const char *impl, int threads)
{
    size_t i;
    for (i = 0; i < nresults; i++) {
        const result *r = &results[i];
        if (!r->skipped && r->threads == threads && !strcmp(r->op, op) &&
            !strcmp(r->impl, impl) && same_shape(&r->sh, sh))
            return r;
    }
    return NULL;
}

static void print_ratio(FILE *f, const result *a, const result *b)
{
    if (a && b) fprintf(f, " %8.2fx", b->median / a->median);
    else fprintf(f, " %9s", "-");
}

static double gflops(const result *r) { return r->flops / r->median / 1e9; }

/* The best block path against the peak, OpenBLAS, the plain loop and more threads; the
   Linear's backward against OpenBLAS; memory-bound ops as % of STREAM. */
static void print_summary(FILE *f)
{
    const int tmax = opt.threads[opt.nthreads - 1];
    const char *const B = bench_block.op, *const LB = bench_linear.bwd;
    static const char *const vs[] = {"openblas", "plain_c", "scalar"};
    size_t i, k;
    fprintf(f, "\nsummary: %s, best library path at 1 thread (ratios = time of the other /"
               " time of ours; > 1 means ours is faster)\n", B);
    fprintf(f, "%-24s %-13s %9s %7s %9s %9s %9s %9s  %s\n", "shape", "best", "GFLOP/s",
            "%peak", "vs blas*", "vs blas", "vs plain", "vs scalar", tmax > 1 ? "threads" : "");
    for (i = 0; i < nresults; i++) {
        const result *r = &results[i], *fa = r->skipped ? NULL : r, *pk, *best, *bt, *pair;
        if (strcmp(r->op, B) || strcmp(r->impl, "fast") || r->threads != 1) continue;
        pk = find(B, &r->sh, "fast_packed", 1);
        best = !pk || (fa && fa->median <= pk->median) ? fa : pk;
        if (!best) { fprintf(f, "%-24s %-13s\n", shape_of(r, 0), "skipped"); continue; }
        fprintf(f, "%-24s %-13s %9.1f %6.1f%%", shape_of(r, 0), best->impl, gflops(best),
                best->pct);
        /* blas*: against ours from the forced-core run when it is there (same moments) */
        pair = find(B, &r->sh, "fast_packed_paired", 1);
        print_ratio(f, pair ? pair : best, find(B, &r->sh, "openblas_forced", 1));
        for (k = 0; k < COUNT(vs); k++) print_ratio(f, best, find(B, &r->sh, vs[k], 1));
        if (tmax > 1 && (bt = find(B, &r->sh, best->impl, tmax)))
            fprintf(f, "  %dt/1t %.2fx", tmax, best->median / bt->median);
        fputc('\n', f);
    }
    fprintf(f, "  (blas* = OpenBLAS forced to its best core, 1 thread, against our packed path measured\n"
               "   interleaved with it in that run; blas = its default core; - = not measured)\n");
    for (i = 0; i < nresults; i++) {
        const result *r = &results[i];
        if (strcmp(r->op, LB) || strcmp(r->impl, "fast") || r->skipped) continue;
        fprintf(f, "%s %-24s %7.1f GFLOP/s %6.1f%%  vs blas*", LB, shape_of(r, 0), gflops(r),
                r->pct);
        print_ratio(f, find(LB, &r->sh, "fast_paired", 1), find(LB, &r->sh, "openblas_forced", 1));
        fputs("  vs blas", f);
        print_ratio(f, r, find(LB, &r->sh, "openblas", 1));
        fputc('\n', f);
    }
    fprintf(f, "\nsummary: memory-bound ops, fast path, %% of the STREAM-like limit at 1 thread%s\n",
            tmax > 1 ? " (and at max threads)" : "");
    for (i = 0; i < nresults; i++) {
        const result *r = &results[i], *rt;
        if (r->kind != KIND_MEMORY || strcmp(r->impl, "fast") || r->threads != 1 || r->skipped)
            continue;
        fprintf(f, "  %-27s %-24s %6.1f GB/s %6.1f%% of %s", r->op, shape_of(r, 0),
                r->bytes / r->median / 1e9, r->pct, r->limit_kind);
        if (tmax > 1 && (rt = find(r->op, &r->sh, "fast", tmax)))
            fprintf(f, "   %dt: %6.1f%%", tmax, rt->pct);
        fputc('\n', f);
    }
}

/* Every FFN op and shape (packed where it can be) at each thread count. */
static void print_scaling_summary(FILE *f)
{
    const int t0 = opt.threads[0], tn = opt.threads[opt.nthreads - 1];
    size_t i;
    int k;
    fprintf(f, "\nsummary: scaling, native build (packed weights where the op has them): "
               "GFLOP/s (%% of the FMA peak at that thread count; rows=1: %% of the STREAM "
               "read of its weights)\n%-29s %-24s", "op", "shape");
    for (k = 0; k < opt.nthreads; k++) fprintf(f, " %19dt", opt.threads[k]);
    if (opt.nthreads > 1) fprintf(f, " %8s", "last/1st");
    fputc('\n', f);
    for (i = 0; i < nresults; i++) {
        const result *r = &results[i], *b;
        if (r->kind != KIND_COMPUTE || r->threads != t0 ||
            (strcmp(r->impl, "fast_packed") &&
             (strcmp(r->impl, "fast") || find(r->op, &r->sh, "fast_packed", t0))))
            continue;
        fprintf(f, "%-29s %-24s", r->op, shape_of(r, 0));
        for (k = 0; k < opt.nthreads; k++) {
            const result *q = find(r->op, &r->sh, r->impl, opt.threads[k]);
            char cell[32] = "-";
            if (q)
                snprintf(cell, sizeof cell, isnan(q->rpct) ? "%.1f (%.0f%%)" : "%.1f (%.0f%% rd)",
                         gflops(q), isnan(q->rpct) ? q->pct : q->rpct);
            fprintf(f, " %20s", cell);
        }
        b = find(r->op, &r->sh, r->impl, tn);
        if (opt.nthreads > 1 && !r->skipped && b) fprintf(f, " %7.2fx", r->median / b->median);
        fputc('\n', f);
    }
}

/* The lowest ratio of a class of rows (NAN: none yet) and where it was seen. */
typedef struct lowest { double ratio; char at[128]; } lowest;

static void keep_lowest(lowest *low, double ratio, const char *fn, const char *act, const char *sh)
{
    if (low && !(ratio >= low->ratio)) {
        low->ratio = ratio;
        snprintf(low->at, sizeof low->at, "%s %s%s%s", fn, act, *act ? " " : "", sh);
    }
}

static void print_lowest(FILE *f, const char *what, const lowest *low)
{
    if (!isnan(low->ratio))
        fprintf(f, "  lowest ratio, %-31s %.2fx (%s)\n", what, low->ratio, low->at);
}

/* a's time / b's: paired (run_group) where they were a pair, else of their medians. */
static double time_ratio(const result *a, const result *b)
{
    return b->pair == (long)(a - results) ? b->vs : a->median / b->median;
}

static void ratio_head(FILE *f, const char *a, const char *b)
{
    fprintf(f, "  %-27s %-24s %10s %10s %7s %10s\n", "function", "shape", a, b, "ratio",
            "quartiles");
}

/* "function shape time-a time-b ratio quartiles", ratio = a / b; the lowest kept in low. */
static void ratio_line(FILE *f, const char *fn, const char *sh, const result *a,
                       const result *b, const char *note, lowest *low)
{
    char ta[24] = "-", tb[24] = "-", rs[16] = "-", qs[24] = "";
    if (a && !a->skipped) fmt_time(ta, sizeof ta, a->median);
    if (b && !b->skipped) fmt_time(tb, sizeof tb, b->median);
    if (a && b && !a->skipped && !b->skipped) {
        snprintf(rs, sizeof rs, "%6.2fx", time_ratio(a, b));
        if (b->pair == (long)(a - results))
            snprintf(qs, sizeof qs, "%.2f-%.2f", b->vs_lo, b->vs_hi);
        keep_lowest(low, time_ratio(a, b), fn, "", sh);
    }
    fprintf(f, "  %-27s %-24s %10s %10s %7s %10s%s\n", fn, sh, ta, tb, rs, qs, note);
}

/* The row r was interleaved with per {r's impl, its twin's, the op's suffix: the function}. */
static const result *twin_of(const result *r, const char *const (*tw)[3], size_t n, char *fn,
                             size_t nfn)
{
    size_t k;
    for (k = 0; !r->skipped && k < n; k++)
        if (!strcmp(r->impl, tw[k][0])) {
            if (fn) snprintf(fn, nfn, "%s%s", r->op, tw[k][2]);
            return find(r->op, &r->sh, tw[k][1], r->threads);
        }
    return NULL;
}

/* A default-build row's native twin; PREV's and this version's rows' each other. */
static const char *const twins[][3] = {
    {"o2", "fast", ""}, {"o2_packed", "fast_packed", "_packed"},
    {"o2_table_fast", "table_fast", "_fast"}};
static const char *const version_twins[][3] = {
    {"fast_vs_prev", "prev", ""}, {"fast_packed_vs_prev", "prev_packed", "_packed"},
    {"prev", "fast_vs_prev", ""}, {"prev_packed", "fast_packed_vs_prev", "_packed"}};

/* A user's plain build (run-time dispatch) against -march=native, row by row. */
static void print_default_summary(FILE *f)
{
    lowest low[2] = {{NAN, ""}, {NAN, ""}};
    char what[64];
    size_t i;
    fprintf(f, "\nsummary: default build (%s, run-time dispatch: ffn %s, pe %s) vs native build (%s),\n"
               "  1 thread; ratio = native time / default time (>= 1: the default build is as fast),\n"
               "  the median over pairs of rounds run in turn, and its quartiles (run_group)\n",
            o2->flags, bench_ffn_path(o2), bench_pe_path(o2), native->flags);
    ratio_head(f, "native", "default");
    for (i = 0; i < nresults; i++) {
        const result *r = &results[i], *nr;
        const int k = r->kind == KIND_MEMORY ? 1
                      : !strcmp(r->op, bench_block.op) && r->sh.val[0] >= 32 ? 0 : -1;
        char fn[48];
        if (!(nr = twin_of(r, twins, COUNT(twins), fn, sizeof fn))) continue;
        ratio_line(f, fn, shape_of(r, 0), nr, r, r->probe ? "  dispatch-cost probe" : "",
                   k >= 0 ? &low[k] : NULL);
    }
    snprintf(what, sizeof what, "%s(_packed) rows >= 32:", bench_block.op);
    print_lowest(f, what, &low[0]);
    print_lowest(f, "memory-bound ops:", &low[1]);
}

/* The ReLU block interleaved with a row of another activation (NULL if none or skipped). */
static const result *act_twin(const result *r)
{
    if (!r->act[0] || r->skipped || r->threads != 1) return NULL;
    return find(bench_block.op, &r->sh, strcmp(r->impl, "fast_packed") ? "fast_vs_act"
                                                                     : "fast_packed_vs_act", 1);
}

/* GFLOP/s of a row with another activation over that of the ReLU block beside it. */
static double act_ratio(const result *r, const result *relu) { return gflops(r) / gflops(relu); }

/* What the activation costs: each row of another activation (the block's, the gated
   block's: 6 rows d h flops) against the ReLU block beside it, the lowest ratio of each. */
static void print_act_summary(FILE *f)
{
    lowest low[2] = {{NAN, ""}, {NAN, ""}};
    size_t i;
    int any = 0;
    for (i = 0; i < nresults; i++) {
        const result *r = &results[i], *b = act_twin(r);
        const int gated = r->flops > 5.0 * (double)r->sh.val[0] * (double)r->sh.val[1] *
                                         (double)r->sh.val[2];
        const char *sh = shape_of(r, 0);
        char ga[16] = "-", gb[16] = "-", rs[16] = "-";
        if (!r->act[0] || r->threads != 1) continue;
        if (!any++) {
            fprintf(f, "\nsummary: activation cost: GFLOP/s of the act block / the ReLU block, same shape,\n"
                       "  native build, 1 thread, interleaved; the gated block (6 rows d h flops)\n"
                       "  against the packed ReLU block (4 rows d h); ratio >= 0.90: the activation\n"
                       "  costs <= 10%%\n");
            fprintf(f, "  %-21s %-10s %-24s %10s %10s %7s\n", "function", "act", "shape",
                    "relu", "act", "ratio");
        }
        if (!r->skipped) snprintf(ga, sizeof ga, "%.1f", gflops(r));
        if (b) snprintf(gb, sizeof gb, "%.1f", gflops(b));
        if (b) {
            snprintf(rs, sizeof rs, "%6.2fx", act_ratio(r, b));
            keep_lowest(&low[gated], act_ratio(r, b), r->fn, r->act, sh);
        }
        fprintf(f, "  %-21s %-10s %-24s %10s %10s %7s\n", r->fn, r->act, sh, gb, ga, rs);
    }
    if (any)
        fprintf(f, "  (GFLOP/s; relu = the ReLU block, plain or packed as the row, measured beside"
                   " it)\n");
    print_lowest(f, "the block, another act:", &low[0]);
    print_lowest(f, "the gated block:", &low[1]);
}

/* 16-bit weights (ffn_glu_silu_w16, features/ffn_weights.inc): each bfloat16 and float16
   row against the float32 row of its shape and thread count, ratio = float32 time / its time
   (> 1: faster), the lowest at one row and at rows >= 512 kept. */
static void print_w16_summary(FILE *f)
{
    lowest low[2] = {{NAN, ""}, {NAN, ""}};   /* [rows >= 512], rows = 1 */
    size_t i;
    int any = 0;
    for (i = 0; i < nresults; i++) {
        const result *r = &results[i], *a;
        const size_t rows = r->sh.val[0];
        char fn[48];
        if (strcmp(r->op, "ffn_glu_silu_w16") ||
            (strcmp(r->impl, "bf16_packed") && strcmp(r->impl, "f16_packed")))
            continue;
        if (!any++) {
            fprintf(f, "\nsummary: 16-bit weights: the gated block (SiLU) on packed bfloat16 /"
                       " float16 weights\n  against packed float32, native build, interleaved;"
                       " ratio = float32 time / 16-bit time\n  (bf16: a pair with float32, the"
                       " median over paired rounds and its quartiles; f16: of the medians)\n");
            ratio_head(f, "float32", "16-bit");
        }
        a = find(r->op, &r->sh, "f32_packed", r->threads);
        snprintf(fn, sizeof fn, "%.20s %s", r->fn, r->impl[0] == 'b' ? "bf16" : "f16");
        ratio_line(f, fn, shape_of(r, r->threads), a, r, "",
                   rows == 1 ? &low[1] : rows >= 512 ? &low[0] : NULL);
    }
    print_lowest(f, "16-bit weights, rows = 1:", &low[1]);
    print_lowest(f, "16-bit weights, rows >= 512:", &low[0]);
}

/* This version's pe.h ops and FFN kernels against PREV's (rows = 1 and more apart). */
static void print_prev_summary(FILE *f)
{
    const char *const ops[] = {bench_block.op, bench_linear.op};
    lowest low[4] = {{NAN, ""}, {NAN, ""}, {NAN, ""}, {NAN, ""}}; /* [2 * op + (rows = 1)] */
    size_t i, o, any = 0;
    char fn[48], what[64];
    for (i = 0; i < nresults; i++) {
        const result *r = &results[i];
        if (strncmp(r->op, "pe_", 3) || strcmp(r->impl, "prev")) continue;
        if (!any++) {
            fprintf(f, "\nsummary: this version (pe.h %s) vs PREV=%s (%.12s, pe.h %s), native "
                       "build, 1 thread;\n  ratio = prev time / new time (>= 1: as fast), "
                       "paired rounds' median and quartiles\n",
                    PE_VERSION_STRING, BENCH_PREV, BENCH_PREV_COMMIT, BENCH_PREV_PE_VERSION);
            ratio_head(f, "prev", "new");
        }
        ratio_line(f, r->op, shape_of(r, 0), r, find(r->op, &r->sh, "fast_vs_prev", 1), "", NULL);
    }
    for (i = 0; i < nresults && (strncmp(results[i].impl, "prev", 4) ||
                                 strncmp(results[i].op, "ffn", 3)); i++) {}
    if (i == nresults) return; /* --filter left no FFN op */
    fprintf(f, "\nsummary: this version (ffn.h %s) vs PREV=%s (%.12s, ffn.h %s), native build, each thread count;\n"
               "  ratio = prev time / new time (>= 1: the new kernels are as fast), the median over\n"
               "  pairs of rounds run in turn, and its quartiles (run_group)\n",
            FFN_VERSION_STRING, BENCH_PREV, BENCH_PREV_COMMIT, BENCH_PREV_FFN_VERSION);
    ratio_head(f, "prev", "new");
    for (o = 0; o < 2; o++)
        for (i = 0; i < nresults; i++) {
            const result *r = &results[i];
            if (strcmp(r->op, ops[o]) || strncmp(r->impl, "prev", 4)) continue;
            snprintf(fn, sizeof fn, "%s%s", r->op, strcmp(r->impl, "prev") ? "_packed" : "");
            /* (a row over the budget, skipped: no ratio) */
            ratio_line(f, fn, shape_of(r, r->threads), r,
                       find(r->op, &r->sh, strcmp(r->impl, "prev") ? "fast_packed_vs_prev"
                                                                  : "fast_vs_prev", r->threads),
                       "", &low[2 * o + (r->sh.val[0] == 1)]);
        }
    for (i = 0; i < 4; i++) {
        snprintf(what, sizeof what, "%s(_packed) rows %s:", ops[i / 2], i % 2 ? "= 1" : "> 1");
        print_lowest(f, what, &low[i]);
    }
    low[0].ratio = NAN;
    for (i = 0; i < nresults; i++) {   /* the series' rows (activations, gated, backwards) */
        const result *r = &results[i];
        if (strncmp(r->impl, "prev_", 5) || r->pair < 0) continue;
        snprintf(fn, sizeof fn, "%s %s", r->op, r->impl + 5);   /* (after "prev_") */
        ratio_line(f, fn, shape_of(r, r->threads), r, &results[r->pair], "", &low[0]);
    }
    print_lowest(f, "the other FFN ops:", &low[0]);
}

static void json_str(FILE *f, const char *key, const char *s) /* ,"key":"s" (key NULL: "s") */
{
    if (key) fprintf(f, ",\"%s\":", key);
    fputc('"', f);
    for (; *s; s++) {
        const unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

static void json_num(FILE *f, const char *key, double v) /* ,"key":v */
{
    fprintf(f, ",\"%s\":", key);
    if (isnan(v) || isinf(v)) fputs("null", f);
    else fprintf(f, "%.6g", v);
}

static char cpu_model[128] = "unknown";

static void read_cpu_model(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256], *p;
    while (f && fgets(line, sizeof line, f)) {
        if ((strncmp(line, "model name", 10) && strncmp(line, "Model", 5) &&
             strncmp(line, "Hardware", 8)) || !(p = strchr(line, ':')))
            continue;
        for (p++; *p == ' ' || *p == '\t'; p++) {}
        p[strcspn(p, "\n")] = 0;
        snprintf(cpu_model, sizeof cpu_model, "%s", p);
        if (!strncmp(line, "model name", 10)) break;
    }
    if (f) fclose(f);
}

/* The 1-minute load average (Linux), to show whether something else was running. */
static double loadavg(void)
{
    FILE *f = fopen("/proc/loadavg", "r");
    double l = NAN;
    if (f && fscanf(f, "%lf", &l) != 1) l = NAN;
    if (f) fclose(f);
    return l;
}

static double load_start = NAN;

static const char *compiler_name(void)
{
#if defined(__clang__)
    return "clang " __clang_version__;
#elif defined(__GNUC__)
    return "gcc " __VERSION__;
#elif defined(_MSC_VER)
    return "msvc";
#else
    return "unknown";
#endif
}

static void print_json(FILE *f)
{
    const char *const meta[][2] = { /* string fields after cpu, compiler and loadavg_start */
        {"flags", native->flags}, {"plain_flags", BENCH_PLAIN_FLAGS},
        {BENCH_FFN_PATH_KEY, bench_ffn_path(native)}, {BENCH_PE_PATH_KEY, bench_pe_path(native)},
        {"default_flags", o2->flags}, {"default_ffn_path", bench_ffn_path(o2)},
        {"default_pe_path", bench_pe_path(o2)}, /* then PREV's, with PREV */
        {"prev", BENCH_PREV}, {"prev_commit", BENCH_PREV_COMMIT},
        {"prev_pe_version", BENCH_PREV_PE_VERSION}, {"prev_ffn_version", BENCH_PREV_FFN_VERSION},
        {"prev_flags", prev ? prev->flags : ""},
        {"prev_ffn_path", prev ? bench_ffn_path(prev) : ""},
        {"blas_core_default", blas_core_default}, {"blas_core_forced", blas_core_forced}};
    sort_key *order = sorted_order();
    size_t i;
    int k;
    fputs("{\"op\":\"_meta\"", f);
    json_str(f, "cpu", cpu_model);
    json_str(f, "compiler", compiler_name());
    json_num(f, "loadavg_start", load_start);
    for (i = 0; i < COUNT(meta) - 8; i++) json_str(f, meta[i][0], meta[i][1]);
    for (i = COUNT(meta) - 8; prev && i < COUNT(meta) - 2; i++) json_str(f, meta[i][0], meta[i][1]);
    fprintf(f, ",\"openmp\":%s,\"threads\":[", native->openmp ? "true" : "false");
    for (k = 0; k < opt.nthreads; k++) fprintf(f, "%s%d", k ? "," : "", opt.threads[k]);
    fprintf(f, "],\"quick\":%s,\"outputs_reused\":true,\"inputs_flushed\":false",
            opt.quick ? "true" : "false");
    for (i = COUNT(meta) - 2; BENCH_HAVE_BLAS && i < COUNT(meta); i++)
        json_str(f, meta[i][0], meta[i][1]);
    fputs("}\n", f);
    for (i = 0; i < nresults; i++) {
        const result *r = &results[order[i].seq], *ar = act_twin(r);
        const result *nr = twin_of(r, twins, COUNT(twins), NULL, 0);
        const result *vr = twin_of(r, version_twins, COUNT(version_twins), NULL, 0);
        const int fl = r->flops > 0;
        fputs("{\"op\":", f);
        json_str(f, NULL, r->op);
        fputs(",\"shape\":{", f);
        for (k = 0; k < r->sh.n; k++) {
            json_str(f, NULL, r->sh.name[k]);
            fprintf(f, ":%ld%s", r->sh.val[k], k + 1 < r->sh.n ? "," : "");
        }
        fputc('}', f);
        json_str(f, "impl", r->impl);
        json_str(f, "label", r->label);
        json_str(f, "path", r->path);
        fprintf(f, ",\"threads\":%d", r->threads);
        json_num(f, "median_s", r->skipped ? NAN : r->median);
        json_num(f, "min_s", r->skipped ? NAN : r->min);
        json_num(f, "max_s", r->skipped ? NAN : r->max);
        fprintf(f, ",\"repeats\":%d,\"calls_per_repeat\":%d", r->repeats, r->inner);
        if (r->kind == KIND_LIMIT) fputs(",\"rate_of\":\"min_s\"", f);
        json_num(f, fl ? "flops" : "bytes", fl ? r->flops : r->bytes);
        json_num(f, fl ? "gflops" : "gbps", rate_of(r) / 1e9);
        json_num(f, "limit", r->limit / 1e9);
        if (r->limit_kind[0]) json_str(f, "limit_kind", r->limit_kind);
        else fputs(",\"limit_kind\":null", f);
        json_num(f, "pct_of_limit", r->pct);
        if (r->rbytes > 0) {    /* rows = 1: the weights' bytes against the STREAM read */
            json_num(f, "read_bytes", r->rbytes);
            json_num(f, "read_limit_gbps", r->rlimit / 1e9);
            json_num(f, "pct_of_read", r->rpct);
            fprintf(f, ",\"read_limit_threads\":%d", r->rfrom);
        }
        if (nr) json_num(f, "native_median_s", nr->median);
        if (nr) json_num(f, "native_over_default", time_ratio(nr, r));
        if (ar) json_num(f, "relu_median_s", ar->median);
        if (ar) json_num(f, "act_over_relu", act_ratio(r, ar));
        if (vr) { /* on both rows of a pair: new_over_prev is the summary's ratio (prev / new) */
            const int is_prev = !strncmp(r->impl, "prev", 4);
            json_num(f, is_prev ? "new_median_s" : "prev_median_s", vr->median);
            json_num(f, "new_over_prev", is_prev ? time_ratio(r, vr) : time_ratio(vr, r));
        }
        if (r->pair >= 0) {   /* the paired ratio: the other row's time / this row's */
            json_str(f, "paired_with", results[r->pair].impl);
            json_num(f, "paired_ratio", r->vs);
            json_num(f, "paired_q1", r->vs_lo);
            json_num(f, "paired_q3", r->vs_hi);
        }
        if (r->probe) fputs(",\"dispatch_probe\":true", f);
        if (r->skipped) json_str(f, "skipped", r->note);
        else if (r->note[0]) json_str(f, "note", r->note);
        fputs("}\n", f);
    }
    free(order);
}

static void print_header(FILE *f)
{
#ifdef _OPENMP
    const int ncpu = omp_get_num_procs();
#elif defined(_SC_NPROCESSORS_ONLN)
    const int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
#else
    const int ncpu = 0;
#endif
    int k;
    fprintf(f, "bench: pe.h %s, ffn.h %s%s\n", PE_VERSION_STRING, FFN_VERSION_STRING,
            opt.quick ? " (--quick)" : "");
    fprintf(f, "machine:  %s", cpu_model);
    if (!isnan(load_start)) fprintf(f, "; load average at start %.2f", load_start);
    fputc('\n', f);
    if (ncpu > 0 && load_start > 0.5 * ncpu) /* other work shares the cores */
        fprintf(f, "WARNING:  load average %.2f on %d CPUs: other processes share the cores; the\n"
                   "          figures (multi-thread ones most) are unreliable. Rerun on an idle machine.\n",
                load_start, ncpu);
    fprintf(f, "compiler: %s\nflags:    %s (native build)\ndefault:  %s (default build: rows o2*)\n"
               "plain C:  %s\n", compiler_name(), native->flags, o2->flags, BENCH_PLAIN_FLAGS);
    if (prev)
        fprintf(f, "prev:     %s (previous version: rows prev*)\n"
                   "          git %.12s: pe.h %s, ffn.h %s; ffn path %s\n", prev->flags,
                BENCH_PREV_COMMIT, BENCH_PREV_PE_VERSION, BENCH_PREV_FFN_VERSION,
                bench_ffn_path(prev));
    fprintf(f, "paths:    native build: ffn %s, pe %s (rows fast*; rows scalar: switched to scalar);\n"
               "          default build: ffn %s, pe %s (chosen at run time)\n",
            bench_ffn_path(native), bench_pe_path(native), bench_ffn_path(o2), bench_pe_path(o2));
#ifdef _OPENMP
    fprintf(f, "OpenMP:   yes (%d procs); threads measured:", ncpu);
#else
    fprintf(f, "OpenMP:   no (compiler did not accept -fopenmp); threads measured:");
#endif
    for (k = 0; k < opt.nthreads; k++) fprintf(f, " %d", opt.threads[k]);
    fprintf(f, "\ntiming:   median of >= %d repeats after a warm-up call; a repeat times k calls\n"
               "          back to back (k so a repeat lasts >= %.0f ms); outputs reused across\n"
               "          calls (warm, pages touched); inputs not flushed: memory-bound sizes are\n"
               "          above L2, the largest above L3; FFN weights are reused (warm).\n",
            opt.min_reps, opt.min_sample * 1e3);
    fprintf(f, "limits:   the best repeat of each limit kernel (as STREAM reports), while ops report\n"
               "          their median. FMA peak = best FMA-chain kernel, measured at start and end\n"
               "          of the run. Memory-bound ops vs STREAM-like loops moving the same bytes:\n"
               "          out-of-place ops vs the better of copy (b=a) and add (c=a+b), in-place ops\n"
               "          vs update (a=a+1), each with the op's footprint. The limit at t threads is\n"
               "          the best at <= t threads (\"@1t\": from 1 thread). Table: no limit.\n"
               "          A skipped row would take > %.3g s (scalar, plain C) or > %.3g s (others)\n"
               "          for 5 calls; --full measures it.\n",
            opt.budget, opt.budget_main);
}

/* ==== OpenBLAS: the forced-core run in child processes ======================================== */

static void set_env(const char *k, const char *v)
{
#if defined(_WIN32)
    _putenv_s(k, v ? v : "");
#else
    if (v) setenv(k, v, 1);
    else unsetenv(k);
#endif
}

/* This program again with OPENBLAS_CORETYPE=core (read when OpenBLAS loads): its stdout.
   quiet: without the shell's "Illegal instruction" for a core the CPU lacks. */
static FILE *open_child(const char *core, const char *args, int quiet)
{
    char cmd[1024];
    FILE *p;
    set_env("OPENBLAS_CORETYPE", core);
    set_env("OPENBLAS_NUM_THREADS", "1");
#if defined(_WIN32)
    quiet = 0;
#endif
    snprintf(cmd, sizeof cmd, "%s\"%s\" %s", quiet ? "exec 2>/dev/null; " : "", opt.argv0, args);
    fflush(NULL);
    p = bench_popen(cmd, "r");
    set_env("OPENBLAS_CORETYPE", NULL);
    set_env("OPENBLAS_NUM_THREADS", NULL);
    return p;
}

/* Each candidate core in a child (one the CPU lacks crashes only it; an unknown name falls
   back, which it reports); the fastest gets the forced run, whose rows come back as "R <hex
   of the result>" lines (the same binary at both ends). */
static void blas_forced_run(void)
{
    const char *c = opt.blas_cores;
    char core[64], best[64] = "", args[512], line[2 * sizeof(result) + 8], *log = blas_probe_log;
    double best_g = 0;
    FILE *p;
    while ((c = list_next(c, core, sizeof core))) {
        char got[64] = "", name[64], how[64];
        double g = 0, v;
        const size_t used = strlen(log);
        if (!*core) continue;
        p = open_child(core, "--blas-probe", 1);
        while (p && fgets(line, sizeof line, p))
            if (sscanf(line, "probe %63s %lf", name, &v) == 2) { strcpy(got, name); g = v; }
        if (!p || bench_pclose(p) != 0 || !got[0])
            snprintf(how, sizeof how, "failed (crashed: CPU lacks it?)");
        else if (strcasecmp(got, core))
            snprintf(how, sizeof how, "not accepted (got %s)", got);
        else {
            snprintf(how, sizeof how, "%.1f GFLOP/s", g);
            if (g > best_g) { best_g = g; snprintf(best, sizeof best, "%s", core); }
        }
        snprintf(log + used, sizeof blas_probe_log - used, "%s%s: %s", used ? ", " : "", core, how);
    }
    if (!best[0]) return;
    snprintf(blas_core_forced, sizeof blas_core_forced, "%s", best);
    snprintf(args, sizeof args, "--blas-child --budget %g%s%s%s%s", opt.budget,
             opt.quick ? " --quick" : "", opt.full ? " --full" : "",
             opt.filter ? " --filter " : "", opt.filter ? opt.filter : "");
    p = open_child(best, args, 0);
    while (p && fgets(line, sizeof line, p)) {
        result r;
        unsigned char *b = (unsigned char *)&r;
        size_t i;
        if (strncmp(line, "R ", 2) || strspn(line + 2, "0123456789abcdef") != 2 * sizeof r)
            continue;
        for (i = 0; i < sizeof r && sscanf(line + 2 + 2 * i, "%2hhx", &b[i]) == 1; i++) {}
        reserve_results(1);
        if (i == sizeof r) results[nresults++] = r;
    }
    if (!p || bench_pclose(p) != 0)
        fprintf(stderr, "bench: the forced OpenBLAS run (%s) failed\n", best);
}

/* The child side of the forced run: its rows as records on stdout. */
static void blas_child(void)
{
    size_t i, k;
    bench_blas_set_threads(1);
    suite_ffn();
    suite_backward();
    for (i = 0; i < nresults; i++) {
        const unsigned char *b = (const unsigned char *)&results[i];
        fputs("R ", stdout);
        for (k = 0; k < sizeof(result); k++) printf("%02x", b[k]);
        putchar('\n');
    }
}

/* The child side of a probe: one FFN shape, printed as "probe CORE GFLOPS". */
static void blas_probe(void)
{
    const size_t rows = 512, d = 512, h = 2048;
    const shape s = SHAPE("rows,d_model,hidden", rows, d, h);
    result *r = new_result(bench_block.op, &s, "openblas_forced", "probe", "", 1, KIND_COMPUTE);
    job j = {0};
    bench_blas_set_threads(1);
    j.x = frand(rows * d, 1.0f);
    j.w1 = frand(h * d, 0.05f); j.w2 = frand(d * h, 0.02f);
    j.b1 = frand(h, 0.05f); j.b2 = frand(d, 0.02f);
    j.y = falloc(rows * d); j.scratch = falloc(rows * h);
    j.rows = rows; j.d = d; j.h = h;
    opt.min_reps = 3; opt.max_reps = 5; opt.target = 0.15; opt.full = 1;
    run(r, bench_block.c[CALL_BLAS], &j, 0);
    printf("probe %s %.3f\n", bench_blas_corename(),
           r->skipped ? 0.0 : 4.0 * rows * d * h / r->median / 1e9);
}

/* --limits-only (bench_torch.py): the FMA peak, and STREAM at the byte counts given. */
static void limits_only(void)
{
    const char *const lists[2][2] = {{opt.stream_bytes, "--stream-bytes"},
                                     {opt.read_bytes, "--read-bytes"}};
    const char *s;
    char item[64], *end;
    int l, ti;
    measure_peaks("start");
    for (l = 0; l < 2; l++)
        for (s = lists[l][0]; (s = list_next(s, item, sizeof item));) {
            const double b = strtod(item, &end);
            if (end == item || *end) die("%s wants a list of byte counts", lists[l][1]);
            for (ti = 0; ti < opt.nthreads; ti++)
                stream_for(b, opt.threads[ti], l ? 1 << STREAM_READ : 7);
        }
}

int main(int argc, char **argv)
{
    FILE *jf;
    int k, o;
    parse_args(argc, argv);
    bench_shapes_get(&shp, opt.quick, opt.large);
    native = bench_unit_native();
    o2 = bench_unit_o2();
    prev = bench_unit_prev();
    t_start = progress_last = bench_now();
    if (BENCH_HAVE_BLAS && opt.blas_probe) { blas_probe(); return 0; }
    if (!opt.nthreads) { /* 1 and all CPUs, with OpenMP */
        opt.threads[opt.nthreads++] = 1;
#ifdef _OPENMP
        if (omp_get_num_procs() > 1) opt.threads[opt.nthreads++] = omp_get_num_procs();
#endif
    }
    if (!native->openmp) {
        for (k = 0; k < opt.nthreads && opt.threads[k] == 1; k++) {}
        if (k < opt.nthreads)
            fprintf(stderr, "bench: built without OpenMP: measuring 1 thread only\n");
        opt.threads[0] = 1; opt.nthreads = 1;
    }
    read_cpu_model();
    load_start = loadavg();
    if (opt.blas_child) {
        if (!BENCH_HAVE_BLAS) die("--blas-child needs a BLAS=1 build");
        blas_child();
        return 0;
    }
    if (!opt.json) {
        print_header(stdout);
        fflush(stdout);
    }
    if (opt.limits_only) {
        limits_only();
    } else {
        snprintf(blas_core_default, sizeof blas_core_default, "%s", bench_blas_corename());
        measure_peaks("start");
        for (o = 0; o < 100; o++)
            for (k = 0; k < (int)COUNT(suites); k++) {
                if (suites[k].order != o) continue;
                if (suites[k].run) suites[k].run();
                else run_pe_set(suites[k].set);
            }
        if (BENCH_HAVE_BLAS && (want(bench_block.op) || want(bench_linear.op) ||
                                want(bench_linear.bwd)))
            blas_forced_run();
        measure_peaks("end");
    }
    if (progress_shown) fputs("\r\033[K", stderr);
    finish_results();
    if (opt.jsonl_path) {
        if (!(jf = fopen(opt.jsonl_path, "w"))) die("cannot write %s", opt.jsonl_path);
        print_json(jf);
        fclose(jf);
    }
    if (opt.json) {
        print_json(stdout);
        return 0;
    }
    if (BENCH_HAVE_BLAS)
        printf("OpenBLAS: %s\n          default core %s (OPENBLAS_CORETYPE %s); forced: %s\n"
               "          probes (1 thread, %s rows=512 d=512 h=2048): %s\n", bench_blas_config(),
               blas_core_default, getenv("OPENBLAS_CORETYPE") ? "set" : "unset",
               blas_core_forced[0] ? blas_core_forced : "none accepted", bench_block.op,
               blas_probe_log);
    print_table(stdout);
    print_summary(stdout);
    print_default_summary(stdout);
    print_act_summary(stdout);
    print_w16_summary(stdout);
    print_scaling_summary(stdout);
    if (prev) print_prev_summary(stdout);
    printf("\ntotal %.0f s; load average at end %.2f (includes this run's own threads)\n",
           bench_now() - t_start, loadavg());
    return 0;
}

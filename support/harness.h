/* support/harness.h - what the tests, the benchmark, the fuzz targets and tools/ share:
   choosing pe.h's and ffn.h's path by name, listing the paths that run here (and why
   the others do not), and the `ok` / `FAIL` lines with their `N passed, N failed` end.
   Include pe.h and ffn.h (their declarations at least) before this file. */
#ifndef SUPPORT_HARNESS_H
#define SUPPORT_HARNESS_H

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define TH_UNUSED __attribute__((unused))
#else
#define TH_UNUSED
#endif

typedef struct {
    const char *header;                 /* "pe" or "ffn" */
    const char *(*name)(int i);         /* pe_path_name */
    int (*set)(const char *name);       /* pe_set_path */
    const char *(*now)(void);           /* pe_path */
    const char *(*why)(int status);     /* pe_status_string */
} th_lib;

static const th_lib th_pe = {"pe", pe_path_name, pe_set_path, pe_path, pe_status_string};
static const th_lib th_ffn = {"ffn", ffn_path_name, ffn_set_path, ffn_path, ffn_status_string};

#define TH_MAX_PATHS 8

/* Fills names[] with lib's paths that this build and CPU run, best first, and returns
   how many (scalar always runs). The environment variable TH_PATHS ("avx2 scalar")
   keeps only the paths it names. log (if not NULL) gets one line saying what runs and
   why each other path does not. Leaves lib on its best path. */
static TH_UNUSED int th_paths(const th_lib *lib, const char **names, FILE *log)
{
    const char *only = getenv("TH_PATHS"), *name;
    char skipped[512] = "";
    size_t used = 0;
    int i, n = 0;
    for (i = 0; (name = lib->name(i)) != NULL && i < TH_MAX_PATHS; i++) {
        int st = lib->set(name);
        const char *why = st ? lib->why(st) : "not in TH_PATHS";
        if (!st && only) {
            const char *p = strstr(only, name);
            size_t len = strlen(name);
            if (p && (p == only || p[-1] == ' ') && (p[len] == '\0' || p[len] == ' ')) why = NULL;
        } else if (!st) {
            why = NULL;
        }
        if (!why) {
            names[n++] = name;
        } else if (used < sizeof skipped) {
            /* "pe: no such path in this build" -> "no such path in this build" */
            const char *colon = strchr(why, ':');
            int k = snprintf(skipped + used, sizeof skipped - used, "%s%s (%s)",
                             used ? ", " : "", name, colon ? colon + 2 : why);
            used += k > 0 ? (size_t)k : 0;
        }
    }
    lib->set(NULL);
    if (log) {
        fprintf(log, "# %s paths: run", lib->header);
        for (i = 0; i < n; i++) fprintf(log, " %s", names[i]);
        fprintf(log, "; skipped: %s\n", used ? skipped : "-");
    }
    return n;
}

/* Switches lib to the named path; a path th_paths() listed always works. */
static TH_UNUSED void th_use(const th_lib *lib, const char *name)
{
    int st = lib->set(name);
    if (st) {
        fprintf(stderr, "harness: %s path %s: %s\n", lib->header, name ? name : "auto",
                lib->why(st));
        exit(2);
    }
}

static int th_passed, th_failed;

static TH_UNUSED void th_check(int ok, const char *fmt, ...)
{
    va_list ap;
    fputs(ok ? "ok   " : "FAIL ", stdout);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    if (ok) th_passed++;
    else th_failed++;
}

/* act(x) (FFN_GELU .. FFN_SIGMOID) in float64, in forms that keep their relative
   accuracy: GELU through erfc (1 + erf cancels for x << 0), GELU-tanh as x sigmoid(2u). */
static TH_UNUSED double th_act64(int act, double x)
{
    const double pi = 3.14159265358979323846;
    switch (act) {
    case 1: return 0.5 * x * erfc(-x / sqrt(2.0));
    case 2: return x / (1.0 + exp(-2.0 * sqrt(2.0 / pi) * (x + 0.044715 * x * x * x)));
    case 3: return x / (1.0 + exp(-x));
    default: return 1.0 / (1.0 + exp(-x));
    }
}

/* FFN_FAST's documented bound (ffn.h, FAST ACTIVATIONS): |y - act(x)| <= B u, with
   u = max(2^-23 |x|, 2^-149) (the sigmoid, whose values lie in [0, 1]: u = 2^-24) and B
   = th_fast_bound[act]: the largest error over all 2^32 floats, measured against
   th_act64 when the forms were made (GELU 0.780, GELU-tanh 0.804, SiLU 0.625, sigmoid
   1.163), rounded up. Those forms use no libm, so their bits are the same everywhere. */
static const double th_fast_bound[5] = {0.0, 0.8, 0.85, 0.65, 1.2};

static TH_UNUSED double th_act_unit(int act, float x)
{
    return act == 4 ? ldexp(1.0, -24) : fmax(ldexp(fabs((double)x), -23), ldexp(1.0, -149));
}

static TH_UNUSED uint32_t th_fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* The same bits, or both NaN (the headers promise NaN-ness, not a NaN's sign or payload). */
static TH_UNUSED int th_same(float a, float b)
{
    return th_fbits(a) == th_fbits(b) || (a != a && b != b);
}

/* The next of a deterministic pseudo-random sequence (xorshift64*) of state *s. */
static TH_UNUSED uint64_t th_xorshift(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

/* The most roundings one term of a K-term sum goes through in ffn.h's summation order (its
   NUMERICAL CONTRACT): the rest of its block of kb (8, 16, 32, 64 from K = 1, 64, 256,
   1024), its superblock's additions (sb = 8 blocks, 4 when kb is 64), the total's. The
   order's worst-case error is gamma_n S, gamma_n = n u / (1 - n u), u = 2^-24. */
static TH_UNUSED size_t th_sum_roundings(size_t K)
{
    const size_t kb = K < 64 ? 8 : K < 256 ? 16 : K < 1024 ? 32 : 64, sb = kb < 64 ? 8 : 4;
    const size_t nb = (K + kb - 1) / kb;
    return (K < kb ? K : kb) + (nb < sb ? nb : sb) - 1 + (nb + sb - 1) / sb;
}

static TH_UNUSED double th_gamma(double n)
{
    return n * ldexp(1.0, -24) / (1.0 - n * ldexp(1.0, -24));
}

/* The whole file at path, its *len bytes and a NUL after them (free it), or NULL if it
   cannot be read. */
static TH_UNUSED char *th_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t cap = 0, got;
    if (!f) return NULL;
    *len = 0;
    do {
        if (cap - *len < 4096) {
            char *nb = (char *)realloc(buf, cap = cap * 2 + 65536);
            if (!nb) { free(buf); fclose(f); return NULL; }
            buf = nb;
        }
        got = fread(buf + *len, 1, cap - *len - 1, f);
        *len += got;
    } while (got > 0);
    if (ferror(f)) { free(buf); fclose(f); return NULL; }
    fclose(f);
    buf[*len] = '\0';
    return buf;
}

/* The whole text file at path, NUL-terminated (free it), or NULL if it cannot be read or
   holds a NUL byte. */
static TH_UNUSED char *th_read_text(const char *path)
{
    size_t len;
    char *buf = th_read_file(path, &len);
    if (buf && strlen(buf) != len) { free(buf); return NULL; }
    return buf;
}

/* The last line of every test program, and its exit status. */
static TH_UNUSED int th_summary(void)
{
    printf("%d passed, %d failed\n", th_passed, th_failed);
    return th_failed ? 1 : 0;
}

#endif /* SUPPORT_HARNESS_H */

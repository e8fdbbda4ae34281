/* fuzz/fuzz.c - every fuzz target of pe.h, ffn.h and support/npy.h in one program: one
   target per public function (plus pe_set_path / ffn_set_path together, and the .npy
   reader), listed once, in fz_targets below.

   Linked with support/unit.c (pe.h and ffn.h compiled once). Built with -DFZ_LIBFUZZER
   -fsanitize=fuzzer (tools/fuzz.sh), it is a libFuzzer binary for any target; the
   environment variable FZ_TARGET names the one it fuzzes:
       FZ_TARGET=ffn_block ./fuzz [libFuzzer flags] [CORPUS_DIR...]
       ./fuzz --list                          the targets, one per line
   Built without (any C99 or C++ compiler; the suite replays the committed corpus with
   gcc, g++, clang, tcc, under sanitizers, valgrind and qemu):
       fuzz CORPUS_DIR [TARGET]               every file of CORPUS_DIR/<target>/ (sorted)
                                              through its target; prints
                                              "replay: N targets, M inputs, 0 failed"
       fuzz --list                            the targets, one per line
   A failed check prints what differs and aborts (exit status != 0).

   Each input runs on two paths of its header: scalar and a non-scalar path of this build
   and CPU chosen from a hash of the input (fz.h; the environment variable TH_PATHS, e.g.
   "avx2 scalar", narrows the choice). The checks: fz.h, pe.inc, ffn.inc, npy.inc, and
   below for the status strings and the path choice. */
/* 64-bit inode numbers and offsets on 32-bit hosts (stat fails with EOVERFLOW otherwise) */
#define _FILE_OFFSET_BITS 64

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef FZ_LIBFUZZER
#include <dirent.h>
#include <sys/stat.h>
#endif

/* The libraries are linked in (support/unit.c, as for the test programs). */
#include "../pe.h"
#include "../ffn.h"
/* ffn.h's own erff, tanhf, expf (correctly rounded) and exact fmaf, from support/unit.c */
#include "../support/unit_math.h"
#define NPY_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define NPYDEF static __attribute__((unused))
#endif
#define NPY_IMPLEMENTATION
#include "../support/npy.h"
#include "../support/harness.h"

#include "fz.h"
#include "pe.inc"
#include "ffn.inc"
#include "npy.inc"

/* ---- pe_status_string, ffn_status_string -------------------------------------------- */

/* Any int gives a non-NULL message; 0 "ok"; each documented status (the enum of the
   header, PATH and CPU included) a distinct "pe: ..." message without "unknown"; the
   other header's range (pe -101..-199, ffn -201..-299) "pe: unknown status (an ffn.h
   status?)" / "ffn: unknown status (a pe.h status?)"; any other int "pe: unknown
   status". */
static void fz_status_check(const th_lib *lib, int st)
{
    const int ffn = lib == &th_ffn, other_hi = ffn ? -101 : -201;
    const fz_status *doc = fz_statuses(lib), *d;
    const char *s = lib->why(st);
    char prefix[16], unknown[64];
    snprintf(prefix, sizeof prefix, "%s: ", lib->header);
    FZ_CHECK(s != NULL, "%s_status_string(%d) is NULL", lib->header, st);
    FZ_CHECK(strlen(s) < 200, "%s_status_string(%d) is too long", lib->header, st);
    if (st == 0) {
        FZ_CHECK(strcmp(s, "ok") == 0, "%s_status_string(0) = '%s'", lib->header, s);
        return;
    }
    FZ_CHECK(strncmp(s, prefix, strlen(prefix)) == 0, "%s_status_string(%d) = '%s'",
             lib->header, st, s);
    for (d = doc; d->name && d->st != st; d++) {}
    if (d->name) {
        const fz_status *e;
        FZ_CHECK(strstr(s, "unknown") == NULL, "%s_status_string(%s) = '%s'", lib->header,
                 d->name, s);
        for (e = doc; e->name; e++)
            FZ_CHECK(e == d || strcmp(lib->why(e->st), s) != 0,
                     "%s and %s share the message '%s'", d->name, e->name, s);
        return;
    }
    snprintf(unknown, sizeof unknown, "%s: unknown status%s", lib->header,
             st > other_hi || st < other_hi - 98 ? ""
                 : ffn ? " (a pe.h status?)" : " (an ffn.h status?)");
    FZ_CHECK(strcmp(s, unknown) == 0, "%s_status_string(%d) = '%s', want '%s'", lib->header,
             st, s, unknown);
}

static int fz_status_strings(const uint8_t *data, size_t size, const th_lib *lib)
{
    static const int edges[] = { INT_MIN, INT_MIN + 1, -300, -299, -298, -250, -202,
                                 -201, -200, -199, -198, -150, -110, -102, -101, -100,
                                 -99, -8, -1, 1, 101, 201, INT_MAX };
    const fz_status *d;
    fz_t f;
    size_t i;
    fz_init(&f, data, size);
    fz_status_check(lib, fz_byte(&f) < 128 ? (int)(signed char)fz_byte(&f) : (int)fz_u32(&f));
    /* and every time (cheap): both headers' statuses and the edges of their ranges */
    for (d = fz_pe_statuses; d->name; d++) fz_status_check(lib, d->st);
    for (d = fz_ffn_statuses; d->name; d++) fz_status_check(lib, d->st);
    for (i = 0; i < sizeof edges / sizeof edges[0]; i++) fz_status_check(lib, edges[i]);
    return 0;
}

/* ---- pe_set_path, ffn_set_path ------------------------------------------------------- */

/* The path list of each header (*_path_name) and what *_set_path said of each name the
   first time. */
typedef struct {
    int n;
    const char *name[TH_MAX_PATHS];
    int st[TH_MAX_PATHS];
    const char *best;
} fz_path_list;

/* The list is the same as the first time (strings and statuses), unique, ends with
   "scalar" (which always runs) and then NULL; auto (and NULL) is the first path that runs
   (best first). */
static void fz_path_list_check(const th_lib *lib, fz_path_list *known)
{
    const char *name;
    int i, j;
    if (!known->n) {
        for (i = 0; (name = lib->name(i)) != NULL; i++) {
            FZ_CHECK(i < TH_MAX_PATHS, "%s_path_name: more than %d paths", lib->header, i);
            known->name[i] = name;
            known->st[i] = lib->set(name);
            if (!known->st[i] && !known->best) known->best = name;
        }
        known->n = i;
        FZ_CHECK(known->best, "%s: no path runs", lib->header);
    }
    for (i = 0; i < known->n; i++) {
        name = lib->name(i);
        FZ_CHECK(name && strcmp(name, known->name[i]) == 0, "%s_path_name(%d) = %s, was %s",
                 lib->header, i, name ? name : "NULL", known->name[i]);
        for (j = 0; j < i; j++)
            FZ_CHECK(strcmp(name, known->name[j]) != 0, "%s_path_name(%d) and (%d): %s",
                     lib->header, j, i, name);
    }
    FZ_CHECK(known->n > 0 && strcmp(known->name[known->n - 1], "scalar") == 0 &&
             known->st[known->n - 1] == 0 && lib->name(known->n) == NULL,
             "%s_path_name: %d paths, the last %s, then %s", lib->header, known->n,
             known->n ? known->name[known->n - 1] : "-",
             lib->name(known->n) ? lib->name(known->n) : "NULL");
    FZ_CHECK(lib->set(NULL) == 0 && strcmp(lib->now(), known->best) == 0,
             "%s_set_path(NULL): %s, want %s", lib->header, lib->now(), known->best);
}

/* name: 0, PATH or CPU (the same as the first time for a listed name; PATH for anything
   else but "auto", which gives the best); on failure the path does not change, on
   success it is name. */
static void fz_set_path_check(const th_lib *lib, const fz_path_list *known,
                              const char *name)
{
    const int e_path = lib == &th_ffn ? (int)FFN_ERR_PATH : (int)PE_ERR_PATH;
    const int e_cpu = lib == &th_ffn ? (int)FFN_ERR_CPU : (int)PE_ERR_CPU;
    const char *before = lib->now(), *after;
    const char *want_path = strcmp(name, "auto") == 0 ? known->best : NULL;
    /* pe.h's path "avx2" was "avx" until 1.4: pe_set_path takes the old name for it */
    const char *as = lib == &th_pe && strcmp(name, "avx") == 0 ? "avx2" : name;
    int want = want_path ? 0 : e_path, st, i;
    for (i = 0; !want_path && i < known->n; i++)
        if (strcmp(as, known->name[i]) == 0) {
            want = known->st[i];
            want_path = known->name[i];
        }
    FZ_CHECK(want == 0 || want == e_path || want == e_cpu, "%s_set_path(\"%s\") = %s, not "
             "OK, PATH or CPU", lib->header, name, fz_status_name(lib, want));
    st = lib->set(name);
    after = lib->now();
    FZ_CHECK(st == want, "%s_set_path(\"%s\") = %s, want %s", lib->header, name,
             fz_status_name(lib, st), fz_status_name(lib, want));
    FZ_CHECK(after && strcmp(after, st ? before : want_path) == 0,
             "%s_set_path(\"%s\") = %s: %s_path() was %s, is %s", lib->header, name,
             fz_status_name(lib, st), lib->header, before, after ? after : "NULL");
}

/* The input, cut at its NUL bytes, is a list of names for both headers. */
static int fz_set_path(const uint8_t *data, size_t size)
{
    static fz_path_list known[2];
    char *s = (char *)malloc(size + 1), *p;
    FZ_CHECK(s, "malloc");
    if (size) memcpy(s, data, size);
    s[size] = '\0';
    fz_path_list_check(&th_pe, &known[0]);
    fz_path_list_check(&th_ffn, &known[1]);
    for (p = s; p <= s + size; p += strlen(p) + 1) {
        fz_set_path_check(&th_pe, &known[0], p);
        fz_set_path_check(&th_ffn, &known[1], p);
    }
    th_use(&th_pe, NULL);
    th_use(&th_ffn, NULL);
    free(s);
    return 0;
}

/* ---- the targets ------------------------------------------------------------------- */

typedef int (*fz_target_fn)(const uint8_t *data, size_t size);

static int t_pe_status(const uint8_t *d, size_t n) { return fz_status_strings(d, n, &th_pe); }
static int t_pe_table(const uint8_t *d, size_t n) { return fz_pe_table(d, n, FZ_TORCH); }
static int t_pe_table_exact(const uint8_t *d, size_t n) { return fz_pe_table(d, n, FZ_EXACT); }
static int t_pe_table_fast(const uint8_t *d, size_t n) { return fz_pe_table(d, n, FZ_FAST); }
static int t_pe_add_bf(const uint8_t *d, size_t n) { return fz_pe_add(d, n, 0, 0); }
static int t_pe_add_bf_inplace(const uint8_t *d, size_t n) { return fz_pe_add(d, n, 0, 1); }
static int t_pe_add_sf(const uint8_t *d, size_t n) { return fz_pe_add(d, n, 1, 0); }
static int t_pe_add_sf_inplace(const uint8_t *d, size_t n) { return fz_pe_add(d, n, 1, 1); }
static int t_pe_embed(const uint8_t *d, size_t n) { return fz_pe_embed(d, n, 0); }
static int t_pe_embed_i64(const uint8_t *d, size_t n) { return fz_pe_embed(d, n, 1); }
static int t_pe_rope_cache(const uint8_t *d, size_t n) { return fz_pe_cache(d, n, 0); }
static int t_pe_rope_cache_exact(const uint8_t *d, size_t n) { return fz_pe_cache(d, n, 1); }
static int t_pe_rope_apply(const uint8_t *d, size_t n) { return fz_pe_rope(d, n, 0, 0); }
static int t_pe_rope_apply_direct(const uint8_t *d, size_t n) { return fz_pe_rope(d, n, 1, 0); }
static int t_pe_add_bf_bwd(const uint8_t *d, size_t n) { return fz_pe_add_backward(d, n, 0); }
static int t_pe_add_sf_bwd(const uint8_t *d, size_t n) { return fz_pe_add_backward(d, n, 1); }
static int t_pe_embed_bwd(const uint8_t *d, size_t n) { return fz_pe_embed_backward(d, n, 0); }
static int t_pe_embed_i64_bwd(const uint8_t *d, size_t n) { return fz_pe_embed_backward(d, n, 1); }
static int t_pe_rope_bwd(const uint8_t *d, size_t n) { return fz_pe_rope(d, n, 0, 1); }
static int t_pe_rope_direct_bwd(const uint8_t *d, size_t n) { return fz_pe_rope(d, n, 1, 1); }
static int t_ffn_status(const uint8_t *d, size_t n) { return fz_status_strings(d, n, &th_ffn); }
static int t_ffn_linear(const uint8_t *d, size_t n) { return fz_linear(d, n, 0); }
static int t_ffn_linear_packed(const uint8_t *d, size_t n) { return fz_linear(d, n, 1); }
static int t_ffn_block(const uint8_t *d, size_t n) { return fz_block(d, n, 0, 0); }
static int t_ffn_block_packed(const uint8_t *d, size_t n) { return fz_block(d, n, 1, 0); }
static int t_ffn_block_act(const uint8_t *d, size_t n) { return fz_block(d, n, 0, 1); }
static int t_ffn_block_act_packed(const uint8_t *d, size_t n) { return fz_block(d, n, 1, 1); }
static int t_ffn_relu(const uint8_t *d, size_t n) { return fz_activation(d, n, 0); }
static int t_ffn_activation(const uint8_t *d, size_t n) { return fz_activation(d, n, 1); }
static int t_ffn_block_scratch(const uint8_t *d, size_t n) { return fz_scratch_floats(d, n, 0); }
static int t_ffn_gated_scratch(const uint8_t *d, size_t n) { return fz_scratch_floats(d, n, 1); }
static int t_ffn_gated(const uint8_t *d, size_t n) { return fz_gated(d, n, 0); }
static int t_ffn_gated_packed(const uint8_t *d, size_t n) { return fz_gated(d, n, 1); }
static int t_ffn_pack_weight(const uint8_t *d, size_t n) { return fz_pack_weight(d, n, 0); }
static int t_ffn_pack_weight_in_out(const uint8_t *d, size_t n) { return fz_pack_weight(d, n, 1); }
static int t_ffn_pack_weight_strided(const uint8_t *d, size_t n) { return fz_pack_weight(d, n, 2); }
static int t_ffn_linear_backward(const uint8_t *d, size_t n) { return fz_linear_backward(d, n); }
static int t_ffn_sgd_step(const uint8_t *d, size_t n) { return fz_opt(d, n, 0); }
static int t_ffn_adamw_step(const uint8_t *d, size_t n) { return fz_opt(d, n, 1); }
static int t_ffn_block_act_train(const uint8_t *d, size_t n) { return fz_train(d, n, 0, 0); }
static int t_ffn_block_act_train_packed(const uint8_t *d, size_t n) { return fz_train(d, n, 0, 1); }
static int t_ffn_gated_train(const uint8_t *d, size_t n) { return fz_train(d, n, 1, 0); }
static int t_ffn_gated_train_packed(const uint8_t *d, size_t n) { return fz_train(d, n, 1, 1); }
static int t_ffn_block_act_backward(const uint8_t *d, size_t n) { return fz_backward(d, n, 0); }
static int t_ffn_gated_backward(const uint8_t *d, size_t n) { return fz_backward(d, n, 1); }
static int t_ffn_block_bwd_scratch(const uint8_t *d, size_t n) { return fz_bwd_scratch_floats(d, n, 0); }
static int t_ffn_gated_bwd_scratch(const uint8_t *d, size_t n) { return fz_bwd_scratch_floats(d, n, 1); }

/* name: the target and its seed corpus directory fuzz/corpus/<name>/. */
static const struct {
    const char *name;
    fz_target_fn fn;
} fz_targets[] = {
    { "pe_status_string", t_pe_status },
    { "pe_sinusoidal_table", t_pe_table },
    { "pe_sinusoidal_table_exact", t_pe_table_exact },
    { "pe_sinusoidal_table_fast", t_pe_table_fast },
    { "pe_add_batch_first", t_pe_add_bf },
    { "pe_add_batch_first_inplace", t_pe_add_bf_inplace },
    { "pe_add_seq_first", t_pe_add_sf },
    { "pe_add_seq_first_inplace", t_pe_add_sf_inplace },
    { "pe_embed", t_pe_embed },
    { "pe_embed_i64", t_pe_embed_i64 },
    { "pe_rope_inv_freq", fz_pe_inv_freq },
    { "pe_rope_cache", t_pe_rope_cache },
    { "pe_rope_cache_exact", t_pe_rope_cache_exact },
    { "pe_rope_apply", t_pe_rope_apply },
    { "pe_rope_apply_direct", t_pe_rope_apply_direct },
    { "pe_alibi_slopes", fz_pe_alibi_slopes },
    { "pe_alibi_bias", fz_pe_alibi_bias },
    { "pe_timestep_embedding", fz_pe_timestep },
    { "pe_rope_inv_freq_scaled", fz_pe_inv_freq_scaled },
    { "pe_add_batch_first_backward", t_pe_add_bf_bwd },
    { "pe_add_seq_first_backward", t_pe_add_sf_bwd },
    { "pe_embed_backward", t_pe_embed_bwd },
    { "pe_embed_i64_backward", t_pe_embed_i64_bwd },
    { "pe_rope_apply_backward", t_pe_rope_bwd },
    { "pe_rope_apply_direct_backward", t_pe_rope_direct_bwd },
    { "ffn_status_string", t_ffn_status },
    { "ffn_linear", t_ffn_linear },
    { "ffn_relu", t_ffn_relu },
    { "ffn_activation", t_ffn_activation },
    { "ffn_block_scratch_floats", t_ffn_block_scratch },
    { "ffn_block", t_ffn_block },
    { "ffn_pack_floats", fz_ffn_pack_floats },
    { "ffn_pack_weight", t_ffn_pack_weight },
    { "ffn_pack_weight_in_out", t_ffn_pack_weight_in_out },
    { "ffn_pack_weight_strided", t_ffn_pack_weight_strided },
    { "ffn_linear_backward", t_ffn_linear_backward },
    { "ffn_linear_packed", t_ffn_linear_packed },
    { "ffn_block_packed", t_ffn_block_packed },
    { "ffn_block_act", t_ffn_block_act },
    { "ffn_block_act_packed", t_ffn_block_act_packed },
    { "ffn_gated_scratch_floats", t_ffn_gated_scratch },
    { "ffn_gated", t_ffn_gated },
    { "ffn_gated_packed", t_ffn_gated_packed },
    { "ffn_activation_backward", fz_act_backward },
    { "ffn_sgd_step", t_ffn_sgd_step },
    { "ffn_adamw_step", t_ffn_adamw_step },
    { "ffn_block_act_train", t_ffn_block_act_train },
    { "ffn_block_act_train_packed", t_ffn_block_act_train_packed },
    { "ffn_gated_train", t_ffn_gated_train },
    { "ffn_gated_train_packed", t_ffn_gated_train_packed },
    { "ffn_block_backward_scratch_floats", t_ffn_block_bwd_scratch },
    { "ffn_block_act_backward", t_ffn_block_act_backward },
    { "ffn_gated_backward_scratch_floats", t_ffn_gated_bwd_scratch },
    { "ffn_gated_backward", t_ffn_gated_backward },
    { "paths", fz_set_path },
    { "npy", fz_npy }
};
#define FZ_NTARGETS (sizeof fz_targets / sizeof fz_targets[0])

static void fz_list(FILE *out)
{
    size_t t;
    for (t = 0; t < FZ_NTARGETS; t++) fprintf(out, "%s\n", fz_targets[t].name);
}

#ifdef FZ_LIBFUZZER
/* ---- libFuzzer: FZ_TARGET names the target ----------------------------------------- */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static fz_target_fn fz_target;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *name = getenv("FZ_TARGET");
    size_t t;
    int i;
    for (i = 1; i < *argc; i++)
        if (strcmp((*argv)[i], "--list") == 0) {
            fz_list(stdout);
            exit(0);
        }
    for (t = 0; name && t < FZ_NTARGETS; t++)
        if (strcmp(name, fz_targets[t].name) == 0) fz_target = fz_targets[t].fn;
    if (!fz_target) {
        fprintf(stderr, "fuzz: %s%s; set FZ_TARGET to one of:\n",
                name ? "no such target: FZ_TARGET=" : "FZ_TARGET is not set",
                name ? name : "");
        fz_list(stderr);
        exit(2);
    }
    fz_setup(stderr);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fz_target(data, size);
}

#else
/* ---- the corpus replay ------------------------------------------------------------- */

static unsigned char *fz_read_file(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    unsigned char *buf = NULL;
    size_t cap = 0, got;
    *len = 0;
    if (!fp) { fprintf(stderr, "replay: cannot open %s\n", path); exit(2); }
    do {
        if (*len == cap) {
            cap = cap ? 2 * cap : 4096;
            buf = (unsigned char *)realloc(buf, cap);
            if (!buf) { fprintf(stderr, "replay: out of memory\n"); exit(2); }
        }
        got = fread(buf + *len, 1, cap - *len, fp);
        *len += got;
    } while (got);
    fclose(fp);
    return buf;
}

static int fz_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every regular file of dir through fn, in sorted order; returns how many (-1: no
   such dir). */
static long fz_run_dir(const char *dir, fz_target_fn fn)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    size_t n = 0, cap = 0, i;
    long count = 0;
    if (!d) return -1;
    while ((e = readdir(d)) != NULL) {
        size_t need;
        if (e->d_name[0] == '.') continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            names = (char **)realloc(names, cap * sizeof *names);
            if (!names) exit(2);
        }
        need = strlen(dir) + strlen(e->d_name) + 2;
        names[n] = (char *)malloc(need);
        if (!names[n]) exit(2);
        snprintf(names[n], need, "%s/%s", dir, e->d_name);
        n++;
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, fz_cmp);
    for (i = 0; i < n; i++) {
        struct stat sb;
        if (stat(names[i], &sb) == 0 && S_ISREG(sb.st_mode)) {
            size_t len;
            unsigned char *buf = fz_read_file(names[i], &len);
            fn(buf, len);
            free(buf);
            count++;
        }
        free(names[i]);
    }
    free(names);
    return count;
}

int main(int argc, char **argv)
{
    size_t t, done = 0;
    long total = 0;
    int l, i;
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        fz_list(stdout);
        return 0;
    }
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s CORPUS_DIR [TARGET]   (%s --list: the targets)\n",
                argv[0], argv[0]);
        return 2;
    }
    fz_setup(stdout);
    for (t = 0; t < FZ_NTARGETS; t++) {
        char dir[4096];
        long n;
        if (argc > 2 && strcmp(argv[2], fz_targets[t].name) != 0) continue;
        snprintf(dir, sizeof dir, "%s/%s", argv[1], fz_targets[t].name);
        n = fz_run_dir(dir, fz_targets[t].fn);
        if (n < 0) {
            fprintf(stderr, "replay: no corpus directory %s\n", dir);
            return 1;
        }
        total += n;
        done++;
    }
    if (!done) {
        fprintf(stderr, "replay: no such target %s (%s --list)\n", argv[2], argv[0]);
        return 1;
    }
    /* which path each input compared with scalar */
    for (l = 0; l < 2; l++) {
        const fz_paths_t *p = &fz_paths[l];
        printf("# %s inputs per path tested against scalar:", p->lib->header);
        for (i = 0; i < p->n; i++) printf(" %s %lu", p->path[i], p->inputs[i]);
        if (!p->n) printf(" scalar (alone) %lu", p->inputs[0]);
        putchar('\n');
    }
    printf("replay: %lu targets, %ld inputs, 0 failed\n", (unsigned long)done, total);
    return 0;
}
#endif

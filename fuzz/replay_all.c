/* fuzz/replay_all.c - every fuzz target in one program, without libFuzzer: runs the
   inputs in CORPUS/<target>/ through each target (fixed order), so the corpus also runs
   under gcc, g++, tcc, valgrind, coverage builds and qemu. Each fuzz_<name>.c is
   compiled with -DLLVMFuzzerTestOneInput=fz_target_<name>.
   usage: replay_all CORPUS_DIR [TARGET]      A failed check aborts (exit status != 0). */
/* 64-bit inode numbers and offsets on 32-bit hosts (stat fails with EOVERFLOW otherwise) */
#define _FILE_OFFSET_BITS 64
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define FZ_TARGETS(X)                                                                   \
    X(pe_status_string) X(pe_sinusoidal_table) X(pe_sinusoidal_table_exact)             \
    X(pe_sinusoidal_table_fast)                                                         \
    X(pe_add_batch_first) X(pe_add_batch_first_inplace) X(pe_add_seq_first)             \
    X(pe_add_seq_first_inplace) X(pe_embed) X(pe_embed_i64) X(ffn_status_string)        \
    X(ffn_linear) X(ffn_relu) X(ffn_block_scratch_floats) X(ffn_block)                  \
    X(ffn_pack_floats) X(ffn_pack_weight) X(ffn_linear_packed) X(ffn_block_packed) X(npy)

#define FZ_DECLARE(n) int fz_target_##n(const uint8_t *data, size_t size);
FZ_TARGETS(FZ_DECLARE)

typedef int (*fz_target_fn)(const uint8_t *, size_t);
static const struct { const char *name; fz_target_fn fn; } targets[] = {
#define FZ_ENTRY(n) { #n, fz_target_##n },
    FZ_TARGETS(FZ_ENTRY)
};

static unsigned char *read_file(const char *path, size_t *len)
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

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every regular file of dir through fn; returns how many (-1: no such dir). */
static long run_dir(const char *dir, fz_target_fn fn)
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
    if (n) qsort(names, n, sizeof *names, cmp);
    for (i = 0; i < n; i++) {
        struct stat sb;
        if (stat(names[i], &sb) == 0 && S_ISREG(sb.st_mode)) {
            size_t len;
            unsigned char *buf = read_file(names[i], &len);
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
    size_t t, ntargets = sizeof targets / sizeof targets[0], done = 0;
    long total = 0;
    if (argc < 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR [TARGET]\n", argv[0]);
        return 2;
    }
    for (t = 0; t < ntargets; t++) {
        char dir[4096];
        long n;
        if (argc > 2 && strcmp(argv[2], targets[t].name) != 0) continue;
        snprintf(dir, sizeof dir, "%s/%s", argv[1], targets[t].name);
        n = run_dir(dir, targets[t].fn);
        if (n < 0) {
            fprintf(stderr, "replay: no corpus directory %s\n", dir);
            return 1;
        }
        total += n;
        done++;
    }
    if (!done) { fprintf(stderr, "replay: no such target\n"); return 1; }
    printf("replay: %lu targets, %ld inputs, 0 failed\n", (unsigned long)done, total);
    return 0;
}

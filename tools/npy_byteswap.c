/* tools/npy_byteswap.c - rewrite little-endian .npy files as big-endian ones ('<f4' ->
   '>f4', every element's bytes reversed), to check that the golden reader honours the
   byte order written in the header on both kinds of host.

   usage: npy_byteswap IN_DIR OUT_DIR     (every *.npy of IN_DIR; other files copied) */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    size_t cap = 0, got;
    *len = 0;
    if (!f) return NULL;
    do {
        if (*len == cap) {
            unsigned char *nb;
            cap = cap ? 2 * cap : 1 << 16;
            nb = (unsigned char *)realloc(buf, cap);
            if (!nb) { free(buf); fclose(f); return NULL; }
            buf = nb;
        }
        got = fread(buf + *len, 1, cap - *len, f);
        *len += got;
    } while (got);
    fclose(f);
    return buf;
}

static int spit(const char *path, const unsigned char *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(buf, 1, len, f) == len;
    if (f && fclose(f) != 0) ok = 0;
    return ok;
}

/* Returns 0 on success; the file is converted in place in buf. */
static int swap_npy(unsigned char *buf, size_t len)
{
    size_t pre, hlen, i, w;
    if (len < 10 || memcmp(buf, "\x93NUMPY", 6) != 0) return 1;
    pre = buf[6] == 1 ? 10 : 12;
    hlen = buf[6] == 1 ? (size_t)buf[8] | (size_t)buf[9] << 8
                       : (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 |
                             (size_t)buf[11] << 24;
    if (pre + hlen > len) return 1;
    {
        char *h = (char *)malloc(hlen + 1), *d;
        if (!h) return 1;
        memcpy(h, buf + pre, hlen);
        h[hlen] = '\0';
        d = strstr(h, "'descr': '<");
        if (!d) { free(h); return 2; }                 /* not little-endian: copy as is */
        d += strlen("'descr': '");
        w = (size_t)(d[2] - '0');
        buf[pre + (size_t)(d - h)] = '>';
        free(h);
    }
    if (w != 2 && w != 4 && w != 8) return 1;      /* (u2: the 16-bit weights' bits) */
    for (i = pre + hlen; i + w <= len; i += w) {
        size_t lo, hi;
        for (lo = i, hi = i + w - 1; lo < hi; lo++, hi--) {
            unsigned char t = buf[lo];
            buf[lo] = buf[hi];
            buf[hi] = t;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    DIR *dir;
    struct dirent *e;
    long n = 0;
    if (argc != 3) {
        fprintf(stderr, "usage: %s IN_DIR OUT_DIR\n", argv[0]);
        return 2;
    }
    dir = opendir(argv[1]);
    if (!dir) { fprintf(stderr, "cannot open %s\n", argv[1]); return 1; }
    while ((e = readdir(dir)) != NULL) {
        char in[4096], out[4096];
        unsigned char *buf;
        size_t len, nl = strlen(e->d_name);
        if (e->d_name[0] == '.') continue;
        snprintf(in, sizeof in, "%s/%s", argv[1], e->d_name);
        snprintf(out, sizeof out, "%s/%s", argv[2], e->d_name);
        buf = slurp(in, &len);
        if (!buf) continue;                               /* a directory or unreadable */
        if (nl > 4 && strcmp(e->d_name + nl - 4, ".npy") == 0) {
            int st = swap_npy(buf, len);
            if (st == 1) { fprintf(stderr, "bad .npy %s\n", in); return 1; }
            n += st == 0;
        }
        if (!spit(out, buf, len)) { fprintf(stderr, "cannot write %s\n", out); return 1; }
        free(buf);
    }
    closedir(dir);
    printf("npy_byteswap: %ld files rewritten big-endian into %s\n", n, argv[2]);
    return 0;
}

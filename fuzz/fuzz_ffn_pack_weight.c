/* fuzz target: ffn_pack_weight. packed[(p * in + k) * 16 + j] = w[(16 p + j) * in + k],
   0 past out. Checks the status (NULL, ZERO, OVERFLOW, SCRATCH when packed_floats <
   ffn_pack_floats, ALIAS when packed overlaps the weight), no write on error, no write
   past ffn_pack_floats() floats, and the exact bits (NaN payloads included: packing is
   a copy) in the fast and the scalar build. */
#include "fz.h"

static int expected(const void *packed, size_t pf, const void *w, size_t in, size_t out)
{
    size_t need;
    if (!packed || !w) return -1;
    if (!in || !out) return -2;
    need = fz_pack_floats(in, out);
    if (!fz_fbytes_ok(out, in) || !need) return -3;
    if (pf < need) return -4;
    if (fz_overlap(packed, need * 4, w, out * in * 4)) return -5;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const fz_impl *F = fz_impl_fast(), *S = fz_impl_scalar();
    fz_t f;
    fz_mem m;
    size_t in, out, need, pf, palloc, writable[FZ_MAXBUF] = { 0 };
    int want, st, ip, iw, pass;
    unsigned nul, mode;
    float *win, *ref;

    if (!F->ffn_pack_weight) return 0;
    fz_init(&f, data, size);
    mode = fz_byte(&f);
    if (mode % 8 == 7) {                /* huge sizes: only the checks before any access */
        static float dummy[2][16];
        float before[2][16];
        float *pp, *pw;
        in = fz_size_huge(&f);
        out = fz_size_huge(&f);
        pf = fz_byte(&f) < 128 ? fz_size_huge(&f) : (size_t)-1;
        nul = fz_byte(&f);
        pp = nul % 8 == 1 ? NULL : dummy[0];
        pw = nul % 8 == 2 ? NULL : dummy[1];
        want = expected(pp, pf, pw, in, out);
        if (want == 0 || want == -5) return 0;
        memcpy(before, dummy, sizeof before);
        st = F->ffn_pack_weight(pp, pf, pw, in, out);
        FZ_CHECK(st == want, "fast ffn_pack_weight(pf=%zu, in=%zu, out=%zu): %s, want %s",
                 pf, in, out, fz_ffn_name(st), fz_ffn_name(want));
        st = S->ffn_pack_weight(pp, pf, pw, in, out);
        FZ_CHECK(st == want, "scalar ffn_pack_weight(pf=%zu, in=%zu, out=%zu): %s, want %s",
                 pf, in, out, fz_ffn_name(st), fz_ffn_name(want));
        FZ_CHECK(memcmp(before, dummy, sizeof before) == 0, "wrote on error");
        return 0;
    }
    f.profile = fz_byte(&f);
    in = fz_dim(&f, mode % 8 == 6 ? 300 : 40);
    out = fz_dim(&f, 70);
    need = fz_pack_floats(in, out);
    switch (fz_byte(&f) % 8) {
    case 0: pf = need ? need - 1 : 0; break;
    case 1: pf = need + 1 + fz_byte(&f) % 32; break;
    case 2: pf = (size_t)-1; break;
    default: pf = need; break;
    }
    palloc = pf <= need + 64 ? pf : need;
    nul = fz_byte(&f);
    m.nb = 0;
    ip = fz_add_buf(&m, "packed", palloc * 4, 4, 1, nul == 1);
    iw = fz_add_buf(&m, "weight", out * in * 4, 4, 0, nul == 2);
    fz_place(&m, &f);
    if (m.b[iw].p) fz_fill_floats(&f, m.b[iw].p, out * in);
    fz_snapshot(&m);
    want = expected(fz_ptr(&m, ip), pf, fz_ptr(&m, iw), in, out);
    for (pass = 0; pass < 2; pass++) {
        const fz_impl *I = pass ? S : F;
        float *got;
        size_t k;
        fz_restore(&m);
        st = I->ffn_pack_weight((float *)fz_ptr(&m, ip), pf, (const float *)fz_ptr(&m, iw),
                                in, out);
        FZ_CHECK(st == want, "%s ffn_pack_weight(pf=%zu of %zu, in=%zu, out=%zu, layout %d,"
                 " alias %d->%d): %s, want %s", I->name, pf, need, in, out, m.arena_mode,
                 m.alias_out, m.alias_target, fz_ffn_name(st), fz_ffn_name(want));
        if (st != 0) {
            fz_check_untouched(&m, NULL, "ffn_pack_weight");
            continue;
        }
        writable[ip] = need * 4;
        fz_check_untouched(&m, writable, "ffn_pack_weight");
        got = (float *)fz_copy(&m, ip);
        fz_restore(&m);
        win = (float *)fz_copy(&m, iw);
        ref = (float *)malloc(need * 4);
        FZ_CHECK(ref, "malloc");
        fz_pack_ref(ref, win, in, out, NULL);
        for (k = 0; k < need; k++)
            FZ_CHECK(fz_f2bits(got[k]) == fz_f2bits(ref[k]), "%s ffn_pack_weight(in=%zu, "
                     "out=%zu) packed[%zu] = 0x%08x, want 0x%08x", I->name, in, out, k,
                     (unsigned)fz_f2bits(got[k]), (unsigned)fz_f2bits(ref[k]));
        free(got);
        free(win);
        free(ref);
    }
    fz_free(&m);
    return 0;
}

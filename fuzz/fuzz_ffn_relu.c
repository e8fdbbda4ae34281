/* fuzz target: ffn_relu. y = torch.relu(x): x < 0 gives +0.0, everything else (NaN,
   -0.0, +inf) passes through. y == x is allowed, any other overlap is FFN_ERR_ALIAS.
   Checks status, no write on error, no write outside y, fast == scalar == the rule
   bitwise (NaN == any NaN). */
#include "fz.h"

static int expected(const void *y, const void *x, size_t n)
{
    if (!y || !x) return -1;
    if (!n) return -2;
    if (!fz_fbytes_ok(n, 1)) return -3;
    if (y != x && fz_overlap(y, n * 4, x, n * 4)) return -5;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const fz_impl *F = fz_impl_fast(), *S = fz_impl_scalar();
    fz_t f;
    fz_mem m;
    size_t n, i, writable[FZ_MAXBUF] = { 0 };
    int want, st, iy, ix;
    unsigned nul, mode;
    float *got, *xin, *ref;

    fz_init(&f, data, size);
    mode = fz_byte(&f);
    if (mode % 8 == 7) {                /* huge sizes: only the checks before any access */
        static float dummy[2][16];
        float before[2][16];
        float *py, *px;
        n = fz_size_huge(&f);
        nul = fz_byte(&f);
        py = nul % 8 == 1 ? NULL : dummy[0];
        px = nul % 8 == 2 ? NULL : (nul % 8 == 3 ? py : dummy[1]);
        want = expected(py, px, n);
        if (want == 0 || want == -5) return 0;
        memcpy(before, dummy, sizeof before);
        st = F->ffn_relu(py, px, n);
        FZ_CHECK(st == want, "fast ffn_relu(n=%zu): %s, want %s", n, fz_ffn_name(st),
                 fz_ffn_name(want));
        st = S->ffn_relu(py, px, n);
        FZ_CHECK(st == want, "scalar ffn_relu(n=%zu): %s, want %s", n, fz_ffn_name(st),
                 fz_ffn_name(want));
        FZ_CHECK(memcmp(before, dummy, sizeof before) == 0, "wrote on error");
        return 0;
    }
    f.profile = fz_byte(&f);
    n = fz_dim(&f, mode % 8 == 6 ? 250 : 70);
    nul = fz_byte(&f);
    m.nb = 0;
    iy = fz_add_buf(&m, "y", n * 4, 4, 1, nul == 1);
    ix = fz_add_buf(&m, "x", n * 4, 4, 0, nul == 2);
    fz_place(&m, &f);
    if (m.b[ix].p) fz_fill_floats(&f, m.b[ix].p, n);
    fz_snapshot(&m);
    want = expected(fz_ptr(&m, iy), fz_ptr(&m, ix), n);
    st = F->ffn_relu((float *)fz_ptr(&m, iy), (const float *)fz_ptr(&m, ix), n);
    FZ_CHECK(st == want, "fast ffn_relu(n=%zu, layout %d, alias %d->%d): %s, want %s", n,
             m.arena_mode, m.alias_out, m.alias_target, fz_ffn_name(st),
             fz_ffn_name(want));
    if (st != 0) {
        fz_check_untouched(&m, NULL, "fast ffn_relu");
        fz_restore(&m);
        st = S->ffn_relu((float *)fz_ptr(&m, iy), (const float *)fz_ptr(&m, ix), n);
        FZ_CHECK(st == want, "scalar ffn_relu: %s, want %s", fz_ffn_name(st),
                 fz_ffn_name(want));
        fz_check_untouched(&m, NULL, "scalar ffn_relu");
        fz_free(&m);
        return 0;
    }
    writable[iy] = n * 4;
    fz_check_untouched(&m, writable, "fast ffn_relu");
    got = (float *)fz_copy(&m, iy);
    fz_restore(&m);
    xin = (float *)fz_copy(&m, ix);
    ref = (float *)malloc(n * 4);
    FZ_CHECK(ref, "malloc");
    st = S->ffn_relu(ref, xin, n);
    FZ_CHECK(st == 0, "scalar ffn_relu on separate buffers: %s", fz_ffn_name(st));
    for (i = 0; i < n; i++) {
        float o = xin[i] < 0.0f ? 0.0f : xin[i];
        FZ_CHECK(fz_same(got[i], ref[i]), "ffn_relu element %zu of x=%.9g (0x%08x): fast "
                 "0x%08x != scalar 0x%08x", i, xin[i], (unsigned)fz_f2bits(xin[i]),
                 (unsigned)fz_f2bits(got[i]), (unsigned)fz_f2bits(ref[i]));
        FZ_CHECK(fz_same(ref[i], o), "ffn_relu element %zu of x=0x%08x: scalar 0x%08x != "
                 "torch.relu 0x%08x", i, (unsigned)fz_f2bits(xin[i]),
                 (unsigned)fz_f2bits(ref[i]), (unsigned)fz_f2bits(o));
    }
    free(got);
    free(xin);
    free(ref);
    fz_free(&m);
    return 0;
}

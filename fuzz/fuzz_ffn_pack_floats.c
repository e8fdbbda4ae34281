/* fuzz target: ffn_pack_floats. ceil(out / 16) * 16 * in floats; 0 exactly when a size
   is 0 or the byte count overflows size_t. Fast and scalar builds agree. */
#include "fz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const fz_impl *F = fz_impl_fast(), *S = fz_impl_scalar();
    fz_t f;
    size_t in, out, want, a, b;
    if (!F->ffn_pack_floats) return 0;
    fz_init(&f, data, size);
    if (fz_byte(&f) % 2) {
        in = fz_size_huge(&f);
        out = fz_size_huge(&f);
    } else {
        in = fz_dim(&f, 200);
        out = fz_dim(&f, 200);
    }
    want = fz_pack_floats(in, out);
    a = F->ffn_pack_floats(in, out);
    b = S->ffn_pack_floats(in, out);
    FZ_CHECK(a == want, "fast ffn_pack_floats(in=%zu, out=%zu) = %zu, want %zu", in, out, a,
             want);
    FZ_CHECK(b == want, "scalar ffn_pack_floats(in=%zu, out=%zu) = %zu, want %zu", in, out,
             b, want);
    return 0;
}

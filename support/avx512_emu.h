/* support/avx512_emu.h - the AVX-512 paths of pe.h and ffn.h run on an AVX2 CPU, for the
   avx512-emu job of `make test`. Forced in before the headers (cc -include) with -mavx2
   -mfma -mf16c; the job maps each _mm512_ name the headers use to SIMDe's (Debian's
   libsimde-dev), which emulates a zmm register as two ymm ones. The intrinsics SIMDe 0.7
   lacks are below: the same 256-bit instructions on each half.
   __AVX512F__ makes the headers compile their AVX-512 paths as the flags' (no target
   attributes) and take the CPU as able to run them. */
#ifndef AVX512_EMU_H   /* (in a build's link flags too: once more on the same line) */
#define AVX512_EMU_H
#include <immintrin.h>
#include <simde/x86/avx512.h>
#define __AVX512F__ 1
#define __m512 simde__m512
#define __m512i simde__m512i
#define __m512d simde__m512d
#define PE__ZMM "m"   /* (pe.h's register barriers: a zmm value is in memory here) */

/* The headers' maskz forms but the load have every lane set (a g++ 12 warning for the plain
   ones); here a partial mask k does not compile. A zmm value from two ymm halves: */
#define EMU_ALL(k, n) (void)sizeof(char[(k) == (1 << (n)) - 1 ? 1 : -1])
#define EMU_JOIN(T, V, M)                                                                  \
    static inline simde__m512##T emu_##T(V lo, V hi) {                                     \
        simde__m512##T##_private r; r.M[0] = lo; r.M[1] = hi;                              \
        return simde__m512##T##_from_private(r); }
EMU_JOIN(, __m256, m256) EMU_JOIN(i, __m256i, m256i) EMU_JOIN(d, __m256d, m256d)
/* op on each 128-bit half of a ymm value a; op(half, n) on each ymm half of a zmm value a */
#define EMU_W(k, n, T, op, a)                                                              \
    (EMU_ALL(k, n), emu_##T(op(_mm256_castsi256_si128(a)), op(_mm256_extracti128_si256(a, 1))))
#define EMU_Z(k, T, M, op, a, n) (EMU_ALL(k, 16),                                           \
    emu_##T(op(simde__m512##T##_to_private(a).M[0], n), op(simde__m512##T##_to_private(a).M[1], n)))
#define EMU_D(a, h) simde__m512d_to_private(a).m256d[h]
#define simde_mm512_maskz_cvtepu16_epi32(k, a) EMU_W(k, 16, i, _mm256_cvtepu16_epi32, a)
#define simde_mm512_maskz_cvtph_ps(k, a) EMU_W(k, 16, , _mm256_cvtph_ps, a)
#define simde_mm512_maskz_cvtepi32_pd(k, a) EMU_W(k, 8, d, _mm256_cvtepi32_pd, a)
#define simde_mm512_maskz_cvtps_pd(k, a) (EMU_ALL(k, 8),                                    \
    emu_d(_mm256_cvtps_pd(_mm256_castps256_ps128(a)), _mm256_cvtps_pd(_mm256_extractf128_ps(a, 1))))
#define simde_mm512_maskz_cvtpd_ps(k, a)                                                   \
    (EMU_ALL(k, 8), _mm256_set_m128(_mm256_cvtpd_ps(EMU_D(a, 1)), _mm256_cvtpd_ps(EMU_D(a, 0))))
#define simde_mm512_maskz_cvttpd_epi32(k, a) (EMU_ALL(k, 8),                                \
    _mm256_set_m128i(_mm256_cvttpd_epi32(EMU_D(a, 1)), _mm256_cvttpd_epi32(EMU_D(a, 0))))
#define simde_mm512_maskz_permute_ps(k, a, imm) EMU_Z(k, , m256, _mm256_permute_ps, a, imm)
#define simde_mm512_maskz_slli_epi32(k, a, n) EMU_Z(k, i, m256i, _mm256_slli_epi32, a, n)
#define simde_mm512_maskz_srli_epi32(k, a, n) EMU_Z(k, i, m256i, _mm256_srli_epi32, a, n)
static inline simde__m512 simde_mm512_maskz_loadu_ps(simde__mmask16 k, const void *p)
{   simde__m512_private r; int i;        /* (the masked-off lanes are not read) */
    for (i = 0; i < 16; i++) r.f32[i] = k >> i & 1 ? ((const float *)p)[i] : 0.0f;
    return simde__m512_from_private(r); }
#define simde_mm512_stream_ps(p, a) simde_mm512_store_ps(p, a)
/* (pe.h compares with _MM_CMPINT_LE only; another predicate does not compile) */
#define simde_mm512_cmp_epu64_mask(a, b, imm)                                              \
    ((void)sizeof(char[(imm) == _MM_CMPINT_LE ? 1 : -1]), simde_mm512_cmple_epu64_mask(a, b))
#endif

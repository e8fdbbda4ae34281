/* ffn.h - v1.1.1 - the transformer feed-forward block (Linear -> ReLU -> Linear) in C.
   Public domain or MIT (see the end of the file). No warranty.

   Do this:
      #define FFN_IMPLEMENTATION
   before you include this file in *one* C or C++ file to create the implementation.

   QUICK START (weights straight from a PyTorch state_dict, nn.Linear layout)

      size_t n = ffn_block_scratch_floats(rows, D, H);
      float *scratch = malloc(n * sizeof(float));            // you own all memory
      int st = ffn_block(y, x, fc1_w, fc1_b, fc2_w, fc2_b, rows, D, H, scratch, n);
      if (st < 0) fprintf(stderr, "%s\n", ffn_status_string(st));

   WHAT IT COMPUTES (shapes are PyTorch shapes, row-major, C order)

      ffn_linear   y (rows, out) = x (rows, in) @ weight^T + bias
                   torch.nn.functional.linear(x, weight, bias); weight (out, in) as in
                   nn.Linear.weight, bias (out) or NULL. rows may be batch*seq: torch
                   gives bit-identical results for (B, S, in) and (B*S, in).
      ffn_relu     y = torch.relu(x): NaN stays NaN, -0.0 stays -0.0, -inf gives 0.
                   (x > 0 ? x : 0 and fmaxf(x, 0) both lose NaN.)
      ffn_block    y = fc2(relu(fc1(x))): FeedForwardNN.forward of source document 000.
                   x, y (rows, d_model); fc1 weight (hidden, d_model), bias (hidden);
                   fc2 weight (d_model, hidden), bias (d_model).

   PREPACKED WEIGHTS (pack once, run many times)

      size_t n1 = ffn_pack_floats(D, H), n2 = ffn_pack_floats(H, D);
      ffn_pack_weight(w1p, n1, fc1_w, D, H);      // fc1_w is (H, D): in = D, out = H
      ffn_pack_weight(w2p, n2, fc2_w, H, D);
      ffn_block_packed(y, x, w1p, fc1_b, w2p, fc2_b, rows, D, H, scratch, n);

      The packed layout is the same for every build and ISA (a packed buffer can be
      saved and loaded anywhere): the output features are cut into panels of 16, and
      each panel is stored K-major, 16 floats per reduction step, zero padded:
         packed[(p * in + k) * 16 + j] = weight[p * 16 + j][k]    (0 if p*16+j >= out)
      for p < ceil(out / 16), k < in, j < 16. One step of a panel is one 64-byte row of
      16 output features, which is what the SIMD kernels load. The unpacked calls give
      the same bits as the packed ones: they pack small slices on the fly (on the stack).

   NUMERICAL CONTRACT
      Each output element of a Linear is a float32 dot product of length K = in plus a
      bias, S = |b| + sum_k |x_k| |w_k|. Its error against exact arithmetic is at most
      about K * 2^-24 * S (the worst case of K roundings), and in practice, with
      rounding errors of both signs, within sqrt(K) * 2^-23 * S: the bound the golden
      tests apply against torch, per layer (torch is measured within it too; inputs
      built to make every rounding go one way, e.g. x = 1, w = 0.1, K = 1024, exceed
      it on every path). Summation order is fixed for a given build, so results do not
      depend on the number of threads.
      Every path computes each element as one chain in k order, starting from the bias:
      acc = b; acc = fma(x_k, w_k, acc) for k = 0..K-1 (the scalar path uses a separate
      multiply and add where the target has no fast fma, FP_FAST_FMAF). So the paths
      give the same bits as each other (AVX2, AVX-512, NEON, scalar with fma), packed
      or not, for any thread count, tiling or row count.

   ERRORS
      Every function returns FFN_OK (0) or a negative status, and on error writes
      nothing to any output. ffn_status_string() names a status. Checked, in order:
         FFN_ERR_NULL       a required pointer is NULL (only bias pointers may be NULL)
         FFN_ERR_ZERO_SIZE  a size argument is 0
         FFN_ERR_OVERFLOW   a buffer's size in bytes does not fit in size_t
         FFN_ERR_SCRATCH    scratch_floats < ffn_block_scratch_floats(...), or
                            packed_floats < ffn_pack_floats(...)
         FFN_ERR_ALIAS      an output overlaps an input or the scratch (see below)
      A packed weight is read as ffn_pack_floats(in, out) floats (that much memory
      must be there; its contents are not checked).

   MEMORY, THREADS, ALIASING
      No allocation, no global state: every function is thread-safe on distinct
      outputs. Buffers need float alignment only. ffn_relu and ffn_block(_packed)
      accept y == x; ffn_linear(_packed)'s y and ffn_pack_weight's packed must not
      overlap anything; no other overlap is accepted. The unpacked calls use about
      66 KiB of stack (FFN_STACK_FLOATS) on each thread, the packed ones a few KiB.
      Built with OpenMP (-fopenmp), ffn_linear* and ffn_block* use up to
      omp_get_max_threads() threads once a call has a few million flops: chunks of
      rows (more than 256 rows per thread; a chunk goes through both layers) or, for
      fewer rows, blocks of output features. Cap them with OMP_NUM_THREADS /
      omp_set_num_threads() or FFN_NO_OPENMP; where other programs keep the cores
      busy, threads wait for each other and one thread is faster. Called inside an
      active parallel region they run on the calling thread only.

   PATHS (chosen at compile time from the compiler's flags; FFN_SIMD_NAME says which)
      "avx512"  __AVX512F__ (e.g. -mavx512f, -march=skylake-avx512). NOT RUN by the
                authors (no AVX-512 hardware at hand, and qemu 7.2 does not emulate
                it): it is the AVX2 path's code instantiated with 512-bit vectors and
                a 12 x 32 main tile; it compiles warning-free with gcc and clang.
      "avx2"    __AVX2__ and __FMA__ (e.g. -mavx2 -mfma, -march=haswell or later).
      "neon"    aarch64 with NEON (any aarch64 compiler).
      "scalar"  anything else, or FFN_NO_SIMD: the plain C loops, which read like the
                math and are the specification the fast paths are tested against.

   OPTIONS (#define before the first include)
      FFN_STATIC       make every function static (private to the file)
      FFN_ASSERT(x)    your assert for internal invariants (default: assert.h)
      FFN_NO_SIMD      use the plain C path only (the readable specification)
      FFN_NO_OPENMP    ignore -fopenmp: everything runs on the calling thread
      FFN_STACK_FLOATS stack buffer of the unpacked calls, in floats (default 16384)
*/
#ifndef FFN_H_INCLUDED
#define FFN_H_INCLUDED

#include <stddef.h>

#define FFN_VERSION_MAJOR 1
#define FFN_VERSION_MINOR 1
#define FFN_VERSION_PATCH 1
#define FFN_VERSION_STRING "1.1.1"

#ifndef FFNDEF
#ifdef FFN_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define FFNDEF static __attribute__((unused))   /* a file need not call every function */
#else
#define FFNDEF static
#endif
#else
#define FFNDEF extern
#endif
#endif

/* The compute path of this build (see PATHS above). */
#if defined(FFN_NO_SIMD)
#define FFN_SIMD_NAME "scalar"
#elif defined(__AVX512F__)
#define FFN__PATH_AVX512 1
#define FFN_SIMD_NAME "avx512"
#elif defined(__AVX2__) && defined(__FMA__)
#define FFN__PATH_AVX2 1
#define FFN_SIMD_NAME "avx2"
#elif defined(__aarch64__) && defined(__ARM_NEON)
#define FFN__PATH_NEON 1
#define FFN_SIMD_NAME "neon"
#else
#define FFN_SIMD_NAME "scalar"
#endif

#ifdef __cplusplus
extern "C" {
#endif

enum {
    FFN_OK            =  0,
    FFN_ERR_NULL      = -1,
    FFN_ERR_ZERO_SIZE = -2,
    FFN_ERR_OVERFLOW  = -3,
    FFN_ERR_SCRATCH   = -4,
    FFN_ERR_ALIAS     = -5
};

/* A static English message for a status ("ok", "ffn: ..."); never NULL. */
FFNDEF const char *ffn_status_string(int status);

/* y is (rows, out_features); x (rows, in_features); weight (out_features, in_features);
   bias (out_features) or NULL.  torch: F.linear(x, weight, bias). */
FFNDEF int ffn_linear(float *y, const float *x, const float *weight, const float *bias,
                      size_t rows, size_t in_features, size_t out_features);

/* y, x are (n); y may equal x.  torch: torch.relu(x). */
FFNDEF int ffn_relu(float *y, const float *x, size_t n);

/* How many floats of scratch ffn_block needs for this shape; 0 if a size is 0 or
   the count overflows. */
FFNDEF size_t ffn_block_scratch_floats(size_t rows, size_t d_model, size_t hidden);

/* y, x are (rows, d_model); w1 (hidden, d_model); b1 (hidden) or NULL;
   w2 (d_model, hidden); b2 (d_model) or NULL. y may equal x.
   torch (000): FeedForwardNN(d_model, hidden).forward(x). */
FFNDEF int ffn_block(float *y, const float *x, const float *w1, const float *b1,
                     const float *w2, const float *b2, size_t rows, size_t d_model,
                     size_t hidden, float *scratch, size_t scratch_floats);

/* Floats needed to hold weight (out_features, in_features) packed:
   ceil(out_features / 16) * 16 * in_features; 0 if a size is 0 or it overflows. */
FFNDEF size_t ffn_pack_floats(size_t in_features, size_t out_features);

/* Packs weight (out_features, in_features), nn.Linear layout, into the layout above.
   packed_floats >= ffn_pack_floats(in_features, out_features). */
FFNDEF int ffn_pack_weight(float *packed, size_t packed_floats, const float *weight,
                           size_t in_features, size_t out_features);

/* ffn_linear with the weight packed by ffn_pack_weight(.., in_features, out_features);
   same result bits as ffn_linear. */
FFNDEF int ffn_linear_packed(float *y, const float *x, const float *packed,
                             const float *bias, size_t rows, size_t in_features,
                             size_t out_features);

/* ffn_block with w1_packed = pack of w1 (in d_model, out hidden) and w2_packed = pack
   of w2 (in hidden, out d_model); same result bits as ffn_block. */
FFNDEF int ffn_block_packed(float *y, const float *x, const float *w1_packed,
                            const float *b1, const float *w2_packed, const float *b2,
                            size_t rows, size_t d_model, size_t hidden, float *scratch,
                            size_t scratch_floats);

#ifdef __cplusplus
}
#endif
#endif /* FFN_H_INCLUDED */

/* ======================================================================== */
#ifdef FFN_IMPLEMENTATION
#ifndef FFN_IMPLEMENTATION_DONE
#define FFN_IMPLEMENTATION_DONE

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifndef FFN_ASSERT
#include <assert.h>
#define FFN_ASSERT(x) assert(x)
#endif

#if defined(__cplusplus)
#define FFN__RESTRICT __restrict
#else
#define FFN__RESTRICT restrict
#endif

/* FFN__SIMD: one of the fast paths is compiled (the scalar Linear code is not). */
#if defined(FFN__PATH_AVX512) || defined(FFN__PATH_AVX2) || defined(FFN__PATH_NEON)
#define FFN__SIMD 1
#else
#define FFN__SIMD 0
#endif

/* Panel width of the packed layout: 16 output features (one 64-byte row per k). */
#define FFN__NR 16

/* ---- argument checks -------------------------------------------------- */

/* *n = a * b * sizeof(float) in bytes; 0 when it does not fit in size_t. */
static int ffn__bytes(size_t *n, size_t a, size_t b)
{
    const size_t max = (size_t)-1;
    if (a > max / b || a * b > max / sizeof(float)) return 0;
    *n = a * b * sizeof(float);
    return 1;
}

/* Byte ranges share a byte; a NULL range (an absent bias) overlaps nothing. Compared
   as integers: relational operators on pointers into different objects are undefined. */
static int ffn__overlap(const void *a, size_t an, const void *b, size_t bn)
{
    uintptr_t ua = (uintptr_t)a, ub = (uintptr_t)b;
    return a && b && ua < ub + bn && ub < ua + an;
}

FFNDEF const char *ffn_status_string(int status)
{
    switch (status) {
    case FFN_OK:            return "ok";
    case FFN_ERR_NULL:      return "ffn: a required pointer argument is NULL";
    case FFN_ERR_ZERO_SIZE: return "ffn: a size argument is zero";
    case FFN_ERR_OVERFLOW:  return "ffn: a buffer size overflows size_t";
    case FFN_ERR_SCRATCH:   return "ffn: the scratch (or packed weight) buffer is too small";
    case FFN_ERR_ALIAS:     return "ffn: an output buffer overlaps an input buffer";
    default:                return "ffn: unknown status";
    }
}

FFNDEF size_t ffn_pack_floats(size_t in_features, size_t out_features)
{
    size_t bytes, panels;
    if (!in_features || !out_features) return 0;
    panels = out_features / FFN__NR + (out_features % FFN__NR != 0);
    if (panels > (size_t)-1 / FFN__NR || !ffn__bytes(&bytes, panels * FFN__NR, in_features))
        return 0;
    return panels * FFN__NR * in_features;
}

/* Sizes of a Linear's buffers in bytes, or FFN_ERR_ZERO_SIZE / FFN_ERR_OVERFLOW.
   packed: the weight is in the packed layout (its padded size counts). */
typedef struct { size_t x, y, w, b; } ffn__linear_bytes;

static int ffn__linear_sizes(ffn__linear_bytes *n, size_t rows, size_t in, size_t out,
                             int packed)
{
    if (!rows || !in || !out) return FFN_ERR_ZERO_SIZE;
    if (!ffn__bytes(&n->x, rows, in) || !ffn__bytes(&n->y, rows, out) ||
        !ffn__bytes(&n->w, out, in))
        return FFN_ERR_OVERFLOW;
    if (packed) {
        size_t floats = ffn_pack_floats(in, out);
        if (!floats) return FFN_ERR_OVERFLOW;
        n->w = floats * sizeof(float);
    }
    n->b = out * sizeof(float);
    return FFN_OK;
}

static int ffn__linear_check(const float *y, const float *x, const float *w,
                             const float *b, size_t rows, size_t in, size_t out,
                             int packed)
{
    ffn__linear_bytes n;
    int st;
    if (!y || !x || !w) return FFN_ERR_NULL;
    st = ffn__linear_sizes(&n, rows, in, out, packed);
    if (st) return st;
    if (ffn__overlap(y, n.y, x, n.x) || ffn__overlap(y, n.y, w, n.w) ||
        ffn__overlap(y, n.y, b, n.b))
        return FFN_ERR_ALIAS;
    return FFN_OK;
}

static int ffn__block_check(const float *y, const float *x, const float *w1,
                            const float *b1, const float *w2, const float *b2,
                            size_t rows, size_t d_model, size_t hidden,
                            const float *scratch, size_t scratch_floats, int packed)
{
    ffn__linear_bytes n1, n2;
    size_t need;
    int st;
    if (!y || !x || !w1 || !w2 || !scratch) return FFN_ERR_NULL;
    if ((st = ffn__linear_sizes(&n1, rows, d_model, hidden, packed)) != FFN_OK ||
        (st = ffn__linear_sizes(&n2, rows, hidden, d_model, packed)) != FFN_OK)
        return st;
    need = ffn_block_scratch_floats(rows, d_model, hidden);
    FFN_ASSERT(need != 0);
    if (scratch_floats < need) return FFN_ERR_SCRATCH;
    /* y may be x: x is read completely by fc1 before fc2 writes y. */
    if ((y != x && ffn__overlap(y, n2.y, x, n1.x)) ||
        ffn__overlap(y, n2.y, w1, n1.w) || ffn__overlap(y, n2.y, b1, n1.b) ||
        ffn__overlap(y, n2.y, w2, n2.w) || ffn__overlap(y, n2.y, b2, n2.b) ||
        ffn__overlap(scratch, n1.y, y, n2.y) || ffn__overlap(scratch, n1.y, x, n1.x) ||
        ffn__overlap(scratch, n1.y, w1, n1.w) || ffn__overlap(scratch, n1.y, b1, n1.b) ||
        ffn__overlap(scratch, n1.y, w2, n2.w) || ffn__overlap(scratch, n1.y, b2, n2.b))
        return FFN_ERR_ALIAS;
    return FFN_OK;
}

/* ---- the scalar path: the readable specification ------------------------ */

/* torch.relu is clamp_min(x, 0): only values below zero change. NaN and -0.0 compare
   false and pass through, as torch's do. Under -ffast-math the compiler may assume no
   NaN and ignore the sign of zero, and fold the comparison into max(v, 0), which loses
   both; there the sign bit and the magnitude are tested as integers instead. */
#if defined(__FAST_MATH__)
static float ffn__relu1(float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return (u >> 31) && (u & 0x7fffffffu) - 1u < 0x7f800000u ? 0.0f : v;
}
#else
static float ffn__relu1(float v) { return v < 0.0f ? 0.0f : v; }
#endif

static void ffn__relu_scalar(float *y, const float *x, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) y[i] = ffn__relu1(x[i]);
}

#if !FFN__SIMD
/* One multiply-add step of a dot product. Where the target has a fused multiply-add
   (FP_FAST_FMAF), the compiler may contract a * b + c into one, or not, as its mode and
   the surrounding loop decide; saying fmaf explicitly makes every call site round the
   same way (and the same way as the SIMD paths). Without it, nothing can be fused. */
#if defined(FP_FAST_FMAF)
#define FFN__MULADD(a, b, c) fmaf((a), (b), (c))
#else
#define FFN__MULADD(a, b, c) ((a) * (b) + (c))
#endif

/* acc + sum_k x[k] w[k * stride], in k order. */
static float ffn__dot(const float *x, const float *w, size_t stride, size_t n, float acc)
{
    size_t k;
    for (k = 0; k < n; k++) acc = FFN__MULADD(x[k], w[k * stride], acc);
    return acc;
}

/* y[r,o] = b[o] + sum_k x[r,k] w[o,k], summed in k order. */
static void ffn__linear_scalar(float *FFN__RESTRICT y, const float *FFN__RESTRICT x,
                               const float *FFN__RESTRICT w, const float *FFN__RESTRICT b,
                               size_t rows, size_t in, size_t out)
{
    size_t r, o;
    for (r = 0; r < rows; r++)
        for (o = 0; o < out; o++)
            y[r * out + o] = ffn__dot(x + r * in, w + o * in, 1, in, b ? b[o] : 0.0f);
}

/* The packed layout, written out: weight[o,k] lives in panel o / 16, step k,
   lane o % 16; lanes past out are zero. */
static void ffn__pack_scalar(float *FFN__RESTRICT packed, const float *FFN__RESTRICT w,
                             size_t in, size_t out)
{
    size_t panels = ffn_pack_floats(in, out) / (FFN__NR * in), p, k, j;
    for (p = 0; p < panels; p++)
        for (k = 0; k < in; k++)
            for (j = 0; j < FFN__NR; j++) {
                size_t o = p * FFN__NR + j;
                packed[(p * in + k) * FFN__NR + j] = o < out ? w[o * in + k] : 0.0f;
            }
}

/* ffn__linear_scalar reading w[o,k] from the packed layout: the same operations in
   the same order, hence the same bits as the unpacked call. */
static void ffn__linear_packed_scalar(float *FFN__RESTRICT y, const float *FFN__RESTRICT x,
                                      const float *FFN__RESTRICT packed,
                                      const float *FFN__RESTRICT b,
                                      size_t rows, size_t in, size_t out)
{
    size_t r, o;
    for (r = 0; r < rows; r++)
        for (o = 0; o < out; o++) {
            const float *wo = packed + (o / FFN__NR) * in * FFN__NR + o % FFN__NR;
            y[r * out + o] = ffn__dot(x + r * in, wo, FFN__NR, in, b ? b[o] : 0.0f);
        }
}

static void ffn__linear_any(float *y, const float *x, const float *w, int packed,
                            const float *bias, size_t rows, size_t in, size_t out)
{
    if (packed) ffn__linear_packed_scalar(y, x, w, bias, rows, in, out);
    else ffn__linear_scalar(y, x, w, bias, rows, in, out);
}

/* fc1 -> relu -> fc2 (hid holds fc1's output), either weight layout. */
static void ffn__block_any(float *y, const float *x, const float *w1, const float *b1,
                           const float *w2, const float *b2, size_t rows,
                           size_t d_model, size_t hidden, float *hid, int packed)
{
    ffn__linear_any(hid, x, w1, packed, b1, rows, d_model, hidden);
    ffn__relu_scalar(hid, hid, rows * hidden);
    ffn__linear_any(y, hid, w2, packed, b2, rows, hidden, d_model);
}

#define ffn__pack_any ffn__pack_scalar
#endif /* !FFN__SIMD */

/* ---- the SIMD paths ------------------------------------------------------ */
#if FFN__SIMD

/* How it works (the Goto/BLIS structure, see also the packed layout above):
   - A microkernel computes an m x (16 np) tile of y: its accumulators stay in
     registers for kc steps; per step it loads one 16-wide row of each of np packed
     panels and, for each of the m rows, broadcasts x[i][k] and issues fused
     multiply-adds. The accumulators start from the bias (first k block) or from the
     partial sums already in y (later k blocks; reloading a float is exact, so k
     blocking does not change any bit), and the last k block stores with ReLU if
     asked (fc1 of the block: the hidden layer is written once, already ReLU'd).
   - Every ISA supplies the same five vector primitives (load, broadcast, fma,
     store, relu) and a list of tile shapes; the kernel and the driver are written
     once, so the AVX-512 and NEON paths run the AVX2 path's code.
   - Driver (ffn__gemm_blocks): row blocks of FFN__MC -> column blocks of FFN__NB
     panels (also the threads' unit of work for few rows) -> k blocks of FFN__KC ->
     panels -> tiles down the rows. An unpacked weight is packed on the fly, a
     column block's k block at a time, into a buffer on the stack.
   - Few rows (decode-like, rows < MR) use wide tiles over several panels (1 x 64
     on AVX2): the weight streams once, with enough independent accumulators to
     hide the FMA latency.
   - Edges: rows are never padded (a tile reads only its own rows of x); a panel
     that runs past out_features computes into a local padded tile that is then
     copied out, so nothing outside any caller buffer is read or written. */

#if defined(__GNUC__) || defined(__clang__)
#define FFN__INLINE static inline __attribute__((always_inline))
#define FFN__ALIGNED __attribute__((aligned(64)))
#elif defined(_MSC_VER)
#define FFN__INLINE static __forceinline
#define FFN__ALIGNED
#else
#define FFN__INLINE static inline
#define FFN__ALIGNED
#endif

/* Fully unroll the loops over tile rows and vectors (constant trip counts), so the
   accumulators become registers. gcc -O2 does not do it by itself. */
#if defined(__clang__)
#define FFN__UNROLL _Pragma("unroll")
#elif defined(__GNUC__) && __GNUC__ >= 8
#define FFN__UNROLL _Pragma("GCC unroll 16")
#else
#define FFN__UNROLL
#endif

#if defined(FFN__PATH_AVX512) || defined(FFN__PATH_AVX2)
#include <immintrin.h>
#endif
#if defined(FFN__PATH_NEON)
#include <arm_neon.h>
#endif

/* -- vector primitives: vec, VL floats per vec, and the five operations -- */
#if defined(FFN__PATH_AVX512)
typedef __m512 ffn__vec;
#define FFN__VL 16
FFN__INLINE ffn__vec ffn__vload(const float *p) { return _mm512_loadu_ps(p); }
FFN__INLINE ffn__vec ffn__vbcast(const float *p) { return _mm512_set1_ps(*p); }
FFN__INLINE ffn__vec ffn__vfma(ffn__vec a, ffn__vec b, ffn__vec c)
{ return _mm512_fmadd_ps(a, b, c); }
FFN__INLINE void ffn__vstore(float *p, ffn__vec v) { _mm512_storeu_ps(p, v); }
/* v < 0 ? 0 : v (ordered compare: NaN and -0.0 are kept) */
FFN__INLINE ffn__vec ffn__vrelu(ffn__vec v)
{
    const __m512 zero = _mm512_setzero_ps();
    return _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, zero, _CMP_LT_OQ), zero);
}
#elif defined(FFN__PATH_AVX2)
typedef __m256 ffn__vec;
#define FFN__VL 8
FFN__INLINE ffn__vec ffn__vload(const float *p) { return _mm256_loadu_ps(p); }
FFN__INLINE ffn__vec ffn__vbcast(const float *p) { return _mm256_broadcast_ss(p); }
FFN__INLINE ffn__vec ffn__vfma(ffn__vec a, ffn__vec b, ffn__vec c)
{ return _mm256_fmadd_ps(a, b, c); }
FFN__INLINE void ffn__vstore(float *p, ffn__vec v) { _mm256_storeu_ps(p, v); }
FFN__INLINE ffn__vec ffn__vrelu(ffn__vec v)
{ return _mm256_andnot_ps(_mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ), v); }
#elif defined(FFN__PATH_NEON)
typedef float32x4_t ffn__vec;
#define FFN__VL 4
FFN__INLINE ffn__vec ffn__vload(const float *p) { return vld1q_f32(p); }
FFN__INLINE ffn__vec ffn__vbcast(const float *p) { return vld1q_dup_f32(p); }
FFN__INLINE ffn__vec ffn__vfma(ffn__vec a, ffn__vec b, ffn__vec c)
{ return vfmaq_f32(c, a, b); }
FFN__INLINE void ffn__vstore(float *p, ffn__vec v) { vst1q_f32(p, v); }
FFN__INLINE ffn__vec ffn__vrelu(ffn__vec v)
{ const float32x4_t zero = vdupq_n_f32(0.0f); return vbslq_f32(vcltq_f32(v, zero), zero, v); }
#endif
#define FFN__NV (FFN__NR / FFN__VL) /* vectors per 16-wide panel row */

/* -- tile shapes: m rows x np panels, X(m, np); np <= ffn__np[m] --------
   The accumulator budget is what the register file holds next to the loaded
   weight vectors: m * np * NV <= 12 of 16 ymm (AVX2), <= 24 of 32 zmm (AVX-512)
   or <= 24 of 32 q registers (NEON). FFN__MR is the main tile's height; smaller m
   (rows < MR, and row tails) take more panels per tile. */
#if defined(FFN__PATH_AVX512)
#define FFN__MR 12 /* main tile 12 x 32: 24 zmm accumulators, 2 loads + 12 broadcasts */
#define FFN__TILES(X) \
    X(12,1) X(12,2) X(11,1) X(11,2) X(10,1) X(10,2) X(9,1) X(9,2) \
    X(8,1) X(8,2) X(8,3) X(7,1) X(7,2) X(7,3) \
    X(6,1) X(6,2) X(6,3) X(6,4) X(5,1) X(5,2) X(5,3) X(5,4) \
    X(4,1) X(4,2) X(4,3) X(4,4) X(3,1) X(3,2) X(3,3) X(3,4) \
    X(2,1) X(2,2) X(2,3) X(2,4) X(1,1) X(1,2) X(1,3) X(1,4)
static const unsigned char ffn__np[FFN__MR + 1] = {0, 4, 4, 4, 4, 4, 4, 3, 3, 2, 2, 2, 2};
#else
#define FFN__MR 6 /* main tile 6 x 16: 12 ymm (AVX2) or 24 q (NEON) accumulators */
#define FFN__TILES(X) \
    X(6,1) X(5,1) X(4,1) X(3,1) X(3,2) X(2,1) X(2,2) X(2,3) X(1,1) X(1,2) X(1,3) X(1,4)
static const unsigned char ffn__np[FFN__MR + 1] = {0, 4, 3, 2, 1, 1, 1};
#endif
#define FFN__NB 4 /* panels per column block: the widest tile (1 x 64) */

/* Blocking (tuned on Zen 3: 32 KiB L1d, 512 KiB L2; long blocks won):
   FFN__KC   k block with a packed weight. A tile streams its kc x 16 panel slices
             from L2 (64 bytes per k step, 6 cycles of FMAs: L2 keeps up easily);
             long blocks mean fewer reloads of the partial sums and kernel calls.
   FFN__MC   row block: its x rows stay in L2/L3 while all column blocks use them;
             an unpacked weight is packed once per row block.
   FFN_STACK_FLOATS  the stack buffer (default 64 KiB) into which the unpacked calls
             pack their weight: a k block of 1024 for one panel (main tiles), 256 for
             FFN__NB panels (rows < MR). Smaller works too, a little slower. */
#define FFN__KC 1024
#define FFN__MC 512
#ifndef FFN_STACK_FLOATS
#define FFN_STACK_FLOATS 16384
#endif
#define FFN__WBUF (FFN_STACK_FLOATS < FFN__NB * FFN__NR * 16 ? FFN__NB * FFN__NR * 16 \
                                                               : FFN_STACK_FLOATS)

/* One microkernel call: c (m x 16np, row stride ldc) =
   cin (m x 16np, row stride ldcin; 0 repeats one row, the bias) + x (m x kc, row
   stride ldx) @ w, where panel q's kc x 16 slice starts at w + q * wstride. */
typedef struct {
    size_t kc;
    const float *x; size_t ldx;
    const float *w; size_t wstride;
    const float *cin; size_t ldcin;
    float *c; size_t ldc;
    int relu;
} ffn__kargs;

/* The microkernel, for constant m and np. Each y element is one FMA chain in k. */
FFN__INLINE void ffn__tile(const int m, const int np, const ffn__kargs *a)
{
    ffn__vec acc[FFN__MR][FFN__NB * FFN__NV];
    const float *x = a->x, *w = a->w, *cin = a->cin;
    const size_t kc = a->kc, ldx = a->ldx, ws = a->wstride;
    const size_t ldcin = a->ldcin, ldc = a->ldc;
    float *c = a->c;
    size_t k;
    int i, j;
    FFN__UNROLL for (i = 0; i < m; i++)
        FFN__UNROLL for (j = 0; j < np * FFN__NV; j++)
            acc[i][j] = ffn__vload(cin + i * ldcin + j * FFN__VL);
    for (k = 0; k < kc; k++, x++, w += FFN__NR) {
        ffn__vec wk[FFN__NB * FFN__NV];
        FFN__UNROLL for (j = 0; j < np * FFN__NV; j++)
            wk[j] = ffn__vload(w + (size_t)(j / FFN__NV) * ws + (j % FFN__NV) * FFN__VL);
        FFN__UNROLL for (i = 0; i < m; i++) {
            const ffn__vec xi = ffn__vbcast(x + i * ldx);
            FFN__UNROLL for (j = 0; j < np * FFN__NV; j++)
                acc[i][j] = ffn__vfma(xi, wk[j], acc[i][j]);
        }
    }
    if (a->relu) {
        FFN__UNROLL for (i = 0; i < m; i++)
            FFN__UNROLL for (j = 0; j < np * FFN__NV; j++)
                ffn__vstore(c + i * ldc + j * FFN__VL, ffn__vrelu(acc[i][j]));
    } else {
        FFN__UNROLL for (i = 0; i < m; i++)
            FFN__UNROLL for (j = 0; j < np * FFN__NV; j++)
                ffn__vstore(c + i * ldc + j * FFN__VL, acc[i][j]);
    }
}

#define FFN__DEFINE_TILE(m, np) \
    static void ffn__tile_##m##x##np(const ffn__kargs *a) { ffn__tile(m, np, a); }
FFN__TILES(FFN__DEFINE_TILE)
#undef FFN__DEFINE_TILE

static void ffn__kernel(int m, int np, const ffn__kargs *a)
{
    switch (m * 8 + np) {
#define FFN__CASE(m, np) case (m) * 8 + (np): ffn__tile_##m##x##np(a); return;
    FFN__TILES(FFN__CASE)
#undef FFN__CASE
    default: FFN_ASSERT(0 && "ffn: no such tile");
    }
}

/* -- packing: dst[(q * kb + k) * 16 + j] = w[(16 (p + q) + j) * in + pc + k] for
   q < np, k < kb, j < 16; zero where 16 (p + q) + j >= out. Full panels go through
   an ISA transpose of T x T blocks; the rest (k tail, last panel) element by element. */
#if defined(FFN__PATH_AVX512) || defined(FFN__PATH_AVX2)
#define FFN__TB 8 /* AVX-512F implies AVX2: both use the 8 x 8 ymm transpose */
/* dst[t * 16 + j] = src[j * lds + t] for t, j < 8 */
FFN__INLINE void ffn__transpose_block(float *dst, const float *src, size_t lds)
{
    __m256 r0 = _mm256_loadu_ps(src), r1 = _mm256_loadu_ps(src + lds);
    __m256 r2 = _mm256_loadu_ps(src + 2 * lds), r3 = _mm256_loadu_ps(src + 3 * lds);
    __m256 r4 = _mm256_loadu_ps(src + 4 * lds), r5 = _mm256_loadu_ps(src + 5 * lds);
    __m256 r6 = _mm256_loadu_ps(src + 6 * lds), r7 = _mm256_loadu_ps(src + 7 * lds);
    __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
    __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
    __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
    __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
    __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    _mm256_storeu_ps(dst + 0 * FFN__NR, _mm256_permute2f128_ps(s0, s4, 0x20));
    _mm256_storeu_ps(dst + 1 * FFN__NR, _mm256_permute2f128_ps(s1, s5, 0x20));
    _mm256_storeu_ps(dst + 2 * FFN__NR, _mm256_permute2f128_ps(s2, s6, 0x20));
    _mm256_storeu_ps(dst + 3 * FFN__NR, _mm256_permute2f128_ps(s3, s7, 0x20));
    _mm256_storeu_ps(dst + 4 * FFN__NR, _mm256_permute2f128_ps(s0, s4, 0x31));
    _mm256_storeu_ps(dst + 5 * FFN__NR, _mm256_permute2f128_ps(s1, s5, 0x31));
    _mm256_storeu_ps(dst + 6 * FFN__NR, _mm256_permute2f128_ps(s2, s6, 0x31));
    _mm256_storeu_ps(dst + 7 * FFN__NR, _mm256_permute2f128_ps(s3, s7, 0x31));
}
#elif defined(FFN__PATH_NEON)
#define FFN__TB 4
/* dst[t * 16 + j] = src[j * lds + t] for t, j < 4 */
FFN__INLINE void ffn__transpose_block(float *dst, const float *src, size_t lds)
{
    float32x4_t r0 = vld1q_f32(src), r1 = vld1q_f32(src + lds);
    float32x4_t r2 = vld1q_f32(src + 2 * lds), r3 = vld1q_f32(src + 3 * lds);
    float64x2_t t0 = vreinterpretq_f64_f32(vtrn1q_f32(r0, r1));
    float64x2_t t1 = vreinterpretq_f64_f32(vtrn2q_f32(r0, r1));
    float64x2_t t2 = vreinterpretq_f64_f32(vtrn1q_f32(r2, r3));
    float64x2_t t3 = vreinterpretq_f64_f32(vtrn2q_f32(r2, r3));
    vst1q_f32(dst + 0 * FFN__NR, vreinterpretq_f32_f64(vtrn1q_f64(t0, t2)));
    vst1q_f32(dst + 1 * FFN__NR, vreinterpretq_f32_f64(vtrn1q_f64(t1, t3)));
    vst1q_f32(dst + 2 * FFN__NR, vreinterpretq_f32_f64(vtrn2q_f64(t0, t2)));
    vst1q_f32(dst + 3 * FFN__NR, vreinterpretq_f32_f64(vtrn2q_f64(t1, t3)));
}
#endif

static void ffn__pack_panels(float *FFN__RESTRICT dst, const float *FFN__RESTRICT w,
                             size_t in, size_t out, size_t p, size_t np, size_t pc,
                             size_t kb)
{
    size_t q, j, k;
    for (q = 0; q < np; q++, dst += kb * FFN__NR) {
        size_t o0 = (p + q) * FFN__NR;
        const float *src = w + o0 * in + pc;
        size_t kfull = 0;
        if (o0 + FFN__NR <= out) {
            kfull = kb - kb % FFN__TB;
            /* FFN__TB rows at a time, along k: few streams for the prefetchers */
            for (j = 0; j < FFN__NR; j += FFN__TB)
                for (k = 0; k < kfull; k += FFN__TB)
                    ffn__transpose_block(dst + k * FFN__NR + j, src + j * in + k, in);
        }
        for (j = 0; j < FFN__NR; j++)
            for (k = kfull; k < kb; k++)
                dst[k * FFN__NR + j] = o0 + j < out ? src[j * in + k] : 0.0f;
    }
}

/* -- the driver ----------------------------------------------------------- */

/* y (rows, out; row stride ldy) = x (rows, in; row stride ldx) @ W^T + bias,
   optionally ReLU'd. W is either packed (w) or in nn.Linear layout (wraw). */
typedef struct {
    float *y;
    const float *x, *w, *wraw, *bias;
    size_t rows, in, out, ldx, ldy;
    int relu;
} ffn__gemm;

static const float ffn__zeros[FFN__NB * FFN__NR] = {0};

/* Rows [r0, r0 + m) x panels [p, p + np) of y over k in [pc, pc + kb): x and the
   panels' slices as ffn__kargs says. */
static void ffn__tile_at(const ffn__gemm *g, size_t r0, int m, size_t p, int np,
                         size_t pc, size_t kb, const float *x, size_t ldx,
                         const float *w, size_t ws)
{
    ffn__kargs a;
    const size_t col = p * FFN__NR, width = (size_t)np * FFN__NR, ldy = g->ldy;
    const int first = pc == 0;
    a.kc = kb;
    a.x = x;
    a.ldx = ldx;
    a.w = w;
    a.wstride = ws;
    a.relu = g->relu && pc + kb == g->in;
    if (col + width <= g->out) {
        a.c = g->y + r0 * ldy + col;
        a.ldc = ldy;
        if (!first) { a.cin = a.c; a.ldcin = ldy; }
        else { a.cin = g->bias ? g->bias + col : ffn__zeros; a.ldcin = 0; }
        ffn__kernel(m, np, &a);
    } else {
        /* The tile runs past out_features: compute it in a padded local copy. */
        float cin[FFN__MR * FFN__NB * FFN__NR], c[FFN__MR * FFN__NB * FFN__NR];
        const size_t n = g->out - col;
        size_t i, j;
        for (i = 0; i < (first ? 1 : (size_t)m); i++)
            for (j = 0; j < width; j++)
                cin[i * width + j] = j >= n ? 0.0f
                                   : !first ? g->y[(r0 + i) * ldy + col + j]
                                   : g->bias ? g->bias[col + j] : 0.0f;
        a.cin = cin;
        a.ldcin = first ? 0 : width;
        a.c = c;
        a.ldc = width;
        ffn__kernel(m, np, &a);
        for (i = 0; i < (size_t)m; i++)
            for (j = 0; j < n; j++) g->y[(r0 + i) * ldy + col + j] = c[i * width + j];
    }
}

/* A block size <= max that cuts n into equal blocks (multiples of 16 but the last):
   no thin leftover block. Blocking never changes a result's bits. */
static size_t ffn__even_split(size_t n, size_t max)
{
    size_t blocks = (n + max - 1) / max, b = (n + blocks - 1) / blocks;
    b = (b + 15) / 16 * 16;
    return b < max ? b : max;
}

/* Column block b (FFN__NB panels, the last block may have fewer) of rows
   [r0, r0 + mb) over k in [pc, pc + kb); x points at X[r0][pc], row stride ldx.
   An unpacked weight is packed into wbuf, npk panels at a time. */
static void ffn__run_block(const ffn__gemm *g, size_t b, size_t r0, size_t mb,
                           size_t pc, size_t kb, const float *x, size_t ldx, float *wbuf,
                           int npk)
{
    const size_t panels = (g->out + FFN__NR - 1) / FFN__NR, full = mb - mb % FFN__MR;
    const int tail = (int)(mb % FFN__MR);
    size_t p = b * FFN__NB, pend = p + FFN__NB < panels ? p + FFN__NB : panels, i;
    for (; p < pend; p += (size_t)npk) {
        const int np = (int)(pend - p < (size_t)npk ? pend - p : (size_t)npk);
        const float *w;
        size_t ws;
        int q, n;
        if (g->w) {
            w = g->w + (p * g->in + pc) * FFN__NR;
            ws = g->in * FFN__NR;
        } else {
            ffn__pack_panels(wbuf, g->wraw, g->in, g->out, p, (size_t)np, pc, kb);
            w = wbuf;
            ws = kb * FFN__NR;
        }
        /* Full-height tiles, rows innermost: a panel slice stays in cache (L1/L2)
           while the rows run over it. */
        for (q = 0; q < np; q += n) {
            n = np - q < ffn__np[FFN__MR] ? np - q : ffn__np[FFN__MR];
            for (i = 0; i < full; i += FFN__MR)
                ffn__tile_at(g, r0 + i, FFN__MR, p + (size_t)q, n, pc, kb, x + i * ldx,
                             ldx, w + (size_t)q * ws, ws);
        }
        /* The remaining rows, with as many panels per tile as their registers allow. */
        if (tail)
            for (q = 0; q < np; q += n) {
                n = np - q < ffn__np[tail] ? np - q : ffn__np[tail];
                ffn__tile_at(g, r0 + full, tail, p + (size_t)q, n, pc, kb,
                             x + full * ldx, ldx, w + (size_t)q * ws, ws);
            }
    }
}

/* Column blocks [b0, b1) of y, all rows: row blocks of FFN__MC, then column blocks,
   then k blocks. x is read in place; its row block stays in L2/L3 for all column
   blocks, and a column block's partial sums stay in L1/L2 over its k blocks.
   An unpacked weight is packed into wbuf, npk panels x kc at a time (npk: as many
   panels as the widest tile in use), once per row block. */
static void ffn__gemm_loops(const ffn__gemm *g, size_t b0, size_t b1, float *wbuf)
{
    const int npk = g->w || g->rows < FFN__MR ? FFN__NB : ffn__np[FFN__MR];
    const size_t kc =
        ffn__even_split(g->in, g->w ? FFN__KC : FFN__WBUF / (FFN__NR * (size_t)npk));
    size_t ic, pc, b;
    for (ic = 0; ic < g->rows; ic += FFN__MC) {
        const size_t mb = g->rows - ic < FFN__MC ? g->rows - ic : FFN__MC;
        const float *x = g->x + ic * g->ldx;
        for (b = b0; b < b1; b++)
            for (pc = 0; pc < g->in; pc += kc) {
                const size_t kb = g->in - pc < kc ? g->in - pc : kc;
                ffn__run_block(g, b, ic, mb, pc, kb, x + pc, g->ldx, wbuf, npk);
            }
    }
}

/* Only the unpacked calls need the packing buffer on their stack. */
static void ffn__gemm_unpacked(const ffn__gemm *g, size_t b0, size_t b1)
{
    float wbuf[FFN__WBUF] FFN__ALIGNED;
    ffn__gemm_loops(g, b0, b1, wbuf);
}

static void ffn__gemm_blocks(const ffn__gemm *g, size_t b0, size_t b1)
{
    if (g->w) ffn__gemm_loops(g, b0, b1, NULL);
    else ffn__gemm_unpacked(g, b0, b1);
}

static size_t ffn__blocks(const ffn__gemm *g)
{
    size_t panels = (g->out + FFN__NR - 1) / FFN__NR;
    return (panels + FFN__NB - 1) / FFN__NB;
}

/* Rows [r0, r1) of y, all columns. */
static void ffn__gemm_rows(const ffn__gemm *g, size_t r0, size_t r1)
{
    ffn__gemm part = *g;
    part.x += r0 * g->ldx;
    part.y += r0 * g->ldy;
    part.rows = r1 - r0;
    ffn__gemm_blocks(&part, 0, ffn__blocks(g));
}

#if defined(_OPENMP) && !defined(FFN_NO_OPENMP)
#include <omp.h>
#define FFN__OMP 1
/* Below a few million flops (~0.1 ms on one core) a parallel region risks more than
   it saves (more so when the cores are shared with other programs). */
#define FFN__OMP_MIN_FLOPS 4.0e6
/* Up to this many rows per thread, threads share out blocks of columns: each weight
   is read once in all, and x (that few rows) stays in cache for every block. Above
   it, chunks of rows: the weights are re-read per chunk, but there is no barrier
   between the layers. (Measured at 512 rows, 2 threads: columns 0-12% faster; at
   1024 rows, rows 0-3% faster.) */
#define FFN__OMP_COL_ROWS 256

#else
#define FFN__OMP 0
#endif

/* fc1 (into hid, with ReLU) then fc2; g2 is NULL for a single Linear.
   Threads take chunks of work one at a time (dynamic schedule), so a thread that
   runs slower (a core shared with another program) does less of it. Which thread,
   chunk, tile shape or block computes an element never changes its bits: each is
   one FMA chain in k. Many rows: a chunk is a range of rows through both layers
   (no synchronisation). Few rows: chunks are column blocks of fc1, then (when all
   of hid is ready) column blocks of fc2; each weight is then read once. */
static void ffn__run(const ffn__gemm *g1, const ffn__gemm *g2)
{
#if FFN__OMP
    double flops = 2.0 * (double)g1->rows * (double)g1->in * (double)g1->out;
    int nt = 1;
    if (g2) flops *= 2.0;
    if (flops >= FFN__OMP_MIN_FLOPS && !omp_in_parallel()) nt = omp_get_max_threads();
    if (nt > 1) {
        const size_t rows = g1->rows;
        const int by_rows = rows > (size_t)nt * FFN__OMP_COL_ROWS;
        /* about 2 row chunks per thread, 64..FFN__MC rows, whole tiles */
        size_t chunk = rows / (2 * (size_t)nt) / FFN__MR * FFN__MR;
        long n1, n2;
        chunk = chunk < 64 ? 64 : chunk > FFN__MC ? FFN__MC : chunk;
        n1 = (long)(by_rows ? (rows + chunk - 1) / chunk : ffn__blocks(g1));
        n2 = g2 ? (long)ffn__blocks(g2) : 0;
#pragma omp parallel num_threads(nt)
        {
            if (by_rows) {
#pragma omp for schedule(dynamic, 1) nowait
                for (long c = 0; c < n1; c++) {
                    size_t r0 = (size_t)c * chunk, r1 = r0 + chunk < rows ? r0 + chunk : rows;
                    ffn__gemm_rows(g1, r0, r1);
                    if (g2) ffn__gemm_rows(g2, r0, r1);
                }
            } else {
#pragma omp for schedule(dynamic, 1)
                for (long c = 0; c < n1; c++) ffn__gemm_blocks(g1, (size_t)c, (size_t)c + 1);
                /* (the loop's implicit barrier: all of hid is written) */
#pragma omp for schedule(dynamic, 1) nowait
                for (long c = 0; c < n2; c++) ffn__gemm_blocks(g2, (size_t)c, (size_t)c + 1);
            }
        }
        return;
    }
#endif
    if (!g2) {
        ffn__gemm_blocks(g1, 0, ffn__blocks(g1));
    } else {
        /* Both layers for FFN__MC rows at a time: that part of hid stays in cache
           between fc1 and fc2. */
        size_t r0, r1;
        for (r0 = 0; r0 < g1->rows; r0 = r1) {
            r1 = g1->rows - r0 < FFN__MC ? g1->rows : r0 + FFN__MC;
            ffn__gemm_rows(g1, r0, r1);
            ffn__gemm_rows(g2, r0, r1);
        }
    }
}

static void ffn__gemm_init(ffn__gemm *g, float *y, const float *x, const float *w,
                           int packed, const float *bias, size_t rows, size_t in,
                           size_t out, int relu)
{
    g->y = y;
    g->x = x;
    g->w = packed ? w : NULL;
    g->wraw = packed ? NULL : w;
    g->bias = bias;
    g->rows = rows;
    g->in = in;
    g->out = out;
    g->ldx = in;
    g->ldy = out;
    g->relu = relu;
}

static void ffn__linear_any(float *y, const float *x, const float *w, int packed,
                            const float *bias, size_t rows, size_t in, size_t out)
{
    ffn__gemm g;
    ffn__gemm_init(&g, y, x, w, packed, bias, rows, in, out, 0);
    ffn__run(&g, NULL);
}

static void ffn__block_any(float *y, const float *x, const float *w1, const float *b1,
                           const float *w2, const float *b2, size_t rows,
                           size_t d_model, size_t hidden, float *hid, int packed)
{
    ffn__gemm g1, g2;
    ffn__gemm_init(&g1, hid, x, w1, packed, b1, rows, d_model, hidden, 1);
    ffn__gemm_init(&g2, y, hid, w2, packed, b2, rows, hidden, d_model, 0);
    ffn__run(&g1, &g2);
}

static void ffn__pack_any(float *packed, const float *w, size_t in, size_t out)
{
    size_t panels = (out + FFN__NR - 1) / FFN__NR, p;
    for (p = 0; p < panels; p++)
        ffn__pack_panels(packed + p * in * FFN__NR, w, in, out, p, 1, 0, in);
}

#endif /* FFN__SIMD */

/* ---- public functions -------------------------------------------------- */

FFNDEF int ffn_linear(float *y, const float *x, const float *weight, const float *bias,
                      size_t rows, size_t in_features, size_t out_features)
{
    int st = ffn__linear_check(y, x, weight, bias, rows, in_features, out_features, 0);
    if (st) return st;
    ffn__linear_any(y, x, weight, 0, bias, rows, in_features, out_features);
    return FFN_OK;
}

FFNDEF int ffn_linear_packed(float *y, const float *x, const float *packed,
                             const float *bias, size_t rows, size_t in_features,
                             size_t out_features)
{
    int st = ffn__linear_check(y, x, packed, bias, rows, in_features, out_features, 1);
    if (st) return st;
    ffn__linear_any(y, x, packed, 1, bias, rows, in_features, out_features);
    return FFN_OK;
}

FFNDEF int ffn_relu(float *y, const float *x, size_t n)
{
    size_t bytes;
    if (!y || !x) return FFN_ERR_NULL;
    if (!n) return FFN_ERR_ZERO_SIZE;
    if (!ffn__bytes(&bytes, n, 1)) return FFN_ERR_OVERFLOW;
    if (y != x && ffn__overlap(y, bytes, x, bytes)) return FFN_ERR_ALIAS;
    ffn__relu_scalar(y, x, n);
    return FFN_OK;
}

FFNDEF size_t ffn_block_scratch_floats(size_t rows, size_t d_model, size_t hidden)
{
    size_t bytes;
    if (!rows || !d_model || !hidden || !ffn__bytes(&bytes, rows, hidden)) return 0;
    return rows * hidden;
}

FFNDEF int ffn_block(float *y, const float *x, const float *w1, const float *b1,
                     const float *w2, const float *b2, size_t rows, size_t d_model,
                     size_t hidden, float *scratch, size_t scratch_floats)
{
    int st = ffn__block_check(y, x, w1, b1, w2, b2, rows, d_model, hidden, scratch,
                              scratch_floats, 0);
    if (st) return st;
    ffn__block_any(y, x, w1, b1, w2, b2, rows, d_model, hidden, scratch, 0);
    return FFN_OK;
}

FFNDEF int ffn_block_packed(float *y, const float *x, const float *w1_packed,
                            const float *b1, const float *w2_packed, const float *b2,
                            size_t rows, size_t d_model, size_t hidden, float *scratch,
                            size_t scratch_floats)
{
    int st = ffn__block_check(y, x, w1_packed, b1, w2_packed, b2, rows, d_model, hidden,
                              scratch, scratch_floats, 1);
    if (st) return st;
    ffn__block_any(y, x, w1_packed, b1, w2_packed, b2, rows, d_model, hidden, scratch, 1);
    return FFN_OK;
}

FFNDEF int ffn_pack_weight(float *packed, size_t packed_floats, const float *weight,
                           size_t in_features, size_t out_features)
{
    size_t wbytes, need;
    if (!packed || !weight) return FFN_ERR_NULL;
    if (!in_features || !out_features) return FFN_ERR_ZERO_SIZE;
    need = ffn_pack_floats(in_features, out_features);
    if (!ffn__bytes(&wbytes, out_features, in_features) || !need) return FFN_ERR_OVERFLOW;
    if (packed_floats < need) return FFN_ERR_SCRATCH;
    if (ffn__overlap(packed, need * sizeof(float), weight, wbytes)) return FFN_ERR_ALIAS;
    ffn__pack_any(packed, weight, in_features, out_features);
    return FFN_OK;
}

#endif /* FFN_IMPLEMENTATION_DONE */
#endif /* FFN_IMPLEMENTATION */

/*
------------------------------------------------------------------------------
This software is available under 2 licenses -- choose whichever you prefer.
------------------------------------------------------------------------------
ALTERNATIVE A - MIT License
Copyright (c) 2026 the pe.h and ffn.h authors
Permission is hereby granted, free of charge, to any person obtaining a copy of
this software and associated documentation files (the "Software"), to deal in
the Software without restriction, including without limitation the rights to
use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies
of the Software, and to permit persons to whom the Software is furnished to do
so, subject to the following conditions:
The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.
THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
------------------------------------------------------------------------------
ALTERNATIVE B - Public Domain (www.unlicense.org)
This is free and unencumbered software released into the public domain.
Anyone is free to copy, modify, publish, use, compile, sell, or distribute this
software, either in source code form or as a compiled binary, for any purpose,
commercial or non-commercial, and by any means.
In jurisdictions that recognize copyright law, the author or authors of this
software dedicate any and all copyright interest in the software to the public
domain. We make this dedication for the benefit of the public at large and to
the detriment of our heirs and successors. We intend this dedication to be an
overt act of relinquishment in perpetuity of all present and future rights to
this software under copyright law.
------------------------------------------------------------------------------
*/

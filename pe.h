/* pe.h - v1.2.0 - positional encodings for the input stage of a GPT-style transformer.
   Public domain or MIT (see the end of the file). No warranty.

   Do this:
      #define PE_IMPLEMENTATION
   before you include this file in *one* C or C++ file to create the implementation.

      #include ...
      #define PE_IMPLEMENTATION
      #include "pe.h"

   Link with -lm (and with -fopenmp if you compile with it).

   QUICK START

      float *table = (float *)malloc(MAX_LEN * D * sizeof(float));  // (max_len, d_model)
      pe_sinusoidal_table(table, MAX_LEN, D);          // bit-for-bit PyTorch's buffer
      pe_add_batch_first_inplace(x, table, B, S, D, MAX_LEN);   // x is (B, S, D)
      int st = pe_embed(out, ids, wte, wpe, B, S, D, VOCAB, CTX);   // GPT-2 style
      if (st < 0) fprintf(stderr, "%s\n", pe_status_string(st));

   WHAT IT COMPUTES (shapes are PyTorch shapes, row-major, C order)

      pe_sinusoidal_table        table (max_len, d_model): the buffer `pe` of the usual
                                 PyTorch PositionalEncoding module ("Attention is all
                                 you need"; source documents 000, 001, 003), with its
                                 float32 arithmetic: position = arange(max_len).float(),
                                 div_term = exp(arange(0, d, 2).float() * f32(-ln(10000)/d)),
                                 pe[:, 0::2] = sin(position * div_term),
                                 pe[:, 1::2] = cos(position * div_term); i.e.
                                 s = f32(-ln(10000)/d), div[i] = expf(f32(2i) * s),
                                 pe[p,2i] = sinf(f32(p)*div[i]), pe[p,2i+1] = cosf(..).
      pe_sinusoidal_table_exact  the same formula in double, rounded once to float.
      pe_sinusoidal_table_fast   torch's float32 angles f32(p)*div[i], their sin and cos
                                 evaluated here (vectorised), each within 1 ulp of
                                 pe_sinusoidal_table's; faster than the libm calls.
      pe_add_batch_first         out (B,S,D) = x (B,S,D) + table[:S]: torch's
                                 x + pe[:, :S] with pe (1, max_len, D)      (000)
      pe_add_seq_first           out (S,B,D) = x (S,B,D) + table[:S]: torch's
                                 x + pe[:S] with pe (max_len, 1, D) broadcast over
                                 batch                                  (001, 003)
      pe_embed, pe_embed_i64     out (B,S,D) = wte[ids] + wpe[:S]: torch's
                                 tok_emb(ids) + pos_emb(arange(S)), GPT-2 style (002)

   The layout is part of each add's name. 001/003's module silently accepts a
   batch-first tensor and then adds the position of the *batch* index; in C you say
   which layout you have. Any float table works with the adds: sinusoidal or learned.

   THE THREE TABLE MODES
      pe_sinusoidal_table reproduces torch: bit-exact against torch run with
      ATEN_CPU_CAPABILITY=default (glibc expf/sinf/cosf), and within 2^-22 * max(pos,1)
      of torch's default vector dispatch (SLEEF's expf is 1 ulp off for some div
      terms, and that error is multiplied by pos). The float32 table is itself about
      pos ulps away from the formula: pe_sinusoidal_table_exact differs from it by up
      to ~1.3 * pos * 2^-24 (about 4e-4 at pos 5000). Choose torch mode to match a
      trained model, exact mode to match the formula.
      Both use libm: results are those of the libm you link (glibc here). Building
      with -ffast-math may change them (gcc then calls vector libm routines).
      pe_sinusoidal_table_fast has torch mode's div terms and angles bit for bit and
      computes sin/cos in double without libm (for positions < 2^20), rounding once:
      the correctly rounded sine and cosine of torch's float angle but in the rarest
      cases (the double result is far more accurate than a float's half ulp). glibc's
      sinf/cosf are not always correctly rounded, so it differs from torch mode by
      1 ulp in a small fraction of values (it is the more accurate of the two), and
      from the exact mode as torch mode does. Choose it when a 1-ulp difference from torch does not matter.

   ERRORS
      Every function returns PE_OK (0) or a negative status, and on error writes
      nothing to any output. pe_status_string() names a status. Checked, in order:
         PE_ERR_NULL          a pointer argument is NULL
         PE_ERR_ZERO_SIZE     a size argument is 0
         PE_ERR_OVERFLOW      a buffer's size in bytes does not fit in size_t
         PE_ERR_ODD_D_MODEL   sinusoidal table with odd d_model (torch raises too)
         PE_ERR_SEQ_TOO_LONG  seq > max_len (or > context_length)
         PE_ERR_ALIAS         an output overlaps an input (other than out == x)
         PE_ERR_ID_RANGE      a token id < 0 or >= vocab
      pe_set_path() can also return
         PE_ERR_PATH          no path of that name in this build
         PE_ERR_CPU           this CPU (or its OS) cannot run that path
      The status names the kind of error, not the argument: the header keeps no
      per-call state (no errno-like last error; thread safety), so a failed call's
      only output is its status. Each kind concerns few of the call's arguments
      (NULL: its pointers; ZERO_SIZE: its sizes; SEQ_TOO_LONG: seq against max_len or
      context_length; ALIAS: out against x, table, wte, wpe, ids; ID_RANGE: the ids,
      all checked before anything is written), and the first failing check in the
      order above is the one reported.

   MEMORY, THREADS, ALIASING
      No allocation. The only global state is the cached choice of path (below); every
      function is thread-safe on distinct outputs. Buffers need float alignment only.
      The adds accept out == x (in place); any other overlap between an output and an
      input is PE_ERR_ALIAS.
      Built with OpenMP (-fopenmp), every function shares out the rows of a large
      output (256 KiB or more) among omp_get_max_threads() threads, one contiguous
      range each; called inside an active parallel region it runs on the calling
      thread only. Cap the threads with OMP_NUM_THREADS / omp_set_num_threads() or
      PE_NO_OPENMP. The bits do not depend on the thread count.

   PATHS (chosen at run time; the same bits on each)
      "avx512"  x86 with AVX-512F (and the OS saving the zmm state)
      "avx"     x86 with AVX (and the OS saving the ymm state)
      "sse2"    x86 with SSE2 (every x86-64)
      "neon"    aarch64 (not 32-bit ARM, whose NEON flushes denormals to zero)
      "scalar"  the plain C loops: the specification the others are tested against.
                Always compiled.
      The vector paths run the adds and the embedding (one IEEE add per element, lane
      by lane: the same bits) and, on avx and avx512, pe_sinusoidal_table_fast's sin
      and cos (the same double operations, 4 at a time). On x86 with gcc, clang or
      MSVC every path is compiled whatever the flags (gcc and clang: function-level
      target attributes), and the first call picks the best one that the CPU and the
      OS support (cpuid and xgetbv), once; the choice is cached (an atomic int: threads
      racing through their first call are fine). If the flags guarantee the best path
      (e.g. -march=native on an AVX-512 machine) there is no CPU check at all.
      Compilers without target attributes (tcc, ...) and PE_NO_RUNTIME_DISPATCH compile
      only what the flags enable (plus scalar). PE_SIMD_NAME names the best path the
      flags alone give.

      pe_path()             the name of the path that calls run now
      pe_set_path(name)     run the named path from now on (NULL or "auto": the best
                            this CPU supports); PE_ERR_PATH / PE_ERR_CPU (and the
                            choice unchanged) if it cannot. For tests, benchmarks and
                            checking a new platform; not meant to race with calls on
                            other threads (each call reads the choice once).
      pe_path_name(i)       the paths of this architecture, best first (i = 0, 1, ..),
                            NULL after the last: e.g. "avx512", "avx", "sse2", "scalar".

   OPTIONS (#define before including)
      PE_STATIC        make every function static (private to the file)
      PE_ASSERT(x)     your assert for internal invariants (default: assert.h)
      PE_NO_SIMD       compile the plain C path only (the readable specification)
      PE_NO_RUNTIME_DISPATCH  compile only the paths the compiler flags enable, and
                       never run cpuid (the best of them is used)
      PE_NO_OPENMP     ignore -fopenmp: everything runs on the calling thread
      PE_NONTEMPORAL_BYTES  x86: an out-of-place add or an embedding whose output is
                       at least this many bytes (default 16 MiB; 0 = always, SIZE_MAX =
                       never) writes it with non-temporal stores: it goes to memory
                       without being read first and without evicting the inputs from
                       cache (an output that large would not stay in cache anyway).
                       The same bits either way.
*/
#ifndef PE_H_INCLUDED
#define PE_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#define PE_VERSION_MAJOR 1
#define PE_VERSION_MINOR 2
#define PE_VERSION_PATCH 0
#define PE_VERSION_STRING "1.2.0"

/* The best path the compiler flags alone guarantee (what runs without run-time
   dispatch); pe_path() names the one calls actually run. */
#if defined(PE_NO_SIMD)
#define PE_SIMD_NAME "scalar"
#elif defined(__AVX512F__)
#define PE_SIMD_NAME "avx512"
#elif defined(__AVX__)
#define PE_SIMD_NAME "avx"
#elif defined(__SSE2__) || defined(_M_X64)
#define PE_SIMD_NAME "sse2"
#elif defined(__aarch64__) && defined(__ARM_NEON)
#define PE_SIMD_NAME "neon"
#else
#define PE_SIMD_NAME "scalar"
#endif

#ifndef PEDEF
#ifdef PE_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define PEDEF static __attribute__((unused))   /* a file need not call every function */
#else
#define PEDEF static
#endif
#else
#define PEDEF extern
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Statuses: 0 or negative. pe.h's errors are -101..-199 and ffn.h's -201..-299, so
   one handler can tell them apart; each header's status_string recognises the other's
   range. */
enum {
    PE_OK               =    0,
    PE_ERR_NULL         = -101,
    PE_ERR_ZERO_SIZE    = -102,
    PE_ERR_OVERFLOW     = -103,
    PE_ERR_ODD_D_MODEL  = -104,
    PE_ERR_SEQ_TOO_LONG = -105,
    PE_ERR_ALIAS        = -106,
    PE_ERR_ID_RANGE     = -107,
    PE_ERR_PATH         = -108,
    PE_ERR_CPU          = -109
};

/* A static English message for a status ("ok", "pe: ..."); never NULL. */
PEDEF const char *pe_status_string(int status);

/* table is (max_len, d_model), as torch computes it in float32 (000, 001, 003).
   torch: PositionalEncoding(d_model, max_len).pe.view(max_len, d_model). d_model even. */
PEDEF int pe_sinusoidal_table(float *table, size_t max_len, size_t d_model);

/* pe_sinusoidal_table's angles (the same float32 div_term and position * div_term),
   with sin and cos evaluated here in double precision, vectorised, and rounded to
   float: each value within 1 ulp of pe_sinusoidal_table's (which calls the libm's
   sinf/cosf; both are then within 1 ulp of the exact sine of the same float angle).
   Faster than the libm calls for positions up to 2^20 - 1 (beyond, it calls libm's
   sin/cos in double). */
PEDEF int pe_sinusoidal_table_fast(float *table, size_t max_len, size_t d_model);

/* table is (max_len, d_model): the same formula in double, rounded once to float.
   torch: the module's code with dtype=torch.float64 throughout, then .float(). */
PEDEF int pe_sinusoidal_table_exact(float *table, size_t max_len, size_t d_model);

/* out, x are (batch, seq, d_model); table is (max_len, d_model); seq <= max_len.
   out[b,s,:] = x[b,s,:] + table[s,:].  torch (000): x + pe[:, :seq]. out may equal x. */
PEDEF int pe_add_batch_first(float *out, const float *x, const float *table,
                             size_t batch, size_t seq, size_t d_model, size_t max_len);
PEDEF int pe_add_batch_first_inplace(float *x, const float *table,
                             size_t batch, size_t seq, size_t d_model, size_t max_len);

/* out, x are (seq, batch, d_model); table is (max_len, d_model); seq <= max_len.
   out[s,b,:] = x[s,b,:] + table[s,:].  torch (001/003): x + pe[:seq] with pe
   (max_len, 1, d_model). out may equal x. */
PEDEF int pe_add_seq_first(float *out, const float *x, const float *table,
                           size_t seq, size_t batch, size_t d_model, size_t max_len);
PEDEF int pe_add_seq_first_inplace(float *x, const float *table,
                           size_t seq, size_t batch, size_t d_model, size_t max_len);

/* out is (batch, seq, d_model); ids (batch, seq); wte (vocab, d_model);
   wpe (context_length, d_model); seq <= context_length; 0 <= ids < vocab.
   out[b,s,:] = wte[ids[b,s],:] + wpe[s,:].
   torch (002): tok_emb(ids) + pos_emb(torch.arange(seq)). Ids are validated before
   anything is written. */
PEDEF int pe_embed(float *out, const int32_t *ids, const float *wte, const float *wpe,
                   size_t batch, size_t seq, size_t d_model, size_t vocab,
                   size_t context_length);
PEDEF int pe_embed_i64(float *out, const int64_t *ids, const float *wte, const float *wpe,
                       size_t batch, size_t seq, size_t d_model, size_t vocab,
                       size_t context_length);

/* The path calls run now ("avx512", "avx", "sse2", "neon" or "scalar"); picks the
   best one on first use. */
PEDEF const char *pe_path(void);

/* Runs the named path from now on; NULL or "auto" picks the best again. PE_OK,
   PE_ERR_PATH (not in this build) or PE_ERR_CPU (this CPU or OS lacks it). */
PEDEF int pe_set_path(const char *name);

/* Path i of this architecture, best first, whether or not this build or CPU has it;
   NULL for i past the last. */
PEDEF const char *pe_path_name(int i);

#ifdef __cplusplus
}
#endif
#endif /* PE_H_INCLUDED */

/* ======================================================================== */
#ifdef PE_IMPLEMENTATION
#ifndef PE_IMPLEMENTATION_DONE
#define PE_IMPLEMENTATION_DONE

#include <math.h>
#include <string.h>

#ifndef PE_ASSERT
#include <assert.h>
#define PE_ASSERT(x) assert(x)
#endif

/* ---- which paths this build compiles ----------------------------------
   PE__HAS_<path>: the path is compiled. PE__FLAGS_<path>: the compiler flags guarantee
   that the CPU runs it. PE__DISPATCH: x86 paths are compiled whatever the flags
   (target attributes; MSVC needs none) and chosen by cpuid. Only the adds (and the
   fast table's sin/cos) are vectorised: they are memory-bound, and -O2 does not
   vectorise them reliably. */
#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__) || defined(_M_IX86)
#define PE__ARCH_X86 1
#endif
#if defined(PE__ARCH_X86) && !defined(PE_NO_SIMD)
#if defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)
#define PE__FLAGS_SSE2 1
#endif
#if defined(__AVX__)
#define PE__FLAGS_AVX 1
#endif
#if defined(__AVX512F__)
#define PE__FLAGS_AVX512 1
#endif
#if !defined(PE_NO_RUNTIME_DISPATCH) && !defined(PE__FLAGS_AVX512) &&                    \
    (defined(__clang__) || defined(_MSC_VER) ||                                          \
     (defined(__GNUC__) && (__GNUC__ > 4 || (__GNUC__ == 4 && __GNUC_MINOR__ >= 9))))
#define PE__DISPATCH 1
#endif
#if defined(PE__DISPATCH) || defined(PE__FLAGS_SSE2)
#define PE__HAS_SSE2 1
#endif
#if defined(PE__DISPATCH) || defined(PE__FLAGS_AVX)
#define PE__HAS_AVX 1
#endif
#if defined(PE__DISPATCH) || defined(PE__FLAGS_AVX512)
#define PE__HAS_AVX512 1
#endif
#elif !defined(PE_NO_SIMD) && defined(__aarch64__) && defined(__ARM_NEON)
#define PE__HAS_NEON 1      /* not 32-bit ARM: AArch32 NEON flushes denormals to zero */
#endif

/* A function compiled for more than the flags give (gcc and clang). */
#if defined(PE__DISPATCH) && (defined(__GNUC__) || defined(__clang__))
#define PE__TARGET(isa) __attribute__((target(isa)))
#else
#define PE__TARGET(isa)
#endif
#ifdef PE__FLAGS_SSE2
#define PE__TARGET_SSE2
#else
#define PE__TARGET_SSE2 PE__TARGET("sse2")
#endif
#ifdef PE__FLAGS_AVX
#define PE__TARGET_AVX
#else
#define PE__TARGET_AVX PE__TARGET("avx")
#endif
#define PE__TARGET_AVX512 PE__TARGET("avx512f")

#if defined(PE__HAS_AVX) || defined(PE__HAS_AVX512)
#include <immintrin.h>
#elif defined(PE__HAS_SSE2)
#include <emmintrin.h>
#elif defined(PE__HAS_NEON)
#include <arm_neon.h>
#endif
#ifndef PE_NONTEMPORAL_BYTES
#define PE_NONTEMPORAL_BYTES ((size_t)16 << 20)
#endif
/* (a variable, not the macro, in the comparisons: a threshold of 0 must not warn) */
static const size_t pe__nontemporal_bytes = PE_NONTEMPORAL_BYTES;
/* A read hint for a cache line (no effect on results; none where unknown). */
#if defined(__GNUC__) || defined(__clang__)
#define PE__PREFETCH(p) __builtin_prefetch(p)
#elif defined(_MSC_VER) && defined(PE__HAS_SSE2)
#define PE__PREFETCH(p) _mm_prefetch((const char *)(p), _MM_HINT_T0)
#else
#define PE__PREFETCH(p) ((void)(p))
#endif

/* ---- argument checks -------------------------------------------------- */

/* *n = a * b * sizeof(float) in bytes; 0 when it does not fit in size_t. */
static int pe__bytes(size_t *n, size_t a, size_t b)
{
    const size_t max = (size_t)-1;
    if (a > max / b || a * b > max / sizeof(float)) return 0;
    *n = a * b * sizeof(float);
    return 1;
}

/* Byte ranges [a, a+an) and [b, b+bn) share a byte. Compared as integers: relational
   operators on pointers into different objects are undefined in C. */
static int pe__overlap(const void *a, size_t an, const void *b, size_t bn)
{
    uintptr_t ua = (uintptr_t)a, ub = (uintptr_t)b;
    return ua < ub + bn && ub < ua + an;
}

PEDEF const char *pe_status_string(int status)
{
    switch (status) {
    case PE_OK:               return "ok";
    case PE_ERR_NULL:         return "pe: a pointer argument is NULL";
    case PE_ERR_ZERO_SIZE:    return "pe: a size argument is zero";
    case PE_ERR_OVERFLOW:     return "pe: a buffer size overflows size_t";
    case PE_ERR_ODD_D_MODEL:  return "pe: the sinusoidal table needs an even d_model";
    case PE_ERR_SEQ_TOO_LONG: return "pe: seq is longer than the position table";
    case PE_ERR_ALIAS:        return "pe: an output buffer overlaps an input buffer";
    case PE_ERR_ID_RANGE:     return "pe: a token id is negative or >= vocab";
    case PE_ERR_PATH:         return "pe: no such path in this build";
    case PE_ERR_CPU:          return "pe: this CPU (or its OS) cannot run that path";
    default:
        return status <= -201 && status >= -299 ? "pe: unknown status (an ffn.h status?)"
                                                : "pe: unknown status";
    }
}

/* ---- sinusoidal table ------------------------------------------------- */

static int pe__table_check(const float *table, size_t max_len, size_t d_model)
{
    size_t bytes;
    if (!table) return PE_ERR_NULL;
    if (!max_len || !d_model) return PE_ERR_ZERO_SIZE;
    if (!pe__bytes(&bytes, max_len, d_model)) return PE_ERR_OVERFLOW;
    if (d_model % 2) return PE_ERR_ODD_D_MODEL;
    return PE_OK;
}

/* pe__split runs fn(ctx, lo, hi) over [first, n): with OpenMP, once on each thread
   with a contiguous share of the range, when `floats` (the work's size) is at least
   PE__PARALLEL_FLOATS (256 KiB of floats; below that a parallel region costs more
   than it saves). Every function that uses it computes each element the same way
   whatever the share, so no bit depends on the thread count. */
#ifndef PE__PARALLEL_FLOATS
#define PE__PARALLEL_FLOATS 65536.0
#endif
#if defined(_OPENMP) && !defined(PE_NO_OPENMP)
#include <omp.h>
#endif
typedef void (*pe__range_fn)(void *ctx, size_t lo, size_t hi);

static void pe__split(size_t first, size_t n, double floats, pe__range_fn fn, void *ctx)
{
#if defined(_OPENMP) && !defined(PE_NO_OPENMP)
    if (floats >= PE__PARALLEL_FLOATS && !omp_in_parallel()) {
        const size_t m = n - first;
#pragma omp parallel
        {
            const size_t t = (size_t)omp_get_thread_num();
            const size_t nt = (size_t)omp_get_num_threads(), q = m / nt, r = m % nt;
            const size_t lo = first + q * t + (t < r ? t : r);
            fn(ctx, lo, lo + q + (t < r));
        }
        return;
    }
#else
    (void)floats;
#endif
    fn(ctx, first, n);
}

/* Rows [lo, hi) of a table, one row function per mode. */
typedef struct {
    float *table;
    size_t half;
    void (*row)(float *table, size_t p, size_t half);
} pe__rows_ctx;

static void pe__rows(void *ctx, size_t lo, size_t hi)
{
    const pe__rows_ctx *c = (const pe__rows_ctx *)ctx;
    size_t p;
    for (p = lo; p < hi; p++) c->row(c->table, p, c->half);
}

/* Row p of the float32 table, with div_term parked in row 0's even slots. */
static void pe__table_row(float *table, size_t p, size_t half)
{
    float *row = table + p * 2 * half;
    float pos = (float)p;
    size_t i;
    for (i = 0; i < half; i++) {
        float arg = pos * table[2 * i];
        row[2 * i] = sinf(arg);
        row[2 * i + 1] = cosf(arg);
    }
}

/* ---- the fast table: sin and cos of a float angle, in double ----------------
   a = n pi/2 + r with |r| <= pi/4 (Cody-Waite: pi/2 in three parts, the first two
   with 33 significant bits so that n * part is exact for n < 2^20), then Taylor
   polynomials of sin r (to r^15) and cos r (to r^16), whose truncation error
   (< 5e-17) and rounding errors (a few 1e-17) are far below a float's half ulp:
   rounding the double to float gives the correctly rounded value but in the
   rarest cases. n mod 4 picks +-sin r or +-cos r. */
#define PE__PIO2_1 1.5707963267341256      /* 33 bits of pi/2 */
#define PE__PIO2_2 6.077100506303966e-11   /* the next 33 bits */
#define PE__PIO2_3 2.0222662487959506e-21  /* the next 53 */
#define PE__2_PI 0.63661977236758134       /* 2/pi */
#define PE__FAST_MAX 1048576.0             /* 2^20: where n * part stops being exact */
/* Taylor coefficients in z = r^2, highest order first (Horner):
   sin r = r + r z (-1/3! + z (1/5! + ... )),  cos r = 1 - z/2! + z^2/4! - ... */
static const double pe__sin_k[7] = {
    -1.0 / 1307674368000.0, 1.0 / 6227020800.0, -1.0 / 39916800, 1.0 / 362880,
    -1.0 / 5040, 1.0 / 120, -1.0 / 6};
static const double pe__cos_k[9] = {
    1.0 / 20922789888000.0, -1.0 / 87178291200.0, 1.0 / 479001600.0, -1.0 / 3628800,
    1.0 / 40320, -1.0 / 720, 1.0 / 24, -1.0 / 2, 1.0};

/* The scalar specification of the fast path: sin and cos of a, a >= 0. */
static void pe__sincos_fast(float a, float *s, float *c)
{
    const double x = a;
    double n, r, z, sr, cr;
    int q, k;
    if (!(x < PE__FAST_MAX)) {              /* (also NaN and inf: libm's answer) */
        *s = (float)sin(x);
        *c = (float)cos(x);
        return;
    }
    n = floor(x * PE__2_PI + 0.5);
    r = ((x - n * PE__PIO2_1) - n * PE__PIO2_2) - n * PE__PIO2_3;
    z = r * r;
    sr = pe__sin_k[0];
    for (k = 1; k < 7; k++) sr = sr * z + pe__sin_k[k];
    sr = r + r * z * sr;
    cr = pe__cos_k[0];
    for (k = 1; k < 9; k++) cr = cr * z + pe__cos_k[k];
    q = (int)n & 3;                         /* sin a = sin r, cos r, -sin r, -cos r */
    *s = (float)(q == 0 ? sr : q == 1 ? cr : q == 2 ? -sr : -cr);
    *c = (float)(q == 0 ? cr : q == 1 ? -sr : q == 2 ? -cr : sr);
}

#if defined(PE__HAS_AVX) || defined(PE__HAS_AVX512)
/* Four angles at once, the same operations as pe__sincos_fast (AVX: 4 doubles). */
static PE__TARGET_AVX void pe__sincos_fast4(__m128 a, __m128 *s, __m128 *c)
{
    const __m256d x = _mm256_cvtps_pd(a), sign = _mm256_set1_pd(-0.0);
    const __m256d n = _mm256_floor_pd(_mm256_add_pd(_mm256_mul_pd(x,
                          _mm256_set1_pd(PE__2_PI)), _mm256_set1_pd(0.5)));
    const __m256d r = _mm256_sub_pd(_mm256_sub_pd(_mm256_sub_pd(x,
                          _mm256_mul_pd(n, _mm256_set1_pd(PE__PIO2_1))),
                          _mm256_mul_pd(n, _mm256_set1_pd(PE__PIO2_2))),
                          _mm256_mul_pd(n, _mm256_set1_pd(PE__PIO2_3)));
    const __m256d z = _mm256_mul_pd(r, r);
    /* n mod 4 as a double, and the three facts the quadrant decides */
    const __m256d q = _mm256_sub_pd(n, _mm256_mul_pd(_mm256_set1_pd(4.0),
                          _mm256_floor_pd(_mm256_mul_pd(n, _mm256_set1_pd(0.25)))));
    const __m256d one = _mm256_set1_pd(1.0), two = _mm256_set1_pd(2.0);
    const __m256d q1 = _mm256_cmp_pd(q, one, _CMP_EQ_OQ);
    const __m256d swap = _mm256_or_pd(q1, _mm256_cmp_pd(q, _mm256_set1_pd(3.0), _CMP_EQ_OQ));
    const __m256d neg_s = _mm256_cmp_pd(q, two, _CMP_GE_OQ);
    const __m256d neg_c = _mm256_or_pd(q1, _mm256_cmp_pd(q, two, _CMP_EQ_OQ));
    __m256d sr = _mm256_set1_pd(pe__sin_k[0]), cr = _mm256_set1_pd(pe__cos_k[0]), vs, vc;
    int k;
    for (k = 1; k < 7; k++)
        sr = _mm256_add_pd(_mm256_mul_pd(sr, z), _mm256_set1_pd(pe__sin_k[k]));
    sr = _mm256_add_pd(r, _mm256_mul_pd(_mm256_mul_pd(r, z), sr));
    for (k = 1; k < 9; k++)
        cr = _mm256_add_pd(_mm256_mul_pd(cr, z), _mm256_set1_pd(pe__cos_k[k]));
    /* (and/andnot/or rather than blendv: gcc turns a blendv on a compare's mask into an
       integer sign test, which AVX without AVX2 does element by element) */
    vs = _mm256_or_pd(_mm256_andnot_pd(swap, sr), _mm256_and_pd(swap, cr));
    vc = _mm256_or_pd(_mm256_andnot_pd(swap, cr), _mm256_and_pd(swap, sr));
    vs = _mm256_xor_pd(vs, _mm256_and_pd(neg_s, sign));
    vc = _mm256_xor_pd(vc, _mm256_and_pd(neg_c, sign));
    *s = _mm256_cvtpd_ps(vs);
    *c = _mm256_cvtpd_ps(vc);
}
#endif

/* Row p of the fast table; div_term parked in row 0's even slots as below. */
static void pe__table_row_fast(float *table, size_t p, size_t half)
{
    float *row = table + p * 2 * half;
    const float pos = (float)p;
    size_t i;
    for (i = 0; i < half; i++) pe__sincos_fast(pos * table[2 * i], row + 2 * i, row + 2 * i + 1);
}

#if defined(PE__HAS_AVX) || defined(PE__HAS_AVX512)
static PE__TARGET_AVX void pe__table_row_fast_avx(float *table, size_t p, size_t half)
{
    float *row = table + p * 2 * half;
    const float pos = (float)p;
    size_t i = 0;
    if ((double)p < PE__FAST_MAX) {
        const __m128 vpos = _mm_set1_ps(pos);
        for (; i + 4 <= half; i += 4) {
            /* div_term[i..i+3] from the even slots, then the same float products */
            __m128 d = _mm_shuffle_ps(_mm_loadu_ps(table + 2 * i),
                                      _mm_loadu_ps(table + 2 * i + 4), _MM_SHUFFLE(2, 0, 2, 0));
            __m128 s, c;
            pe__sincos_fast4(_mm_mul_ps(vpos, d), &s, &c);
            _mm_storeu_ps(row + 2 * i, _mm_unpacklo_ps(s, c));
            _mm_storeu_ps(row + 2 * i + 4, _mm_unpackhi_ps(s, c));
        }
    }
    for (; i < half; i++) pe__sincos_fast(pos * table[2 * i], row + 2 * i, row + 2 * i + 1);
}
#endif

/* ---- adding a position table ------------------------------------------ */

/* out[i] = a[i] + b[i] for i < n; out may equal a (each step loads before it stores).
   The scalar loop is the specification; the vector loops do the same IEEE additions
   lane by lane, so every path gives the same bits. */
typedef void (*pe__span_fn)(float *out, const float *a, const float *b, size_t n);

static void pe__add_scalar(float *out, const float *a, const float *b, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) out[i] = a[i] + b[i];
}

/* The vector loops, written once over the primitives of the ISA being instantiated:
   PE__VEC of PE__W floats, PE__LD, PE__ST, PE__STNT (a non-temporal store), PE__ADD.
   Four vectors per step keep more loads in flight, which the embedding's gather of
   table rows from memory needs.
   NAME_nt stores non-temporally (x86): vector streaming stores need aligned
   addresses, so the elements before out's first vector boundary and after its last go
   one at a time through the scalar streaming store (movnti), and no cache line of out
   is ever half written through the cache (that line would be read from memory first,
   and the point is to avoid reading out). The caller issues an sfence once after the
   last call, to order the streaming stores before whatever comes next. */
#define PE__ADD4(ST, out, a, b, i)                                                    \
    do {                                                                              \
        const float *a_ = (a) + (i), *b_ = (b) + (i);                                 \
        float *o_ = (out) + (i);                                                      \
        PE__VEC a0_ = PE__LD(a_), a1_ = PE__LD(a_ + PE__W);                           \
        PE__VEC a2_ = PE__LD(a_ + 2 * PE__W), a3_ = PE__LD(a_ + 3 * PE__W);           \
        PE__VEC b0_ = PE__LD(b_), b1_ = PE__LD(b_ + PE__W);                           \
        PE__VEC b2_ = PE__LD(b_ + 2 * PE__W), b3_ = PE__LD(b_ + 3 * PE__W);           \
        ST(o_, PE__ADD(a0_, b0_));                                                    \
        ST(o_ + PE__W, PE__ADD(a1_, b1_));                                            \
        ST(o_ + 2 * PE__W, PE__ADD(a2_, b2_));                                        \
        ST(o_ + 3 * PE__W, PE__ADD(a3_, b3_));                                        \
    } while (0)
#define PE__DEFINE_SPAN(NAME)                                                         \
    static PE__VTARGET void NAME(float *out, const float *a, const float *b, size_t n) \
    {                                                                                 \
        const size_t nv = n / (4 * PE__W) * (4 * PE__W);                              \
        size_t i;                                                                     \
        for (i = 0; i < nv; i += 4 * PE__W) PE__ADD4(PE__ST, out, a, b, i);           \
        for (i = nv; i < n; i++) out[i] = a[i] + b[i];                                \
    }
#define PE__STREAM1(p, v)                                                             \
    do {                                                                              \
        float v_ = (v);                                                               \
        int bits_;                                                                    \
        memcpy(&bits_, &v_, sizeof bits_);                                            \
        _mm_stream_si32((int *)(void *)(p), bits_);                                   \
    } while (0)
#define PE__DEFINE_SPAN_NT(NAME)                                                      \
    static PE__VTARGET void NAME(float *out, const float *a, const float *b, size_t n) \
    {                                                                                 \
        size_t i, head = (size_t)(-(uintptr_t)out / sizeof(float)) % PE__W, nv;       \
        if (head > n) head = n;                                                       \
        for (i = 0; i < head; i++) PE__STREAM1(out + i, a[i] + b[i]);                 \
        nv = head + (n - head) / (4 * PE__W) * (4 * PE__W);                           \
        for (i = head; i < nv; i += 4 * PE__W) PE__ADD4(PE__STNT, out, a, b, i);      \
        for (i = nv; i < n; i++) PE__STREAM1(out + i, a[i] + b[i]);                   \
    }

#ifdef PE__HAS_SSE2
#define PE__VTARGET PE__TARGET_SSE2
#define PE__W 4
#define PE__VEC __m128
#define PE__LD _mm_loadu_ps
#define PE__ST _mm_storeu_ps
#define PE__STNT _mm_stream_ps
#define PE__ADD _mm_add_ps
PE__DEFINE_SPAN(pe__add_sse2)
PE__DEFINE_SPAN_NT(pe__add_sse2_nt)
#undef PE__VTARGET
#undef PE__W
#undef PE__VEC
#undef PE__LD
#undef PE__ST
#undef PE__STNT
#undef PE__ADD
/* Orders the non-temporal stores before anything the caller does next. */
static PE__TARGET_SSE2 void pe__sfence(void) { _mm_sfence(); }
#endif

#ifdef PE__HAS_AVX
#define PE__VTARGET PE__TARGET_AVX
#define PE__W 8
#define PE__VEC __m256
#define PE__LD _mm256_loadu_ps
#define PE__ST _mm256_storeu_ps
#define PE__STNT _mm256_stream_ps
#define PE__ADD _mm256_add_ps
PE__DEFINE_SPAN(pe__add_avx)
PE__DEFINE_SPAN_NT(pe__add_avx_nt)
#undef PE__VTARGET
#undef PE__W
#undef PE__VEC
#undef PE__LD
#undef PE__ST
#undef PE__STNT
#undef PE__ADD
#endif

#ifdef PE__HAS_AVX512
#define PE__VTARGET PE__TARGET_AVX512
#define PE__W 16
#define PE__VEC __m512
#define PE__LD _mm512_loadu_ps
#define PE__ST _mm512_storeu_ps
#define PE__STNT _mm512_stream_ps
#define PE__ADD _mm512_add_ps
PE__DEFINE_SPAN(pe__add_avx512)
PE__DEFINE_SPAN_NT(pe__add_avx512_nt)
#undef PE__VTARGET
#undef PE__W
#undef PE__VEC
#undef PE__LD
#undef PE__ST
#undef PE__STNT
#undef PE__ADD
#endif

#ifdef PE__HAS_NEON
#define PE__VTARGET
#define PE__W 4
#define PE__VEC float32x4_t
#define PE__LD vld1q_f32
#define PE__ST vst1q_f32
#define PE__ADD vaddq_f32
PE__DEFINE_SPAN(pe__add_neon)
#undef PE__VTARGET
#undef PE__W
#undef PE__VEC
#undef PE__LD
#undef PE__ST
#undef PE__ADD
#endif

/* ---- choosing the path ------------------------------------------------------ */

/* A path: its add loops (plain and non-temporal: the same bits) and the fast table's
   row function. need: the PE__CPU_* bits it runs on. */
typedef struct {
    const char *name;
    unsigned need;
    pe__span_fn add, add_nt;
    void (*table_row_fast)(float *table, size_t p, size_t half);
} pe__isa;
enum { PE__CPU_SSE2 = 1, PE__CPU_AVX = 2, PE__CPU_AVX512 = 4 };

#ifdef PE__HAS_SSE2
static const pe__isa pe__isa_sse2 = {"sse2", PE__CPU_SSE2, pe__add_sse2, pe__add_sse2_nt,
                                     pe__table_row_fast};
#endif
#ifdef PE__HAS_AVX
static const pe__isa pe__isa_avx = {"avx", PE__CPU_SSE2 | PE__CPU_AVX, pe__add_avx,
                                    pe__add_avx_nt, pe__table_row_fast_avx};
#endif
#ifdef PE__HAS_AVX512
static const pe__isa pe__isa_avx512 = {"avx512", PE__CPU_SSE2 | PE__CPU_AVX | PE__CPU_AVX512,
                                       pe__add_avx512, pe__add_avx512_nt,
                                       pe__table_row_fast_avx};
#endif
#ifdef PE__HAS_NEON
static const pe__isa pe__isa_neon = {"neon", 0, pe__add_neon, pe__add_neon,
                                     pe__table_row_fast};
#endif
static const pe__isa pe__isa_scalar = {"scalar", 0, pe__add_scalar, pe__add_scalar,
                                       pe__table_row_fast};

/* Orders a range's non-temporal stores (x86 paths only write any). */
static void pe__fence(const pe__isa *isa)
{
#ifdef PE__HAS_SSE2
    if (isa->add_nt != isa->add) pe__sfence();
#else
    (void)isa;
#endif
}

#ifdef PE__DISPATCH
#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
static void pe__cpuid(unsigned leaf, unsigned r[4])
{
    int v[4];
    __cpuidex(v, (int)leaf, 0);
    r[0] = (unsigned)v[0]; r[1] = (unsigned)v[1]; r[2] = (unsigned)v[2]; r[3] = (unsigned)v[3];
}
static unsigned pe__xcr0(void) { return (unsigned)_xgetbv(0); }
#else
#include <cpuid.h>
static void pe__cpuid(unsigned leaf, unsigned r[4])
{
    unsigned a, b, c, d;
    __cpuid_count(leaf, 0, a, b, c, d);
    r[0] = a; r[1] = b; r[2] = c; r[3] = d;
}
static unsigned pe__xcr0(void)      /* xgetbv(0), spelled out for older assemblers */
{
    unsigned a, d;
    __asm__ __volatile__(".byte 0x0f, 0x01, 0xd0" : "=a"(a), "=d"(d) : "c"(0));
    return a;
}
#endif
/* The instructions (cpuid) and the OS saving the registers they use (xgetbv: the
   ymm state for AVX; also the opmask and zmm states for AVX-512). */
static unsigned pe__cpu_detect(void)
{
    unsigned r0[4], r1[4], r7[4] = {0, 0, 0, 0}, xcr0 = 0, avx, avx512;
    pe__cpuid(0, r0);
    pe__cpuid(1, r1);
    if (r0[0] >= 7) pe__cpuid(7, r7);
    if (r1[2] >> 27 & 1) xcr0 = pe__xcr0();                            /* OSXSAVE */
    avx = (r1[2] >> 28 & 1) && (xcr0 & 6) == 6;
    avx512 = avx && (r7[1] >> 16 & 1) && (xcr0 & 0xe6) == 0xe6;
    return (r1[3] >> 26 & 1 ? (unsigned)PE__CPU_SSE2 : 0u) | (avx ? (unsigned)PE__CPU_AVX : 0u) |
           (avx512 ? (unsigned)PE__CPU_AVX512 : 0u);
}
#endif

/* The PE__CPU_* bits this machine has: what the flags guarantee, plus cpuid. */
static unsigned pe__cpu(void)
{
    unsigned have = 0;
#ifdef PE__FLAGS_SSE2
    have |= PE__CPU_SSE2;
#endif
#ifdef PE__FLAGS_AVX
    have |= PE__CPU_AVX;
#endif
#ifdef PE__FLAGS_AVX512
    have |= PE__CPU_AVX512;
#endif
#ifdef PE__DISPATCH
    have |= pe__cpu_detect();
#endif
    return have;
}

/* The paths of this architecture, best first; NULL: not compiled in this build. */
#ifdef PE__HAS_AVX512
#define PE__ISA_AVX512 &pe__isa_avx512
#else
#define PE__ISA_AVX512 NULL
#endif
#ifdef PE__HAS_AVX
#define PE__ISA_AVX &pe__isa_avx
#else
#define PE__ISA_AVX NULL
#endif
#ifdef PE__HAS_SSE2
#define PE__ISA_SSE2 &pe__isa_sse2
#else
#define PE__ISA_SSE2 NULL
#endif
#ifdef PE__HAS_NEON
#define PE__ISA_NEON &pe__isa_neon
#else
#define PE__ISA_NEON NULL
#endif
static const struct { const char *name; const pe__isa *isa; } pe__paths[] = {
#if defined(PE__ARCH_X86)
    {"avx512", PE__ISA_AVX512}, {"avx", PE__ISA_AVX}, {"sse2", PE__ISA_SSE2},
#elif defined(__aarch64__)
    {"neon", PE__ISA_NEON},
#endif
    {"scalar", &pe__isa_scalar}};
#define PE__NPATHS (sizeof pe__paths / sizeof pe__paths[0])

/* PE_OK if path i is compiled and a CPU with the PE__CPU_* bits `have` runs it. */
static int pe__path_ok(size_t i, unsigned have)
{
    if (!pe__paths[i].isa) return PE_ERR_PATH;
    return (pe__paths[i].isa->need & ~have) ? PE_ERR_CPU : PE_OK;
}

/* The cached choice: 0 until the first call picks, then 1 + its index in pe__paths.
   Threads that race through their first call all store the same value; the atomic
   access keeps that a well-defined program (ThreadSanitizer agrees). */
static long pe__chosen;
#if defined(__ATOMIC_RELAXED)
#define PE__LOAD(p) __atomic_load_n(p, __ATOMIC_RELAXED)
#define PE__STORE(p, v) __atomic_store_n(p, v, __ATOMIC_RELAXED)
#elif defined(_MSC_VER)
#define PE__LOAD(p) _InterlockedOr(p, 0)
#define PE__STORE(p, v) ((void)_InterlockedExchange(p, v))
#else
#define PE__LOAD(p) (*(p))
#define PE__STORE(p, v) ((void)(*(p) = (v)))
#endif

static long pe__best(void)
{
    const unsigned have = pe__cpu();
    size_t i = 0;
    while (pe__path_ok(i, have) != PE_OK) i++;      /* scalar, the last, always is */
    return (long)i + 1;
}

static const pe__isa *pe__current(void)
{
    long i = PE__LOAD(&pe__chosen);
    if (!i) {
        i = pe__best();
        PE__STORE(&pe__chosen, i);
    }
    return pe__paths[i - 1].isa;
}

PEDEF const char *pe_path(void) { return pe__current()->name; }

PEDEF const char *pe_path_name(int i)
{
    return i >= 0 && (size_t)i < PE__NPATHS ? pe__paths[i].name : NULL;
}

PEDEF int pe_set_path(const char *name)
{
    size_t i;
    if (!name || strcmp(name, "auto") == 0) {
        PE__STORE(&pe__chosen, pe__best());
        return PE_OK;
    }
    for (i = 0; i < PE__NPATHS; i++)
        if (strcmp(name, pe__paths[i].name) == 0) {
            int st = pe__path_ok(i, pe__cpu());
            if (st == PE_OK) PE__STORE(&pe__chosen, (long)i + 1);
            return st;
        }
    return PE_ERR_PATH;
}

/* ---- the sinusoidal tables ---------------------------------------------- */

/* The document's code, in float32 step by step:
     div_term = exp(arange(0, d, 2).float() * f32(-log(10000.0) / d))
     pe[:, 0::2] = sin(position * div_term);  pe[:, 1::2] = cos(position * div_term)
   torch rounds the Python double scale to float32 before the float32 product; doing
   the product in double changes 44 of 256 div terms at d = 512.
   div_term is parked in row 0's even slots (row 0 is sin(0)=0, cos(0)=1 whatever
   div is) so that each of the d/2 expf calls is made once, without scratch memory. */
static int pe__table_float(float *table, size_t max_len, size_t d_model,
                           void (*row)(float *table, size_t p, size_t half))
{
    size_t i, half = d_model / 2;
    float scale;
    pe__rows_ctx c = {table, half, row};
    int st = pe__table_check(table, max_len, d_model);
    if (st) return st;

    scale = (float)(-log(10000.0) / (double)d_model);
    for (i = 0; i < half; i++)
        table[2 * i] = expf((float)(2 * i) * scale);
    pe__split(1, max_len, (double)max_len * (double)d_model, pe__rows, &c);
    row(table, 0, half);                    /* last: it held div_term until now */
    return PE_OK;
}

PEDEF int pe_sinusoidal_table(float *table, size_t max_len, size_t d_model)
{
    return pe__table_float(table, max_len, d_model, pe__table_row);
}

PEDEF int pe_sinusoidal_table_fast(float *table, size_t max_len, size_t d_model)
{
    return pe__table_float(table, max_len, d_model, pe__current()->table_row_fast);
}

/* Row p of the double table; row 0 holds the double div terms (memcpy: no alignment
   or aliasing assumptions). */
static void pe__table_row_exact(float *table, size_t p, size_t half)
{
    float *row = table + p * 2 * half;
    size_t i;
    for (i = 0; i < half; i++) {
        double div, arg;
        memcpy(&div, table + 2 * i, sizeof div);
        arg = (double)p * div;
        row[2 * i] = (float)sin(arg);
        row[2 * i + 1] = (float)cos(arg);
    }
}

/* The formula of 001/003 in double: pe[p,2i] = sin(p / 10000^(2i/d)), rounded once.
   Row 0 parks the d/2 double div terms (d floats hold them exactly) as above. */
PEDEF int pe_sinusoidal_table_exact(float *table, size_t max_len, size_t d_model)
{
    size_t i, half = d_model / 2;
    double scale;
    pe__rows_ctx c = {table, half, pe__table_row_exact};
    int st = pe__table_check(table, max_len, d_model);
    if (st) return st;

    scale = -log(10000.0) / (double)d_model;
    for (i = 0; i < half; i++) {
        double div = exp((double)(2 * i) * scale);
        memcpy(table + 2 * i, &div, sizeof div);
    }
    pe__split(1, max_len, (double)max_len * (double)d_model, pe__rows, &c);
    pe__table_row_exact(table, 0, half);
    return PE_OK;
}

/* ---- the adds ------------------------------------------------------------- */

/* Rows [lo, hi) of an add: row r of x and out (rows of d floats in memory order)
   takes table row (r / inner) % seq, added by the path's loop `add`. */
typedef struct {
    float *out;
    const float *x, *table;
    size_t seq, inner, d;
    const pe__isa *isa;
    pe__span_fn add;
} pe__add_ctx;

/* Row r of x and out with table row t. */
static void pe__add_row_at(const pe__add_ctx *c, size_t r, size_t t)
{
    const size_t d = c->d;
    c->add(c->out + r * d, c->x + r * d, c->table + t * d, d);
}

static void pe__add_rows(void *ctx, size_t lo, size_t hi)
{
    const pe__add_ctx *c = (const pe__add_ctx *)ctx;
    const size_t seq = c->seq;
    size_t r = lo;
    if (c->inner == 1) {
        /* Batch-first: two batches side by side, so each table row read from L2/L3
           serves a second row from L1 (seq-first rows get this from their layout).
           Rows up to the first batch boundary, and a last lone batch, go one by one. */
        const size_t head = (lo % seq == 0) ? 0 : seq - lo % seq;
        for (; r < hi && r < lo + head; r++) pe__add_row_at(c, r, r % seq);
        for (; r + 2 * seq <= hi; r += 2 * seq) {
            size_t t;
            for (t = 0; t < seq; t++) {
                pe__add_row_at(c, r + t, t);
                pe__add_row_at(c, r + seq + t, t);
            }
        }
    }
    for (; r < hi; r++) pe__add_row_at(c, r, r / c->inner % seq);
    if (c->add == c->isa->add_nt) pe__fence(c->isa);
}

/* Both layouts are (outer, seq, inner, d) with the position on the seq axis:
   batch-first is (batch, seq, 1, d), seq-first is (1, seq, batch, d). */
static int pe__add(float *out, const float *x, const float *table, size_t outer,
                   size_t seq, size_t inner, size_t d_model, size_t max_len)
{
    size_t bytes, table_bytes, rows = outer * inner;
    pe__add_ctx c = {out, x, table, seq, inner, d_model, NULL, NULL};
    if (!out || !x || !table) return PE_ERR_NULL;
    if (!outer || !seq || !inner || !d_model || !max_len) return PE_ERR_ZERO_SIZE;
    if (rows / outer != inner || !pe__bytes(&bytes, rows, seq) ||
        !pe__bytes(&bytes, rows * seq, d_model) ||
        !pe__bytes(&table_bytes, max_len, d_model))
        return PE_ERR_OVERFLOW;
    if (seq > max_len) return PE_ERR_SEQ_TOO_LONG;
    if (pe__overlap(out, bytes, table, table_bytes) ||
        (out != x && pe__overlap(out, bytes, x, bytes)))
        return PE_ERR_ALIAS;

    /* Non-temporal stores only out of place: in place, the row's cache lines were
       just read, and writing them back through the cache is best. */
    c.isa = pe__current();
    c.add = out != x && bytes >= pe__nontemporal_bytes ? c.isa->add_nt : c.isa->add;
    pe__split(0, rows * seq, (double)(rows * seq) * (double)d_model, pe__add_rows, &c);
    return PE_OK;
}

PEDEF int pe_add_batch_first(float *out, const float *x, const float *table,
                             size_t batch, size_t seq, size_t d_model, size_t max_len)
{
    return pe__add(out, x, table, batch, seq, 1, d_model, max_len);
}

PEDEF int pe_add_batch_first_inplace(float *x, const float *table,
                             size_t batch, size_t seq, size_t d_model, size_t max_len)
{
    return pe__add(x, x, table, batch, seq, 1, d_model, max_len);
}

PEDEF int pe_add_seq_first(float *out, const float *x, const float *table,
                           size_t seq, size_t batch, size_t d_model, size_t max_len)
{
    return pe__add(out, x, table, 1, seq, batch, d_model, max_len);
}

PEDEF int pe_add_seq_first_inplace(float *x, const float *table,
                           size_t seq, size_t batch, size_t d_model, size_t max_len)
{
    return pe__add(x, x, table, 1, seq, batch, d_model, max_len);
}

/* ---- learned token + position embeddings (002) ------------------------ */

static int64_t pe__id(const int32_t *ids32, const int64_t *ids64, size_t i)
{
    return ids32 ? (int64_t)ids32[i] : ids64[i];
}

/* Rows [lo, hi) of an embedding: out row `at` = wte[ids[at]] + wpe[at % seq]. */
typedef struct {
    float *out;
    const int32_t *ids32;
    const int64_t *ids64;
    const float *wte, *wpe;
    size_t seq, d;
    const pe__isa *isa;
    pe__span_fn add;
} pe__embed_ctx;

static void pe__embed_rows(void *ctx, size_t lo, size_t hi)
{
    const pe__embed_ctx *c = (const pe__embed_ctx *)ctx;
    const size_t d = c->d, chunk = 128; /* floats: 8 cache lines */
    size_t at, j, k;
    const float *tok = lo < hi ? c->wte + (size_t)pe__id(c->ids32, c->ids64, lo) * d : NULL;
    for (at = lo; at < hi; at++) {
        /* Rows of wte are gathered from all over memory: ask for the next token's row
           while this one is added, so its cache misses overlap this row's work. A few
           lines per chunk of this row rather than the whole row at once: a burst of
           48 prefetches fills the miss buffers and stalls the loads of this row. */
        const float *next = at + 1 < hi ? c->wte + (size_t)pe__id(c->ids32, c->ids64, at + 1) * d
                                         : NULL;
        const float *pos = c->wpe + at % c->seq * d;
        float *out = c->out + at * d;
        /* And the first line of the row three tokens on: each row is on a new page, and
           this starts its TLB walk early. */
        if (at + 3 < hi) PE__PREFETCH(c->wte + (size_t)pe__id(c->ids32, c->ids64, at + 3) * d);
        for (j = 0; j < d; j += chunk) {
            const size_t m = d - j < chunk ? d - j : chunk;
            if (next)
                for (k = j; k < j + m; k += 64 / sizeof(float)) PE__PREFETCH(next + k);
            c->add(out + j, tok + j, pos + j, m);
        }
        tok = next;
    }
    if (c->add == c->isa->add_nt) pe__fence(c->isa);
}

/* Exactly one of ids32 / ids64 is used; the public wrappers pass the other as NULL. */
static int pe__embed(float *out, const int32_t *ids32, const int64_t *ids64,
                     const float *wte, const float *wpe, size_t batch, size_t seq,
                     size_t d_model, size_t vocab, size_t context_length)
{
    size_t b, n, bytes, wte_bytes, wpe_bytes, id_size;
    pe__embed_ctx c = {out, ids32, ids64, wte, wpe, seq, d_model, NULL, NULL};
    const void *ids = ids32 ? (const void *)ids32 : (const void *)ids64;
    if (!out || !ids || !wte || !wpe) return PE_ERR_NULL;
    if (!batch || !seq || !d_model || !vocab || !context_length) return PE_ERR_ZERO_SIZE;
    id_size = ids32 ? sizeof *ids32 : sizeof *ids64;
    if (!pe__bytes(&bytes, batch, seq) || !pe__bytes(&bytes, batch * seq, d_model) ||
        !pe__bytes(&wte_bytes, vocab, d_model) ||
        !pe__bytes(&wpe_bytes, context_length, d_model) ||
        batch * seq > (size_t)-1 / id_size)
        return PE_ERR_OVERFLOW;
    if (seq > context_length) return PE_ERR_SEQ_TOO_LONG;
    n = batch * seq;
    if (pe__overlap(out, bytes, ids, n * id_size) || pe__overlap(out, bytes, wte, wte_bytes) ||
        pe__overlap(out, bytes, wpe, wpe_bytes))
        return PE_ERR_ALIAS;
    for (b = 0; b < n; b++) {
        int64_t id = pe__id(ids32, ids64, b);
        if (id < 0 || (uint64_t)id >= (uint64_t)vocab) return PE_ERR_ID_RANGE;
    }

    c.isa = pe__current();
    c.add = bytes >= pe__nontemporal_bytes ? c.isa->add_nt : c.isa->add;
    pe__split(0, n, (double)n * (double)d_model, pe__embed_rows, &c);
    return PE_OK;
}

PEDEF int pe_embed(float *out, const int32_t *ids, const float *wte, const float *wpe,
                   size_t batch, size_t seq, size_t d_model, size_t vocab,
                   size_t context_length)
{
    return pe__embed(out, ids, NULL, wte, wpe, batch, seq, d_model, vocab, context_length);
}

PEDEF int pe_embed_i64(float *out, const int64_t *ids, const float *wte, const float *wpe,
                       size_t batch, size_t seq, size_t d_model, size_t vocab,
                       size_t context_length)
{
    return pe__embed(out, NULL, ids, wte, wpe, batch, seq, d_model, vocab, context_length);
}

#endif /* PE_IMPLEMENTATION_DONE */
#endif /* PE_IMPLEMENTATION */

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

/* support/unit.c - pe.h and ffn.h compiled once for a build.

   As is, it is the implementation the test programs (tests/test_*.c) and the fuzz
   driver link against, so that each build configuration compiles the kernels once:
      cc -O2 -c support/unit.c && cc -O2 tests/test_golden.c unit.o -lm
   and, built -fPIC -shared, the build/libpeffn.so that bench/bench_torch.py loads.
   With -DUNIT_GETTER=name it is a private copy (PE_STATIC, FFN_STATIC) behind a table
   of function pointers returned by name() (support/unit.h), for programs that run two
   builds side by side: bench/ (a plain -O2 build beside the -march=native one) and
   tools/fastmath_check.c (-ffast-math beside strict); -DUNIT_FLAGS='"..."' records the
   build's flags in the table. */
#ifdef UNIT_GETTER
#define PE_STATIC
#define FFN_STATIC
#endif
#define PE_IMPLEMENTATION
#define FFN_IMPLEMENTATION
#include "../pe.h"
#include "../ffn.h"

#ifndef UNIT_GETTER
/* The own math functions, for the fuzz driver and tests/test_math.c (unit_math.h says why). */
#include "unit_math.h"
float unit_ffn_erff(float x) { return ffn__erff(x); }
float unit_ffn_tanhf(float x) { return ffn__tanhf(x); }
float unit_ffn_expf(float x) { return ffn__expf(x); }
float unit_ffn_fmaf(float a, float b, float c) { return ffn__fmaf_soft(a, b, c); }
unsigned unit_ffn_f32_16(int dt, float v)
{ return dt == FFN_BF16 ? ffn__f32_bf16(v) : ffn__f32_f16(v); }
/* pe.h's own double functions, for the fuzz driver's pe formulas (the C library's are
   not within an ulp on every platform). */
double unit_pe_sin(double x) { return pe__sin(x); }
double unit_pe_cos(double x) { return pe__cos(x); }
double unit_pe_exp(double x) { return pe__exp(x); }
double unit_pe_log(double x) { return pe__log(x); }
double unit_pe_log2(double x) { return pe__log2(x); }
double unit_pe_pow(double x, double y) { return pe__pow(x, y); }
/* The rare paths and the float functions of the own math, for tests/test_math.c (the
   other parts never reach them: a fast path decides nearly every input). */
float unit_ffn_expf_slow(float x) { return ffn__expf_slow(x); }
float unit_ffn_tanhf_slow(float x) { return ffn__tanhf_slow(x); }
float unit_ffn_erff_slow(float x) { return ffn__erff_slow(x); }
float unit_pe_sinf(float a) { return pe__sinf(a); }
float unit_pe_cosf(float a) { return pe__cosf(a); }
float unit_pe_expf(float a) { return pe__expf(a); }
float unit_pe_powf(float x, float y) { return pe__powf(x, y); }
double unit_pe_sqrt(double x) { return pe__sqrt(x); }
void unit_pe_sincos_d2f(double x, float *s, float *c) { pe__sincos_d2f(x, s, c); }
#endif

#ifdef UNIT_GETTER
#include "unit.h"

#ifndef UNIT_FLAGS
#define UNIT_FLAGS "(not recorded)"
#endif
#ifdef _OPENMP
#define UNIT_OPENMP 1
#else
#define UNIT_OPENMP 0
#endif

const unit *UNIT_GETTER(void);
/* One initializer per list row, in the table's order; a group the headers predate is NULL
   (the bench's PREV= build of an older revision). */
#define UNIT_FN(name, ret, params) name,
#define UNIT_NULL(name, ret, params) NULL,
const unit *UNIT_GETTER(void)
{
    static const unit u = {
        UNIT_FLAGS, UNIT_OPENMP,
        PE_API_102(UNIT_FN)
#if UNIT_V(PE) >= 103
        PE_API_103(UNIT_FN)
#else
        PE_API_103(UNIT_NULL)
#endif
#if UNIT_V(PE) >= 104
        PE_API_104(UNIT_FN)
#else
        PE_API_104(UNIT_NULL)
#endif
        FFN_API_102(UNIT_FN)
#if UNIT_V(FFN) >= 105
        FFN_API_105(UNIT_FN)
#else
        FFN_API_105(UNIT_NULL)
#endif
#if UNIT_V(FFN) >= 106
        FFN_API_106(UNIT_FN)
#else
        FFN_API_106(UNIT_NULL)
#endif
#if UNIT_V(FFN) >= 107
        FFN_API_107(UNIT_FN)
#else
        FFN_API_107(UNIT_NULL)
#endif
#if UNIT_V(FFN) >= 200
        FFN_API_200(UNIT_FN)
#else
        FFN_API_200(UNIT_NULL)
#endif
    };
    return &u;
}
#endif

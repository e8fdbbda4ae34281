/* tests/unit.c - pe.h and ffn.h compiled once for a build.

   As is, it is the implementation the test programs (tests/test_*.c) and the fuzz
   driver link against, so that each build configuration compiles the kernels once:
      cc -O2 -c tests/unit.c && cc -O2 tests/test_golden.c unit.o -lm
   and, built -fPIC -shared, the build/libpeffn.so that bench/bench_torch.py loads.
   With -DUNIT_GETTER=name it is a private copy (PE_STATIC, FFN_STATIC) behind a table
   of function pointers returned by name() (tests/unit.h), for programs that run two
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

const unit *UNIT_GETTER(void)
{
    static const unit u = {
        UNIT_FLAGS, UNIT_OPENMP,
        pe_status_string, pe_path, pe_set_path, pe_path_name,
        pe_sinusoidal_table, pe_sinusoidal_table_exact, pe_sinusoidal_table_fast,
        pe_add_batch_first, pe_add_batch_first_inplace,
        pe_add_seq_first, pe_add_seq_first_inplace, pe_embed, pe_embed_i64,
        ffn_status_string, ffn_path, ffn_set_path, ffn_path_name,
        ffn_linear, ffn_relu, ffn_block_scratch_floats, ffn_block,
        ffn_pack_floats, ffn_pack_weight, ffn_linear_packed, ffn_block_packed,
#if FFN_VERSION_MAJOR * 100 + FFN_VERSION_MINOR >= 105  /* (bench PREV= builds older ones) */
        ffn_activation, ffn_block_act, ffn_block_act_packed,
        ffn_gated_scratch_floats, ffn_gated, ffn_gated_packed, ffn_pack_weight_in_out,
#else
        NULL, NULL, NULL, NULL, NULL, NULL, NULL,
#endif
#if FFN_VERSION_MAJOR * 100 + FFN_VERSION_MINOR >= 106
        ffn_linear_backward_scratch_floats, ffn_linear_backward,
#else
        NULL, NULL,
#endif
#if PE_VERSION_MAJOR * 100 + PE_VERSION_MINOR >= 103
        pe_rope_inv_freq, pe_rope_cache, pe_rope_apply, pe_rope_apply_direct,
#else
        NULL, NULL, NULL, NULL,
#endif
#if FFN_VERSION_MAJOR * 100 + FFN_VERSION_MINOR >= 107
        ffn_block_backward_scratch_floats, ffn_block_act_backward,
        ffn_gated_backward_scratch_floats, ffn_gated_backward,
#else
        NULL, NULL, NULL, NULL,
#endif
#if PE_VERSION_MAJOR * 100 + PE_VERSION_MINOR >= 104
        pe_add_batch_first_backward, pe_add_seq_first_backward, pe_embed_backward,
        pe_embed_i64_backward, pe_rope_apply_backward, pe_rope_apply_direct_backward,
#else
        NULL, NULL, NULL, NULL, NULL, NULL,
#endif
#if PE_VERSION_MAJOR * 100 + PE_VERSION_MINOR >= 103
        pe_alibi_bias, pe_timestep_embedding
#else
        NULL, NULL
#endif
    };
    return &u;
}
#endif

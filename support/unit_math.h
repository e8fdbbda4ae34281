/* support/unit_math.h - the headers' own math functions (private, static in pe.h and ffn.h),
   exported by support/unit.c for the fuzz driver's formulas and tests/test_math.c: the very
   functions tools/exhaustive.c checks over every float input, so that those formulas are
   the documented ones on every platform (the C library's would not be). */
#ifndef SUPPORT_UNIT_MATH_H
#define SUPPORT_UNIT_MATH_H

float unit_ffn_erff(float x);
float unit_ffn_tanhf(float x);
float unit_ffn_expf(float x);
float unit_ffn_fmaf(float a, float b, float c);
unsigned unit_ffn_f32_16(int dt, float v);   /* ffn.h's rounding to FFN_BF16 or FFN_F16 */
float unit_ffn_expf_slow(float x);
float unit_ffn_tanhf_slow(float x);
float unit_ffn_erff_slow(float x);
double unit_pe_sin(double x);
double unit_pe_cos(double x);
double unit_pe_exp(double x);
double unit_pe_log(double x);
double unit_pe_log2(double x);
double unit_pe_pow(double x, double y);
double unit_pe_sqrt(double x);
float unit_pe_sinf(float a);
float unit_pe_cosf(float a);
float unit_pe_expf(float a);
float unit_pe_powf(float x, float y);
void unit_pe_sincos_d2f(double x, float *s, float *c);

#endif /* SUPPORT_UNIT_MATH_H */

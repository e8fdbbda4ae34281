/* fuzz/impl_scalar.c - the headers' plain C path, the readable specification. */
#ifndef PE_NO_SIMD
#define PE_NO_SIMD
#endif
#ifndef FFN_NO_SIMD
#define FFN_NO_SIMD
#endif
#define FZ_IMPL_GETTER fz_impl_scalar
#define FZ_IMPL_NAME "scalar"
#include "impl_paths.inc"

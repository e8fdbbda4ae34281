/* bench/impl_scalar.c - the libraries' plain C path (the readable specification). */
#define FFN_NO_SIMD
#define PE_NO_SIMD
#define BENCH_IMPL_GETTER bench_impl_scalar
#define BENCH_IMPL_NAME "scalar"
#include "impl_paths.inc"

/* bench/impl_fast.c - the libraries' default path (whatever SIMD the compiler flags
   enable, OpenMP if compiled with -fopenmp). */
#define BENCH_IMPL_GETTER bench_impl_fast
#define BENCH_IMPL_NAME "fast"
#include "impl_paths.inc"

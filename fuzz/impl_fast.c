/* fuzz/impl_fast.c - the headers' default path (the SIMD the compiler flags enable). */
#define FZ_IMPL_GETTER fz_impl_fast
#define FZ_IMPL_NAME "fast"
#include "impl_paths.inc"

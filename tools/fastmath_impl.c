/* tools/fastmath_impl.c - one copy of pe.h + ffn.h for tools/fastmath_check.c, compiled
   with -DFM_GETTER=fm_impl_strict (strict flags) or -DFM_GETTER=fm_impl_fastmath
   (-ffast-math). */
#define FZ_IMPL_GETTER FM_GETTER
#define FZ_IMPL_NAME "fastmath-check"
#include "../fuzz/impl_paths.inc"

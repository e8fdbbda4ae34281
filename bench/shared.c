/* bench/shared.c - both libraries, default path, as one shared object
   (build/libpeffn.so): bench_torch.py loads it with ctypes to run ffn.h and pe.h in
   the same process as torch, their repeats interleaved with torch's. */
#define FFN_IMPLEMENTATION
#define PE_IMPLEMENTATION
#include "../ffn.h"
#include "../pe.h"

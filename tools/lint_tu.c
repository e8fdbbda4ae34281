/* tools/lint_tu.c - the translation unit clang-tidy analyses for `make lint`: both
   headers with their implementations (tools/lint.sh compiles it once per code path). */
#define PE_IMPLEMENTATION
#include "../pe.h"
#define FFN_IMPLEMENTATION
#include "../ffn.h"

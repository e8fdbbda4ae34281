#!/bin/sh
# check_headers.sh COMPILER c|c++ - compile pe.h and ffn.h (and the tests' npy.h) each ALONE
# in a translation unit (the source comes from stdin, so nothing else is in it),
# declarations only and with the implementation, for every code path the compiler can
# build here, with the strict warning set a user's -Werror build may use (WARN below: the
# headers promise to compile warning-free under it), as C99 (c) or C++11 (c++); and that
# FFN_WARN_DEPRECATED makes a call of a 1.x function warn.
# Run from the repo root.
# Prints one line per compile and `N passed, N failed`; a missing compiler is a SKIP.
cc=$1
lang=$2
case $lang in
  c)   std="-x c -std=c99" ;;
  c++) std="-x c++ -std=c++11" ;;
  *)   echo "usage: $0 COMPILER c|c++"; exit 2 ;;
esac
if ! command -v "$cc" >/dev/null 2>&1; then
  echo "SKIP $cc not found"
  exit 0
fi

# A build the compiler cannot do here (no -march=native, no omp.h) is reported and skipped.
WARN="-Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion -Wshadow -Wfloat-equal
      -Wdouble-promotion -Wcast-qual -Werror"
passed=0
failed=0
for path in scalar baseline o0 fixed native openmp deprecated; do
  case $path in
    scalar)   flags="-O2 -DPE_NO_SIMD -DFFN_NO_SIMD"; probe='#include <stddef.h>' ;;
    baseline) flags="-O2"; probe='#include <stddef.h>' ;;
    # (at -O0 gcc's intrinsics with immediates are macros, whose casts warn in user code)
    o0)       flags="-O0 -march=native"; probe='#include <stddef.h>' ;;
    fixed)    flags="-O2 -DPE_NO_RUNTIME_DISPATCH -DFFN_NO_RUNTIME_DISPATCH"; probe='#include <stddef.h>' ;;
    native)   flags="-O2 -march=native"; probe='#include <stddef.h>' ;;
    openmp)   flags="-O2 -march=native -fopenmp"; probe='#include <omp.h>' ;;
    deprecated) flags="-O2 -DFFN_WARN_DEPRECATED"; probe='#include <stddef.h>' ;;
  esac
  # shellcheck disable=SC2086
  if ! echo "$probe" | $cc $std $flags -c - -o /dev/null >/dev/null 2>&1; then
    echo "skip $cc $lang [$flags]: not supported by this compiler here"
    continue
  fi
  for h in PE:pe.h FFN:ffn.h NPY:support/npy.h; do
    prefix=${h%%:*}
    file=${h#*:}
    for impl in 0 1; do
      # shellcheck disable=SC2086
      if { if [ $impl = 1 ]; then printf '#define %s_IMPLEMENTATION\n' "$prefix"; fi
           printf '#include "%s"\n' "$file"; } |
         $cc $std $WARN $flags -I. -c - -o /dev/null; then
        echo "ok   $cc $lang $file implementation=$impl [$flags]"
        passed=$((passed + 1))
      else
        echo "FAIL $cc $lang $file implementation=$impl [$flags]"
        failed=$((failed + 1))
      fi
    done
  done
done
# ... and with FFN_WARN_DEPRECATED a call of a 1.x function warns, naming its 2.0 form.
if printf '#define FFN_WARN_DEPRECATED\n#include "ffn.h"\n%s\n' \
       'int f(float *y) { return ffn_block_packed(y, y, y, 0, y, 0, 1, 1, 1, y, 1); }' |
   $cc $std -I. -c - -o /dev/null 2>&1 | grep -q "ffn_block_packed.*deprecated.*use ffn_mlp_forward"; then
  echo "ok   $cc $lang FFN_WARN_DEPRECATED: ffn_block_packed warns, names ffn_mlp_forward"; passed=$((passed + 1))
else
  echo "FAIL $cc $lang FFN_WARN_DEPRECATED: no warning naming ffn_mlp_forward at ffn_block_packed"; failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]

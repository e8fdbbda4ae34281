#!/bin/sh
# tools/lint.sh - `make lint`: cppcheck and clang-tidy report nothing.
#
# What is checked, and how (the chosen checks):
#  cppcheck (--enable=warning,style,performance,portability, C99, --inline-suppr)
#    pe.h and ffn.h with their implementations, once per build:
#      scalar (PE_NO_SIMD FFN_NO_SIMD), x86 run-time dispatch (gcc), x86 flags AVX2+FMA
#      (dispatch too) and AVX-512 (no dispatch), aarch64 NEON, 32-bit ARM NEON,
#      OpenMP + AVX2
#    fuzz/*.c, tools/*.c and examples/*.c (the harnesses of this directory and the
#    examples; the headers not re-reported)
#    Suppressed, each for a reason that holds for every hit:
#      missingIncludeSystem  cppcheck is not given the system headers (immintrin.h ...)
#      moduloofone:ffn.h     AVX-512 kernels: j % FFN__NV with one vector per 16-float panel
#                            row; the expression is generic over the vector width
#      unreadVariable:pe.h   OpenMP only: big_ is read by _Pragma("omp parallel for if
#                            (big_)"), which cppcheck does not parse
#  clang-tidy (the checks and the reasons are in .clang-tidy; warnings are errors)
#    tests/unit.c (pe.h + ffn.h with implementations) per build: scalar, dispatch (no
#    flags), AVX2, AVX-512, OpenMP, aarch64 NEON (--target=aarch64-linux-gnu)
cd "$(dirname "$0")/.." || exit 2
sh tools/need.sh cppcheck=cppcheck clang-tidy=clang-tidy || exit 1

B=build/lint
mkdir -p $B
fails=0

CPPCHECK="cppcheck -q --language=c --std=c99 --enable=warning,style,performance,portability
  --inline-suppr --error-exitcode=1 --suppress=missingIncludeSystem"
paths="scalar:-DPE_NO_SIMD -DFFN_NO_SIMD
dispatch:-D__x86_64__ -D__SSE2__ -D__GNUC__=12 -D__GNUC_MINOR__=2 -D__ATOMIC_RELAXED=0
avx2:-D__x86_64__ -D__SSE2__ -D__AVX__ -D__AVX2__ -D__FMA__
avx512:-D__x86_64__ -D__SSE2__ -D__AVX__ -D__AVX2__ -D__FMA__ -D__AVX512F__
neon:-D__aarch64__ -D__ARM_NEON
neon32:-D__arm__ -D__ARM_NEON
openmp:-D_OPENMP=201511 -D__x86_64__ -D__SSE2__ -D__AVX__ -D__AVX2__ -D__FMA__"
echo "$paths" > $B/paths
while IFS=: read -r name defs; do
    for h in pe ffn; do
        H=$(echo $h | tr a-z A-Z)
        extra=""
        case $name in avx512|dispatch) [ $h = ffn ] && extra="--suppress=moduloofone:ffn.h" ;; esac
        [ $name = openmp ] && [ $h = pe ] && extra="--suppress=unreadVariable:pe.h"
        # shellcheck disable=SC2086
        if $CPPCHECK -D${H}_IMPLEMENTATION $defs $extra $h.h > $B/cppcheck-$h-$name.log 2>&1; then
            echo "PASS cppcheck $h.h [$name]"
        else
            echo "FAIL cppcheck $h.h [$name]:"
            sed 's/^/     /' $B/cppcheck-$h-$name.log | head -30
            fails=$((fails + 1))
        fi
    done
done < $B/paths
# shellcheck disable=SC2086
if $CPPCHECK -D__GNUC__ --suppress='*:pe.h' --suppress='*:ffn.h' --suppress='*:tests/npy.h' \
        -I fuzz -I . fuzz/*.c tools/*.c examples/*.c > $B/cppcheck-harness.log 2>&1; then
    echo "PASS cppcheck fuzz/*.c tools/*.c examples/*.c"
else
    echo "FAIL cppcheck fuzz/*.c tools/*.c examples/*.c:"
    sed 's/^/     /' $B/cppcheck-harness.log | head -30
    fails=$((fails + 1))
fi

tidy_paths="scalar:-DPE_NO_SIMD -DFFN_NO_SIMD
dispatch:
avx2:-mavx2 -mfma
avx512:-mavx512f -mavx2 -mfma
openmp:-fopenmp -mavx2 -mfma
neon:--target=aarch64-linux-gnu -isystem /usr/aarch64-linux-gnu/include"
echo "$tidy_paths" > $B/tidy_paths
while IFS=: read -r name flags; do
    if [ $name = neon ] && [ ! -d /usr/aarch64-linux-gnu/include ]; then
        sh tools/need.sh /usr/aarch64-linux-gnu/include/stdio.h=libc6-dev-arm64-cross || { fails=$((fails + 1)); continue; }
    fi
    # shellcheck disable=SC2086
    clang-tidy --quiet tests/unit.c -- -std=c99 -I. $flags > $B/tidy-$name.log 2>&1
    if [ $? = 0 ] && ! grep -q -E '(warning|error):' $B/tidy-$name.log; then
        echo "PASS clang-tidy pe.h ffn.h [$name]"
    else
        echo "FAIL clang-tidy pe.h ffn.h [$name]:"
        grep -E '(warning|error):' $B/tidy-$name.log | sed 's|^.*/\([a-z_]*\.h\)|\1|; s/^/     /' | sort -u | head -30
        fails=$((fails + 1))
    fi
done < $B/tidy_paths

if [ $fails = 0 ]; then
    echo "lint: cppcheck and clang-tidy report nothing"
else
    echo "lint: FAILED ($fails)"
    exit 1
fi

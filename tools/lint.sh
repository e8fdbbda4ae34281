#!/bin/sh
# tools/lint.sh - `make lint`: cppcheck and clang-tidy report nothing.
#
# What is checked, and how (the chosen checks):
#  cppcheck (--enable=warning,style,performance,portability, C99, --inline-suppr)
#    pe.h and ffn.h with their implementations, once per build:
#      scalar (PE_NO_SIMD FFN_NO_SIMD), x86 run-time dispatch (gcc: every x86 kernel),
#      OpenMP + AVX2+FMA flags, aarch64 NEON, 32-bit ARM NEON
#    fuzz/*.c, tools/*.c and examples/*.c (the harnesses of this directory and the
#    examples; the headers not re-reported)
#    Suppressed, each for a reason that holds for every hit:
#      missingIncludeSystem  cppcheck is not given the system headers (immintrin.h ...)
#      moduloofone:ffn.h     AVX-512 kernels: j % FFN__NV with one vector per 16-float panel
#                            row; the expression is generic over the vector width
#      unreadVariable:pe.h   OpenMP only: big_ is read by _Pragma("omp parallel for if
#                            (big_)"), which cppcheck does not parse
#  clang-tidy (the checks and the reasons are in .clang-tidy; warnings are errors)
#    support/unit.c (pe.h + ffn.h with implementations) per build: scalar, dispatch (no
#    flags), AVX-512 flags, OpenMP + AVX2+FMA flags, aarch64 NEON (--target=aarch64-linux-gnu)
# LINT_CI=1 (CI) leaves out cppcheck of ffn.h's SIMD builds (dispatch, openmp, neon,
# neon32): each expands the tile template for 3 weight types and many shapes, and took 20
# to 30+ minutes on a 2-core Zen 3 VM; clang-tidy still reads those builds, and make
# check-all runs them.
# The checks run LINT_JOBS at a time (default: the number of cores), slowest first; the
# reports print in a fixed order.
cd "$(dirname "$0")/.." || exit 2
B=build/lint
CPPCHECK="cppcheck -q --language=c --std=c99 --enable=warning,style,performance,portability
  --inline-suppr --error-exitcode=1 --suppress=missingIncludeSystem"
cpp_defs() {
    case $1 in
    scalar) echo "-DPE_NO_SIMD -DFFN_NO_SIMD" ;;
    dispatch) echo "-D__x86_64__ -D__SSE2__ -D__GNUC__=12 -D__GNUC_MINOR__=2 -D__ATOMIC_RELAXED=0" ;;
    neon) echo "-D__aarch64__ -D__ARM_NEON" ;;
    neon32) echo "-D__arm__ -D__ARM_NEON" ;;
    openmp) echo "-D_OPENMP=201511 -D__x86_64__ -D__SSE2__ -D__AVX__ -D__AVX2__ -D__FMA__" ;;
    esac
}
tidy_flags() {
    case $1 in
    scalar) echo "-DPE_NO_SIMD -DFFN_NO_SIMD" ;;
    avx512) echo "-mavx512f -mavx2 -mfma" ;;
    openmp) echo "-fopenmp -mavx2 -mfma" ;;
    neon) echo "--target=aarch64-linux-gnu -isystem /usr/aarch64-linux-gnu/include" ;;
    esac
}

# One check (`lint.sh job KIND HEADER PATH`, - for none): its log in $B, its report in
# $B/KIND-HEADER-PATH.txt: PASS, or FAIL and the report's first 30 lines (verdict).
verdict() { # STATUS WHAT REPORT
    if [ "$1" = 0 ]; then echo "PASS $2"; else echo "FAIL $2:"; sed 's/^/     /' "$3" | head -30; fi
}
if [ "$1" = job ]; then
    kind=$2 h=$3 name=$4
    case $kind in
    cppcheck)
        H=$(echo "$h" | tr a-z A-Z) extra=""
        case $name in dispatch) [ "$h" = ffn ] && extra="--suppress=moduloofone:ffn.h" ;; esac
        [ "$name" = openmp ] && [ "$h" = pe ] && extra="--suppress=unreadVariable:pe.h"
        log=$B/cppcheck-$h-$name.log
        # shellcheck disable=SC2046,SC2086
        $CPPCHECK -D"${H}_IMPLEMENTATION" $(cpp_defs "$name") $extra "$h.h" > "$log" 2>&1
        verdict $? "cppcheck $h.h [$name]" "$log" ;;
    harness)
        log=$B/cppcheck-harness.log
        # shellcheck disable=SC2086
        $CPPCHECK -D__GNUC__ --suppress='*:pe.h' --suppress='*:ffn.h' --suppress='*:support/npy.h' \
            -I fuzz -I . fuzz/*.c tools/*.c examples/*.c > "$log" 2>&1
        verdict $? "cppcheck fuzz/*.c tools/*.c examples/*.c" "$log" ;;
    tidy)
        log=$B/tidy-$name.log
        # shellcheck disable=SC2046
        clang-tidy --quiet support/unit.c -- -std=c99 -I. $(tidy_flags "$name") > "$log" 2>&1
        st=$?   # (its warnings, each once, with the header's name only)
        grep -E '(warning|error):' "$log" | sed 's|^.*/\([a-z_]*\.h\)|\1|' | sort -u > "$log.w"
        [ -s "$log.w" ] && st=1
        verdict $st "clang-tidy pe.h ffn.h [$name]" "$log.w" ;;
    esac > "$B/$kind-$h-$name.txt"
    exit 0
fi

sh tools/need.sh cppcheck=cppcheck clang-tidy=clang-tidy || exit 1
sh tools/need.sh /usr/aarch64-linux-gnu/include/stdio.h=libc6-dev-arm64-cross || exit 1
mkdir -p $B
rm -f $B/*.txt
# slowest first (measured), so that the last to start are short
jobs="cppcheck ffn neon
cppcheck ffn dispatch
cppcheck ffn openmp
tidy - neon
tidy - openmp
tidy - avx512
tidy - dispatch
tidy - scalar"
for name in scalar dispatch neon neon32 openmp; do
    jobs="$jobs
cppcheck pe $name"
done
jobs="$jobs
cppcheck ffn neon32
cppcheck ffn scalar
harness - -"
if [ "${LINT_CI:-0}" = 1 ]; then
    jobs=$(echo "$jobs" | grep -v -e '^cppcheck ffn \(dispatch\|openmp\|neon\|neon32\)$')
    echo "SKIP cppcheck ffn.h [dispatch openmp neon neon32]: LINT_CI=1 (make check-all runs them)"
fi
echo "$jobs" | xargs -P "${LINT_JOBS:-$(nproc 2>/dev/null || echo 2)}" -L 1 sh tools/lint.sh job
fails=0
for f in $(echo "$jobs" | sort | tr ' ' '-'); do
    f=$B/$f.txt
    if [ ! -f "$f" ]; then echo "FAIL: no report $f"; fails=$((fails + 1)); continue; fi
    cat "$f"
    grep -q '^FAIL' "$f" && fails=$((fails + 1))
done

if [ $fails = 0 ]; then
    echo "lint: cppcheck and clang-tidy report nothing"
else
    echo "lint: FAILED ($fails)"
    exit 1
fi

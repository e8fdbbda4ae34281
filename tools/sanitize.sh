#!/bin/sh
# tools/sanitize.sh - `make sanitize`: the whole suite (tools/suite.sh) in each
# configuration of TABLE below, any report fatal (-fno-sanitize-recover=all, leaks
# included). clang-dispatch has no -march: the kernels built by target attributes, the
# path chosen by cpuid. clang-integer: unsigned wrap and lossy implicit conversions are
# not undefined behaviour, so reported, not fatal; it fails only on a report inside pe.h
# or ffn.h (the test harnesses' PRNGs wrap on purpose). clang-tsan: threads racing
# through their first call (the cached choice of path), ffn.h on a pthreads pool of the
# test's (lent and taken back while other threads call), and the error checks.
#   SANITIZE_CONFIGS="clang-native clang-tsan"  a subset
cd "$(dirname "$0")/.." || exit 2
. tools/suite.sh

B=build/sanitize
SUITE_PARTS="golden errors paths threads schedule math npy fuzz"
F="-std=c99 -O1 -g -Wall -Wextra"
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
TABLE="
clang-native   | clang | $F -march=native $SAN
clang-dispatch | clang | $F $SAN
clang-scalar   | clang | $F -DPE_NO_SIMD -DFFN_NO_SIMD $SAN
gcc-openmp     | gcc   | $F -march=native -fopenmp $SAN | OMP_NUM_THREADS=3
clang-integer  | clang | $F -march=native -fsanitize=unsigned-integer-overflow,implicit-conversion | UBSAN_OPTIONS=print_stacktrace=0:halt_on_error=0
clang-tsan     | clang | $F -fsanitize=thread | TSAN_OPTIONS=halt_on_error=1 | threads errors"
# clang's runtime libraries (Debian: libclang-rt-NN-dev)
sh tools/need.sh clang=clang && sh tools/need.sh "$(clang -print-resource-dir)/lib/linux/libclang_rt.asan-$(uname -m).a=libclang-rt-$(clang -dumpversion | cut -d. -f1)-dev" || exit 1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

config() {
    if [ "$name" = clang-integer ]; then
        suite_test
        hits=$(cat "$out"/*.log | grep 'runtime error' | grep -E '(^|/)(pe|ffn)\.h:' | sort -u)
        [ -z "$hits" ] && echo "PASS $name: no integer wrap or lossy implicit conversion inside pe.h / ffn.h" && return
        echo "$hits" | head -20
        echo "FAIL $name: reports inside pe.h / ffn.h (above)"
        return 1
    fi
    suite_test || return 1
    # a report that did not stop the program (should not happen with these options)
    ! grep -h -m 3 -E 'ERROR: (Address|Leak)Sanitizer|WARNING: ThreadSanitizer|runtime error:' "$out"/*.log
}

# shellcheck disable=SC2046
suite_configs sanitize "" ${SANITIZE_CONFIGS:-$(suite_names)}
suite_verdict "no sanitizer report in $SUITE_N configurations"

#!/bin/sh
# tools/sanitize.sh - `make sanitize`: the whole suite (tools/suite.sh: golden, errors,
# test_ffn_paths, threads, npy, fuzz corpus replay; each on every path the build and
# CPU run) under AddressSanitizer + UndefinedBehaviorSanitizer, any report fatal
# (-fno-sanitize-recover=all, leaks included):
#   clang-native   clang -O1 -march=native
#   clang-dispatch clang -O1 (no -march: the kernels built by target attributes, the
#                  path chosen by cpuid)
#   clang-scalar   clang -O1 -DPE_NO_SIMD -DFFN_NO_SIMD
#   gcc-openmp     gcc -O1 -march=native -fopenmp, OMP_NUM_THREADS=3 (gcc's sanitizers)
#   clang-integer  clang -fsanitize=unsigned-integer-overflow,implicit-conversion (not
#                  undefined behaviour, so reported, not fatal): fails only on a report
#                  inside pe.h or ffn.h (the test harnesses' PRNGs wrap on purpose)
# and ThreadSanitizer:
#   clang-tsan     clang -O1 -fsanitize=thread: threads racing through their first call
#                  (the cached choice of path) and the error checks
cd "$(dirname "$0")/.." || exit 2
. tools/suite.sh

B=build/sanitize
CONFIGS=${SANITIZE_CONFIGS:-"clang-native clang-dispatch clang-scalar gcc-openmp clang-integer clang-tsan"}
sh tools/need.sh clang=clang gcc=gcc || exit 1
# clang's runtime libraries (Debian: libclang-rt-NN-dev)
sh tools/need.sh "$(clang -print-resource-dir)/lib/linux/libclang_rt.asan-$(uname -m).a=libclang-rt-$(clang -dumpversion | cut -d. -f1)-dev" || exit 1

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
fails=0
summary=""
for c in $CONFIGS; do
    env=""
    parts="golden errors paths threads npy fuzz"
    case $c in
    clang-native) cc=clang; fl="-march=native $SAN" ;;
    clang-dispatch) cc=clang; fl="$SAN" ;;
    clang-tsan) cc=clang; fl="-fsanitize=thread"; parts="threads errors"
        env="TSAN_OPTIONS=halt_on_error=1" ;;
    clang-scalar) cc=clang; fl="-DPE_NO_SIMD -DFFN_NO_SIMD $SAN" ;;
    gcc-openmp) cc=gcc; fl="-march=native -fopenmp $SAN"; env="OMP_NUM_THREADS=3" ;;
    clang-integer) cc=clang; fl="-march=native -fsanitize=unsigned-integer-overflow,implicit-conversion" ;;
    *) echo "sanitize: unknown config $c"; exit 2 ;;
    esac
    out=$B/$c
    t0=$(date +%s)
    if ! SUITE_PARTS=$parts suite_build "$out" "$cc" "-std=c99 -O1 -g -Wall -Wextra $fl" "$fl -lm"; then
        echo "FAIL $c: build failed:"
        sed -n '1,30p' "$out/build.log"
        fails=$((fails + 1))
        continue
    fi
    if [ $c = clang-integer ]; then
        res=$(UBSAN_OPTIONS=print_stacktrace=0:halt_on_error=0 SUITE_PARTS=$parts suite_run "$c" "$out" "" "$env")
        n=$?
        hits=$(cat "$out"/*.log | grep 'runtime error' | grep -E '(^|/)(pe|ffn)\.h:' | sort -u)
        if [ -n "$hits" ]; then
            echo "$hits" | head -20
            n=$((n + 1))
        fi
        res="$res
$( [ -z "$hits" ] && echo "PASS $c: no integer wrap or lossy implicit conversion inside pe.h / ffn.h" || echo "FAIL $c: reports inside pe.h / ffn.h (above)")"
    else
        res=$(SUITE_PARTS=$parts suite_run "$c" "$out" "" "$env")
        n=$?
        # a report that did not stop the program (should not happen with these options)
        if grep -l -E 'ERROR: (Address|Leak)Sanitizer|WARNING: ThreadSanitizer|runtime error:' "$out"/*.log >/dev/null 2>&1; then
            grep -h -m 3 -E 'ERROR: (Address|Leak)Sanitizer|WARNING: ThreadSanitizer|runtime error:' "$out"/*.log
            n=$((n + 1))
        fi
    fi
    echo "$res"
    fails=$((fails + n))
    summary="$summary
$( [ $n = 0 ] && echo PASS || echo FAIL ) $c ($cc $fl, $(($(date +%s) - t0)) s)"
done
echo "== sanitize summary"
echo "$summary" | sed '/^$/d'
if [ $fails = 0 ]; then
    echo "sanitize: no sanitizer report in $(echo $CONFIGS | wc -w) configurations"
else
    echo "sanitize: FAILED ($fails)"
    exit 1
fi

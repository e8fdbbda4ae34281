#!/bin/sh
# tools/fuzz.sh - `make fuzz`: build the libFuzzer binary of fuzz/fuzz.c once (clang,
# ASan + UBSan; every input compares a path of this CPU with the scalar path) and run
# each target (FZ_TARGET=<name>) for a bounded time.
#
#   FUZZ_SECONDS  seconds per target (default 60)
#   FUZZ_JOBS     targets fuzzed at the same time (default: the number of CPUs)
#   FUZZ_TARGETS  a subset of the targets (default: all, `build/fuzz/fuzz --list`)
#   FUZZ_ARCH     ISA flags (default none: the paths are chosen at run time)
#   FUZZ_CC       clang (default clang)
#
# The seed corpus fuzz/corpus/<target>/ is read, never written; what the fuzzer finds
# goes to build/fuzz/corpus/<target>/, crash reproducers to build/fuzz/artifacts/.
# Prints one line per target (execs, coverage, corpus) and exits non-zero on any finding.
cd "$(dirname "$0")/.." || exit 2
. tools/suite.sh

FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_JOBS=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
FUZZ_ARCH=${FUZZ_ARCH:-}
FUZZ_CC=${FUZZ_CC:-clang}
B=build/fuzz

sh tools/need.sh "$FUZZ_CC=clang" || exit 1
# libFuzzer's runtime (Debian: libclang-rt-NN-dev; older releases ship it in libclang-common)
ver=$($FUZZ_CC -dumpversion | cut -d. -f1)
sh tools/need.sh "$($FUZZ_CC -print-resource-dir)/lib/linux/libclang_rt.fuzzer-$(uname -m).a=libclang-rt-$ver-dev" ||
    { echo "fuzz: $FUZZ_CC cannot link -fsanitize=fuzzer (install libclang-rt-$ver-dev)"; exit 1; }

mkdir -p $B/corpus $B/artifacts $B/logs
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
CFLAGS="-std=c99 -g -O1 $FUZZ_ARCH $SAN -Wall -Wextra -Werror"

echo "fuzz: building $B/fuzz with $FUZZ_CC $FUZZ_ARCH (ASan + UBSan)"
# shellcheck disable=SC2086
{ $FUZZ_CC $CFLAGS -fsanitize=fuzzer-no-link -c support/unit.c -o $B/unit.o &&
  $FUZZ_CC $CFLAGS -DFZ_LIBFUZZER -fsanitize=fuzzer fuzz/fuzz.c $B/unit.o -o $B/fuzz -lm
} > $B/logs/build.log 2>&1 ||
    { echo "fuzz: BUILD FAILED:"; cat $B/logs/build.log; echo "fuzz: FAILED to build"; exit 1; }
ALL=$(./$B/fuzz --list 2>/dev/null) || { echo "fuzz: $B/fuzz --list failed"; exit 1; }
TARGETS=${FUZZ_TARGETS:-$ALL}
for t in $TARGETS; do
    echo "$ALL" | grep -qx "$t" || { echo "fuzz: no target $t (the targets: $(echo "$ALL" | tr '\n' ' '))"; exit 1; }
done

# -timeout: one input taking 10 s is a hang; -rss_limit_mb: a runaway allocation.
fuzz_target() {
    t=$1 maxlen=256
    case $t in npy|safetensors) maxlen=4096 ;; esac
    mkdir -p $B/corpus/$t fuzz/corpus/$t
    FZ_TARGET=$t ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ./$B/fuzz -max_total_time="$FUZZ_SECONDS" -max_len=$maxlen -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix=$B/artifacts/$t- $B/corpus/$t fuzz/corpus/$t > $B/logs/$t.log 2>&1
    rc=$?
    runs=$(sed -n "s/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\1 execs in \2 s/p" $B/logs/$t.log | tail -n 1)
    cov=$(grep -o "cov: [0-9]* ft: [0-9]* corp: [0-9]*" $B/logs/$t.log | tail -n 1)
    if [ $rc = 0 ] && [ -n "$runs" ]; then
        printf "PASS fuzz_%-28s %s (%s)\n" "$t" "$runs" "$cov"
        return
    fi
    art=$(ls -t $B/artifacts/$t-* 2>/dev/null | head -n 1)
    why=$(grep -m 1 -E "FUZZ CHECK FAILED|ERROR: (AddressSanitizer|libFuzzer|UndefinedBehaviorSanitizer)|runtime error|^fuzz: " $B/logs/$t.log)
    printf "FAIL fuzz_%-28s exit %s: %s\n" "$t" "$rc" "$why"
    [ -n "$art" ] && echo "     reproduce: FZ_TARGET=$t ./$B/fuzz $art   (log: $B/logs/$t.log)"
}

echo "fuzz: running each target for ${FUZZ_SECONDS}s, $FUZZ_JOBS at a time"
start=$(date +%s)
# shellcheck disable=SC2086
suite_pool "$FUZZ_JOBS" fuzz_target $TARGETS | tee $B/logs/results
if ! grep -q '^FAIL' $B/logs/results; then
    echo "fuzz: all $(echo $TARGETS | wc -w) targets passed (${FUZZ_SECONDS}s each, $(($(date +%s) - start))s wall)"
else
    echo "fuzz: FAILED (logs in $B/logs/)"
    exit 1
fi

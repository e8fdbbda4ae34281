#!/bin/sh
# tools/fuzz.sh - `make fuzz`: build every libFuzzer target (clang, ASan + UBSan, the
# fast path of this CPU compared with the scalar path) and run each for a bounded time.
#
#   FUZZ_SECONDS  seconds per target (default 60)
#   FUZZ_JOBS     targets fuzzed at the same time (default: the number of CPUs)
#   FUZZ_TARGETS  a subset of fuzz/targets.list (default: all)
#   FUZZ_ARCH     ISA flags of the fast path (default -march=native)
#   FUZZ_CC       clang (default clang)
#
# The seed corpus fuzz/corpus/<target>/ is read, never written; what the fuzzer finds
# goes to build/fuzz/corpus/<target>/, crash reproducers to build/fuzz/artifacts/.
# Prints one line per target (execs, coverage, corpus) and exits non-zero on any finding.
cd "$(dirname "$0")/.." || exit 2

FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_JOBS=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
FUZZ_ARCH=${FUZZ_ARCH:--march=native}
FUZZ_CC=${FUZZ_CC:-clang}
B=build/fuzz
TARGETS=${FUZZ_TARGETS:-$(grep -v '^#' fuzz/targets.list)}

sh tools/need.sh "$FUZZ_CC=clang" || exit 1
# libFuzzer's runtime (Debian: libclang-rt-NN-dev; older releases ship it in libclang-common)
ver=$($FUZZ_CC -dumpversion | cut -d. -f1)
sh tools/need.sh "$($FUZZ_CC -print-resource-dir)/lib/linux/libclang_rt.fuzzer-$(uname -m).a=libclang-rt-$ver-dev" ||
    { echo "fuzz: $FUZZ_CC cannot link -fsanitize=fuzzer (install libclang-rt-$ver-dev)"; exit 1; }

mkdir -p $B/obj $B/corpus $B/artifacts $B/logs
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
CFLAGS="-std=c99 -g -O1 $FUZZ_ARCH $SAN -Wall -Wextra -Werror"

echo "fuzz: building $(echo $TARGETS | wc -w) targets with $FUZZ_CC $FUZZ_ARCH (ASan + UBSan)"
# The two library copies, with fuzzer coverage instrumentation (their branches guide it).
for s in impl_fast impl_scalar; do
    if [ ! -e $B/obj/$s.o ] || [ fuzz/$s.c -nt $B/obj/$s.o ] || [ pe.h -nt $B/obj/$s.o ] || [ ffn.h -nt $B/obj/$s.o ] ||
       [ fuzz/impl_paths.inc -nt $B/obj/$s.o ]; then
        $FUZZ_CC $CFLAGS -fsanitize=fuzzer-no-link -c fuzz/$s.c -o $B/obj/$s.o || exit 1
    fi
done
failed_build=0
for t in $TARGETS; do
    printf '%s\0' "$t"
done | xargs -0 -r -n 1 -P "$FUZZ_JOBS" sh -c '
    t=$1
    extra="'"$B"'/obj/impl_fast.o '"$B"'/obj/impl_scalar.o"
    [ "$t" = npy ] && extra=
    '"$FUZZ_CC $CFLAGS"' -fsanitize=fuzzer fuzz/fuzz_$t.c $extra -o '"$B"'/fuzz_$t -lm \
        > '"$B"'/logs/build_$t.log 2>&1 || { echo "fuzz: BUILD FAILED fuzz_$t:"; cat '"$B"'/logs/build_$t.log; exit 1; }' sh \
    || failed_build=1
[ $failed_build = 0 ] || { echo "fuzz: FAILED to build"; exit 1; }

echo "fuzz: running each target for ${FUZZ_SECONDS}s, $FUZZ_JOBS at a time"
start=$(date +%s)
for t in $TARGETS; do
    printf '%s\0' "$t"
done | xargs -0 -r -n 1 -P "$FUZZ_JOBS" sh -c '
    t=$1 B='"$B"'
    mkdir -p $B/corpus/$t fuzz/corpus/$t
    maxlen=256; [ "$t" = npy ] && maxlen=4096
    # -timeout: one input taking 10 s is a hang; -rss_limit_mb: a runaway allocation.
    ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ./$B/fuzz_$t -max_total_time='"$FUZZ_SECONDS"' -max_len=$maxlen -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=$B/artifacts/$t- \
        $B/corpus/$t fuzz/corpus/$t > $B/logs/$t.log 2>&1
    rc=$?
    runs=$(sed -n "s/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\1 execs in \2 s/p" $B/logs/$t.log | tail -n 1)
    cov=$(grep -o "cov: [0-9]* ft: [0-9]* corp: [0-9]*" $B/logs/$t.log | tail -n 1)
    if [ $rc = 0 ] && [ -n "$runs" ]; then
        printf "PASS fuzz_%-28s %s (%s)\n" "$t" "$runs" "$cov"
    else
        art=$(ls -t $B/artifacts/$t-* 2>/dev/null | head -n 1)
        why=$(grep -m 1 -E "FUZZ CHECK FAILED|ERROR: (AddressSanitizer|libFuzzer|UndefinedBehaviorSanitizer)|runtime error" $B/logs/$t.log)
        printf "FAIL fuzz_%-28s exit %s: %s\n" "$t" "$rc" "$why"
        [ -n "$art" ] && echo "     reproduce: ./$B/fuzz_$t $art   (log: $B/logs/$t.log)"
        exit 1
    fi' sh
rc=$?
end=$(date +%s)
if [ $rc = 0 ]; then
    echo "fuzz: all $(echo $TARGETS | wc -w) targets passed (${FUZZ_SECONDS}s each, $((end - start))s wall)"
else
    echo "fuzz: FAILED (logs in $B/logs/)"
    exit 1
fi

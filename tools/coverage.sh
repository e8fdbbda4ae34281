#!/bin/sh
# tools/coverage.sh - `make coverage`: line and branch coverage of pe.h and ffn.h (clang
# source-based, llvm-cov): every part of SUITE_PARTS on every path this CPU runs, in each
# configuration of TABLE below (dispatch: the x86 kernels by target attributes, chosen by
# cpuid; avx512-emu: the AVX-512 paths on SIMDe where the CPU lacks them). Not compiled on
# x86, not counted: the NEON paths (cross-test runs them) and MSVC's cpuid. Prints each
# header's line and branch percentages (the suite, then with the corpus replay), lists every
# line and branch never run, and fails below COV_MIN_LINES (99) % / COV_MIN_BRANCHES (90) %.
cd "$(dirname "$0")/.." || exit 2
. tools/suite.sh

B=build/coverage
MIN_LINES=${COV_MIN_LINES:-99}
MIN_BRANCHES=${COV_MIN_BRANCHES:-90}
VERS=$(clang -dumpversion 2>/dev/null | cut -d. -f1)
sh tools/need.sh clang=clang || exit 1
# clang's runtime libraries (Debian: libclang-rt-NN-dev)
sh tools/need.sh "$(clang -print-resource-dir)/lib/linux/libclang_rt.profile-$(uname -m).a=libclang-rt-$(clang -dumpversion | cut -d. -f1)-dev" || exit 1
# llvm-cov / llvm-profdata of clang's version (Debian: llvm-NN, a Recommends of clang)
command -v llvm-cov-$VERS >/dev/null || command -v llvm-cov >/dev/null ||
    sh tools/need.sh "llvm-cov-$VERS=llvm-$VERS" || exit 1
PROFDATA=$(command -v llvm-profdata-$VERS || command -v llvm-profdata)
LLVMCOV=$(command -v llvm-cov-$VERS || command -v llvm-cov)
[ -n "$PROFDATA" ] && [ -n "$LLVMCOV" ] || { echo "coverage: llvm-profdata/llvm-cov missing (llvm-$VERS)"; exit 1; }
# clang's OpenMP runtime for the openmp configuration (Debian: libomp-NN-dev)
probe=$(mktemp -d)
printf '#include <omp.h>\nint main(void) { return omp_get_max_threads() < 1; }\n' > "$probe/p.c"
clang -fopenmp "$probe/p.c" -o "$probe/p" >/dev/null 2>&1 ||
    sh tools/need.sh "/usr/lib/llvm-$VERS/lib/libomp.so=libomp-$VERS-dev" || { rm -rf "$probe"; exit 1; }
rm -rf "$probe"

rm -rf $B/prof && mkdir -p $B/prof
SUITE_PARTS="golden errors paths threads math fuzz"
COV="-std=c99 -O0 -g -fprofile-instr-generate -fcoverage-mapping"
# (openmp as the openmp and nontemp test variants: pe.h splits even tiny shapes among
# the threads, and writes every add and embedding with non-temporal stores)
# No AVX-512 here: the other builds leave that path out, avx512-emu runs it emulated.
EMU=""
if ! grep -qw avx512f /proc/cpuinfo 2>/dev/null; then
    sh tools/need.sh /usr/include/simde/x86/avx512.h=libsimde-dev || exit 1
    EMU="avx512-emu | clang | $COV $(suite_avx512_emu $B)"
    COV="$COV -DPE_NO_AVX512 -DFFN_NO_AVX512"
fi
TABLE="$EMU
dispatch | clang | $COV
native   | clang | $COV -march=native
scalar   | clang | $COV -DPE_NO_SIMD -DFFN_NO_SIMD
openmp   | clang | $COV -march=native -fopenmp -DPE__PARALLEL_FLOATS=0 -DPE_NONTEMPORAL_BYTES=0 | OMP_NUM_THREADS=3"
CONFIGS=$(suite_names)

# each part writes its own profiles (%p: one per process): report() tells them apart
config() {
    SUITE_PARTS=$parts suite_build "$out" "$cc" "$flags" -lm || { echo "FAIL $name: build failed ($out/build.log)"; return 1; }
    for p in $parts; do
        SUITE_PARTS=$p suite_run "$name" "$out" "" "$env LLVM_PROFILE_FILE=$B/prof/$name-$p-%p.profraw"
    done
}
# shellcheck disable=SC2086
suite_configs coverage "" $CONFIGS
[ "$SUITE_FAILS" = 0 ] || { echo "coverage: FAILED (a test failed; the figures would be wrong)"; exit 1; }

# report SET PARTS...: merge the profiles of those parts; llvm-cov's own per-file figures
# (instantiations of the same source line in different binaries are merged by llvm-cov)
report() {
    set_name=$1
    shift
    files="" objs=""
    for c in $CONFIGS; do
        for p in "$@"; do
            files="$files $(ls $B/prof/$c-$p-*.profraw)"
            if [ -z "$objs" ]; then objs="$B/$c/$p"; else objs="$objs -object $B/$c/$p"; fi
        done
    done
    # shellcheck disable=SC2086
    $PROFDATA merge -o "$B/$set_name.profdata" $files || exit 1
    # shellcheck disable=SC2086
    $LLVMCOV report $objs -instr-profile "$B/$set_name.profdata" pe.h ffn.h > "$B/$set_name.txt" || exit 1
    # shellcheck disable=SC2086
    $LLVMCOV show $objs -instr-profile "$B/$set_name.profdata" -show-branches=count pe.h ffn.h \
        > "$B/$set_name.show" || exit 1
}

# "file lines missed lines% branches missed branches%" from llvm-cov report
figures() {
    awk '$1 ~ /(^|\/)(pe|ffn)\.h$/ { f = $1; sub(".*/", "", f); print f, $8, $9, $10, $11, $12, $13 }' "$1"
}

report suite golden errors paths threads math
report all golden errors paths threads math fuzz

echo "== coverage of pe.h and ffn.h (clang $VERS source-based; configs: $CONFIGS)"
for set_name in suite all; do
    label="test suite (golden, errors, test_ffn_paths, threads, math)"
    [ $set_name = all ] && label="test suite + fuzz corpus replay"
    echo "-- $label"
    figures "$B/$set_name.txt" | while read -r f l lm lp br bm bp; do
        printf '   %-6s lines %4d/%-4d %7s   branches %4d/%-4d %7s\n' "$f" $((l - lm)) "$l" "$lp" \
            $((br - bm)) "$br" "$bp"
    done
done
# the bar applies to everything the repository's tests run (suite + corpus replay)
bad=$(figures "$B/all.txt" | tr -d '%' | awk -v ml="$MIN_LINES" -v mb="$MIN_BRANCHES" '
    { if ($4 + 0 < ml) printf "%s lines %.2f%% < %d%%\n", $1, $4, ml;
      if ($7 + 0 < mb) printf "%s branches %.2f%% < %d%%\n", $1, $7, mb }')

# Lines never run, and branch conditions with an outcome never taken, over all the
# instantiations (the same header line compiled into several binaries counts once).
echo "-- never run (test suite + corpus replay):"
awk '
    /^\/.*\.h:$/ { f = $0; sub(":$", "", f); sub(".*/", "", f); next }
    /^ *[0-9]+\| *0\|/ { split($0, a, "|"); l = a[1] + 0; print f ":" l ":0: line never run"; next }
    /Branch \(/ {
        m = $0; sub(".*Branch \\(", "", m); m = substr(m, 1, index(m, ")") - 1);
        k = f ":" m; t = $0; sub(".*True: ", "", t); e = $0; sub(".*False: ", "", e);
        seen[k] = 1; if (t + 0 > 0) T[k] = 1; if (e + 0 > 0) F[k] = 1 }
    END { for (k in seen) { if (!T[k]) print k ": condition never true";
                            if (!F[k]) print k ": condition never false" } }
' "$B/all.show" | sort -t: -k1,1 -k2,2n -k3,3n | uniq | while IFS=: read -r f l col what; do
    printf '   %s:%s:%s %-24s | %s\n' "$f" "$l" "$col" "$what" "$(sed -n "${l}p" "$f" | sed 's/^ *//' | cut -c1-60)"
done
echo "   (annotated source: $B/all.show)"
if [ -n "$bad" ]; then
    echo "$bad" | sed 's/^/coverage: BELOW THE BAR: /'
    echo "coverage: FAILED"
    exit 1
fi
echo "coverage: pe.h and ffn.h at or above ${MIN_LINES}% of lines and ${MIN_BRANCHES}% of branches"

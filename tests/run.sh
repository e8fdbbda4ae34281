#!/bin/sh
# tests/run.sh - `make test`: the suite (tools/suite.sh) in every build configuration
# below, then the checks of how the headers are included; one summary line per run,
# with the paths of pe.h and ffn.h each run covered. Needs a C compiler and make only.
#
#   make test                  CC=cc (or CC=clang, ...; builds go to build/tests/<CC>/)
#   make test MANIFEST=path    another golden manifest
#
# The jobs (`one` below): the suite in the builds scalar, default (+ threads, schedule,
# npy, fuzz), fixed, native, openmp, sanitize and avx512-emu, each part on every path the
# build and CPU have; two-tu, two-tu-cxx (the headers in two translation units, the second
# as C or C++), static (PE_STATIC/FFN_STATIC), hdr-<compiler> (each header alone:
# tests/check_headers.sh), snippets, release and house (tests/snippets.sh, check_release.sh,
# tools/house.sh), safetensors (examples/llama_mlp.c, no deprecated call, against torch's
# output, then tests/test_safetensors.c on bad files). TH_PATHS="avx2 scalar": only those
# paths. A job the compiler cannot build here is a SKIP; any FAIL makes the exit status
# non-zero.
cd "$(dirname "$0")/.." || exit 2
. tools/suite.sh

CC=${CC:-cc} CXX=${CXX:-c++}
SUITE_MANIFEST=${MANIFEST:-reference/goldens/MANIFEST.txt}
B=build/tests/$(echo "$CC" | tr ' /' '__')
W="-std=c99 -Wall -Wextra -Wpedantic -Werror"
mkdir -p "$B"

# can FLAGS: CC builds with FLAGS a program that starts OpenMP threads (when FLAGS ask for them)
# and runs it: a toolchain may link -fopenmp or -fsanitize and fail only at run time (musl-gcc: no
# libgomp or ASan runtime), and an AVX2 build needs AVX2 and FMA. One probe per job, in parallel.
can() {
    printf '%s\n' 'int main(void) { int n = 0;' '#pragma omp parallel' '{' \
        '#pragma omp atomic' 'n++;' '}' '#if defined __AVX2__ && defined __GNUC__' \
        'if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) n = 0;' \
        '#endif' 'return n < 1; }' > "$B/probe-$JOB.c"
    # shellcheck disable=SC2086
    $CC $1 "$B/probe-$JOB.c" -o "$B/probe-$JOB" > /dev/null 2>&1 && "$B/probe-$JOB" > /dev/null 2>&1
}

# Each job below writes its result lines to $B/<job>.result; `one JOB` runs one job.
record() { echo "$1" >> "$B/$JOB.result"; }

variant() { # variant "FLAGS" "ENV" "PARTS"
    if ! can "$1"; then
        record "SKIP $JOB: $CC cannot build and run $1 here"
        return
    fi
    if ! SUITE_PARTS=$3 suite_build "$B/$JOB" "$CC" "$W $1" "$1 -lm"; then
        record "FAIL $JOB: build failed ($B/$JOB/build.log)"
        return
    fi
    SUITE_PARTS=$3 suite_run "$JOB" "$B/$JOB" "" "$2" >> "$B/$JOB.result"
}

extra() {   # extra "COMMANDS": its output's last line is the result
    if sh -c "$1" > "$B/$JOB.log" 2>&1; then
        record "PASS $JOB: $(tail -n 1 "$B/$JOB.log")"
    else
        record "FAIL $JOB: $(tail -n 1 "$B/$JOB.log")   (log: $B/$JOB.log)"
    fi
}

two_tu() {  # two_tu NAME "COMPILER FLAGS" LINKER: test_two_tu_a.c with CC, _b.c with COMPILER
    extra "$CC $W -O2 -c $T/test_two_tu_a.c -o $B/$1_a.o && $2 -O2 -c $T/test_two_tu_b.c \
        -o $B/$1_b.o && $3 $B/$1_a.o $B/$1_b.o -o $B/$1 -lm && ./$B/$1"
}

SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
T=tests
one() {
    JOB=$1
    rm -f "$B/$JOB.result"
    case $JOB in
    scalar) variant "-O2 -DPE_NO_SIMD -DFFN_NO_SIMD" "" "golden errors paths math" ;;
    default) variant "-O2" "" "golden errors paths threads schedule math npy fuzz" ;;
    fixed) variant "-O2 -DPE_NO_RUNTIME_DISPATCH -DFFN_NO_RUNTIME_DISPATCH" "" \
        "golden errors paths math" ;;
    native) variant "-O3 -march=native" "" "golden errors paths math" ;;
    # pe.h splits every shape among the threads and writes with non-temporal stores
    openmp) variant "-O2 -fopenmp -DPE__PARALLEL_FLOATS=0 -DPE_NONTEMPORAL_BYTES=0" \
        "OMP_NUM_THREADS=3" "golden errors paths math" ;;
    # (-march=native: the scalar path's fmaf inline, which ASan makes slow as a call)
    sanitize) variant "-O1 -g -march=native $SAN" "ASAN_OPTIONS=detect_leaks=1" \
        "golden errors paths math" ;;
    avx512-emu) variant "-O2 $(suite_avx512_emu "$B")" "" "golden errors paths math fuzz" ;;
    two-tu) two_tu two_tu "$CC $W" "$CC" ;;
    two-tu-cxx) if command -v "$CXX" > /dev/null 2>&1; then
            two_tu two_tu_cxx "$CXX -x c++ -std=c++11 -Wall -Wextra -Wpedantic -Werror" "$CXX"
        else record "SKIP $JOB: $CXX not found"; fi ;;
    static) extra "$CC $W -O2 -DTEST_STATIC_MAIN -c $T/test_static.c -o $B/static_main.o &&
        $CC $W -O2 -c $T/test_static.c -o $B/static_other.o &&
        $CC $B/static_main.o $B/static_other.o -o $B/static -lm && ./$B/static" ;;
    hdr-gcc | hdr-clang) extra "sh $T/check_headers.sh ${JOB#hdr-} c" ;;
    hdr-g++ | hdr-clang++) extra "sh $T/check_headers.sh ${JOB#hdr-} c++" ;;
    snippets) extra "CC='$CC' CXX='$CXX' sh $T/snippets.sh" ;;
    release) extra "sh $T/check_release.sh" ;;
    house) extra "CC='$CC' sh tools/house.sh" ;;
    safetensors) extra "$CC $W -O2 -DFFN_WARN_DEPRECATED -I. examples/llama_mlp.c -o $B/llama_mlp -lm &&
        ./$B/llama_mlp reference/goldens/llama_mlp.safetensors &&
        $CC $W -O2 $T/test_safetensors.c -o $B/test_safetensors &&
        ./$B/test_safetensors reference/goldens/llama_mlp.safetensors" ;;
    esac
}

JOBS="scalar default fixed native openmp sanitize avx512-emu two-tu two-tu-cxx static hdr-gcc
      hdr-clang hdr-g++ hdr-clang++ snippets release house safetensors"
if [ -n "$ONE" ]; then one "$ONE"; exit 0; fi
T0=$(date +%s)
# two jobs at a time (each job's compiles run SUITE_JOBS=1 then), results as they finish
for j in $JOBS; do printf '%s\0' "$j"; done |
    xargs -0 -r -n 1 -P "${TEST_JOBS:-2}" sh -c '
        ONE=$1 SUITE_JOBS=1 sh tests/run.sh; cat "'"$B"'/$1.result"' sh
echo "== make test summary (CC=$CC, manifest $SUITE_MANIFEST, $(($(date +%s) - T0)) s wall time here; logs in $B/)"
for j in $JOBS; do cat "$B/$j.result" 2>/dev/null || echo "FAIL $j: no result"; done > "$B/summary"
cat "$B/summary"
# the totals: every "N passed, N failed" line; a FAIL without one counts as one failure
awk '
    / passed, [0-9]+ failed/ { for (i = 1; i < NF; i++) {
        if ($(i + 1) == "passed,") p += $i; if ($(i + 1) == "failed") f += $i } }
    /^FAIL/ && !/ passed, [0-9]+ failed/ { f++ }
    /^FAIL/ { bad = 1 }
    /replay: .* inputs, 0 failed/ { p++ }
    END { printf "%d passed, %d failed\n", p, f + (bad && !f); exit (bad || f) ? 1 : 0 }
' "$B/summary"

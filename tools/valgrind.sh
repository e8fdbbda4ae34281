#!/bin/sh
# tools/valgrind.sh - `make valgrind`: the whole suite (tools/suite.sh) under valgrind
# memcheck in each configuration of TABLE below: no error and no leak of any kind
# (definite, indirect, possible, reachable). valgrind's CPU has no AVX-512, and says so
# through cpuid: the avx512 paths are skipped with that reason. openmp: libgomp keeps its
# thread pool until exit: its blocks are "still reachable" (allowed for this config only)
# and its threads' TLS "possibly lost" (suppressed by name: tools/valgrind-libgomp.supp).
# Under each part's line, memcheck's summary. valgrind runs a program's threads one at a
# time: --fair-sched=yes hands them the turn in order (by default a thread that spins, as
# test_threads' main thread lending and taking back the pool, could keep it for minutes).
#   VALGRIND_CONFIGS="scalar openmp"  a subset;  VALGRIND_JOBS=N  parts run at a time (2)
cd "$(dirname "$0")/.." || exit 2
. tools/suite.sh

B=build/valgrind
SUITE_PARTS="golden errors paths threads math npy fuzz"
SUITE_RUN_JOBS=${VALGRIND_JOBS:-2}
F="-std=c99 -O2 -g -Wall -Wextra"
VG="valgrind --tool=memcheck --fair-sched=yes --error-exitcode=99 --leak-check=full --track-origins=yes --show-leak-kinds=all"
TABLE="
dispatch | gcc | $F                            | | | $VG --errors-for-leak-kinds=all
scalar   | gcc | $F -DPE_NO_SIMD -DFFN_NO_SIMD | | | $VG --errors-for-leak-kinds=all
openmp   | gcc | $F -fopenmp | OMP_NUM_THREADS=2 | golden paths | $VG --errors-for-leak-kinds=definite,indirect,possible --suppressions=tools/valgrind-libgomp.supp"

config() {
    suite_test | while IFS= read -r line; do
        echo "$line"
        p=${line#* * } p=${p%%:*}
        [ -f "$out/$p.log" ] || continue
        echo "     memcheck $p: $(grep -h -E 'ERROR SUMMARY|(definitely|indirectly|possibly) lost:|still reachable:|suppressed:' \
            "$out/$p.log" | sed 's/^==[0-9]*== *//' | tr '\n' ' ')"
    done
}

# shellcheck disable=SC2046
suite_configs valgrind 1 ${VALGRIND_CONFIGS:-$(suite_names)}
suite_verdict "no memcheck error and no leak in $SUITE_N configurations"

#!/bin/sh
# tools/valgrind.sh - `make valgrind`: the whole suite (tools/suite.sh) under valgrind
# memcheck: no error and no leak of any kind (definite, indirect, possible, reachable)
#   dispatch gcc -O2 -g: every path valgrind's CPU runs (it has no AVX-512, and says so
#            through cpuid, so the avx512 paths are skipped with that reason)
#   scalar   gcc -O2 -g -DPE_NO_SIMD -DFFN_NO_SIMD
#   openmp   gcc -O2 -g -fopenmp, OMP_NUM_THREADS=2: golden and test_ffn_paths.
#            libgomp keeps its thread pool until exit: its blocks are "still
#            reachable" (allowed for this config only) and its threads' TLS "possibly
#            lost" (suppressed by name: tools/valgrind-libgomp.supp)
cd "$(dirname "$0")/.." || exit 2
. tools/suite.sh

B=build/valgrind
CONFIGS=${VALGRIND_CONFIGS:-"dispatch scalar openmp"}
sh tools/need.sh valgrind=valgrind gcc=gcc || exit 1

VG="valgrind --tool=memcheck --error-exitcode=99 --leak-check=full --track-origins=yes"
fails=0
summary=""
for c in $CONFIGS; do
    env=""
    parts="golden errors paths threads npy fuzz"
    kinds=all
    supp=""
    case $c in
    dispatch) fl="" ;;
    scalar) fl="-DPE_NO_SIMD -DFFN_NO_SIMD" ;;
    openmp) fl="-fopenmp"; env="OMP_NUM_THREADS=2"; parts="golden paths"
        kinds=definite,indirect,possible; supp="--suppressions=tools/valgrind-libgomp.supp" ;;
    *) echo "valgrind: unknown config $c"; exit 2 ;;
    esac
    out=$B/$c
    t0=$(date +%s)
    if ! SUITE_PARTS=$parts suite_build "$out" gcc "-std=c99 -O2 -g -Wall -Wextra $fl" "$fl -lm"; then
        echo "FAIL $c: build failed:"
        sed -n '1,30p' "$out/build.log"
        fails=$((fails + 1))
        continue
    fi
    # run the parts two at a time (valgrind is single-threaded)
    for p in $parts; do printf '%s\0' "$p"; done |
        xargs -0 -r -n 1 -P "${VALGRIND_JOBS:-2}" sh -c '
            . tools/suite.sh
            SUITE_PARTS=$1 suite_run "'"$c"'" "'"$out"'" \
                "'"$VG $supp --show-leak-kinds=all --errors-for-leak-kinds=$kinds"' --log-file='"$out"'/$1.vg" \
                "'"$env"'" > "'"$out"'/$1.result"' sh
    n=0
    for p in $parts; do
        cat "$out/$p.result"
        grep -q '^PASS' "$out/$p.result" || n=$((n + 1))
        s=$(grep -h -E 'ERROR SUMMARY|definitely lost:|indirectly lost:|possibly lost:|still reachable:|suppressed:' "$out/$p.vg" |
            sed 's/^==[0-9]*== *//' | tr '\n' ' ')
        echo "     memcheck $p: $s"
    done
    fails=$((fails + n))
    summary="$summary
$( [ $n = 0 ] && echo PASS || echo FAIL ) $c (gcc -O2 $fl, $(($(date +%s) - t0)) s)"
done
echo "== valgrind summary"
echo "$summary" | sed '/^$/d'
if [ $fails = 0 ]; then
    echo "valgrind: no memcheck error and no leak in $(echo $CONFIGS | wc -w) configurations"
else
    echo "valgrind: FAILED ($fails)"
    exit 1
fi

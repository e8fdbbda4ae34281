#!/bin/sh
# tools/compilers_test.sh - `make compilers-test`: the whole suite (tools/suite.sh:
# golden, errors, npy, test_ffn_paths; the fuzz corpus replay at -O2 and with tcc) built
# and run with
#   gcc, clang        -std=c99 and -std=c11
#   g++, clang++      -std=c++11 and -std=c++17 (the .c sources compiled as C++)
#   each at -O0, -O2 and -O3 -march=native, with -Wall -Wextra -Wpedantic -Werror
#   tcc               -std=c99 -Wall -Werror (tcc accepts -Wextra/-Wpedantic but has no
#                     such warnings; it has no optimiser levels or -march)
# and the -ffast-math legs (gcc, clang; -O2 and -O3 -march=native): tools/fastmath_check
# runs a fast-math build of the headers beside a strict build (tests/unit.c), path by path
# (the checker itself stays strict, so its NaN tests are not folded away), once as
# is and once linked with -ffast-math (flush-to-zero), and lists what changes. A leg
# passes if nothing changes, or if the headers detect -ffast-math (__FAST_MATH__) and
# README.md documents it; otherwise it fails with the list.
#   COMPILERS_CONFIGS="gcc-c99-O2 tcc"  a subset;  COMPILERS_JOBS=N parallel configs
cd "$(dirname "$0")/.." || exit 2
. tools/suite.sh

B=build/compilers
W="-Wall -Wextra -Wpedantic -Werror"

all_configs() {
    for c in gcc clang; do for s in c99 c11; do for o in O0 O2 O3native; do
        echo "$c-$s-$o"; done; done; done
    for c in g++ clang++; do for s in c++11 c++17; do for o in O0 O2 O3native; do
        echo "$c-$s-$o"; done; done; done
    echo tcc
    for c in gcc clang; do for o in O2 O3native; do echo "fastmath-$c-$o"; done; done
}
CONFIGS=${COMPILERS_CONFIGS:-$(all_configs)}

fastmath_leg() {
    c=$1 cc=$2 fl=$3 out=$4
    mkdir -p "$out"
    {
        $cc -std=c99 $fl -DUNIT_GETTER=fm_impl_strict -c tests/unit.c -o "$out/strict.o" &&
        $cc -std=c99 -O2 -Wall -Wextra -Werror -c tools/fastmath_check.c -o "$out/check.o"
    } > "$out/build.log" 2>&1 || { echo "FAIL $c: build failed ($out/build.log)"; return 1; }
    if ! $cc -std=c99 $fl -ffast-math -DUNIT_GETTER=fm_impl_fastmath -c tests/unit.c \
            -o "$out/fast.o" > "$out/fast-build.log" 2>&1; then
        if grep -qi 'fast.math' "$out/fast-build.log"; then
            if grep -qi 'fast-math' README.md 2>/dev/null; then
                echo "PASS $c: the headers refuse -ffast-math (documented in README.md)"
                return 0
            fi
            echo "FAIL $c: the headers refuse -ffast-math but README.md does not say so"
            return 1
        fi
        echo "FAIL $c: the -ffast-math build failed ($out/fast-build.log)"
        return 1
    fi
    $cc "$out/check.o" "$out/strict.o" "$out/fast.o" -o "$out/check" -lm &&
    $cc -ffast-math "$out/check.o" "$out/strict.o" "$out/fast.o" -o "$out/check-ftz" -lm ||
        { echo "FAIL $c: link failed"; return 1; }
    ./"$out/check" > "$out/check.log" 2>&1
    r1=$?
    ./"$out/check-ftz" > "$out/check-ftz.log" 2>&1
    r2=$?
    if [ $r1 = 0 ] && [ $r2 = 0 ]; then
        echo "PASS $c: $cc $fl -ffast-math gives the same results as without"
        return 0
    fi
    {
        echo "what changes with $cc $fl -ffast-math (headers compiled with it):"
        grep DIFFERS "$out/check.log" | sed 's/^/    /'
        echo "... and in a program linked with -ffast-math (FTZ/DAZ on):"
        grep DIFFERS "$out/check-ftz.log" | sed 's/^/    /'
    } > "$out/changes.txt"
    if grep -q '__FAST_MATH__' pe.h ffn.h && grep -qi 'fast-math' README.md 2>/dev/null; then
        echo "PASS $c: results change under -ffast-math; the headers detect it and README.md documents it ($out/changes.txt)"
        return 0
    fi
    echo "FAIL $c: results change under -ffast-math and the headers do not detect it (__FAST_MATH__) / README.md does not document it:"
    sed 's/^/     /' "$out/changes.txt"
    return 1
}

one() {
    c=$1
    out=$B/$c
    lang=""
    parts="golden errors npy paths fuzz"
    case $c in
    fastmath-*)
        cc=$(echo "$c" | cut -d- -f2)
        fl="-O2"
        case $c in *O3native) fl="-O3 -march=native" ;; esac
        fastmath_leg "$c" "$cc" "$fl" "$out" > "$out.result" 2>&1
        return ;;
    tcc) cc=tcc; flags="-std=c99 -Wall -Werror" ;;
    *)
        cc=${c%%-*}
        rest=${c#*-}
        std=${rest%%-*}
        o=${rest#*-}
        case $o in O3native) o="-O3 -march=native" ;; *) o="-$o" ;; esac
        case $cc in g++|clang++) lang="-x c++" ;; esac
        flags="-std=$std $W $o"
        # the corpus replay once per compiler and standard
        [ "$o" = -O2 ] || parts="golden errors npy paths" ;;
    esac
    t0=$(date +%s)
    if ! SUITE_JOBS=1 SUITE_PARTS=$parts suite_build "$out" "$cc" "$flags" "-lm" "$lang"; then
        { echo "FAIL $c: build failed ($cc $lang $flags):"; sed -n '1,30p' "$out/build.log"; } > "$out.result"
        return
    fi
    res=$(SUITE_PARTS=$parts suite_run "$c" "$out" "" "")
    n=$?
    {
        if [ $n = 0 ]; then
            echo "PASS $c ($cc $lang $flags, $(($(date +%s) - t0)) s): $(echo "$res" | sed -n 's/^PASS [^ ]* \([a-z]*\): /\1 /p' | tr '\n' ';' | sed 's/;$//; s/;/; /g')"
        else
            echo "$res" | grep '^FAIL'
        fi
    } > "$out.result"
}

if [ "$ONE" ]; then mkdir -p $B; one "$ONE"; exit 0; fi

need="gcc=gcc g++=g++ clang=clang clang++=clang tcc=tcc"
# shellcheck disable=SC2086
sh tools/need.sh $need || exit 1
mkdir -p $B
start=$(date +%s)
for c in $CONFIGS; do printf '%s\0' "$c"; done |
    xargs -0 -r -n 1 -P "${COMPILERS_JOBS:-$(nproc 2>/dev/null || echo 2)}" sh -c 'ONE=$1 sh tools/compilers_test.sh' sh
fails=0
n=0
echo "== compilers-test summary ($(($(date +%s) - start)) s)"
for c in $CONFIGS; do
    n=$((n + 1))
    if [ -f "$B/$c.result" ]; then cat "$B/$c.result"; else echo "FAIL $c: no result"; fi
    grep -q '^PASS' "$B/$c.result" 2>/dev/null || fails=$((fails + 1))
done
if [ $fails = 0 ]; then
    echo "compilers-test: all $n configurations passed"
else
    echo "compilers-test: FAILED ($fails of $n configurations)"
    exit 1
fi

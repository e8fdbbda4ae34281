#!/bin/sh
# tools/compilers_test.sh - `make compilers-test`: the suite (tools/suite.sh) built and
# run with each compiler, standard and set of flags of TABLE below (g++ and clang++
# compile the .c sources as C++; tcc accepts -Wextra/-Wpedantic but has no such warnings,
# and has no optimiser levels or -march), and the -ffast-math legs: tools/fastmath_check
# runs a fast-math build of the headers beside a strict build (support/unit.c), path by path
# (the checker itself stays strict, so its NaN tests are not folded away), once as
# is and once linked with -ffast-math (flush-to-zero), and lists what changes. A leg
# passes if nothing changes, or if the headers detect -ffast-math (__FAST_MATH__) and
# README.md documents it; otherwise it fails with the list.
#   COMPILERS_CONFIGS="gcc-c99-O2 tcc"  a subset;  COMPILERS_JOBS=N parallel configs
cd "$(dirname "$0")/.." || exit 2
. tools/suite.sh

B=build/compilers
TABLE=$(
    for c in gcc clang g++ clang++; do
        case $c in *++) stds="c++11 c++17" x="-x c++" ;; *) stds="c99 c11" x= ;; esac
        for s in $stds; do
            echo "$c-$s-O0|$c|$x -std=$s -Wall -Wextra -Wpedantic -Werror -O0||golden errors npy paths"
            echo "$c-$s-O2|$c|$x -std=$s -Wall -Wextra -Wpedantic -Werror -O2||golden errors npy paths fuzz"
            echo "$c-$s-O3native|$c|$x -std=$s -Wall -Wextra -Wpedantic -Werror -O3 -march=native||golden errors npy paths"
        done
    done
    echo "tcc|tcc|-std=c99 -Wall -Werror"
    for c in gcc clang; do echo "fastmath-$c-O2|$c|-O2"; echo "fastmath-$c-O3native|$c|-O3 -march=native"; done)

config() {
    case $name in fastmath-*) ;; *) suite_test; return ;; esac
    {
        $cc -std=c99 $flags -DUNIT_GETTER=fm_impl_strict -c support/unit.c -o "$out/strict.o" &&
        $cc -std=c99 -O2 -Wall -Wextra -Werror -c tools/fastmath_check.c -o "$out/check.o"
    } > "$out/build.log" 2>&1 || { echo "FAIL $name: build failed ($out/build.log)"; return 1; }
    if ! $cc -std=c99 $flags -ffast-math -DUNIT_GETTER=fm_impl_fastmath -c support/unit.c \
            -o "$out/fast.o" > "$out/fast-build.log" 2>&1; then
        grep -qi 'fast.math' "$out/fast-build.log" ||
            { echo "FAIL $name: the -ffast-math build failed ($out/fast-build.log)"; return 1; }
        grep -qi 'fast-math' README.md 2>/dev/null ||
            { echo "FAIL $name: the headers refuse -ffast-math but README.md does not say so"; return 1; }
        echo "PASS $name: the headers refuse -ffast-math (documented in README.md)"
        return
    fi
    { $cc "$out/check.o" "$out/strict.o" "$out/fast.o" -o "$out/check" -lm &&
      $cc -ffast-math "$out/check.o" "$out/strict.o" "$out/fast.o" -o "$out/check-ftz" -lm; } ||
        { echo "FAIL $name: link failed"; return 1; }
    ./"$out/check" > "$out/check.log" 2>&1
    r=$?
    if ./"$out/check-ftz" > "$out/check-ftz.log" 2>&1 && [ $r = 0 ]; then
        echo "PASS $name: $cc $flags -ffast-math gives the same results as without"
        return
    fi
    {
        echo "what changes with $cc $flags -ffast-math (headers compiled with it):"
        grep DIFFERS "$out/check.log" | sed 's/^/    /'
        echo "... and in a program linked with -ffast-math (FTZ/DAZ on):"
        grep DIFFERS "$out/check-ftz.log" | sed 's/^/    /'
    } > "$out/changes.txt"
    if grep -q '__FAST_MATH__' pe.h ffn.h && grep -qi 'fast-math' README.md 2>/dev/null; then
        echo "PASS $name: results change under -ffast-math; the headers detect it and README.md documents it ($out/changes.txt)"
        return
    fi
    echo "FAIL $name: results change under -ffast-math and the headers do not detect it (__FAST_MATH__) / README.md does not document it:"
    sed 's/^/     /' "$out/changes.txt"
    return 1
}

# shellcheck disable=SC2046
suite_configs compilers-test "$COMPILERS_JOBS" ${COMPILERS_CONFIGS:-$(suite_names)}
suite_verdict "all $SUITE_N configurations passed"

#!/bin/sh
# tools/cross_test.sh - `make cross-test`: the whole suite (tools/suite.sh) built with
# Debian's cross compilers (static) and run under qemu-user, in the configurations of
# TABLE below: aarch64 NEON; armhf (size_t is 32 bits, VFP only: scalar paths); riscv64;
# s390x (big-endian: the golden reader byte-swaps the '<f4'/'<i8' files); the goldens
# rewritten as '>f4'/'>i8' (tools/npy_byteswap.c) read on this little-endian host;
# Windows (mingw-w64, its C99 printf for %zu) under wine, and musl: other C runtimes,
# whose fmaf and libm the headers must not depend on (musl also runs test_threads: the
# stack ffn.h documents there, whose threads get 128 KiB). CROSS_ALL=1 (make check-all;
# slower) adds aarch64 scalar and with OpenMP, armhf with NEON (pe.h's NEON add on
# AArch32) and the big-endian goldens on s390x.
# The headers promise the same bits on every path, thread count and platform, so each
# configuration is compared with this host's own build (glibc, -O2): test_ffn_paths's
# fingerprint of one block's output must equal the host's scalar path's (`PASS|FAIL
# <config> fingerprint`), and test_golden's `# digest LIB PATH:` lines the host's for the
# same header and path, or its scalar path's for a path the host lacks (neon)
# (`PASS|FAIL <config> digest`, compared even where golden cases fail); `host digest`:
# each of this host's paths gives its scalar path's digest.
#   CROSS_CONFIGS="aarch64-neon s390x"   a subset;  CROSS_JOBS=N  parallel configurations
cd "$(dirname "$0")/.." || exit 2
. tools/suite.sh

B=build/cross
F="-std=c99 -Wall -Wextra -Wpedantic -Werror -O2"
S="$F -static"
TABLE="
aarch64-neon      | aarch64-linux-gnu-gcc   | $S                            | | | qemu-aarch64
aarch64-scalar    | aarch64-linux-gnu-gcc   | $S -DPE_NO_SIMD -DFFN_NO_SIMD | | | qemu-aarch64
armhf             | arm-linux-gnueabihf-gcc | $S                            | | | qemu-arm
riscv64           | riscv64-linux-gnu-gcc   | $S                            | | | qemu-riscv64
s390x             | s390x-linux-gnu-gcc     | $S                            | | | qemu-s390x
x86-64-be-goldens | cc                      | $F -march=native              | | golden |
windows           | x86_64-w64-mingw32-gcc  | $S -D__USE_MINGW_ANSI_STDIO=1 | WINEDEBUG=-all | | wine
musl              | musl-gcc                | $S                            | | $SUITE_PARTS threads |
aarch64-openmp    | aarch64-linux-gnu-gcc   | $S -fopenmp   | OMP_NUM_THREADS=3 | golden paths       | qemu-aarch64
armhf-neon        | arm-linux-gnueabihf-gcc | $S -mfpu=neon |                   | golden errors fuzz | qemu-arm
s390x-be-goldens  | s390x-linux-gnu-gcc     | $S            |                   | golden             | qemu-s390x"
DEFAULT="s390x aarch64-neon riscv64 armhf x86-64-be-goldens windows musl"
[ "${CROSS_ALL:-0}" = 1 ] && DEFAULT="$DEFAULT aarch64-scalar aarch64-openmp armhf-neon s390x-be-goldens"
CONFIGS=${CROSS_CONFIGS:-$DEFAULT}

case " $CONFIGS " in
*-be-goldens*)
    mkdir -p $B/tools $B/goldens-be
    cc -O2 -Wall -Wextra tools/npy_byteswap.c -o $B/tools/npy_byteswap &&
        ./$B/tools/npy_byteswap reference/goldens $B/goldens-be || exit 1 ;;
esac
SUITE_PARTS="paths golden" suite_build $B/host cc "-std=c99 -O2" -lm
./$B/host/paths > $B/host/paths.log 2>&1
./$B/host/golden "$SUITE_MANIFEST" > $B/host/golden.log 2>&1
WANT=$(sed -n 's/^# fingerprint scalar: .* -> \([0-9a-f]*\).*/\1/p' $B/host/paths.log)

# digests LOG: its "# digest LIB PATH: HASH (N outputs)" lines as "LIB PATH HASH N"
# (a Windows program's lines end in \r)
digests() {
    tr -d '\r' < "$1" 2> /dev/null |
        sed -n 's/^# digest \([a-z0-9]*\) \([a-z0-9]*\): \([0-9a-f]*\) (\([0-9]*\) outputs)$/\1 \2 \3 \4/p'
}
HOST=$(digests $B/host/golden.log)
host() { echo "$HOST" | awk -v l="$1" -v p="$2" '$1 == l && $2 == p'; }

# digest_check LABEL LOG [scalar]: each digest line of LOG against the host's for the
# same header and path (or with `scalar`, always the host's scalar path)
digest_check() {
    _d_label=$1 _d_log=$2 _d_as=$3 _d_ok='' _d_bad=''
    _d_got=$(digests "$_d_log")
    while read -r _d_lib _d_path _d_hash _d_n; do
        [ -n "$_d_lib" ] || continue
        _d_want=$(host "$_d_lib" "${_d_as:-$_d_path}")
        [ -n "$_d_want" ] || _d_want=$(host "$_d_lib" scalar)
        # shellcheck disable=SC2086
        set -- $_d_want
        if [ "$_d_hash $_d_n" = "${3:-none} ${4:-0}" ]; then
            _d_ok="$_d_ok $_d_lib-$_d_path"
        else
            _d_bad="$_d_bad, $_d_lib-$_d_path $_d_hash ($_d_n outputs; the host's ${2:-?}: ${3:-none}, ${4:-0})"
        fi
    done <<EOF
$_d_got
EOF
    [ -n "$_d_got" ] || _d_bad=", no digest lines"
    if [ -n "$_d_bad" ]; then
        echo "FAIL $_d_label digest: ${_d_bad#, }   ($_d_log, $B/host/golden.log)"
        return 1
    fi
    echo "PASS $_d_label digest:$_d_ok: the host's (pe $(host pe scalar | cut -d' ' -f3), ffn $(
        host ffn scalar | cut -d' ' -f3))"
}

config() {
    case $name in *-be-goldens) SUITE_MANIFEST=$B/goldens-be/MANIFEST.txt ;; esac
    suite_test
    _r=$?
    [ -e "$out/build.failed" ] && return 1
    case " $parts " in *" golden "*) digest_check "$name" "$out/golden.log" || _r=1 ;; esac
    case " $parts " in *" paths "*) ;; *) return "$_r" ;; esac
    got=$(sed -n 's/^# fingerprint \([a-z0-9]*\): .* -> \([0-9a-f]*\).*/\1=\2/p' "$out/paths.log" | sort -u)
    if [ -n "$got" ] && ! echo "$got" | grep -q -v "=${WANT:-none}\$"; then
        echo "PASS $name fingerprint:" $got "(the host's scalar path's)"
    else
        echo "FAIL $name fingerprint:" $got "but the host's scalar path gives ${WANT:-nothing} ($B/host/paths.log)"
        return 1
    fi
    return "$_r"
}

digest_check host $B/host/golden.log scalar
HOST_FAIL=$?

# wine: one server for all of windows's parts (each part's wine otherwise starts one, and
# a part that starts while the last one shuts down can lose its connection)
case " $CONFIGS " in *" windows "*) command -v wineserver > /dev/null && wineserver -p30 ;; esac
# shellcheck disable=SC2086
suite_configs cross-test "$CROSS_JOBS" $CONFIGS
[ $HOST_FAIL = 0 ] || { echo "FAIL host digest (above)"; SUITE_FAILS=$((SUITE_FAILS + 1)); }
suite_verdict "all $SUITE_N configurations passed"

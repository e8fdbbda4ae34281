#!/bin/sh
# tools/cross_test.sh - `make cross-test`: the whole suite (tools/suite.sh) built with
# Debian's cross compilers (static) and run under qemu-user:
#   aarch64-neon     NEON paths of pe.h and ffn.h, -O2; also test_ffn_paths (NEON vs scalar)
#   aarch64-scalar   -DPE_NO_SIMD -DFFN_NO_SIMD
#   armhf            32-bit ARM (size_t is 32 bits), VFP only: scalar paths
#   riscv64          scalar
#   s390x            big-endian: the golden reader byte-swaps the '<f4'/'<i8' files
#   x86-64-be-goldens  the goldens rewritten as '>f4'/'>i8' (tools/npy_byteswap.c), read
#                    on this little-endian host (s390x reads the '<' ones: both ways)
# and with CROSS_ALL=1 (make check-all; slower) also:
#   aarch64-openmp   NEON + OpenMP, 3 threads (golden, test_ffn_paths)
#   armhf-neon       32-bit ARM with -mfpu=neon: pe.h's NEON add on AArch32
#   s390x-be-goldens the big-endian goldens on the big-endian host
# Parts per configuration: golden, errors, test_ffn_paths, npy, fuzz corpus replay
# (tools/suite.sh), each on every path of pe.h and ffn.h the target has. Each run ends
# with its `N passed, N failed` line. And across configurations: every ffn.h path of
# every target gives the same bits, so test_ffn_paths's "fingerprint" of one block's
# output must read the same on each of them and on this host (the same FMA chains). Installs what is missing with
# apt-get when run as root (tools/need.sh), otherwise says what is missing and fails.
#   CROSS_CONFIGS="aarch64-neon s390x"   a subset;  CROSS_JOBS=N  parallel configurations
cd "$(dirname "$0")/.." || exit 2
. tools/suite.sh

B=build/cross
WARN="-std=c99 -Wall -Wextra -Wpedantic -Werror"
DEFAULT="s390x aarch64-neon riscv64 armhf aarch64-scalar x86-64-be-goldens"
EXTRA="aarch64-openmp armhf-neon s390x-be-goldens"
[ "${CROSS_ALL:-0}" = 1 ] && DEFAULT="$DEFAULT $EXTRA"
CONFIGS=${CROSS_CONFIGS:-$DEFAULT}

need=""
for c in $CONFIGS; do
    case $c in
    aarch64*) need="$need aarch64-linux-gnu-gcc=gcc-aarch64-linux-gnu /usr/aarch64-linux-gnu/lib/libc.a=libc6-dev-arm64-cross qemu-aarch64=qemu-user" ;;
    armhf*) need="$need arm-linux-gnueabihf-gcc=gcc-arm-linux-gnueabihf /usr/arm-linux-gnueabihf/lib/libc.a=libc6-dev-armhf-cross qemu-arm=qemu-user" ;;
    riscv64) need="$need riscv64-linux-gnu-gcc=gcc-riscv64-linux-gnu /usr/riscv64-linux-gnu/lib/libc.a=libc6-dev-riscv64-cross qemu-riscv64=qemu-user" ;;
    s390x*) need="$need s390x-linux-gnu-gcc=gcc-s390x-linux-gnu /usr/s390x-linux-gnu/lib/libc.a=libc6-dev-s390x-cross qemu-s390x=qemu-user" ;;
    x86-64*) need="$need cc=gcc" ;;
    esac
done
# shellcheck disable=SC2086
[ "$ONE" ] || sh tools/need.sh $need || exit 1

# Goldens rewritten big-endian (only if a config wants them).
[ "$ONE" ] || case " $CONFIGS " in
*-be-goldens*)
    mkdir -p $B/tools $B/goldens-be
    cc -O2 -Wall -Wextra tools/npy_byteswap.c -o $B/tools/npy_byteswap || exit 1
    ./$B/tools/npy_byteswap reference/goldens $B/goldens-be || exit 1 ;;
esac

# one configuration: build, run, write $B/<config>/result (lines) and .../summary (one line)
one() {
    c=$1
    env=""
    manifest=reference/goldens/MANIFEST.txt
    parts="golden errors paths npy fuzz"
    case $c in
    aarch64-neon) cc=aarch64-linux-gnu-gcc; fl="-O2"; run=qemu-aarch64 ;;
    aarch64-openmp) cc=aarch64-linux-gnu-gcc; fl="-O2 -fopenmp"; run=qemu-aarch64
        env="OMP_NUM_THREADS=3"; parts="golden paths" ;;
    aarch64-scalar) cc=aarch64-linux-gnu-gcc; fl="-O2 -DPE_NO_SIMD -DFFN_NO_SIMD"; run=qemu-aarch64 ;;
    armhf) cc=arm-linux-gnueabihf-gcc; fl="-O2"; run=qemu-arm ;;
    armhf-neon) cc=arm-linux-gnueabihf-gcc; fl="-O2 -mfpu=neon"; run=qemu-arm
        parts="golden errors fuzz" ;;
    riscv64) cc=riscv64-linux-gnu-gcc; fl="-O2"; run=qemu-riscv64 ;;
    s390x) cc=s390x-linux-gnu-gcc; fl="-O2"; run=qemu-s390x ;;
    s390x-be-goldens) cc=s390x-linux-gnu-gcc; fl="-O2"; run=qemu-s390x
        manifest=$B/goldens-be/MANIFEST.txt; parts=golden ;;
    x86-64-be-goldens) cc=cc; fl="-O2 -march=native"; run=""
        manifest=$B/goldens-be/MANIFEST.txt; parts=golden ;;
    *) echo "FAIL $c: unknown configuration" > $B/$c.result; return ;;
    esac
    out=$B/$c
    mkdir -p "$out"
    t0=$(date +%s)
    static="-static"
    [ "$c" = x86-64-be-goldens ] && static=""
    if ! SUITE_JOBS=1 SUITE_PARTS=$parts suite_build "$out" "$cc" "$WARN $fl $static" "$static -lm"; then
        { echo "FAIL $c: build failed:"; sed -n '1,40p' "$out/build.log"; } > "$out/result"
        echo "FAIL $c (build failed: $out/build.log)" > "$out/summary"
        return
    fi
    SUITE_PARTS=$parts SUITE_MANIFEST=$manifest suite_run "$c" "$out" "$run" "$env" > "$out/result"
    n=$?
    t1=$(date +%s)
    printf '%s %s (%s %s; %s s): %s\n' "$( [ $n = 0 ] && echo PASS || echo FAIL)" "$c" "$cc" "$fl" \
        $((t1 - t0)) "$(sed -n 's/^[A-Z]* [^ ]* golden: //p' "$out/result")" > "$out/summary"
}

if [ "$ONE" ]; then one "$ONE"; exit 0; fi

# The host's fingerprint, for the comparison at the end.
mkdir -p $B/host
SUITE_PARTS=paths suite_build $B/host cc "-std=c99 -O2" "-lm" && ./$B/host/paths > $B/host/paths.log 2>&1

start=$(date +%s)
for c in $CONFIGS; do printf '%s\0' "$c"; done |
    xargs -0 -r -n 1 -P "${CROSS_JOBS:-$(nproc 2>/dev/null || echo 2)}" sh -c 'ONE=$1 CROSS_CONFIGS=$1 sh tools/cross_test.sh' sh
fails=0
for c in $CONFIGS; do
    cat "$B/$c/result" 2>/dev/null || { echo "FAIL $c: no result"; fails=$((fails + 1)); }
    grep -q '^FAIL' "$B/$c/result" 2>/dev/null && fails=$((fails + 1))
done
echo "== cross-test summary ($(($(date +%s) - start)) s)"
for c in $CONFIGS; do cat "$B/$c/summary" 2>/dev/null; done
# every path's fingerprint, on every target, equals the host's scalar one
want=$(sed -n 's/^# fingerprint scalar: .* -> \([0-9a-f]*\).*/\1/p' $B/host/paths.log)
got=$(cat $B/*/paths.log 2>/dev/null | sed -n 's/^# fingerprint \([a-z0-9]*\): .* -> \([0-9a-f]*\).*/\1=\2/p' | sort -u | tr '\n' ' ')
if [ -n "$want" ] && ! echo "$got" | tr ' ' '\n' | grep -v "=$want\$" | grep -q .; then
    echo "PASS same bits on every target and path: block fingerprint $want ($got)"
else
    echo "FAIL same bits: the host's scalar fingerprint is '$want', the targets' paths give: $got"
    fails=$((fails + 1))
fi
if [ $fails = 0 ]; then
    echo "cross-test: all $(echo $CONFIGS | wc -w) configurations passed"
else
    echo "cross-test: FAILED ($fails configurations)"
    exit 1
fi

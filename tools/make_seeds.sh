#!/bin/sh
# tools/make_seeds.sh - `make fuzz-seeds`: (re)create the committed seed corpus
# fuzz/corpus/<target>/ for every target of fuzz/fuzz.c, as its --seeds lists them:
# "<target> <kind> <salt> [<key>]" (the pieces in features/ give each target's kind).
#
# The targets decode their input as: byte 0 = mode (mode % 8 == 7: sizes near the size_t
# limits; 6 and 5: larger shapes), byte 1 = float profile (% 4: plain values, some
# specials, many specials, raw bit patterns), then sizes, NULL choice, memory layout and
# values; past the end of the input a PRNG seeded from the input supplies the rest, so a
# seed of a few bytes already drives a full call. Per target: 8 seeds, modes 0..7 with
# the four profiles, then fixed pseudo-random bytes (different per seed) for the sizes and
# the layout (the bytes' LCG seed from the mode and the length of the key: the target's
# name unless its row gives another). The activation targets (kinds act and gated) read act
# from byte 1 (< 224: act = byte % 5, with FFN_FAST where byte % 10 >= 5; 224..231: -1, 5,
# FFN_FAST | 5, INT_MAX, INT_MIN, 256, -208, 4 more bytes), so their seeds have an act byte
# between mode and profile; kind gated adds one input per status, kind opt the optimizer
# steps spelled out. The .npy reader gets small valid files of every format version, byte
# order and dtype (tests/fixtures) and a few damaged ones, the .safetensors reader small
# valid and damaged files; `paths` gets lists of path names
# separated by NUL bytes (valid, of other architectures, near misses).
# Deterministic: running it twice gives the same files.
#
#   CC   the compiler that builds the driver to list the targets (default cc)
cd "$(dirname "$0")/.." || exit 2
C=fuzz/corpus

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
${CC:-cc} -std=c99 -O0 fuzz/fuzz.c support/unit.c -o "$tmp/fuzz" -lm ||
    { echo "make_seeds: cannot build fuzz/fuzz.c"; exit 1; }
"$tmp/fuzz" --seeds > "$tmp/seeds" || exit 1

bytes() {   # bytes SEED COUNT: COUNT pseudo-random bytes as \ooo escapes (an LCG)
    awk -v s="$1" -v n="$2" 'BEGIN {
        for (i = 0; i < n; i++) { s = (s * 1103515245 + 12345) % 2147483648;
                                  printf "\\%03o", int(s / 65536) % 256 } }'
}

while read -r t kind salt k; do
    case $kind in npy|paths|safetensors) continue ;; esac
    rm -rf "${C:?}/$t"
    mkdir -p "$C/$t"
    k=${k:-$t}
    case $kind in
    act|gated)
        # mode:act:profile: each activation with plain values (profile 0); GELU, GELU_TANH,
        # SILU and SIGMOID (4) also in mode 6 (whole SIMD tiles), with specials or raw bits
        # and in mode 7; the FFN_FAST forms (6..9) in mode 6 and with specials; 224, 227, 228
        # (-1, INT_MAX, INT_MIN: invalid); 225, 226 (5, FFN_FAST | 5: FFN_GPT_OSS in the gated
        # blocks, invalid elsewhere). The bytes' LCG seed has a * 23 (+ the row's salt) in it:
        # with that, every profile-0 seed is a call that succeeds in its target (checked when
        # they were chosen; the salts are the first that do it)
        for x in 0:0:0 1:1:0 2:2:0 3:3:0 6:1:0 6:2:1 6:3:0 5:3:2 4:1:3 7:0:3 \
                 0:224:0 3:227:3 7:228:3 0:4:0 6:4:0 5:4:2 \
                 6:6:0 6:7:0 6:8:0 6:9:0 5:6:2 7:7:3 4:8:3 5:9:2 6:225:0 5:226:2; do
            m=${x%%:*} a=${x#*:} p=${x##*:} a=${a%:*}
            # shellcheck disable=SC2059
            printf "\\$(printf %03o "$m")\\$(printf %03o "$a")\\$(printf %03o "$p")$(bytes \
                $((m * 7919 + ${#k} + a * 23 + salt)) 14)" > "$C/$t/seed-mode$m-act$a-profile$p"
        done
        # shellcheck disable=SC2059
        case $kind in gated)
            # and one input per status, spelled out: mode 0, act, profile 0, rows 3, d 5,
            # h 7 (1: the scratch is smaller than x), the scratch byte (4: enough, 0: one
            # float short), the NULL byte (5: w_down, 104: the three biases, 0: none),
            # layout 6 (an output laid over another buffer), nine 0s (the buffers
            # adjacent), the output (0 y, 1 the scratch), the buffer under it (1 x, 5
            # b_up, 6 w_down), where (0 the same start, 1 a float on, 4 its last float on
            # the other's first). Mode 7: act, rows, d, h (9: SIZE_MAX, 31: 5000), the
            # scratch (200: SIZE_MAX; 0, 1: 1), 0.
            s='\000\003\000\003\005\007' z='\000\000\000\000\000\000\000\000\000'
            f=$C/$t/seed-status
            printf '\000\003\000\003\005\000' > "$f-zero-size"
            printf "$s\004\005" > "$f-null-w_down"
            printf "$s\000\000" > "$f-scratch-one-short"
            printf "$s\004\150" > "$f-ok-no-biases"
            printf '\000\004\000\003\005\007\004\000\006'"$z"'\000\001\000' > "$f-ok-y-is-x"
            printf '\000\003\000\003\005\001\004\000\006'"$z"'\001\001\001' > "$f-alias-scratch-in-x"
            printf "$s\004\000\006$z\000\006\001" > "$f-alias-y-on-w_down"
            printf "$s\004\000\006$z\001\005\004" > "$f-alias-scratch-end-on-b_up"
            printf '\007\003\011\001\001\310\000' > "$f-overflow"
            printf '\007\003\037\004\037\000\001\000' > "$f-scratch-huge"
        esac
        continue ;;
    esac
    for m in 0 1 2 3 4 5 6 7; do
        p=$((m % 4))
        # shellcheck disable=SC2059
        printf "\\$(printf %03o $m)\\$(printf %03o $p)$(bytes $((m * 7919 + ${#k})) 14)" \
            > "$C/$t/seed-mode$m-profile$p"
    done
    # the optimizer steps, spelled out: mode 0, profile 0, the five hyperparameter bytes
    # (0: the typical value, 100: 0, 130: 2/96), the flags byte (bit 0 Nesterov, bit 1
    # the first step; from 16 on step 1 + byte % 50), n 5 (or 70: 69), no NULL, layout 0
    case $kind in opt)
        for x in plain:0:0:0:0:0:0:5 nesterov:0:0:0:0:0:1:5 first:0:0:0:0:0:2:69 \
                 no-momentum:0:100:0:100:0:0:5 dampening:0:0:130:0:0:0:5 step1:0:0:0:0:0:50:69; do
            nm=${x%%:*} v=${x#*:}
            # shellcheck disable=SC2059
            printf "\\000\\000$(echo "$v" | awk -F: '{ for (i = 1; i <= NF; i++)
                printf "\\%03o", $i }')\\000\\000" > "$C/$t/seed-ok-$nm"
        done
    esac
done < "$tmp/seeds"

rm -rf "${C:?}/paths"
mkdir -p $C/paths
printf 'auto' > $C/paths/seed-auto
printf '' > $C/paths/seed-empty
printf 'avx512\000avx2\000avx\000sse2\000scalar\000auto' > $C/paths/seed-x86
printf 'neon\000scalar\000neon' > $C/paths/seed-arm
printf 'scalar\000bogus\000avx512' > $C/paths/seed-failure-keeps-path
printf 'AVX2\000avx2 \000 avx\000avx51\000sse\000\000scalar\000auto2' > $C/paths/seed-near-misses

rm -rf "${C:?}/npy"
mkdir -p $C/npy
for f in tests/fixtures/*.npy; do
    cp "$f" "$C/npy/"
done
# damaged: truncated header, wrong magic, version 4, short data, trailing byte
f=$C/npy/arange_v1_lef4.npy
head -c 40 "$f" > $C/npy/bad-truncated.npy
{ printf 'XNUMPY'; tail -c +7 "$f"; } > $C/npy/bad-magic.npy
{ head -c 6 "$f"; printf '\004'; tail -c +8 "$f"; } > $C/npy/bad-version.npy
head -c $(($(wc -c < "$f") - 1)) "$f" > $C/npy/bad-short-data.npy
{ cat "$f"; printf '\000'; } > $C/npy/bad-trailing.npy
# the .safetensors reader: small valid files (two tensors, metadata, an empty tensor, a
# scalar, escaped names) and damaged ones (each a status of examples/safetensors.h)
rm -rf "${C:?}/safetensors"
mkdir -p $C/safetensors
st() {   # st NAME HEADER DATA_BYTES [N]: N (default the header's length), header, data
    n=${4:-$(printf '%s' "$2" | wc -c)}
    # shellcheck disable=SC2059
    { printf "$(printf '\\%03o' $((n % 256)) $((n / 256 % 256)) 0 0 0 0 0 0)"
      printf '%s' "$2"; head -c "$3" /dev/zero | tr '\000' '\101'; } > "$C/safetensors/$1"
}
two='{"a":{"dtype":"BF16","shape":[2,3],"data_offsets":[0,12]},"b":{"dtype":"F32","shape":[2],"data_offsets":[12,20]}}'
st seed-two "$two" 20
st seed-metadata '{"__metadata__":{"format":"pt","k\u00e9":"v\n"},"w":{"dtype":"F16","shape":[4],"data_offsets":[0,8]}}' 8
st seed-empty-and-scalar '{"e":{"dtype":"U8","shape":[0,5],"data_offsets":[0,0]},"s":{"dtype":"F64","shape":[],"data_offsets":[0,8]},"z":{"dtype":"I8","shape":[0],"data_offsets":[8,8]}}' 8
st seed-empty-header '{}' 0
st seed-padded '{"x":{"data_offsets":[0,4],"dtype":"I32","shape":[1]}}      ' 4
st seed-escaped-names '{"\u0061":{"dtype":"BOOL","shape":[1],"data_offsets":[0,1]},"\ud83d\ude00":{"dtype":"U16","shape":[1],"data_offsets":[1,3]}}' 3
st bad-truncated "$two" 19
st bad-header-length "$two" 20 200
st bad-overlap '{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}}' 6
st bad-hole "$two" 24
st bad-dtype '{"a":{"dtype":"BF17","shape":[2],"data_offsets":[0,4]}}' 4
st bad-shape '{"a":{"dtype":"BF16","shape":[3],"data_offsets":[0,4]}}' 4
st bad-duplicate '{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"\u0061":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}' 2
st bad-number '{"a":{"dtype":"U8","shape":[18446744073709551616],"data_offsets":[0,1]}}' 1
echo "make_seeds: $(find $C -type f | wc -l) files in $C/"

#!/bin/sh
# tools/make_seeds.sh - (re)create the committed seed corpus fuzz/corpus/<target>/.
#
# The targets decode their input as: byte 0 = mode (mode % 8 == 7: sizes near the size_t
# limits; 6 and 5: larger shapes), byte 1 = float profile (% 4: plain values, some
# specials, many specials, raw bit patterns), then sizes, NULL choice, memory layout and
# values; past the end of the input a PRNG seeded from the input supplies the rest. So a
# seed of a few bytes already drives a full call. Per target: 8 seeds, modes 0..7 with
# the four profiles, followed by fixed pseudo-random bytes (different per seed) for the
# sizes and the layout. The .npy reader gets small valid files of every format version,
# byte order and dtype (tests/fixtures) and a few damaged ones.
# Deterministic: running it twice gives the same files.
cd "$(dirname "$0")/.." || exit 2
C=fuzz/corpus

bytes() {   # bytes SEED COUNT: COUNT pseudo-random bytes as \ooo escapes (an LCG)
    awk -v s="$1" -v n="$2" 'BEGIN {
        for (i = 0; i < n; i++) { s = (s * 1103515245 + 12345) % 2147483648;
                                  printf "\\%03o", int(s / 65536) % 256 } }'
}

for t in $(grep -v '^#' fuzz/targets.list); do
    [ "$t" = npy ] && continue
    rm -rf "${C:?}/$t"
    mkdir -p "$C/$t"
    for m in 0 1 2 3 4 5 6 7; do
        p=$((m % 4))
        # shellcheck disable=SC2059
        printf "\\$(printf %03o $m)\\$(printf %03o $p)$(bytes $((m * 7919 + ${#t})) 14)" \
            > "$C/$t/seed-mode$m-profile$p"
    done
done

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
echo "make_seeds: $(find $C -type f | wc -l) files in $C/"

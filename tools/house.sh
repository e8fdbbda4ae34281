#!/bin/sh
# tools/house.sh - the shape of the repository, checked (a job of `make test`):
#  list     support/api.h lists exactly the public functions of pe.h and ffn.h (their
#           PEDEF / FFNDEF prototypes), each with the header's types: a compiler assigns
#           every function to a pointer of the row's type with -Werror. Its status lists
#           (PE_STATUSES, FFN_STATUSES) are exactly the headers' status enums, in order.
#  count    the files outside the headers that name each public function (docs, data and
#           user programs aside, see below): at most HOUSE_MAX (4). A function is named in its
#           header, the list, its feature's file in features/ and, for the goldens and the
#           torch side of the bench, reference/make_goldens.py and bench/bench_torch.py.
#  includes the folders include one another one way only: tests, fuzz, bench, tools ->
#           features -> support -> the headers; examples -> support; tests, fuzz -> examples
#           (examples/safetensors.h, tested and fuzzed).
#  layout   each header's table of contents (CONTENTS in its top comment) lists its
#           implementation's regions (/* ==== N. TITLE ==== */) in their order.
# HOUSE_VERBOSE=1 prints every function's count. The last line is the summary.
cd "$(dirname "$0")/.." || exit 2
B=build/house
mkdir -p "$B"
CC=${CC:-cc}
max=${HOUSE_MAX:-4}
fail=0
bad() { echo "FAIL $*"; fail=$((fail + 1)); echo "${1%%:*}" >> "$B/failed"; }
rm -f "$B/failed"

if git rev-parse --git-dir > /dev/null 2>&1; then git ls-files > "$B/files"
else find . -type f ! -path './build/*' ! -path './.git/*' | sed 's#^\./##' | sort > "$B/files"; fi

# ---- list --------------------------------------------------------------------------------
sed -n 's/^\(PEDEF\|FFNDEF\) [^(]*[ *]\([a-z][a-z0-9_]*\)(.*/\2/p' pe.h ffn.h |
    grep -v '__' | sort -u > "$B/headers"
sed -n 's/^    X(\([a-z][a-z0-9_]*\),.*/\1/p' support/api.h | sort > "$B/list"
if ! cmp -s "$B/headers" "$B/list"; then
    bad "list: support/api.h and the headers' prototypes differ (< headers, > list):"
    diff "$B/headers" "$B/list" | grep '^[<>]'
fi
if [ -n "$(uniq -d "$B/list")" ]; then bad "list: listed twice: $(uniq -d "$B/list")"; fi
printf '%s\n' '#include "../../pe.h"' '#include "../../ffn.h"' '#include "../../support/api.h"' \
    '#define HOUSE_CHECK(name, ret, params) ret (*house_##name) params = name;' \
    'PEFFN_API(HOUSE_CHECK)' 'int main(void) { return 0; }' > "$B/list.c"
if ! $CC -std=c99 -Werror -Wall -Wno-unused-variable -c "$B/list.c" -o "$B/list.o" \
    > "$B/list.log" 2>&1; then
    bad "list: a row's types differ from its header's ($B/list.log):"; head -n 5 "$B/list.log"
fi

for h in pe ffn; do
    H=$(echo $h | tr a-z A-Z)
    sed -n "s/^ *\(${H}_OK\|${H}_ERR_[A-Z0-9_]*\) *=.*/\1/p" $h.h > "$B/st_$h.h"
    sed -n "/^#define ${H}_STATUSES/,/^\$/p" support/api.h | grep -o "X(${H}_[A-Z0-9_]*)" |
        sed 's/X(\(.*\))/\1/' > "$B/st_$h.list"
    if ! cmp -s "$B/st_$h.h" "$B/st_$h.list"; then
        bad "list: ${H}_STATUSES and $h.h's status enum differ (< header, > list):"
        diff "$B/st_$h.h" "$B/st_$h.list" | grep '^[<>]'
    fi
done

# ---- count ----------------------------------------------------------------------------
# Not counted: the docs, the goldens and seeds (data), and the programs that call the library
# as a user's program does (examples/, and the tests of how the headers are included:
# test_static.c, test_two_tu_*.c): a new function needs no line in them.
grep -v -e '^pe\.h$' -e '^ffn\.h$' -e '\.md$' -e '^reference/goldens/' -e '^fuzz/corpus/' \
    -e '^examples/' -e '^tests/test_static\.c$' -e '^tests/test_two_tu' "$B/files" > "$B/sources"
top=0 topname=
while read -r f; do
    # shellcheck disable=SC2046
    named=$(grep -lw "$f" $(cat "$B/sources") 2> /dev/null | tr '\n' ' ')
    n=$(echo "$named" | wc -w)
    [ -n "$HOUSE_VERBOSE" ] && echo "$n $f: $named"
    if [ "$n" -gt "$top" ]; then top=$n topname=$f; fi
    [ "$n" -gt "$max" ] && bad "count: $f is named in $n files (at most $max): $named"
done < "$B/headers"

# ---- includes ---------------------------------------------------------------------------
allowed=" tests>features tests>support tests>examples fuzz>features fuzz>support fuzz>examples \
 bench>features bench>support tools>features tools>support features>support examples>support "
grep -E '\.(c|h|inc)$' "$B/sources" | while read -r f; do
    from=$(dirname "$f")
    sed -n 's/^[ \t]*#[ \t]*include[ \t]*"\([^"]*\)".*/\1/p' "$f" | while read -r inc; do
        to=$(dirname "$from/$inc" | sed -e 's#/\./#/#g' -e ':a' -e 's#[^/]*/\.\./##' -e 'ta')
        case $inc in */*) ;; *) to=$from ;; esac
        [ -f "$from/$inc" ] || [ -f "$inc" ] || continue    # a system or generated header
        [ -f "$from/$inc" ] || to=$(dirname "$inc")          # found from the root (-I.)
        from1=${from%%/*} to1=${to%%/*}
        [ "$to1" = . ] && to1=root
        [ "$from1" = "$to1" ] || [ "$to1" = root ] && continue
        case $allowed in *" $from1>$to1 "*) ;; *) echo "FAIL includes: $f includes $inc ($from1 -> $to1)" ;; esac
    done
done > "$B/includes"
if [ -s "$B/includes" ]; then cat "$B/includes"; fail=$((fail + 1)); echo includes >> "$B/failed"; fi

# ---- layout -----------------------------------------------------------------------------
for h in pe.h ffn.h; do
    awk '/CONTENTS/ { on = 1; next } on && /^[ \t]*$/ { exit }
         on && match($0, /^ +[0-9]+\. [A-Z][A-Z0-9 ,\047\/()&+-]*[A-Z0-9)]/) {
             s = substr($0, RSTART, RLENGTH); sub(/^ +/, "", s); print s }' "$h" > "$B/$h.toc"
    sed -n 's#^/\* ==== \([0-9][0-9]*\. [A-Z][A-Z0-9 ,'"'"'/()&+-]*[A-Z0-9)]\) =* \*/$#\1#p' \
        "$h" > "$B/$h.regions"
    if [ ! -s "$B/$h.regions" ] || ! cmp -s "$B/$h.toc" "$B/$h.regions"; then
        bad "layout: $h's CONTENTS and its regions differ (< contents, > regions):"
        diff "$B/$h.toc" "$B/$h.regions" | grep '^[<>]'
    fi
    awk -F. '{ if ($1 != NR) { print "FAIL layout: '"$h"' region " NR " is numbered " $1; exit 1 } }' \
        "$B/$h.regions" || { fail=$((fail + 1)); echo layout >> "$B/failed"; }
done

n=$(wc -l < "$B/headers")
echo "house: $n functions listed; the most named is $topname, in $top files outside its header"
echo "$((4 - $(sort -u "$B/failed" 2> /dev/null | grep -c .))) passed, $(sort -u "$B/failed" 2> /dev/null | grep -c .) failed"
[ "$fail" -eq 0 ]

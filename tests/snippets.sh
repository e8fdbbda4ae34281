#!/bin/sh
# tests/snippets.sh - `make snippets-test` (and the `snippets` job of `make test`): the
# documents' example code, taken verbatim from the files as they are now, so that it
# cannot drift from the headers:
#   README.md  every ```c block of the section "## Using a header", and every ```c block
#              marked with a line <!-- snippet: NAME --> before it
#   pe.h       the code of its top comment's QUICK START section (up to the next heading)
#   ffn.h      its QUICK START section, then the first paragraph of PREPACKED WEIGHTS
#              (which uses the quick start's scratch and n)
# A block with an #include is compiled as a file of its own (plus an empty main); any
# other block runs inside main, after the two headers (their implementations compiled
# once, with CC, and linked in) and the few declarations below: the sizes, ids and
# buffers the snippets assume, filled with small values. Each is built as C99 with CC
# and as C++11 with CXX, at -Wall -Wextra -Wpedantic -Werror, and run: it must exit 0 and
# print nothing on stderr (the snippets print a failing status there). #line points
# compiler messages at the document's line.
# One line per build, then `N passed, N failed`. Builds in build/snippets/<CC>/.
cd "$(dirname "$0")/.." || exit 2
CC=${CC:-cc}
CXX=${CXX:-c++}
B=build/snippets/$(echo "$CC" | tr ' /' '__')
rm -rf "$B"
mkdir -p "$B"
passed=0
failed=0

# Each extracted snippet is $B/NN.snip (its text, with #line directives) and a line
# "NN WHERE" in $B/list.
awk -v dir="$B" '
function start(where, line) {
    n++; out = sprintf("%s/%02d.snip", dir, n)
    printf "%02d %s\n", n, where >> (dir "/list")
    printf "#line %d \"%s\"\n", line, FILENAME > out
}
function stop() { close(out); out = "" }
# README.md
FILENAME == "README.md" && /^## / { using = ($0 == "## Using a header") }
FILENAME == "README.md" && /^<!-- snippet: [^ ]+ -->$/ { mark = $3; next }
FILENAME == "README.md" && /^```c$/ {
    if (using || mark != "")
        start("README.md:" FNR + 1 " " (mark != "" ? mark : "using-a-header"), FNR + 1)
    mark = ""; incode = 1; next
}
FILENAME == "README.md" && /^```/ { if (incode && out) stop(); incode = 0; mark = ""; next }
FILENAME == "README.md" { if (incode && out) print > out; else if ($0 != "") mark = ""; next }
# pe.h, ffn.h: a heading is a line of the top comment with three spaces, then capitals
# (or a version: "2.0: ...").
FNR == 1 { sect = ""; done = 0 }
done { next }
/^\*\// { if (out) stop(); done = 1; next }
/^   ([A-Z][A-Z]+|[0-9]+\.[0-9]+:)( |$)/ {
    if (out) stop()
    sect = ($1 == "QUICK" && $2 == "START") ? "quick" : ($1 == "PREPACKED" ? "packed" : "")
    if (sect == "quick") { start(FILENAME ":" FNR + 1 " QUICK START", FNR + 1); quick[FILENAME] = out }
    para = 0
    next
}
sect == "quick" && out { print > out; next }
# PREPACKED WEIGHTS: its first paragraph, appended to the quick start of the same file
sect == "packed" && !para && $0 != "" && (FILENAME in quick) {
    para = 1; out = quick[FILENAME]
    printf "#line %d \"%s\"\n", FNR, FILENAME >> out
}
sect == "packed" && para { if ($0 == "") { stop(); sect = "" } else print >> out }
' README.md pe.h ffn.h

# The files that must have given snippets (a renamed heading must not pass silently).
for f in 'README.md:[0-9]* using-a-header' 'pe.h:[0-9]* QUICK START' 'ffn.h:[0-9]* QUICK START'; do
    grep -q " $f\$" "$B/list" 2>/dev/null || {
        echo "FAIL ${f%%:*}: no snippet found (the section headings changed?)"
        failed=$((failed + 1)); }
done
[ "$(cat "$B"/*.snip 2>/dev/null | grep -c '^#line .* "ffn.h"$')" -ge 2 ] || {
    echo "FAIL ffn.h: no PREPACKED WEIGHTS code"; failed=$((failed + 1)); }

# The implementations, compiled once (C99, with CC) and linked into every program but
# those of file-scope snippets, which compile them themselves.
if ! printf '#define PE_IMPLEMENTATION\n#include "pe.h"\n#define FFN_IMPLEMENTATION\n#include "ffn.h"\n' |
        $CC -x c -std=c99 -Wall -Wextra -Wpedantic -Werror -O2 -I. -c - -o "$B/impl.o" \
        > "$B/impl.log" 2>&1; then
    echo "FAIL the implementations do not compile with $CC ($B/impl.log)"
    echo "0 passed, 1 failed"
    exit 1
fi

# file_scope N: the snippet has an #include (it is a file, not statements)
file_scope() { grep -q '^[[:space:]]*#[[:space:]]*include' "$B/$1.snip"; }

# wrap N: the snippet $B/N.snip as a program on stdout
wrap() {
    if file_scope "$1"; then
        cat "$B/$1.snip"
        echo 'int main(void) { return 0; }'
        return
    fi
    cat <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include "pe.h"
#include "ffn.h"

/* What the snippets assume. Packed weights take ceil(out / 16) * 16 * in floats. */
enum { B = 2, S = 3, D = 8, H = 16, VOCAB = 11, MAX_LEN = 5, CTX = 4 };
size_t rows = B * S;
int32_t ids[B * S];
float x[B * S * D], y[B * S * D], out[B * S * D], wte[VOCAB * D], wpe[CTX * D];
float fc1_w[H * D], fc1_b[H], fc2_w[D * H], fc2_b[D], w1p[16 * D], w2p[16 * H];

static void fill(float *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) p[i] = (float)(i % 7) * 0.125f - 0.375f;
}

int main(void)
{
    size_t i;
    for (i = 0; i < B * S; i++) ids[i] = (int32_t)(i % VOCAB);
    fill(x, B * S * D); fill(wte, VOCAB * D); fill(wpe, CTX * D);
    fill(fc1_w, H * D); fill(fc1_b, H); fill(fc2_w, D * H); fill(fc2_b, D);
    {
EOF
    cat "$B/$1.snip"
    printf '    }\n    return 0;\n}\n'
}

while read -r id where; do
    wrap "$id" > "$B/$id.c"
    impl=$B/impl.o
    file_scope "$id" && impl=
    for lang in c99 c++; do
        case $lang in
        c99) compiler=$CC flags="-x c -std=c99" exe=$B/$id ;;
        *) compiler=$CXX flags="-x c++ -std=c++11" exe=$B/$id-cxx ;;
        esac
        if ! command -v "${compiler%% *}" > /dev/null 2>&1; then
            echo "FAIL $where ($lang): $compiler not found"; failed=$((failed + 1)); continue
        fi
        # shellcheck disable=SC2086
        if ! $compiler $flags -Wall -Wextra -Wpedantic -Werror -O2 -I. "$B/$id.c" -x none \
                $impl -o "$exe" -lm > "$exe.log" 2>&1; then
            echo "FAIL $where ($lang, $compiler): does not compile ($exe.log; program $B/$id.c)"
            sed -n '1,6s/^/     /p' "$exe.log"
            failed=$((failed + 1))
        elif ! "./$exe" > "$exe.out" 2> "$exe.err" || [ -s "$exe.err" ]; then
            echo "FAIL $where ($lang, $compiler): the program fails: $(head -n 1 "$exe.err")"
            failed=$((failed + 1))
        else
            echo "ok   $where ($lang, $compiler)"
            passed=$((passed + 1))
        fi
    done
done < "$B/list"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]

#!/bin/sh
# check_release.sh - what a user fetching a release relies on (a job of `make test`):
#   1. CHANGELOG.md's newest released entry of each header (a heading
#      "## pe.h X.Y.Z (YYYY-MM-DD, ..." -- "Unreleased" ones do not count) is the version
#      of the header's *_VERSION_STRING: the macros change only when a release is cut.
#   2. README.md's FetchContent snippet (GIT_TAG REF) names a commit of this repository
#      (`git rev-parse --verify REF^{commit}`), and that commit's pe.h and ffn.h carry
#      versions CHANGELOG.md lists as released.
# Step 2 is a SKIP (said so) outside a full git checkout: a tarball, no git, or a shallow
# clone, which lacks the older commits. Run from the repository root; the last line is
# `N passed, N failed` (make test reads it).
cd "$(dirname "$0")/.." || exit 2
passed=0
failed=0
ok() { echo "ok   $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }

# the version string of header $1 (pe.h / ffn.h) in the text on stdin
version_of() { sed -n 's/^#define [A-Z]*_VERSION_STRING "\([0-9.]*\)".*/\1/p' | head -n 1; }
# "HEADER VERSION" for every header a released CHANGELOG.md heading names (one with a date:
# "## pe.h 1.2.0 and ffn.h 1.2.0 (2026-11-23, ..."), newest first
released() {
    awk '/^## / && /\([0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]/ {
        t = $0; sub(/\(.*/, "", t); n = split(t, w, " ")
        for (i = 1; i < n; i++) if (w[i] ~ /^[a-z]+\.h$/) print w[i], w[i + 1] }' CHANGELOG.md
}

for h in pe.h ffn.h; do
    have=$(version_of < "$h")
    want=$(released | awk -v h="$h" '$1 == h { print $2; exit }')
    if [ -n "$have" ] && [ "$have" = "$want" ]; then
        ok "$h $have is CHANGELOG.md's newest released $h"
    else
        bad "$h says ${have:-no version}, CHANGELOG.md's newest released $h is ${want:-none}"
    fi
done

ref=$(sed -n 's/^FetchContent_Declare(peffn .*GIT_TAG \([^ )]*\).*/\1/p' README.md | head -n 1)
if [ -z "$ref" ]; then
    bad "README.md has no FetchContent_Declare(peffn ... GIT_TAG REF) line"
elif ! command -v git > /dev/null 2>&1 || ! git rev-parse --git-dir > /dev/null 2>&1; then
    echo "SKIP README.md's GIT_TAG $ref: not a git checkout (a tarball?), nothing to resolve it in"
elif [ "$(git rev-parse --is-shallow-repository 2>/dev/null)" = true ]; then
    echo "SKIP README.md's GIT_TAG $ref: a shallow clone lacks older commits (git fetch --unshallow)"
elif ! git rev-parse --verify -q "$ref^{commit}" > /dev/null; then
    bad "README.md's GIT_TAG $ref does not resolve to a commit of this repository"
else
    ok "README.md's GIT_TAG $ref resolves to commit $(git rev-parse --short "$ref^{commit}")"
    for h in pe.h ffn.h; do
        v=$(git show "$ref:$h" 2>/dev/null | version_of)
        if [ -n "$v" ] && released | grep -qx "$h $v"; then
            ok "$h at $ref is $v, a release in CHANGELOG.md"
        else
            bad "$h at $ref is ${v:-missing}, which CHANGELOG.md does not list as released"
        fi
    done
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]

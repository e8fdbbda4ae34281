#!/bin/sh
# tools/need.sh - make sure tools exist; install the missing ones with apt-get when run
# as root on Debian/Ubuntu, otherwise say exactly what is missing and fail.
#
# usage: tools/need.sh WHAT=PACKAGE...
#   WHAT is a command name (looked up in PATH) or an absolute path (a file that must
#   exist; shell globs allowed), PACKAGE the Debian package that provides it.
#   NEED_NO_INSTALL=1 only checks (never installs).
# Exit status 0 when everything is there (possibly after installing), 1 otherwise.

have() {
    case "$1" in
    /*) for f in $1; do [ -e "$f" ] && return 0; done; return 1 ;;
    *) command -v "$1" >/dev/null 2>&1 ;;
    esac
}

missing() {
    out=""
    for spec in "$@"; do
        what=${spec%%=*}
        pkg=${spec#*=}
        have "$what" || out="$out $pkg"
    done
    # unique, in order
    printf '%s\n' $out | awk 'NF && !seen[$0]++' | tr '\n' ' '
}

pkgs=$(missing "$@")
[ -z "$pkgs" ] && exit 0

if [ "${NEED_NO_INSTALL:-0}" != 1 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1
then
    echo "need: installing $pkgs"
    export DEBIAN_FRONTEND=noninteractive
    # shellcheck disable=SC2086
    if ! apt-get install -y -q $pkgs >/dev/null 2>&1; then
        apt-get update -q >/dev/null 2>&1
        # shellcheck disable=SC2086
        apt-get install -y -q $pkgs 2>&1 | tail -n 3
    fi
    pkgs=$(missing "$@")
    [ -z "$pkgs" ] && exit 0
fi

echo "need: MISSING tools; install the Debian packages: $pkgs" >&2
for spec in "$@"; do
    have "${spec%%=*}" || echo "need:   ${spec%%=*} (package ${spec#*=})" >&2
done
[ "$(id -u)" = 0 ] || echo "need: (not root, so nothing was installed; run: sudo apt-get install $pkgs)" >&2
exit 1

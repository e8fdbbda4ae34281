# tools/suite.sh - the test suite for one compiler configuration: how each part is
# built and run. Sourced by `make test` (tests/run.sh) and by the portability scripts
# (cross, compilers, sanitize, valgrind, coverage), which only choose configurations.
#
# The library is compiled once per configuration (tests/unit.c -> OUT/unit.o) and
# every part but npy links against it. The parts (run from the repo root):
#   golden   tests/test_golden.c    every golden case on every path  (reference/goldens)
#   errors   tests/test_errors.c    bad inputs, path API, valid calls on every path
#   paths    tests/test_ffn_paths.c every ffn.h path against the scalar path and float64
#   threads  tests/test_threads.c   threads racing through their first call (pthreads)
#   npy      tests/test_npy.c       the .npy reader the golden runner relies on
#   fuzz     fuzz/fuzz.c            every fuzz target on the committed corpus fuzz/corpus
# Each prints `N passed, N failed` (fuzz: `replay: ...`) last and exits non-zero on a
# failure; golden, errors and paths print which paths of pe.h and ffn.h ran.
#
# suite_build OUT "CC" "COMPILE_FLAGS" "LINK_FLAGS" ["LANG_FLAGS"]
#   Builds OUT/<part> for every part of SUITE_PARTS (LANG_FLAGS, e.g. "-x c++", go
#   before everything else). Errors and warnings go to OUT/build.log. Non-zero if a
#   part failed to build.
# suite_run LABEL OUT "RUNNER" ["ENV"]
#   Runs every built part (RUNNER: "", "qemu-s390x", "valgrind ..."), prints
#   `PASS|FAIL LABEL part: <last line> [paths]` per part. Returns the number of failures.

SUITE_MANIFEST=${SUITE_MANIFEST:-reference/goldens/MANIFEST.txt}
SUITE_JOBS=${SUITE_JOBS:-2}
SUITE_PARTS=${SUITE_PARTS:-"golden errors paths npy fuzz"}

suite_source() {
    case $1 in
    golden) echo tests/test_golden.c ;;
    errors) echo tests/test_errors.c ;;
    paths) echo tests/test_ffn_paths.c ;;
    threads) echo tests/test_threads.c ;;
    npy) echo tests/test_npy.c ;;
    fuzz) echo fuzz/fuzz.c ;;
    esac
}

# suite_cmd CMD: runs it, its output (if any) to build.log; remembers a failure
suite_cmd() {
    _s_log=$(mktemp)
    if ! eval "$1" > "$_s_log" 2>&1; then
        { echo "FAILED: $1"; cat "$_s_log"; } >> "$_s_out/build.log"; touch "$_s_out/build.failed"
    elif [ -s "$_s_log" ]; then { echo "WARNINGS: $1"; cat "$_s_log"; } >> "$_s_out/build.log"; fi
    rm -f "$_s_log"
}

suite_build() {
    _s_out=$1 _s_cc=$2 _s_cflags=$3 _s_ldflags=$4 _s_lang=$5
    mkdir -p "$_s_out"
    rm -f "$_s_out/build.log" "$_s_out/build.failed" "$_s_out/unit.o"
    suite_cmd "$_s_cc $_s_lang $_s_cflags -c tests/unit.c -o $_s_out/unit.o"
    [ ! -e "$_s_out/build.failed" ] || return 1
    # (-x none: the object is not a source in the language of LANG_FLAGS)
    _s_unit="$_s_out/unit.o"
    [ -n "$_s_lang" ] && _s_unit="-x none $_s_unit"
    for _s_part in $SUITE_PARTS; do
        _s_extra=
        [ "$_s_part" = threads ] && _s_extra=-lpthread
        printf '%s\0' "$_s_cc $_s_lang $_s_cflags $(suite_source "$_s_part") $_s_unit -o $_s_out/$_s_part $_s_ldflags $_s_extra"
    done | xargs -0 -r -n 1 -P "$SUITE_JOBS" sh -c '
        _s_out=$1; . tools/suite.sh; suite_cmd "$2"' sh "$_s_out"
    [ ! -e "$_s_out/build.failed" ]
}

# "pe avx512 avx sse2 scalar | ffn scalar; skipped avx512 avx2: no such path in this
# build" from a part's log (the "# pe paths: run ...; skipped: ..." lines of
# tests/harness.h), skipped paths grouped by reason
suite_paths() {
    grep -h '^# \(pe\|ffn\) paths: run' "$1" | sort -u -r | awk '
        { lib = $2; line = $0; sub(/^# [a-z]+ paths: run /, "", line)
          run = line; sub(/;.*/, "", run); out = lib " " run
          sk = line; sub(/^[^;]*; skipped: /, "", sk)
          if (sk != "-") {
              n = split(sk, parts, /\), /); delete names; delete order; k = 0
              for (i = 1; i <= n; i++) {
                  p = parts[i]; sub(/\)$/, "", p)
                  name = p; sub(/ .*/, "", name); why = p; sub(/^[^(]*\(/, "", why)
                  if (!(why in names)) order[++k] = why
                  names[why] = names[why] (names[why] == "" ? "" : " ") name }
              for (i = 1; i <= k; i++) out = out "; skipped " names[order[i]] ": " order[i] }
          all = all (all == "" ? "" : " | ") out }
        END { printf "%s", all }'
}

suite_run() {
    _s_label=$1 _s_out=$2 _s_runner=$3 _s_env=$4
    _s_fails=0
    for _s_part in $SUITE_PARTS; do
        case $_s_part in
        golden) _s_args=$SUITE_MANIFEST ;;
        npy) _s_args=tests/fixtures ;;
        fuzz) _s_args=fuzz/corpus ;;
        *) _s_args= ;;
        esac
        if [ ! -x "$_s_out/$_s_part" ]; then
            echo "FAIL $_s_label $_s_part: not built (see $_s_out/build.log)"
            _s_fails=$((_s_fails + 1))
            continue
        fi
        # shellcheck disable=SC2086
        env $_s_env $_s_runner "$_s_out/$_s_part" $_s_args > "$_s_out/$_s_part.log" 2>&1
        _s_rc=$?
        _s_last=$(grep -v '^[[:space:]]*$' "$_s_out/$_s_part.log" | tail -n 1)
        _s_paths=$(suite_paths "$_s_out/$_s_part.log")
        [ -n "$_s_paths" ] && _s_last="$_s_last  [$_s_paths]"
        if [ $_s_rc = 0 ]; then
            echo "PASS $_s_label $_s_part: $_s_last"
        else
            echo "FAIL $_s_label $_s_part: exit $_s_rc: $_s_last   (log: $_s_out/$_s_part.log)"
            _s_fails=$((_s_fails + 1))
        fi
    done
    return $_s_fails
}

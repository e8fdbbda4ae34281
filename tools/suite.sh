# tools/suite.sh - the test suite and its configurations, sourced by `make test`
# (tests/run.sh) and by the portability scripts, which only describe configurations.
#
# The library is compiled once per configuration (support/unit.c -> OUT/unit.o) and
# every part (suite_source below) but npy links against it. Each prints `N passed, N
# failed` (fuzz: `replay: ...`) last and exits non-zero on a failure; golden, errors and
# paths print which paths of pe.h and ffn.h ran.
#
# suite_build OUT "CC" "COMPILE_FLAGS" "LINK_FLAGS"
#   Builds OUT/<part> for every part of SUITE_PARTS, SUITE_JOBS at a time. Errors and
#   warnings go to OUT/build.log. Non-zero if a part failed to build.
# suite_run LABEL OUT "RUNNER" ["ENV"]
#   Runs every built part (RUNNER: "", "qemu-s390x", "wine", "valgrind ..."), SUITE_RUN_JOBS
#   at a time, prints `PASS|FAIL LABEL part: <last line> [paths]` per part. Returns the
#   number of failures.
#
# suite_configs TOOL JOBS NAME...
#   The portability scripts' configurations: B is the build folder, TABLE one line per
#   configuration (`#` lines and blank ones aside):
#       name | cc | compile flags | env | parts (default SUITE_PARTS) | runner
#   Checks that every NAME is in TABLE (exit 2 if not) and that the compilers and
#   runners are installed (tools/need.sh; exit 1 if not), then calls `config` for each,
#   JOBS at a time (default: the number of CPUs), with the fields in $name $cc $flags
#   $env $parts $runner and $out=$B/<name>; `config` (by default suite_test: build,
#   then run) prints PASS/FAIL lines and fails if the configuration does. Prints each
#   configuration's lines as it ends, then `== TOOL summary (N s)` and per configuration
#   `PASS|FAIL name (cc flags, N s)`; sets SUITE_N and SUITE_FAILS (failed ones).
# suite_verdict MESSAGE
#   The last line, `TOOL: MESSAGE` or `TOOL: FAILED (F of N configurations)`, and the
#   exit status 0 or 1.

SUITE_MANIFEST=${SUITE_MANIFEST:-reference/goldens/MANIFEST.txt}
SUITE_JOBS=${SUITE_JOBS:-2}
SUITE_PARTS=${SUITE_PARTS:-"golden errors paths math npy fuzz"}

# suite_pool N FUNC ITEM...: FUNC ITEM for each ITEM, N at a time, each one's output
# printed whole when it ends. The N slots are tokens in a FIFO (POSIX sh has no
# `wait -n`); FUNC runs without the FIFO so that it can run its own pool.
suite_pool() {
    _p_n=$1 _p_fn=$2 _p_k=0
    shift 2
    _p_dir=$(mktemp -d) && mkfifo "$_p_dir/slots" || return 2
    exec 9<>"$_p_dir/slots"
    while [ "$_p_n" -gt 0 ]; do echo >&9; _p_n=$((_p_n - 1)); done
    for _p_item; do
        read -r _p_slot <&9
        _p_k=$((_p_k + 1))
        ( ("$_p_fn" "$_p_item") > "$_p_dir/$_p_k" 2>&1 9>&-; cat "$_p_dir/$_p_k"; echo >&9 ) &
    done
    wait
    exec 9>&-
    rm -rf "$_p_dir"
}

suite_source() {
    case $1 in
    golden) echo tests/test_golden.c ;;       # every golden case on every path
    errors) echo tests/test_errors.c ;;       # bad inputs, path API, valid calls on every path
    paths) echo tests/test_ffn_paths.c ;;     # every ffn.h path vs the scalar path and float64
    threads) echo tests/test_threads.c ;;     # threads racing through their first call;
                                              # ffn.h on a pthreads pool of the caller's
    schedule) echo tests/test_schedule.c ;;   # ffn.h's schedule, every bench shape, T = 1..64
    math) echo tests/test_math.c ;;           # the own math's slow paths, Annex F, subnormals
    npy) echo tests/test_npy.c ;;             # the .npy reader the golden runner relies on
    fuzz) echo fuzz/fuzz.c ;;                 # every fuzz target on the corpus fuzz/corpus
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

# (the object before the flags: a `-x c++` among them would take it for a source)
suite_link() {
    suite_cmd "$_s_cc $_s_out/unit.o $_s_cflags $(suite_source "$1") -o $_s_out/$1 $_s_ldflags$(
        [ "$1" = threads ] && echo ' -lpthread')"
}

suite_build() {
    _s_out=$1 _s_cc=$2 _s_cflags=$3 _s_ldflags=$4
    mkdir -p "$_s_out"
    rm -f "$_s_out/build.log" "$_s_out/build.failed" "$_s_out/unit.o"
    suite_cmd "$_s_cc $_s_cflags -c support/unit.c -o $_s_out/unit.o"
    [ ! -e "$_s_out/build.failed" ] || return 1
    # shellcheck disable=SC2086
    suite_pool "$SUITE_JOBS" suite_link $SUITE_PARTS
    [ ! -e "$_s_out/build.failed" ]
}

# "pe avx512 avx2 sse2 scalar | ffn scalar; skipped avx512 avx2: no such path in this
# build" from a part's log (the "# pe paths: run ...; skipped: ..." lines of
# support/harness.h), skipped paths grouped by reason
suite_paths() {
    tr -d '\r' < "$1" | grep '^# \(pe\|ffn\) paths: run' | sort -u -r | awk '
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

suite_run_part() {
    case $1 in
    golden) _s_args=$SUITE_MANIFEST ;;
    npy) _s_args=tests/fixtures ;;
    fuzz) _s_args=fuzz/corpus ;;
    *) _s_args= ;;
    esac
    _s_bin=$_s_out/$1    # (mingw-w64 writes $1.exe)
    [ -x "$_s_bin" ] || [ ! -f "$_s_bin.exe" ] || _s_bin=$_s_bin.exe
    if [ ! -x "$_s_bin" ]; then
        echo "FAIL $_s_label $1: not built (see $_s_out/build.log)"
        return
    fi
    # shellcheck disable=SC2086
    env $_s_env $_s_runner "$_s_bin" $_s_args > "$_s_out/$1.log" 2>&1
    _s_rc=$?
    # (valgrind's own lines, ==pid==, may follow the program's last one)
    _s_last=$(grep -v -e '^[[:space:]]*$' -e '^==[0-9]*==' "$_s_out/$1.log" | tail -n 1)
    _s_paths=$(suite_paths "$_s_out/$1.log")
    [ -n "$_s_paths" ] && _s_last="$_s_last  [$_s_paths]"
    if [ $_s_rc = 0 ]; then
        echo "PASS $_s_label $1: $_s_last"
    else
        echo "FAIL $_s_label $1: exit $_s_rc: $_s_last   (log: $_s_out/$1.log)"
    fi
}

suite_run() {
    _s_label=$1 _s_out=$2 _s_runner=$3 _s_env=$4
    # shellcheck disable=SC2086
    _s_res=$(suite_pool "${SUITE_RUN_JOBS:-1}" suite_run_part $SUITE_PARTS)
    echo "$_s_res"
    return "$(echo "$_s_res" | grep -c '^FAIL')"
}

suite_test() {
    if ! SUITE_PARTS=$parts suite_build "$out" "$cc" "$flags" -lm; then
        echo "FAIL $name: build failed ($cc $flags):"
        sed -n '1,30p' "$out/build.log"
        return 1
    fi
    SUITE_PARTS=$parts suite_run "$name" "$out" "$runner" "$env"
}
config() { suite_test; }

# suite_row NAME: NAME's line of TABLE, `|` without the spaces around it
suite_row() {
    printf '%s\n' "$TABLE" | awk -v n="$1" '/^ *#/ { next }
        { gsub(/  +/, " "); gsub(/ ?\| ?/, "|"); gsub(/^ | $/, ""); split($0, f, "|") }
        f[1] == n { print; found = 1 } END { exit !found }'
}
# suite_avx512_emu DIR: flags of an AVX2 build that runs the AVX-512 paths on SIMDe (support/
# avx512_emu.h; DIR/avx512_names.h). (POSIX: the -include'd headers come before any part's)
suite_avx512_emu() {
    grep -oh '\b_mm512_[a-z0-9_]*' pe.h ffn.h | sort -u |
        sed 's/.*/#undef &\n#define & simde&/' > "$1/avx512_names.h"
    echo "-D_POSIX_C_SOURCE=200809L -mavx2 -mfma -mf16c -Wno-psabi -include support/avx512_emu.h" \
        "-include $1/avx512_names.h"
}
suite_names() { printf '%s\n' "$TABLE" | awk -F'|' '!/^ *#/ && NF > 1 { gsub(/ /, "", $1); print $1 }'; }

suite_config() {
    IFS='|' read -r name cc flags env parts runner <<EOF
$(suite_row "$1")
EOF
    parts=${parts:-$SUITE_PARTS} out=$B/$1
    mkdir -p "$out" && rm -f "$out/summary"
    _c_t0=$(date +%s)
    _c_res=$(config 2>&1)
    _c_rc=$?
    echo "$_c_res"
    _c_r=PASS
    { [ $_c_rc = 0 ] && ! echo "$_c_res" | grep -q '^FAIL'; } || _c_r=FAIL
    echo "$_c_r $name ($cc $flags, $(($(date +%s) - _c_t0)) s)" > "$out/summary"
}

# suite_need CMD...: tools/need.sh with the Debian package of each command
suite_need() {
    for _n; do
        case $_n in
        cc) echo cc=gcc ;;
        clang*) echo "$_n=clang" ;;
        qemu-*) echo "$_n=qemu-user" ;;
        *-mingw32-gcc) echo "$_n=gcc-mingw-w64-x86-64" ;;
        musl-gcc) echo "$_n=musl-tools" ;;
        *-gcc) _t=${_n%-gcc} _a=${_n%%-*}
            case $_t in aarch64*) _a=arm64 ;; arm*hf) _a=armhf ;; esac
            echo "$_n=gcc-$_t /usr/$_t/lib/libc.a=libc6-dev-$_a-cross" ;;
        *) echo "$_n=$_n" ;;
        esac
    done | xargs sh tools/need.sh
}

suite_configs() {
    SUITE_TOOL=$1 _c_jobs=${2:-$(nproc 2>/dev/null || echo 2)}
    shift 2
    for _c; do
        suite_row "$_c" > /dev/null ||
            { echo "$SUITE_TOOL: no configuration $_c (they are: $(suite_names | tr '\n' ' '))"; exit 2; }
    done
    # shellcheck disable=SC2046
    suite_need $(for _c; do suite_row "$_c" | awk -F'|' '{ split($2 " ", c, " "); split($6 " ", r, " ");
        print c[1], r[1] }'; done | xargs -n 1 | sort -u) || exit 1
    # (the configurations side by side fill the CPUs already)
    [ "$_c_jobs" -gt 1 ] && SUITE_JOBS=1
    _c_start=$(date +%s)
    suite_pool "$_c_jobs" suite_config "$@"
    echo "== $SUITE_TOOL summary ($(($(date +%s) - _c_start)) s)"
    SUITE_N=$# SUITE_FAILS=0
    for _c; do
        cat "$B/$_c/summary" 2>/dev/null || echo "FAIL $_c: no result"
        grep -q '^PASS' "$B/$_c/summary" 2>/dev/null || SUITE_FAILS=$((SUITE_FAILS + 1))
    done
}

suite_verdict() {
    [ "$SUITE_FAILS" = 0 ] && { echo "$SUITE_TOOL: $1"; exit 0; }
    echo "$SUITE_TOOL: FAILED ($SUITE_FAILS of $SUITE_N configurations)"
    exit 1
}

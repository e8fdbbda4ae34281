# tools/suite.sh - build and run "the whole suite" for one compiler configuration.
# Sourced by the portability scripts (cross, compilers, sanitize, valgrind, coverage).
#
# The suite (run from the repo root):
#   golden   tests/test_golden.c   reference/goldens/MANIFEST.txt   -> `N passed, N failed`
#   errors   tests/test_errors.c                                    -> `N passed, N failed`
#   npy      tests/test_npy.c      tests/fixtures                   -> `N passed, N failed`
#   paths    tests/test_ffn_paths.c (fast vs scalar; if present)    -> its last line
#   fuzz     fuzz/replay_all.c + every fuzz target, run on the committed corpus
#            fuzz/corpus/<target>/ (each input re-checked: status, no stray write,
#            fast == scalar)                                       -> `replay: ...`
#
# suite_build OUT "CC" "COMPILE_FLAGS" "LINK_FLAGS" ["LANG_FLAGS"]
#   Builds OUT/<part> for every part; LANG_FLAGS (e.g. "-x c++") go to compiles only.
#   Compile errors are in OUT/build.log. Returns non-zero if anything failed to build.
# suite_run LABEL OUT "RUNNER" ["ENV"]
#   Runs every built part (RUNNER: "", "qemu-s390x", "valgrind ..."), prints
#   `PASS|FAIL LABEL part: <last line>` per part. Returns the number of failures.

SUITE_MANIFEST=${SUITE_MANIFEST:-reference/goldens/MANIFEST.txt}
SUITE_JOBS=${SUITE_JOBS:-2}
SUITE_PARTS=${SUITE_PARTS:-"golden errors npy paths fuzz"}
FUZZ_TARGETS=$(grep -v '^#' fuzz/targets.list)

# suite_cmds OUT CC CFLAGS LDFLAGS LANG: prints one shell command per line (compiles
# and links); lines starting with "LINK " run after all compiles.
suite_cmds() {
    _s_out=$1 _s_cc=$2 _s_cflags=$3 _s_ldflags=$4 _s_lang=$5
    for _s_part in $SUITE_PARTS; do
        case $_s_part in
        golden) echo "LINK $_s_cc $_s_lang $_s_cflags tests/test_golden.c -o $_s_out/golden $_s_ldflags" ;;
        errors) echo "LINK $_s_cc $_s_lang $_s_cflags tests/test_errors.c -o $_s_out/errors $_s_ldflags" ;;
        npy) echo "LINK $_s_cc $_s_lang $_s_cflags tests/test_npy.c -o $_s_out/npy $_s_ldflags" ;;
        paths)
            # one file, three compiles: scalar unit, fast unit, the test (see its header)
            [ -f tests/test_ffn_paths.c ] || continue
            for _s_u in 1:scalar 2:fast 0:main; do
                _s_def="-DTEST_FFN_UNIT=${_s_u%%:*}"
                [ "${_s_u%%:*}" = 0 ] && _s_def=
                echo "$_s_cc $_s_lang $_s_cflags $_s_def -c tests/test_ffn_paths.c -o $_s_out/obj/paths_${_s_u#*:}.o"
            done
            echo "LINK $_s_cc $_s_cflags $_s_out/obj/paths_main.o $_s_out/obj/paths_scalar.o $_s_out/obj/paths_fast.o -o $_s_out/paths $_s_ldflags" ;;
        fuzz)
            _s_objs=""
            for _s_t in $FUZZ_TARGETS; do
                echo "$_s_cc $_s_lang $_s_cflags -DLLVMFuzzerTestOneInput=fz_target_$_s_t -c fuzz/fuzz_$_s_t.c -o $_s_out/obj/fuzz_$_s_t.o"
                _s_objs="$_s_objs $_s_out/obj/fuzz_$_s_t.o"
            done
            for _s_s in impl_fast impl_scalar replay_all; do
                echo "$_s_cc $_s_lang $_s_cflags -c fuzz/$_s_s.c -o $_s_out/obj/$_s_s.o"
                _s_objs="$_s_objs $_s_out/obj/$_s_s.o"
            done
            echo "LINK $_s_cc $_s_cflags$_s_objs -o $_s_out/fuzz $_s_ldflags" ;;
        esac
    done
}

suite_build() {
    _s_out=$1
    mkdir -p "$_s_out/obj"
    rm -f "$_s_out/build.log" "$_s_out/build.failed"
    suite_cmds "$@" > "$_s_out/cmds"
    # compiles in parallel, then the links (also in parallel)
    for _s_phase in compile link; do
        if [ $_s_phase = compile ]; then grep -v '^LINK ' "$_s_out/cmds"; else sed -n 's/^LINK //p' "$_s_out/cmds"; fi |
        while IFS= read -r _s_cmd; do printf '%s\0' "$_s_cmd"; done |
        xargs -0 -r -n 1 -P "$SUITE_JOBS" sh -c '
            log=$(mktemp); if ! eval "$1" > "$log" 2>&1; then
              { echo "FAILED: $1"; cat "$log"; } >> "'"$_s_out"'/build.log"; touch "'"$_s_out"'/build.failed"
            elif [ -s "$log" ]; then { echo "WARNINGS: $1"; cat "$log"; } >> "'"$_s_out"'/build.log"; fi
            rm -f "$log"' sh
    done
    [ ! -e "$_s_out/build.failed" ]
}

# suite_run LABEL OUT RUNNER ENV
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
            if [ "$_s_part" = paths ] && [ ! -f tests/test_ffn_paths.c ]; then continue; fi
            echo "FAIL $_s_label $_s_part: not built (see $_s_out/build.log)"
            _s_fails=$((_s_fails + 1))
            continue
        fi
        # shellcheck disable=SC2086
        env $_s_env $_s_runner "$_s_out/$_s_part" $_s_args > "$_s_out/$_s_part.log" 2>&1
        _s_rc=$?
        _s_last=$(grep -v '^[[:space:]]*$' "$_s_out/$_s_part.log" | tail -n 1)
        if [ $_s_rc = 0 ]; then
            echo "PASS $_s_label $_s_part: $_s_last"
        else
            echo "FAIL $_s_label $_s_part: exit $_s_rc: $_s_last   (log: $_s_out/$_s_part.log)"
            _s_fails=$((_s_fails + 1))
        fi
    done
    return $_s_fails
}

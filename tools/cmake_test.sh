#!/bin/sh
# tools/cmake_test.sh - `make cmake-test`: CMakeLists.txt's targets and package, used the
# ways a C or C++ project would, by examples/cmake-consumer (its main.c defines both
# IMPLEMENTATION macros and calls pe.h and ffn.h):
#   subdirectory   add_subdirectory(<this repository>)
#   fetchcontent   FetchContent_Declare(peffn SOURCE_DIR <this repository>) (no network)
#   install        cmake --install of this repository into a fresh prefix (its files
#                  checked), then the consumer through find_package(peffn 1.0 COMPONENTS ..)
#   pkg-config     cc main.c $(pkg-config --cflags --libs peffn), as C99 and as C++
# Every consumer program is run. One line per step, then `N passed, N failed`; logs in
# build/cmake-test/. Needs cmake and pkg-config (installed with apt-get when run as root,
# tools/need.sh).
cd "$(dirname "$0")/.." || exit 2
root=$(pwd)
B=$root/build/cmake-test
CC=${CC:-cc}
CXX=${CXX:-c++}
consumer=$root/examples/cmake-consumer
passed=0
failed=0

if ! sh tools/need.sh cmake=cmake pkg-config=pkg-config; then
    echo "0 passed, 1 failed"
    exit 1
fi
rm -rf "$B"
mkdir -p "$B"

# step NAME COMMANDS: runs COMMANDS (sh -c) with its output in $B/NAME.log
step() {
    if sh -c "$2" > "$B/$1.log" 2>&1; then
        echo "ok   $1: $(tail -n 1 "$B/$1.log")"
        passed=$((passed + 1))
    else
        echo "FAIL $1 (log: $B/$1.log)"
        tail -n 5 "$B/$1.log" | sed 's/^/     /'
        failed=$((failed + 1))
    fi
}

# consumer WAY [CMAKE ARGS]: configure, build and run examples/cmake-consumer
consumer() {
    way=$1
    shift
    echo "cmake -S '$consumer' -B '$B/$way' -DCMAKE_C_COMPILER='$CC' -DPEFFN_VIA=$way $* &&
          cmake --build '$B/$way' && '$B/$way/consumer'"
}

step subdirectory "$(consumer subdirectory)"
step fetchcontent "$(consumer fetchcontent)"

prefix=$B/prefix
step install "cmake -S '$root' -B '$B/lib' &&
    cmake --install '$B/lib' --prefix '$prefix' &&
    for f in include/peffn/pe.h include/peffn/ffn.h share/cmake/peffn/peffnConfig.cmake \
             share/cmake/peffn/peffnConfigVersion.cmake share/cmake/peffn/peffnTargets.cmake \
             share/pkgconfig/peffn.pc share/doc/peffn/LICENSE; do
        test -f '$prefix'/\$f || { echo \"missing: \$f\"; exit 1; }
    done &&
    cmp '$root/pe.h' '$prefix/include/peffn/pe.h' && cmp '$root/ffn.h' '$prefix/include/peffn/ffn.h' &&
    echo \"installed into build/cmake-test/prefix\""
step find_package "$(consumer package -DCMAKE_PREFIX_PATH="$prefix")"

pc="PKG_CONFIG_PATH='$prefix/share/pkgconfig' pkg-config"
step pkg-config "v=\$($pc --modversion peffn) && echo \"peffn.pc version \$v\" &&
    $CC -std=c99 -Wall -Wextra -Wpedantic -Werror -O2 '$consumer/main.c' \
        \$($pc --cflags --libs peffn) -o '$B/pc_consumer' && '$B/pc_consumer'"
if command -v "$CXX" > /dev/null 2>&1; then
    step pkg-config-c++ "$CXX -x c++ -std=c++11 -Wall -Wextra -Wpedantic -Werror -O2 \
        '$consumer/main.c' -x none \$($pc --cflags --libs peffn) -o '$B/pc_consumer_cxx' &&
        '$B/pc_consumer_cxx'"
else
    echo "skip pkg-config-c++: $CXX not found"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]

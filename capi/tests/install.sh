#!/bin/sh
# Installs the C API with CMake under a temporary prefix (capi/CMakeLists.txt), then builds and runs C programs
# against the installed copy only, three ways: with pkg-config (tpack.pc: the shared library; tpack-static.pc:
# the static one) and with CMake's find_package(tpack) (capi/examples/CMakeLists.txt, tpack::tpack: every example,
# run by capi/examples/run.sh). Also checks the installed libraries' exports (check-exports.sh).
#
#   capi/tests/install.sh          from anywhere in the repository
#
# Reuses the repository's target/ for cargo (TPACK_CARGO_TARGET_DIR), so after `cargo build -p tpack-capi
# --release` it builds nothing in Rust. Needs cmake (3.16+), pkg-config, cc and cargo.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
work="$root/target/capi-install"
prefix="$work/prefix"
rm -rf "$work"
mkdir -p "$work"
model="$root/embedded/tiny-mlp/tiny-mlp.tpack"

cmake -S "$root/capi" -B "$work/build" -DTPACK_CARGO_TARGET_DIR="$root/target" >/dev/null
cmake --build "$work/build" >/dev/null
# Installed in one place, then moved: the package files find everything relative to themselves.
cmake --install "$work/build" --prefix "$work/first-prefix" >/dev/null
mv "$work/first-prefix" "$prefix"
libdir=$(cd "$prefix" && ls -d lib*/pkgconfig | head -1 | xargs dirname)
for f in include/tpack.h "$libdir/libtpack.a" "$libdir/libtpack.so" "$libdir/pkgconfig/tpack.pc" \
    "$libdir/pkgconfig/tpack-static.pc" "$libdir/cmake/tpack/tpackConfig.cmake" \
    "$libdir/cmake/tpack/tpackConfigVersion.cmake"; do
    [ -f "$prefix/$f" ] || { echo "install: $f not installed under $prefix" >&2; exit 1; }
done
"$root/capi/tests/check-exports.sh" "$prefix/$libdir/libtpack.a" "$prefix/$libdir/libtpack.so"

# The build tree's copy must not be what the programs find: everything below comes from the prefix.
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
cflags="-std=c99 -Wall -Wextra -Werror -pedantic"

# pkg-config, shared library: the program needs libtpack.so at run time (here through its rpath).
# shellcheck disable=SC2046 # pkg-config's output is a list of flags
cc $cflags "$root/capi/examples/inspect.c" $(pkg-config --cflags --libs tpack) \
    -Wl,-rpath,"$(pkg-config --variable=libdir tpack)" -o "$work/inspect-shared"
readelf -d "$work/inspect-shared" | grep -q 'NEEDED.*\[libtpack\.so\]' ||
    { echo "install: inspect-shared does not load libtpack.so" >&2; exit 1; }
"$work/inspect-shared" "$model" | grep -q '^fc1.weight  F32 \[8, 4\]'

# pkg-config, static library: nothing of tpack is loaded at run time.
# shellcheck disable=SC2046
cc $cflags "$root/capi/examples/inspect.c" $(pkg-config --cflags --libs tpack-static) -o "$work/inspect-static"
if readelf -d "$work/inspect-static" | grep -q 'libtpack'; then
    echo "install: inspect-static loads libtpack at run time" >&2
    exit 1
fi
"$work/inspect-static" "$model" | grep -q '^fc2.weight  I8 \[3, 8\]'

# find_package(tpack), as a project of one's own would: the examples' CMakeLists.txt, with ASan and UBSan (a
# misaligned read in an example, or a leak, fails here). Then the examples run as the docs show them.
cmake -S "$root/capi/examples" -B "$work/examples" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_C_FLAGS="-g -fsanitize=address,undefined -fno-sanitize-recover=undefined" >/dev/null
cmake --build "$work/examples" >/dev/null
"$root/capi/examples/run.sh" "$work/examples"

# find_package(tpack) with the shared library, tpack::tpack_shared: CMake's build RPATH finds it at run time.
mkdir -p "$work/shared-project"
cat > "$work/shared-project/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.16)
project(shared_consumer C)
find_package(tpack 0.1 REQUIRED)
add_executable(inspect "$root/capi/examples/inspect.c")
target_link_libraries(inspect PRIVATE tpack::tpack_shared)
CMAKE
cmake -S "$work/shared-project" -B "$work/shared-build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/shared-build" >/dev/null
readelf -d "$work/shared-build/inspect" | grep -q 'NEEDED.*\[libtpack\.so\]' ||
    { echo "install: the tpack::tpack_shared program does not load libtpack.so" >&2; exit 1; }
"$work/shared-build/inspect" "$model" | grep -q '^fc2.scale  F32 \[\]'
echo "install: installed under a temporary prefix; built against it with pkg-config and find_package(tpack) (static and shared), and run"

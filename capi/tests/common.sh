# Sourced by run-c.sh and build-conformance.sh (POSIX sh): where things are, the system libraries a Rust
# staticlib links against, and the static library itself. Sets root, capi, out (created), cc and libs.

root=$(cd "$(dirname "$0")/../.." && pwd)
capi="$root/capi"
out="$root/target/capi"
cc=${CC:-cc}
mkdir -p "$out"

# The libraries a Rust staticlib needs from the system (what `rustc --print native-static-libs` lists on
# Linux).
libs="-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc"

# Builds the static library as $out/libtpack.a: an rlib crate built as a staticlib (see capi/Cargo.toml for
# why not `crate-type`). Unwinding must reach `catch_unwind`, so the profile keeps panic = "unwind" (cargo's
# default).
build_static_lib() {
    (cd "$root" && cargo rustc -p tpack-capi --release --crate-type staticlib --quiet)
    cp "$root/target/release/libtpack_capi.a" "$out/libtpack.a"
}

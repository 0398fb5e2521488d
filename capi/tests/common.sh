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

# Builds the static library the C tests link as $out/libtpack.a: the shipped one (`cargo build -p tpack-capi`,
# then capi/localize-symbols.sh: only the header's functions global) plus the test hook `tpack_test_panic`
# (feature `test-hooks`, kept global too), which the shipped one never has. Only the static library: `cargo rustc
# --crate-type staticlib`. Unwinding must reach `catch_unwind`, so the profile keeps panic = "unwind" (cargo's
# default). Then the shipped libraries are built again, so that target/release never holds the test build (cargo
# keeps both: the second build only links).
build_static_lib() {
    (cd "$root" && cargo rustc -p tpack-capi --release --features test-hooks --crate-type staticlib --quiet)
    "$capi/localize-symbols.sh" "$root/target/release/libtpack.a" "$out/libtpack.a" tpack_test_panic
    (cd "$root" && cargo build -p tpack-capi --release --quiet)
}

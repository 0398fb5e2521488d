#!/bin/sh
# Builds the static library, compiles capi/tests/c/smoke.c against include/tpack.h with AddressSanitizer and
# UBSan, and runs it over every vector of spec/vectors (the list comes from spec/vectors/manifest.json).
#
#   capi/tests/run-c.sh            from anywhere in the repository
#   CC=clang capi/tests/run-c.sh   another compiler
#
# Needs cargo, a C compiler with -fsanitize=address,undefined (gcc or clang) and jq.
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
capi="$root/capi"
out="$root/target/capi"
cc=${CC:-cc}
mkdir -p "$out"

# The static library: an rlib crate built as a staticlib (see capi/Cargo.toml for why not `crate-type`).
# Unwinding must reach `catch_unwind`, so the profile keeps panic = "unwind" (cargo's default).
(cd "$root" && cargo rustc -p tpack-capi --release --crate-type staticlib --quiet)
cp "$root/target/release/libtpack_capi.a" "$out/libtpack.a"

jq -r '.vectors[] | if .valid
    then "V \(.decoding.entries | length) \(.decoding.metadata | length) \(.file)"
    else "I \(.rule) \(.file)" end' "$root/spec/vectors/manifest.json" > "$out/vectors.list"

# The libraries a Rust staticlib needs from the system (what `rustc --print native-static-libs` lists on
# Linux).
libs="-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc"
"$cc" -std=c11 -Wall -Wextra -Werror -pedantic -g -O1 -fno-omit-frame-pointer \
    -fsanitize=address,undefined -fno-sanitize-recover=undefined \
    -I "$capi/include" "$capi/tests/c/smoke.c" "$out/libtpack.a" $libs -o "$out/smoke"

"$out/smoke" "$out/vectors.list" "$root/spec/vectors"

#!/bin/sh
# Checks that the shipped C libraries define the functions of include/tpack.h as their only global symbols: no
# test hook (tpack_test_panic is behind the non-default feature `test-hooks`), no Rust standard library, no
# compiler_builtins helper, no stray C symbol.
#
#   capi/tests/check-exports.sh                     builds `cargo build -p tpack-capi --release`, makes the
#                                                   shipped static library target/release/dist/libtpack.a from
#                                                   cargo's (capi/localize-symbols.sh), checks it and
#                                                   target/release/libtpack.so
#   capi/tests/check-exports.sh LIBTPACK.a LIBTPACK.so   checks those files (an installed copy), builds nothing
#
# Each library's global defined symbols, read with `nm -g --defined-only` (for libtpack.so also its dynamic table,
# `nm -D`), must be exactly the header's functions. Cargo's own target/release/libtpack.a fails this (it holds the
# Rust standard library's symbols as they are): it is not the shipped one.
# Needs nm (binutils) and cc (capi/header-functions.sh reads the header through the preprocessor).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ $# -eq 2 ]; then
    static=$1 shared=$2
elif [ $# -eq 0 ]; then
    (cd "$root" && cargo build -p tpack-capi --release --quiet)
    mkdir -p "$root/target/release/dist"
    "$root/capi/localize-symbols.sh" "$root/target/release/libtpack.a" "$root/target/release/dist/libtpack.a"
    static=$root/target/release/dist/libtpack.a shared=$root/target/release/libtpack.so
else
    echo "usage: check-exports.sh [LIBTPACK.a LIBTPACK.so]" >&2
    exit 2
fi

"$root/capi/header-functions.sh" > "$tmp/header"
count=$(wc -l < "$tmp/header")

status=0
# check NAME LISTING: LISTING (a file of symbol names) must be the header's functions.
check() {
    sort -u "$2" > "$2.sorted"
    if ! diff -u "$tmp/header" "$2.sorted" > "$2.diff"; then
        echo "check-exports: $1 is not exactly the header's functions (- header only, + library only):" >&2
        grep '^[-+][^-+]' "$2.diff" | head -20 >&2
        extra=$(grep -c '^+[^+]' "$2.diff" || true)
        [ "$extra" -le 20 ] || echo "  ... ($extra symbols in the library only)" >&2
        status=1
    fi
}
nm -D --defined-only "$shared" | awk '{ print $NF }' > "$tmp/shared-dynamic"
check "the dynamic symbol table of $shared" "$tmp/shared-dynamic"
nm -g --defined-only "$shared" | awk '{ print $NF }' > "$tmp/shared-global"
check "the global defined symbols of $shared" "$tmp/shared-global"
nm -g --defined-only "$static" 2>/dev/null | awk 'NF == 3 { print $3 }' > "$tmp/static-global"
check "the global defined symbols of $static" "$tmp/static-global"

[ "$status" -eq 0 ] && echo "check-exports: $static and $shared define the $count functions of tpack.h as their only global symbols"
exit "$status"

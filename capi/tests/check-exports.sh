#!/bin/sh
# Checks that the shipped C libraries export the functions of include/tpack.h and nothing else: no test hook
# (tpack_test_panic is behind the non-default feature `test-hooks`), no stray C symbol.
#
#   capi/tests/check-exports.sh                     builds `cargo build -p tpack-capi --release`, checks
#                                                   target/release/libtpack.a and libtpack.so
#   capi/tests/check-exports.sh LIBTPACK.a LIBTPACK.so   checks those files (an installed copy), builds nothing
#
# libtpack.so: its dynamic symbol table (`nm -D --defined-only`) must be exactly the header's functions.
# libtpack.a: a Rust static library also holds the Rust standard library and compiler_builtins, whose symbols
# are Rust-mangled (_ZN..., _R...) and are skipped. Of the rest, the tpack_* symbols must be exactly the header's
# functions, and everything else must be what rustc and LLVM always leave there: compiler_builtins' C runtime
# helpers (__udivti3, __muloti4, ...: weak or in every compiler runtime), LLVM's hashed anon.<hash>.<n>.llvm.<n>
# constants and the DW.ref.rust_eh_personality reference.
# Needs nm (binutils) and cc (to read the header through the preprocessor: comments never count).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ $# -eq 2 ]; then
    static=$1 shared=$2
elif [ $# -eq 0 ]; then
    (cd "$root" && cargo build -p tpack-capi --release --quiet)
    static=$root/target/release/libtpack.a shared=$root/target/release/libtpack.so
else
    echo "usage: check-exports.sh [LIBTPACK.a LIBTPACK.so]" >&2
    exit 2
fi

# The header's functions: every `tpack_name(` of the preprocessed header that is not a function pointer's
# `(*tpack_name)(`.
cc -E -P -I "$root/capi/include" "$root/capi/include/tpack.h" | tr -s ' \t' ' ' |
    grep -o '[(* ]*tpack_[a-z0-9_]* *(' | grep -v '(\*' | grep -o 'tpack_[a-z0-9_]*' | sort -u > "$tmp/header"
count=$(wc -l < "$tmp/header")
[ "$count" -gt 50 ] || { echo "check-exports: only $count functions found in tpack.h" >&2; exit 1; }

status=0
nm -D --defined-only "$shared" | awk '{ print $NF }' | sort -u > "$tmp/shared"
if ! diff -u "$tmp/header" "$tmp/shared" > "$tmp/shared.diff"; then
    echo "check-exports: $shared does not export exactly the header's functions (- header only, + library only):" >&2
    grep '^[-+][^-+]' "$tmp/shared.diff" >&2
    status=1
fi

nm -g --defined-only "$static" 2>/dev/null | awk 'NF == 3 { print $3 }' | grep -v -E '^(_ZN|_R)' | sort -u > "$tmp/static-all"
grep '^tpack_' "$tmp/static-all" > "$tmp/static" || true
if ! diff -u "$tmp/header" "$tmp/static" > "$tmp/static.diff"; then
    echo "check-exports: $static does not define exactly the header's tpack_* functions (- header only, + library only):" >&2
    grep '^[-+][^-+]' "$tmp/static.diff" >&2
    status=1
fi
if grep -v '^tpack_' "$tmp/static-all" |
    grep -v -E '^(__[a-z][a-z0-9_]*|anon\.[0-9a-f]+\.[0-9]+\.llvm\.[0-9]+|DW\.ref\.rust_eh_personality)$' > "$tmp/static-other"; then
    echo "check-exports: $static defines global symbols that are neither the header's nor Rust's:" >&2
    head -20 "$tmp/static-other" >&2
    status=1
fi
[ "$status" -eq 0 ] && echo "check-exports: libtpack.a and libtpack.so export the $count functions of tpack.h and nothing else"
exit "$status"

#!/bin/sh
# Makes the shipped static library from the one cargo builds: one relocatable object whose only global symbols
# are the functions of capi/include/tpack.h, in an archive of its own.
#
#   capi/localize-symbols.sh IN.a OUT.a [SYMBOL ...]
#
# cargo's staticlib (target/release/libtpack.a) holds the Rust standard library and compiler_builtins as they
# are, so it defines about 2,000 global symbols besides tpack's: Rust-mangled ones, and C runtime helpers
# (__udivti3, ...) that would take the place of a program's own. Two Rust static libraries in one program then
# clash, and a C program may bind to Rust's helpers unawares (rust-lang/rust#104707). Here:
#   1. `ld -r --whole-archive` links every member into one relocatable object, keeping only the sections that
#      the header's functions reach (`--gc-sections` with each of them as a root, `-u`); each function still has
#      a section of its own, so a program's `--gc-sections` still drops what it does not call;
#   2. `objcopy --keep-global-symbols` makes every other symbol local (the object's own references stay bound,
#      inside it), and removes the LLVM bitcode sections (.llvmbc, .llvmcmd: merged by ld -r, binutils' LLVM
#      plugin can no longer read them, and nothing links against them);
#   3. `ar` archives that object alone.
# Symbols the object needs from outside (libc, libgcc_s's unwinder) stay undefined, as before. SYMBOL arguments are
# kept global too (the C tests' hook tpack_test_panic). ELF only (Linux, the BSDs): GNU ld and binutils objcopy;
# $LD, $OBJCOPY, $AR and $CC (for the header) override the tools.
set -eu
[ $# -ge 2 ] || { echo "usage: localize-symbols.sh IN.a OUT.a [SYMBOL ...]" >&2; exit 2; }
in=$1 out=$2
shift 2
capi=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$capi/header-functions.sh" > "$tmp/keep"
for symbol in "$@"; do echo "$symbol" >> "$tmp/keep"; done
# One -u per symbol kept: the roots of ld's garbage collection.
roots=$(sed 's/^/-u /' "$tmp/keep")
# shellcheck disable=SC2086 # $roots is a list of flags
${LD:-ld} -r --gc-sections $roots --whole-archive "$in" -o "$tmp/tpack.o"
${OBJCOPY:-objcopy} --remove-section=.llvmbc --remove-section=.llvmcmd --keep-global-symbols="$tmp/keep" \
    "$tmp/tpack.o" "$tmp/tpack-local.o"
mv "$tmp/tpack-local.o" "$tmp/tpack.o"
rm -f "$out.tmp"
${AR:-ar} rcs "$out.tmp" "$tmp/tpack.o"
mv "$out.tmp" "$out"

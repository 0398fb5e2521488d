#!/bin/sh
# Prints the functions that capi/include/tpack.h declares, one per line, sorted: every `tpack_name(` of the
# header run through the preprocessor (so comments never count) that is not a function pointer's `(*tpack_name)(`.
# The list of symbols the shipped libraries export (capi/localize-symbols.sh keeps these global, and
# capi/tests/check-exports.sh checks that nothing else is). Fails if it finds fewer than 50 (a header it cannot
# read). Needs a C compiler: $CC, default cc.
set -eu
capi=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
${CC:-cc} -E -P -I "$capi/include" "$capi/include/tpack.h" | tr -s ' \t' ' ' |
    grep -o '[(* ]*tpack_[a-z0-9_]* *(' | grep -v '(\*' | grep -o 'tpack_[a-z0-9_]*' | sort -u > "$tmp"
count=$(wc -l < "$tmp")
[ "$count" -gt 50 ] || { echo "header-functions: only $count functions found in tpack.h" >&2; exit 1; }
cat "$tmp"

#!/bin/sh
# Checks capi/include/tpack.h: that it is what cbindgen makes of capi/src now, and that it compiles on its own
# as C99 and as C++ with every warning an error.
#
#   capi/check-header.sh            check
#   capi/check-header.sh --update   regenerate the checked-in header, then check
#
# Needs cbindgen (`cargo install cbindgen`) and cc; c++ when installed.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
capi="$root/capi"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

(cd "$root" && cbindgen --quiet --config capi/cbindgen.toml --crate tpack-capi-rlib --output "$tmp/tpack.h")
if [ "${1:-}" = "--update" ]; then
    cp "$tmp/tpack.h" "$capi/include/tpack.h"
fi
if ! diff -u "$capi/include/tpack.h" "$tmp/tpack.h"; then
    echo "check-header: capi/include/tpack.h is out of date; run capi/check-header.sh --update" >&2
    exit 1
fi

cc -std=c99 -Wall -Wextra -Werror -pedantic -I "$capi/include" -c "$capi/tests/c/header.c" -o "$tmp/header-c.o"
echo "check-header: C99 ok"
if command -v c++ >/dev/null 2>&1; then
    c++ -x c++ -Wall -Wextra -Werror -pedantic -I "$capi/include" -c "$capi/tests/c/header.c" -o "$tmp/header-cxx.o"
    echo "check-header: C++ ok"
else
    echo "check-header: no c++, C++ not checked"
fi
echo "check-header: capi/include/tpack.h is current"

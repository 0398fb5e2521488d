#!/bin/sh
# Builds the C conformance reader (capi/tests/c/conformance_reader.c) against include/tpack.h and the host
# static library, twice:
#
#   target/capi/conformance_reader        C99, -Wall -Wextra -Werror -pedantic, AddressSanitizer + UBSan
#   target/capi/conformance_reader-ubsan  the same with UBSan only (-O2), for selftest.py: it runs the
#                                         reader on paths that are not files under a 2 GiB RLIMIT_DATA, and
#                                         an ASan process (terabytes of shadow mappings) cannot start there
#
# Then, from the repository root:
#   python3 spec/conformance/run.py -- target/capi/conformance_reader
#   python3 spec/conformance/selftest.py -- target/capi/conformance_reader-ubsan
#
#   capi/tests/build-conformance.sh            from anywhere in the repository
#   CC=clang capi/tests/build-conformance.sh   another compiler
#   SKIP_LIB=1 ...                             reuse target/capi/libtpack.a (run-c.sh has just built it)
set -eu

. "$(dirname "$0")/common.sh"
if [ "${SKIP_LIB:-0}" != 1 ] || [ ! -f "$out/libtpack.a" ]; then
    build_static_lib
fi

warn="-std=c99 -Wall -Wextra -Werror -pedantic"
"$cc" $warn -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined \
    -I "$capi/include" "$capi/tests/c/conformance_reader.c" "$out/libtpack.a" $libs -o "$out/conformance_reader"
"$cc" $warn -O2 -fsanitize=undefined -fno-sanitize-recover=undefined \
    -I "$capi/include" "$capi/tests/c/conformance_reader.c" "$out/libtpack.a" $libs -o "$out/conformance_reader-ubsan"
echo "built $out/conformance_reader and $out/conformance_reader-ubsan with $cc"

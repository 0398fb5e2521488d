#!/bin/sh
# Builds the static library, compiles capi/tests/c/smoke.c against include/tpack.h with AddressSanitizer and
# UBSan, and runs it over every vector of spec/vectors (the list comes from spec/vectors/manifest.json). Then
# the same with clang, when clang is installed and is not already $CC; then capi/tests/c/writer_typed.c (the
# typed metadata setters, and a container's metadata copied one call per value); then capi/tests/c/signed.c over every
# verification of the manifest (both compilers); then the C++ test
# capi/tests/c/smoke.cpp (C++17) with $CXX (default g++), and with clang++ when it is installed.
#
#   capi/tests/run-c.sh                           from anywhere in the repository
#   CC=clang capi/tests/run-c.sh                  another compiler (CXX=clang++ for the C++ test)
#
# Needs cargo, a C and a C++ compiler with -fsanitize=address,undefined (gcc or clang) and jq.
set -eu

. "$(dirname "$0")/common.sh"
build_static_lib

jq -r '.vectors[] | if .valid
    then "V \(.decoding.entries | length) \(.decoding.metadata | length) \(.file)"
    else "I \(.rule) \(.file)" end' "$root/spec/vectors/manifest.json" > "$out/vectors.list"

sanitize="-g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined"
"$cc" -std=c11 -Wall -Wextra -Werror -pedantic $sanitize \
    -I "$capi/include" "$capi/tests/c/smoke.c" "$out/libtpack.a" $libs -o "$out/smoke"

"$out/smoke" "$out/vectors.list" "$root/spec/vectors"

# clang as well, for its other warnings and its own sanitizers (skipped when $CC is clang already).
if command -v clang >/dev/null && [ "$(basename "$cc")" != clang ]; then
    clang -std=c11 -Wall -Wextra -Werror -pedantic $sanitize \
        -I "$capi/include" "$capi/tests/c/smoke.c" "$out/libtpack.a" $libs -o "$out/smoke-clang"
    printf 'clang: '
    "$out/smoke-clang" "$out/vectors.list" "$root/spec/vectors"
else
    echo "run-c.sh: clang not installed (or already \$CC): no second C compiler"
fi

# The writer's typed metadata setters and its contracts (writer_typed.c), and the issue-24 check: every
# metadata value of the tiny MLP, and of the vectors holding every metadata type, copied into a new container
# with one call per value, reads back equal. With each C compiler.
typed_inputs="$root/embedded/tiny-mlp/tiny-mlp.tpack $root/spec/vectors/valid/format-1-1.tpack
    $root/spec/vectors/valid/metadata.tpack $root/spec/vectors/valid/array-depth-8.tpack"
"$cc" -std=c11 -Wall -Wextra -Werror -pedantic $sanitize \
    -I "$capi/include" "$capi/tests/c/writer_typed.c" "$out/libtpack.a" $libs -o "$out/writer_typed"
"$out/writer_typed" $typed_inputs
if command -v clang >/dev/null && [ "$(basename "$cc")" != clang ]; then
    clang -std=c11 -Wall -Wextra -Werror -pedantic $sanitize \
        -I "$capi/include" "$capi/tests/c/writer_typed.c" "$out/libtpack.a" $libs -o "$out/writer_typed-clang"
    printf 'clang: '
    "$out/writer_typed-clang" $typed_inputs
fi

# Signed containers (signed.c): every verification of the manifest, three ways, and the argument checks; with
# each C compiler.
jq -r '.vectors[] | select(.verifications) | .file as $f | .verifications[] |
    "C \($f) \(.verdict) \(if .policy.require_signature then 1 else 0 end) \(.policy.min_counter) \(.policy.subject // "-") \(.keys | length)"
    + ([.keys[] | " \(.algorithm) \(.key_id) \(.public_key // "-") \(.subject // "-")"] | join(""))' \
    "$root/spec/vectors/manifest.json" > "$out/signed.list"
"$cc" -std=c11 -Wall -Wextra -Werror -pedantic $sanitize \
    -I "$capi/include" "$capi/tests/c/signed.c" "$out/libtpack.a" $libs -o "$out/signed"
"$out/signed" "$out/signed.list" "$root/spec/vectors"
if command -v clang >/dev/null && [ "$(basename "$cc")" != clang ]; then
    clang -std=c11 -Wall -Wextra -Werror -pedantic $sanitize \
        -I "$capi/include" "$capi/tests/c/signed.c" "$out/libtpack.a" $libs -o "$out/signed-clang"
    printf 'clang: '
    "$out/signed-clang" "$out/signed.list" "$root/spec/vectors"
fi

# The push decoder's contracts (decoder_contracts.c): the buffer announced and grown for the nested vectors,
# SHORT_STORAGE's length, the rule of a refused header, never-NULL bytes; with each C compiler.
"$cc" -std=c11 -Wall -Wextra -Werror -pedantic $sanitize \
    -I "$capi/include" "$capi/tests/c/decoder_contracts.c" "$out/libtpack.a" $libs -o "$out/decoder_contracts"
"$out/decoder_contracts" "$root/spec/vectors/valid"
if command -v clang >/dev/null && [ "$(basename "$cc")" != clang ]; then
    clang -std=c11 -Wall -Wextra -Werror -pedantic $sanitize \
        -I "$capi/include" "$capi/tests/c/decoder_contracts.c" "$out/libtpack.a" $libs -o "$out/decoder_contracts-clang"
    printf 'clang: '
    "$out/decoder_contracts-clang" "$root/spec/vectors/valid"
fi

# C++: the header used from C++17 code (smoke.cpp), with g++ (or $CXX) and with clang++.
cxx=${CXX:-g++}
"$cxx" -std=c++17 -Wall -Wextra -Werror -pedantic $sanitize \
    -I "$capi/include" "$capi/tests/c/smoke.cpp" "$out/libtpack.a" $libs -o "$out/smoke-cpp"
printf '%s: ' "$cxx"
"$out/smoke-cpp" "$root/spec/vectors"
if command -v clang++ >/dev/null && [ "$(basename "$cxx")" != clang++ ]; then
    clang++ -std=c++17 -Wall -Wextra -Werror -pedantic $sanitize \
        -I "$capi/include" "$capi/tests/c/smoke.cpp" "$out/libtpack.a" $libs -o "$out/smoke-cpp-clang"
    printf 'clang++: '
    "$out/smoke-cpp-clang" "$root/spec/vectors"
fi

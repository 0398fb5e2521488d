#!/bin/sh
# Compiles the C example of README.md ("Reading a model, in 20 lines") as it stands there, with a main that feeds
# it the bundled tiny-mlp model, and runs it: the README's C must build and work.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out="$root/target/capi-readme"
mkdir -p "$out"
# The first ```c block after the heading line.
awk '/^Reading a model, in 20 lines/ { found = 1 } found && /^```c$/ { inside = 1; next } inside && /^```$/ { exit }
     inside { print }' "$root/README.md" > "$out/snippet.c"
[ -s "$out/snippet.c" ] || { echo "readme-example: no C block after 'Reading a model, in 20 lines'" >&2; exit 1; }
{
    echo '#include <stdio.h>'
    cat "$out/snippet.c"
    cat <<'C'
int main(int argc, char **argv) {
    static unsigned char bytes[1 << 16];
    FILE *f = argc == 2 ? fopen(argv[1], "rb") : NULL;
    if (!f) return 2;
    size_t len = fread(bytes, 1, sizeof bytes, f);
    fclose(f);
    return check_model(bytes, len) == 0 ? 0 : 1;
}
C
} > "$out/example.c"
(cd "$root" && cargo rustc -p tpack-capi --release --crate-type staticlib --quiet)
cc -std=c99 -Wall -Wextra -Werror -pedantic -I "$root/capi/include" "$out/example.c" \
    "$root/target/release/libtpack_capi.a" -lpthread -ldl -lm -o "$out/example"
"$out/example" "$root/embedded/tiny-mlp/tiny-mlp.tpack" | grep -q '^fc1.weight: 8 x 4, first '
echo "readme-example: the README's C example builds and reads tiny-mlp"

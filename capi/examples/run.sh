#!/bin/sh
# Runs the C examples as a firmware team would use them, and checks what they print: a host tool packs a model
# (pack_model), a device reads it in place from flash (flash_model) and receives it over the air (ota_receive);
# broken, misaligned and tampered inputs are refused with the rule they break. Then checks that every C block
# of docs/c-api.md and README.md marked `<!-- example: capi/examples/FILE -->` is text of that file, so the docs
# show what CI builds and runs.
#
#   capi/examples/run.sh BINDIR      BINDIR holds the built examples (capi/tests/install.sh builds them against
#                                    an installed copy; `make -C capi/examples` builds them here)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$(cd "${1:?usage: run.sh BINDIR}" && pwd)
work="$root/target/capi-examples"
mkdir -p "$work"
model="$root/embedded/tiny-mlp/tiny-mlp.tpack"

fail() { echo "examples: $*" >&2; exit 1; }
# expect STATUS PATTERN COMMAND...: runs COMMAND, which must exit with STATUS and print a line matching PATTERN.
expect() {
    want=$1 pattern=$2
    shift 2
    status=0
    "$@" > "$work/out" 2>&1 || status=$?
    [ "$status" -eq "$want" ] && grep -q -- "$pattern" "$work/out" ||
        { cat "$work/out" >&2; fail "'$*' exited $status (want $want) or printed no line matching '$pattern'"; }
}

# A host tool packs a model; the device runs it in place and receives it as an update.
expect 0 "^pack_model: $work/packed.tpack written, [0-9]* bytes$" "$bin/pack_model" "$work/packed.tpack"
expect 0 '^model in flash at .*: 4-8-3, every checksum verified' "$bin/flash_model" "$work/packed.tpack"
expect 0 '^update accepted: ' "$bin/ota_receive" "$work/packed.tpack"

# The bundled model: its six test inputs give the classes the Rust model gives (embedded/tiny-mlp/src/expected.rs).
expect 0 '^input 5: class 2 (virginica)$' "$bin/flash_model" "$model"
[ "$(grep -c '^input [0-9]: class' "$work/out")" -eq 6 ] || fail "flash_model did not run six inputs"
grep '^input' "$work/out" | awk '{ print $4 }' | tr '\n' ' ' | grep -qx '0 0 1 1 2 2 ' ||
    fail "flash_model's classes are not 0 0 1 1 2 2"
expect 1 'fc1.weight is not aligned in memory' "$bin/flash_model" --misaligned "$model"
expect 1 '^model refused (R2): R2 ' "$bin/flash_model" "$root/spec/vectors/invalid/R2-crlf-to-lf.tpack"
expect 1 '^model refused (R50): ' "$bin/flash_model" "$root/spec/vectors/invalid/R50-payload-bit-flip.tpack"

# Over the air: accepted whole; refused at once for a bad magic; a flipped payload byte (fc1.weight's first, at
# 1344) refused by the verdict; a flipped padding byte (between fc2.bias and test.inputs) dropped on the way.
expect 0 '^update accepted: 1860 bytes in [0-9]* chunks (300 payload bytes, 7 entries)' "$bin/ota_receive" "$model"
expect 1 '^update refused (R2): ' "$bin/ota_receive" --flip 1 "$model"
expect 1 '^update refused (R50): ' "$bin/ota_receive" --flip 1344 "$model"
expect 1 '^update dropped after [0-9]* bytes' "$bin/ota_receive" --flip 1700 "$model"
expect 1 '^update refused: not a tiny-mlp model' "$bin/ota_receive" "$root/spec/vectors/valid/nested.tpack"

# inspect: a listing, and a refusal by rule.
expect 0 '^fc1.weight  F32 \[8, 4\]' "$bin/inspect" "$model"
expect 1 '^invalid: R2 ' "$bin/inspect" "$root/spec/vectors/invalid/R2-crlf-to-lf.tpack"

# The docs' C blocks are the examples' text.
"${TPACK_PYTHON:-python3}" - "$root" <<'PY'
import pathlib, re, sys
root = pathlib.Path(sys.argv[1])
checked = 0
for doc in ["docs/c-api.md", "README.md"]:
    text = (root / doc).read_text()
    for m in re.finditer(r"<!-- example: (\S+) -->\n```c\n(.*?)\n```", text, re.S):
        source = (root / m.group(1)).read_text()
        if m.group(2) not in source:
            sys.exit(f"examples: a C block of {doc} (line {text[:m.start()].count(chr(10)) + 1}) is not text of {m.group(1)}")
        checked += 1
if checked < 4:
    sys.exit(f"examples: only {checked} C blocks of the docs are marked as examples")
print(f"examples: {checked} C blocks of docs/c-api.md and README.md are the examples' text")
PY
echo "examples: pack_model, flash_model, ota_receive and inspect built and run, refusals by rule included"

#!/usr/bin/env bash
# Flash and RAM use of the firmware image (release: opt-level "s", LTO), and tpack's share of it, as a
# Markdown table for the README. Needs llvm-tools (`rustup component add llvm-tools`) and, for the stack
# figure, qemu-system-arm.
set -euo pipefail
cd "$(dirname "$0")"
BIN=target/thumbv7em-none-eabihf/release/tpack-firmware
cargo build --release --quiet
TOOLS=$(dirname "$(find "$(rustc --print sysroot)" -name llvm-size -type f | head -n 1)")
[ -x "$TOOLS/llvm-size" ] || { echo "llvm-size not found: rustup component add llvm-tools" >&2; exit 1; }

section() { "$TOOLS/llvm-size" -A "$BIN" | awk -v s="$1" '$1 == s { print $2 }'; }
vectors=$(section .vector_table); text=$(section .text); rodata=$(section .rodata)
data=$(section .data); bss=$(section .bss); uninit=$(section .uninit)
flash=$((vectors + text + rodata + data))
static_ram=$((data + bss + uninit))
# Code and constant data whose symbol belongs to the tpack crate (after LTO: what was not inlined into callers).
symbols() {
  local sum=0 size
  while read -r size; do sum=$((sum + 16#$size)); done < <("$TOOLS/llvm-nm" -S --size-sort -C "$BIN" | grep -E -- "$1" | grep -v tpack_firmware | awk '{ print $2 }')
  echo "$sum"
}
tpack_code=$(symbols 'tpack(::|\.\.)')
sort_code=$(symbols 'core::slice::sort')
fmt_code=$(symbols 'core::fmt|flt2dec|float_to_decimal|unicode')
model=$(stat -c %s ../tiny-mlp/tiny-mlp.tpack)
stack=$(qemu-system-arm -machine mps2-an386 -cpu cortex-m4 -nographic -semihosting-config enable=on,target=native \
  -kernel "$BIN" 2>/dev/null | sed -n 's/^stack high-water mark: \([0-9]*\) bytes$/\1/p' || true)

echo "| firmware image (thumbv7em-none-eabihf, opt-level s, LTO) | bytes |"
echo "|---|---:|"
echo "| flash: vector table + .text + .rodata + .data | $flash |"
echo "| &nbsp;&nbsp;of which tpack functions (symbols of the tpack crate) | $tpack_code |"
echo "| &nbsp;&nbsp;of which core's sort routines, instantiated by the writer's index and metadata sort | $sort_code |"
echo "| &nbsp;&nbsp;of which core::fmt and float printing (for the semihosting output) | $fmt_code |"
echo "| &nbsp;&nbsp;of which the model container, and its corrupted copy | $model + $model |"
echo "| RAM: .data + .bss | $static_ram |"
echo "| RAM: stack high-water mark (measured in QEMU) | ${stack:-not measured} |"

#!/usr/bin/env bash
# Flash and RAM use of the firmware image (release: opt-level "s", LTO), and tpack's share of it, as a
# Markdown table for the README. Needs llvm-tools (`rustup component add llvm-tools`) and, for the stack
# figure, qemu-system-arm.
set -euo pipefail
cd "$(dirname "$0")"
BIN=target/thumbv7em-none-eabihf/release/tpack-firmware
# The image without the streaming phase first, kept aside: the difference is the decoder's and placer's code.
cargo build --release --quiet --no-default-features
cp "$BIN" target/tpack-firmware-without-stream
cargo build --release --quiet
TOOLS=$(dirname "$(find "$(rustc --print sysroot)" -name llvm-size -type f | head -n 1)")
[ -x "$TOOLS/llvm-size" ] || { echo "llvm-size not found: rustup component add llvm-tools" >&2; exit 1; }

section() { "$TOOLS/llvm-size" -A "${2:-$BIN}" | awk -v s="$1" '$1 == s { print $2 }'; }
flash_of() { echo $(($(section .vector_table "$1") + $(section .text "$1") + $(section .rodata "$1") + $(section .data "$1"))); }
data=$(section .data); bss=$(section .bss); uninit=$(section .uninit)
flash=$(flash_of "$BIN")
stream_flash=$((flash - $(flash_of target/tpack-firmware-without-stream)))
static_ram=$((data + bss + uninit))
# Code and constant data whose symbol belongs to the tpack crate (after LTO: what was not inlined into callers).
symbols() {
  local sum=0 size
  while read -r size; do sum=$((sum + 16#$size)); done < <("$TOOLS/llvm-nm" -S --size-sort -C "$BIN" | grep -E -- "$1" | grep -v tpack_firmware | awk '{ print $2 }')
  echo "$sum"
}
tpack_code=$(symbols 'tpack(::|\.\.)')
stream_code=$(symbols 'tpack(::|\.\.)stream(::|\.\.)')
auth_code=$(symbols 'tpack(::|\.\.)auth(::|\.\.)')
crypto_code=$(symbols '(^| )(salty|sha2)(::|\.\.)|fe25519_|<salty::|<sha2::')
# The firmware's receive loop, into which LTO inlines Decoder::decode and Placer::place.
transfer_code=$((16#$("$TOOLS/llvm-nm" -S -C "$BIN" | awk '/ tpack_firmware::streamed::transfer/ && !n++ { print $2 }')))
sort_code=$(symbols 'core::slice::sort')
fmt_code=$(symbols 'core::fmt|flt2dec|float_to_decimal|unicode')
run=$(qemu-system-arm -machine mps2-an386 -cpu cortex-m4 -nographic -semihosting-config enable=on,target=native \
  -kernel "$BIN" 2>/dev/null || true)
stack=$(sed -n 's/^stack high-water mark: \([0-9]*\) bytes$/\1/p' <<<"$run")
state=$(sed -n 's/^stream decoder RAM: state \([0-9]*\) bytes.*/\1/p' <<<"$run")
buffer=$(sed -n 's/^stream decoder RAM: .* + buffer \([0-9]*\) bytes.*/\1/p' <<<"$run")
digests=$(sed -n 's/^stream decoder RAM: .* + digests \([0-9]*\) bytes.*/\1/p' <<<"$run")
model=$(sed -n 's/^model in flash at 0x[0-9a-f]*: \([0-9]*\) bytes.*/\1/p' <<<"$run")
region=$(sed -n 's/^const LEN: usize = \([0-9]*\);.*/\1/p; s/^pub const LEN: usize = \([0-9]*\);.*/\1/p' src/nor.rs)

echo "| firmware image (thumbv7em-none-eabihf, opt-level s, LTO) | bytes |"
echo "|---|---:|"
echo "| flash: vector table + .text + .rodata + .data | $flash |"
echo "| &nbsp;&nbsp;of which tpack functions (symbols of the tpack crate) | $tpack_code |"
echo "| &nbsp;&nbsp;&nbsp;&nbsp;of which tpack::auth functions (authentication, with salty's verification inlined into SoftwareCrypto::verify) | $auth_code |"
echo "| &nbsp;&nbsp;of which core's sort routines, instantiated by the writer's index and metadata sort | $sort_code |"
echo "| &nbsp;&nbsp;of which core::fmt and float printing (for the semihosting output) | $fmt_code |"
echo "| &nbsp;&nbsp;of which SHA-256 and Ed25519 (symbols of sha2 and salty, not inlined) | $crypto_code |"
echo "| &nbsp;&nbsp;of which the signed model container, and its forged copy | ${model:-?} + ${model:-?} |"
echo "| &nbsp;&nbsp;of which the streaming phase (the image with it minus the image without it) | $stream_flash |"
echo "| &nbsp;&nbsp;&nbsp;&nbsp;of which tpack::stream functions (decoder, signed decoder and placer symbols) | $stream_code |"
echo "| &nbsp;&nbsp;&nbsp;&nbsp;of which the firmware's receive loop, with the decoder's and placer's entry points inlined | $transfer_code |"
echo "| RAM: .data + .bss | $static_ram |"
echo "| &nbsp;&nbsp;of which the stream decoder's buffer (the largest Decoder::buffer_needed of the images) | ${buffer:-not measured} |"
echo "| &nbsp;&nbsp;of which the signed decoder's digests (32 bytes per entry) | ${digests:-not measured} |"
echo "| &nbsp;&nbsp;of which the flash-like regions: the download slot and the final region | ${region:-?} + ${region:-?} |"
echo "| RAM: stream decoder state, on the stack (DecoderState::SIZE) | ${state:-not measured} |"
echo "| RAM: stack high-water mark (measured in QEMU) | ${stack:-not measured} |"

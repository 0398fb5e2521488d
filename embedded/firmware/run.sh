#!/usr/bin/env bash
# Builds the firmware and boots it on QEMU's mps2-an386 board (needs qemu-system-arm). Fails on a non-zero exit
# (a wrong result, a refused model, a panic), on a hang (timeout), or when the output lacks a expected line.
set -euo pipefail
cd "$(dirname "$0")"
rustup target add thumbv7em-none-eabihf >/dev/null 2>&1 || true
cargo build --release --quiet
log=target/qemu.log
status=0
timeout "${QEMU_TIMEOUT:-60}" qemu-system-arm -machine mps2-an386 -cpu cortex-m4 -nographic \
  -semihosting-config enable=on,target=native \
  -kernel target/thumbv7em-none-eabihf/release/tpack-firmware >"$log" 2>&1 || status=$?
cat "$log"
if [ "$status" -eq 124 ]; then
  echo "FAILED: the firmware hung (no exit within ${QEMU_TIMEOUT:-60} s)" >&2
  exit 1
fi
if [ "$status" -ne 0 ]; then
  echo "FAILED: the firmware exited with status $status" >&2
  exit 1
fi
for line in "corrupted copy refused, no weight used: R50" "every checksum verified in place" \
  "all 6 results equal the host's, bit for bit" "checksum 0x[0-9a-f]* matches in RAM" \
  "it returned 42" "it parses and verifies" \
  "stream decoder RAM: state [0-9]* bytes (DecoderState::SIZE) + buffer [0-9]* bytes" \
  "stream with a flipped payload byte refused by finish() .*, nothing run: R50" \
  "stream with a flipped name byte refused: R13 .*; region calls: 0 erases, 0 writes$" \
  "stream received: [0-9]* bytes in [0-9]*-byte reads" \
  "streamed model in the flash-like region at 0x[0-9a-f]*: .* every checksum verified in place" \
  "all 6 results equal the host's, bit for bit (model in the flash-like region)" "^PASS$"; do
  grep -q -- "$line" "$log" || { echo "FAILED: the output lacks \"$line\"" >&2; exit 1; }
done
echo "firmware run OK"

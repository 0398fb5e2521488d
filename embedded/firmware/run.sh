#!/usr/bin/env bash
# Builds the firmware and boots it on QEMU's mps2-an386 board (needs qemu-system-arm). Fails on a non-zero exit
# (a wrong result, a refused model, a panic), on a hang (timeout), or when the output lacks a expected line.
set -euo pipefail
cd "$(dirname "$0")"
rustup target add thumbv7em-none-eabihf >/dev/null 2>&1 || true
cargo build --release --quiet
source ../qemu.sh
boot_and_expect target/thumbv7em-none-eabihf/release/tpack-firmware target/qemu.log \
  "corrupted copy refused, no weight used: R50" "every checksum verified in place" \
  "all 6 results equal the host's, bit for bit" "checksum 0x[0-9a-f]* matches in RAM" \
  "it returned 42" "it parses and verifies" \
  "stream decoder RAM: state [0-9]* bytes (DecoderState::SIZE) + buffer [0-9]* bytes" \
  "stream with a flipped payload byte refused by finish() .*, nothing run: R50" \
  "stream with a flipped name byte refused: R13 .*; region calls: 0 erases, 0 writes$" \
  "stream received: [0-9]* bytes in [0-9]*-byte reads" \
  "streamed model in the flash-like region at 0x[0-9a-f]*: .* every checksum verified in place" \
  "all 6 results equal the host's, bit for bit (model in the flash-like region)" "^PASS$"
echo "firmware run OK"

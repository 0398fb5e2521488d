#!/usr/bin/env bash
# Builds the firmware and boots it on QEMU's mps2-an386 board (needs qemu-system-arm). Fails on a non-zero exit
# (a wrong result, a refused model, a forged one accepted, a write to the final region for a refused stream, a
# panic), on a hang (timeout), or when the output lacks an expected line.
set -euo pipefail
cd "$(dirname "$0")"
rustup target add thumbv7em-none-eabihf >/dev/null 2>&1 || true
cargo build --release --quiet
source ../qemu.sh
boot_and_expect target/thumbv7em-none-eabihf/release/tpack-firmware target/qemu.log \
  "forged copy (a byte of fc1.weight changed, every CRC recomputed): Container::verify accepts it .*: R64 " \
  "model in flash at .* signed by key 61873f2b… (counter 3, .*): signature, every entry digest and every checksum verified in place" \
  "all 6 results equal the host's, bit for bit (model in flash)" "checksum 0x[0-9a-f]* matches in RAM" \
  "it returned 42" "it parses and verifies" \
  "stream decoder RAM: state [0-9]* bytes (DecoderState::SIZE) + buffer [0-9]* bytes .* + digests [0-9]* bytes" \
  "stream with a payload byte changed and every CRC recomputed refused by finish(): R64 .*; final region: 0 erases, 0 block writes$" \
  "stream of the unsigned model refused: R58 .*; download slot: 0 erases, 0 block writes; final region: 0 erases, 0 block writes$" \
  "stream signed by another key refused: R59 .*; download slot: 0 erases, 0 block writes; final region: 0 erases, 0 block writes$" \
  "stream with a counter below the floor refused: R62 .*; download slot: 0 erases, 0 block writes; final region: 0 erases, 0 block writes$" \
  "stream with a flipped name byte refused: R13 .*; download slot: 0 erases, 0 block writes; final region: 0 erases, 0 block writes$" \
  "stream of the signed model received: [0-9]* bytes in [0-9]*-byte reads .* authentic (counter 3); .* then committed to the final region" \
  "model in the final region at 0x[0-9a-f]*: .* signature, every entry digest and every checksum verified in place" \
  "all 6 results equal the host's, bit for bit (model in the final region)" "^PASS$"
echo "firmware run OK"

#!/usr/bin/env bash
# Builds the C firmware (build.sh) and boots it on QEMU's mps2-an386 board (needs qemu-system-arm). Fails on a
# non-zero exit (a wrong result, a refused model, a panic, a fault), on a hang (timeout), or when the output lacks an
# expected line. Then checks that the check can fail: an image built against expected logits with one bit flipped
# must exit 1 and name that logit.
set -euo pipefail
cd "$(dirname "$0")"
source ../qemu.sh

./build.sh
log=target/qemu.log
boot_and_expect target/c-firmware.elf "$log" \
  "model in flash at 0x[0-9a-f]*: [0-9]* bytes, format 1\.[0-9]*, [0-9]* entries, every checksum verified in place" \
  "corrupted copy (payload byte of fc1.weight at byte [0-9]*) refused by verify, no weight used: R50 " \
  "corrupted copy (magic byte at byte 1) refused by parse, no weight used: R2 " \
  "corrupted copy (stored header checksum byte at byte 52) refused by parse, no weight used: R13 " \
  "corrupted copy (name byte of fc1.weight at byte [0-9]*) refused by parse, no weight used: R13 " \
  "weights read in place: fc1.weight at 0x[0-9a-f]* (flash)" \
  "all 6 results equal the host's, bit for bit (model in flash, math in C)" \
  "stream decoder RAM: state [0-9]* bytes (TPACK_DECODER_SIZE) + buffer [0-9]* bytes" \
  "stream received: [0-9]* bytes in 61-byte chunks, .*verdict of tpack_decoder_finish: ok" \
  "stream with a flipped payload byte refused by tpack_decoder_finish: R50: " \
  "stream with a flipped name byte refused: R13 .*(before the first payload), 0 payload events$" \
  "^stack high-water mark: [0-9]* bytes$" "^PASS$"
if grep -q "FAIL" "$log"; then
  echo "FAILED: the output has a FAIL line" >&2
  exit 1
fi
echo "c-firmware run OK"

# The check must be able to fail: flip the lowest bit of the first expected logit.
mkdir -p target/perturbed
awk '!done && match($0, /0x[0-9a-f]+/) {
  at = RSTART + RLENGTH - 1; d = index("0123456789abcdef", substr($0, at, 1)) - 1; d += (d % 2 == 0) ? 1 : -1
  $0 = substr($0, 1, at - 1) substr("0123456789abcdef", d + 1, 1) substr($0, at + 1); done = 1 } 1' \
  ../tiny-mlp/src/expected.rs >target/perturbed/expected.rs
cmp -s target/perturbed/expected.rs ../tiny-mlp/src/expected.rs && { echo "FAILED: the perturbed expected.rs is unchanged" >&2; exit 1; }
OUT=target/perturbed EXPECTED_RS=target/perturbed/expected.rs ./build.sh >/dev/null
boot target/perturbed/c-firmware.elf target/perturbed/qemu.log
if [ "$status" -ne 1 ] || ! grep -q "^FAIL: input 0, logit 0: 0x[0-9a-f]*, but the host computed 0x" target/perturbed/qemu.log; then
  cat target/perturbed/qemu.log
  echo "FAILED: an image with a wrong expected logit did not fail as it must (status $status)" >&2
  exit 1
fi
echo "and it fails when an expected logit is off by one bit: $(grep '^FAIL' target/perturbed/qemu.log)"

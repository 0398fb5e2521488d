#!/usr/bin/env bash
# Builds the C firmware (build.sh) and boots it on QEMU's mps2-an386 board (needs qemu-system-arm). Fails on a
# non-zero exit (a wrong result, a refused model, a panic, a fault), on a hang (timeout), or when the output lacks an
# expected line. Then checks that the checks can fail: an image built against expected logits with one bit flipped
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
  "^signed decoder RAM: state [0-9]* bytes" \
  "^signed model in flash: authentic (counter 5, subject tpack.tiny-mlp), its 5 used entries verified on first use" \
  "^forged copy: every CRC holds (tpack_container_verify: ok), fc1.weight refused on first use: R64 " \
  "^model in flash (a payload byte changed, every CRC recomputed) refused by tpack_container_verify_authentic: R64 " \
  "^model in flash (unsigned) refused by tpack_container_verify_authentic: R58 " \
  "^model in flash (signed by another key) refused by tpack_container_verify_authentic: R59 " \
  "^model in flash (signed with counter 4, below the floor) refused by tpack_container_verify_authentic: R62 " \
  "^stream (signed by the trusted key, counter 5) accepted by tpack_signed_decoder_finish: [0-9]* bytes staged .*committed: [1-9][0-9]* writes to the final region$" \
  "^the installed model runs from the final region" \
  "^stream (a payload byte changed, every CRC recomputed) refused by tpack_signed_decoder_finish: R64 .*; [1-9][0-9]* payload events, [1-9][0-9]* staging writes, final-region writes: 0$" \
  "^stream (unsigned) refused: R58 .*(the prefix), 0 payload events, 0 staging writes, final-region writes: 0$" \
  "^stream (signed by another key) refused: R59 .*(the prefix), 0 payload events, 0 staging writes, final-region writes: 0$" \
  "^stream (signed with counter 4, below the floor) refused: R62 .*(the prefix), 0 payload events, 0 staging writes, final-region writes: 0$" \
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

# And the signed part can fail: an image whose counter floor is 6 must refuse the signed model (counter 5).
OUT=target/floor6 CFLAGS_EXTRA=-DFLOOR=6 ./build.sh >/dev/null
boot target/floor6/c-firmware.elf target/floor6/qemu.log
if [ "$status" -ne 1 ] || ! grep -q "^FAIL: the signed model in flash is refused: R62 " target/floor6/qemu.log; then
  cat target/floor6/qemu.log
  echo "FAILED: an image with a counter floor above the model's did not refuse it (status $status)" >&2
  exit 1
fi
echo "and it refuses the signed model when its counter floor is above the model's: $(grep '^FAIL' target/floor6/qemu.log)"

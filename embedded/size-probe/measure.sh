#!/usr/bin/env bash
# Builds the probe with and without tpack's reader (opt-level "s", LTO) and reports the reader's code size:
# the difference in .text + .rodata. Fails above the budget. Usage: measure.sh [--decoder] [comma-separated
# features], e.g. none (tpack without default features: no CRC table, the smallest) or `crc-table` (tpack's
# default features). With --decoder it also builds the probe with the push decoder (feature `decoder`) and
# reports reader + decoder, and the decoder's share of it, against DECODER_BUDGET instead.
set -euo pipefail
cd "$(dirname "$0")"
BUDGET=${BUDGET:-11264}
# The issue's goal for reader + decoder is 12 KiB (12288 B); not met: this is the measured 16,976 B (crc-table),
# rounded up to the next 512 B, so that growth fails CI.
DECODER_BUDGET=${DECODER_BUDGET:-17408}
SIZE=$(find "$(rustc --print sysroot)" -name llvm-size -type f | head -n 1)
[ -x "$SIZE" ] || { echo "llvm-size not found: rustup component add llvm-tools" >&2; exit 1; }
BIN=target/thumbv7em-none-eabihf/release/tpack-size-probe

sections() { # .text + .rodata of the ELF at $1
  "$SIZE" -A "$1" | awk '$1 == ".text" || $1 == ".rodata" { sum += $2 } END { print sum }'
}

decoder=
if [ "${1:-}" = --decoder ]; then
  decoder=1
  shift
fi
features=${1:-}
cargo build --release --quiet ${features:+--features "$features"}
cp "$BIN" target/probe-without
cargo build --release --quiet --features "reader${features:+,$features}"
cp "$BIN" target/probe-with
without=$(sections target/probe-without)
with=$(sections target/probe-with)
reader=$((with - without))
echo "thumbv7em-none-eabihf, opt-level s, LTO${features:+, features $features}: .text+.rodata ${without} B without tpack, ${with} B with it: the reader (parse + verify + lookups) costs ${reader} B (budget ${BUDGET} B)"
"$SIZE" -A target/probe-with | awk '$1 == ".text" || $1 == ".rodata" || $1 == ".data" || $1 == ".bss"'
if [ "$reader" -gt "$BUDGET" ]; then
  echo "FAILED: over budget" >&2
  exit 1
fi
[ -n "$decoder" ] || exit 0

cargo build --release --quiet --features "decoder${features:+,$features}"
cp "$BIN" target/probe-with-decoder
both=$(($(sections target/probe-with-decoder) - without))
echo "with the push decoder as well (64-byte chunks, decode + finish): reader + decoder cost ${both} B, of which the decoder $((both - reader)) B ($(((both - reader) * 100 / both))%) (budget ${DECODER_BUDGET} B)"
if [ "$both" -gt "$DECODER_BUDGET" ]; then
  echo "FAILED: reader + decoder over budget" >&2
  exit 1
fi

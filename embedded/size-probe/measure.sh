#!/usr/bin/env bash
# Builds the probe with and without tpack's reader (opt-level "s", LTO) and reports the reader's code size:
# the difference in .text + .rodata. Fails above the budget. Usage:
#   measure.sh [--decoder] [--signature] [comma-separated features]
# with features none (tpack without default features: no CRC table, the smallest) or `crc-table` (tpack's
# default features). With --decoder it also builds the probe with the push decoder (feature `decoder`) and
# reports reader + decoder, and the decoder's share of it, against DECODER_BUDGET. With --signature it also
# builds the probe that authenticates the container (feature `signature`: a one-key Ed25519 policy, then every
# entry against its signed digest) and reports what SHA-256 + Ed25519 verification add to the reader, against
# SIGNATURE_BUDGET; with both, it also reports the probe that receives the container through the signed push
# decoder (`SignedDecoder`). OPT_LEVEL=z builds every variant at opt-level "z" instead.
set -euo pipefail
cd "$(dirname "$0")"
# The reader's budget. It was 11 KiB for format 1.1; format 1.2 added the group *signature* (R54-R57: the
# SIGNED flag, the signature entry, the signed attributes, the signature's length), which took the reader from
# 10,488 B to 11,720 B (crc-table): this is that, rounded up to the next 512 B, so that growth fails CI.
BUDGET=${BUDGET:-11776}
# The issue's goal for reader + decoder is 12 KiB (12288 B); not met. It was 17,408 B (the measured 16,976 B
# of format 1.1, rounded up); format 1.2's four rules R54-R57 took it to 18,460 B (crc-table): this is that,
# rounded up to the next 512 B, so that growth fails CI. Issue 24 took it to 19,144 B (crc-table): a decoder that
# grows its buffer and resumes after BufferTooSmall, announces the whole stream's need, and says at which depth and
# outer entry a nested container breaks R37/R50 (the error went from 16 to 24 bytes); rounded up again.
DECODER_BUDGET=${DECODER_BUDGET:-19456}
# The issue's goal for SHA-256 + Ed25519 verification on top of the reader is 12 KiB (12288 B); not met. The
# crypto alone (sha2 compact, salty, the S < L check, and the memcpy and memclr of compiler_builtins that they
# bring) costs about 12.5 KB here; tpack's authentication (the policy, the signed attributes, the message,
# the entries' digests) about 1.4 KB more: 13,896 B measured (crc-table), rounded up to the next 512 B, so that
# growth fails CI.
SIGNATURE_BUDGET=${SIGNATURE_BUDGET:-14336}
OPT_LEVEL=${OPT_LEVEL:-s}
SIZE=$(find "$(rustc --print sysroot)" -name llvm-size -type f | head -n 1)
[ -x "$SIZE" ] || { echo "llvm-size not found: rustup component add llvm-tools" >&2; exit 1; }
BIN=target/thumbv7em-none-eabihf/release/tpack-size-probe

sections() { # .text + .rodata of the ELF at $1
  "$SIZE" -A "$1" | awk '$1 == ".text" || $1 == ".rodata" { sum += $2 } END { print sum }'
}

build() { # build OUTPUT [features]: the probe with the given features, copied to target/OUTPUT
  cargo build --release --quiet --config "profile.release.opt-level=\"$OPT_LEVEL\"" ${2:+--features "$2"}
  cp "$BIN" "target/$1"
}

decoder= signature=
while [ $# -gt 0 ]; do
  case $1 in
    --decoder) decoder=1 ;;
    --signature) signature=1 ;;
    *) break ;;
  esac
  shift
done
features=${1:-}
build probe-without "$features"
build probe-with "reader${features:+,$features}"
without=$(sections target/probe-without)
with=$(sections target/probe-with)
reader=$((with - without))
echo "thumbv7em-none-eabihf, opt-level $OPT_LEVEL, LTO${features:+, features $features}: .text+.rodata ${without} B without tpack, ${with} B with it: the reader (parse + verify + lookups) costs ${reader} B (budget ${BUDGET} B)"
"$SIZE" -A target/probe-with | awk '$1 == ".text" || $1 == ".rodata" || $1 == ".data" || $1 == ".bss"'
status=0
if [ "$reader" -gt "$BUDGET" ]; then
  echo "FAILED: the reader is over budget by $((reader - BUDGET)) B" >&2
  status=1
fi

if [ -n "$decoder" ]; then
  build probe-with-decoder "decoder${features:+,$features}"
  both=$(($(sections target/probe-with-decoder) - without))
  echo "with the push decoder as well (64-byte chunks, decode + finish): reader + decoder cost ${both} B, of which the decoder $((both - reader)) B ($(((both - reader) * 100 / both))%) (budget ${DECODER_BUDGET} B)"
  if [ "$both" -gt "$DECODER_BUDGET" ]; then
    echo "FAILED: reader + decoder over budget by $((both - DECODER_BUDGET)) B" >&2
    status=1
  fi
fi

if [ -n "$signature" ]; then
  build probe-with-signature "signature${features:+,$features}"
  authenticated=$(($(sections target/probe-with-signature) - without))
  crypto=$((authenticated - reader))
  echo "authenticating instead (Container::authenticate with a one-key Ed25519 policy, then Authenticated::verify; SoftwareCrypto: sha2 compact + salty): reader + verification cost ${authenticated} B, of which SHA-256 + Ed25519 verification ${crypto} B (budget ${SIGNATURE_BUDGET} B)"
  if [ "$crypto" -gt "$SIGNATURE_BUDGET" ]; then
    echo "FAILED: SHA-256 + Ed25519 verification over budget by $((crypto - SIGNATURE_BUDGET)) B" >&2
    status=1
  fi
  if [ -n "$decoder" ]; then
    # Informative, no budget of its own: a streaming device's whole cost.
    build probe-with-signed-decoder "decoder,signature${features:+,$features}"
    streaming=$(($(sections target/probe-with-signed-decoder) - without))
    echo "and receiving it through the signed push decoder (SignedDecoder, same policy) as well: ${streaming} B in all; the verification costs $((streaming - both)) B on top of reader + decoder, the signed decoder $((streaming - authenticated)) B on top of reader + verification"
  fi
fi
exit "$status"

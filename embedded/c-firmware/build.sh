#!/usr/bin/env bash
# Builds the C firmware for QEMU's mps2-an386 (Cortex-M4F) into target/: libtpack.a (capi/firmware-staticlib, with
# cargo), target/expected.h (from embedded/tiny-mlp/src/expected.rs), then target/c-firmware.elf and its link map.
# Needs arm-none-eabi-gcc and newlib (Debian: gcc-arm-none-eabi libnewlib-arm-none-eabi) and rustup. Checks that the
# image has no allocator. CFLAGS_EXTRA adds compiler flags; SOURCES replaces the firmware's C files after startup.c
# and semihost.c (size.sh builds src/probe.c alone, to measure one set of entry points).
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(cd ../.. && pwd)
# OUT and EXPECTED_RS may be overridden: run.sh builds a second image against a perturbed expected.rs, which must fail.
OUT=${OUT:-target}
EXPECTED_RS=${EXPECTED_RS:-$ROOT/embedded/tiny-mlp/src/expected.rs}
mkdir -p "$OUT"

rustup target add thumbv7em-none-eabihf >/dev/null 2>&1 || true
(cd "$ROOT/capi/firmware-staticlib" && cargo build --release --quiet --target thumbv7em-none-eabihf)
LIB=$ROOT/capi/firmware-staticlib/target/thumbv7em-none-eabihf/release/libtpack.a

./gen-expected.sh "$EXPECTED_RS" "$OUT/expected.h"

CC=arm-none-eabi-gcc
ARCH=(-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16)
# -ffp-contract=off: no fused multiply-add (vfma), so each product is rounded before it is added, as in Rust (which
# never contracts); the logits must match the host's bit for bit. GCC still emits vmla.f32 for `acc += w * x`: on
# this FPU that is the unfused multiply-accumulate (two roundings), the same result as vmul + vadd. With
# -ffp-contract=fast (GCC's default for GNU C) it emits vfma, and logit 1 of input 0 comes out 0xc00a4df0 instead
# of the host's 0xc00a4df2: run.sh then fails.
CFLAGS=("${ARCH[@]}" -std=c11 -Os -g -ffunction-sections -fdata-sections -ffp-contract=off -Wall -Wextra -Werror
  -Wdouble-promotion -Wfloat-conversion -Wshadow -Wstrict-prototypes
  -I"$ROOT/capi/include" -I"$OUT" -I"$ROOT/embedded/c-firmware/models" ${CFLAGS_EXTRA:-})
objs=()
for src in src/startup.c src/semihost.c ${SOURCES:-src/flash.c src/signed.c src/main.c}; do
  obj=$OUT/$(basename "$src" .c).o
  $CC "${CFLAGS[@]}" -c "$src" -o "$obj"
  objs+=("$obj")
done
# The assembler finds the model with -I: .incbin "tiny-mlp.tpack".
$CC "${ARCH[@]}" -Wa,-I"$ROOT/embedded/tiny-mlp" -Wa,-I"$ROOT/embedded/c-firmware/models" -c src/model.S -o "$OUT/model.o"
objs+=("$OUT/model.o")

# -nostartfiles: startup.c is the startup code. nano.specs: newlib-nano for memcpy, memcmp, strlen and friends;
# nothing provides _sbrk, so anything that pulls in malloc fails to link.
$CC "${ARCH[@]}" -nostartfiles --specs=nano.specs -T mps2-an386.ld -Wl,--gc-sections -Wl,--no-warn-rwx-segments -Wl,-z,noexecstack \
  -Wl,-Map="$OUT/c-firmware.map" -Wl,--cref -o "$OUT/c-firmware.elf" "${objs[@]}" "$LIB"

# No heap: neither the C code, newlib, nor the Rust archive may bring an allocator into the image.
allocators=$(arm-none-eabi-nm "$OUT/c-firmware.elf" | awk '{ print $NF }' |
  grep -E '^(_?malloc|_malloc_r|_?calloc|_calloc_r|_?realloc|_realloc_r|_?free|_free_r|_sbrk|_sbrk_r|__rust_alloc|__rust_dealloc|__rust_realloc|__rg_alloc|__rdl_alloc)$' || true)
if [ -n "$allocators" ]; then
  echo "FAILED: the image has an allocator:" $allocators >&2
  exit 1
fi
# What the archive needs from outside (undefined in a member, defined in none): tpack_panic only. readelf, not nm:
# binutils' nm hands Rust's objects to an LLVM plugin that cannot read them and then reports no symbols.
needs=$(arm-none-eabi-readelf -s -W "$LIB" | awk '$1 ~ /:$/ && $8 != "" {
  if ($7 == "UND") und[$8] = 1; else if ($5 != "LOCAL") def[$8] = 1 } END { for (s in und) if (!(s in def)) print s }')
if [ "$needs" != tpack_panic ]; then
  echo "FAILED: libtpack.a needs more than tpack_panic:" $needs >&2
  exit 1
fi
echo "built $OUT/c-firmware.elf (no malloc, calloc, realloc, free, _sbrk or __rust_alloc in the image; libtpack.a needs only tpack_panic)"

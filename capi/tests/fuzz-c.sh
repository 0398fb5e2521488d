#!/bin/sh
# Builds the libFuzzer harness capi/tests/c/fuzz_capi.c over the C API and runs it for SECONDS (default 40),
# seeded from spec/vectors/*/*.tpack, each behind a few chunking plans (the harness's first byte).
#
#   capi/tests/fuzz-c.sh [SECONDS]      from anywhere in the repository
#   capi/tests/fuzz-c.sh --build-only   builds the harness and stops (CI builds first, then fuzzes in parallel)
#
# The static library is built with nightly and the sanitizer-coverage flags cargo-fuzz uses, in its own
# target directory (target/fuzz-capi), so that libFuzzer sees the Rust code's edges and comparisons and not
# only the harness's. It is built with debug assertions and overflow checks, as cargo-fuzz builds do: a
# panic inside comes back as TPACK_RESULT_PANIC, on which the harness aborts. The Rust code is not built with
# ASan (that needs -Zbuild-std and an ASan runtime of the same LLVM as rustc); the harness is, with UBSan.
#
# Needs clang with libFuzzer (Debian: clang, which brings libclang-rt-dev), rustup's $NIGHTLY toolchain.
# Exit 0 when the run ends without a crash; otherwise the end of the log and exit 1. The crashing input is
# left in target/fuzz-capi/ (crash-*), with libFuzzer's own report.
set -eu

build_only=false
if [ "${1:-}" = --build-only ]; then
    build_only=true
    shift
fi
seconds=${1:-40}
root=$(cd "$(dirname "$0")/../.." && pwd)
capi="$root/capi"
nightly=${NIGHTLY:-nightly-2026-05-20}
cc=${CC_FUZZ:-clang}
work="$root/target/fuzz-capi"
mkdir -p "$work"

command -v "$cc" >/dev/null || { echo "fuzz-c.sh: $cc not found (apt-get install clang)" >&2; exit 1; }

# cargo-fuzz's flags (cargo fuzz build -O): inline 8-bit counters, the PC table, comparison tracing.
sancov="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=3"
sancov="$sancov -Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table"
sancov="$sancov -Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
# An explicit --target keeps RUSTFLAGS off the build scripts and proc macros (they run on the host, unlinked
# with libFuzzer), as cargo-fuzz does.
host=$(rustc "+$nightly" -vV | sed -n 's/^host: //p')
(cd "$root" && RUSTFLAGS="$sancov" CARGO_TARGET_DIR="$work/cargo" \
    cargo "+$nightly" rustc -p tpack-capi --release --target "$host" --crate-type staticlib --quiet)

libs="-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc"
"$cc" -std=c99 -Wall -Wextra -Werror -pedantic -g -O1 -fno-omit-frame-pointer \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I "$capi/include" "$capi/tests/c/fuzz_capi.c" "$work/cargo/$host/release/libtpack.a" $libs \
    -o "$work/fuzz_capi"
if $build_only; then
    exit 0
fi

# Seeds: every vector as one chunk (plan 0), in 7-byte chunks, byte by byte, and in chunks of varying size
# (1 to 64 bytes); and as one chunk and in 7-byte chunks with the header checksum fixed up after mutation.
corpus="$work/corpus"
seeds="$work/seeds"
rm -rf "$seeds"
mkdir -p "$corpus" "$seeds"
for f in "$root"/spec/vectors/*/*.tpack; do
    n=$(basename "$(dirname "$f")")-$(basename "$f" .tpack)
    { printf '\000'; cat "$f"; } >"$seeds/$n-whole"
    { printf '\007'; cat "$f"; } >"$seeds/$n-by7"
    { printf '\001'; cat "$f"; } >"$seeds/$n-by1"
    { printf '\177'; cat "$f"; } >"$seeds/$n-varying"
    { printf '\200'; cat "$f"; } >"$seeds/$n-whole-fixcrc"
    { printf '\207'; cat "$f"; } >"$seeds/$n-by7-fixcrc"
done

log="$work/fuzz.log"
# -max_len: the largest vector (valid/max-alignment) is 65565 bytes with its plan byte. The corpus directory
# is written to (it persists between runs), the seeds only read.
if ! (cd "$work" && ./fuzz_capi -max_total_time="$seconds" -print_final_stats=1 -max_len=70000 \
        -timeout=10 -rss_limit_mb=2048 "$corpus" "$seeds") >"$log" 2>&1; then
    echo "fuzz_capi FAILED; the end of its log ($log):" >&2
    tail -n 60 "$log" >&2
    exit 1
fi
grep -E '^INFO: Loaded .* modules|^#[0-9]+ +INITED' "$log" | head -n 3
echo "fuzz_capi: $(grep -E '^stat::number_of_executed_units' "$log" | tail -n 1), $(grep -E '^Done' "$log" | tail -n 1)"

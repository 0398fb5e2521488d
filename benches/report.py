#!/usr/bin/env python3
"""Runs every comparison benchmark and writes BENCHMARKS.md (and the headline table in README.md).

    python3 benches/report.py            # run the benchmarks, then write the report (about 10 minutes)
    python3 benches/report.py --no-run   # write the report from the results of the last run

Every figure is a ratio against a baseline measured in the same run on the same machine:
- criterion benches `benches/compare.rs` (open, lookup, verify), `benches/stream.rs` (the push decoder) and
  `benches/writer.rs`, read from
  target/criterion/**/new/{benchmark,estimates}.json;
- `cli/benches/memory.rs` (peak anonymous memory of a 2 GiB conversion, page faults of opening a 4 GiB file),
  read from its `RESULT {json}` lines;
- `tests/zero_alloc.rs`, the counting-allocator test that asserts parsing allocates nothing;
- `benches/convert.py` (`tpack convert` of 1 GiB inputs against `cp` + `sync`), read from
  target/bench-convert.json; run with `$TPACK_PYTHON` (or this Python) when it has gguf, safetensors and numpy;
- `benches/python_read.py` (the Python package reading a 592 MiB checkpoint against safetensors), read from
  target/bench-python-read.json; run with the venv of `python/ci.sh` when it exists;
- `benches/verify_signed.rs` (verifying a signed 1 GiB container against SHA-256 alone, CRC verification against
  crc32fast alone), read from its `RESULT {json}` lines in target/bench-verify-signed.log;
- `embedded/size-probe/measure.sh --decoder --signature` (code size on a Cortex-M4, against the same program
  without tpack), read from target/bench-size-{crc-table,no-table}.log; run when rustup has the
  thumbv7em-none-eabihf target.
"""

import datetime
import json
import os
import platform
import re
import subprocess
import sys

from kept_results import kept  # benches/, this script's folder, is on the path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CRITERION = os.path.join(ROOT, "target", "criterion")
MEMORY_LOG = os.path.join(ROOT, "target", "bench-memory.log")
ALLOC_LOG = os.path.join(ROOT, "target", "bench-zero-alloc.log")
CONVERT_JSON = os.path.join(ROOT, "target", "bench-convert.json")
PYTHON_READ_JSON = os.path.join(ROOT, "target", "bench-python-read.json")
VERIFY_SIGNED_LOG = os.path.join(ROOT, "target", "bench-verify-signed.log")
# measure.sh's output for each CRC configuration: (feature argument, log).
SIZE_LOGS = [("crc-table", os.path.join(ROOT, "target", "bench-size-crc-table.log")),
             ("", os.path.join(ROOT, "target", "bench-size-no-table.log"))]
# The venv `python/ci.sh` makes: the tpack-weights wheel, safetensors and numpy.
PYTHON_VENV = os.path.join(ROOT, "target", "python-ci-venv", "bin", "python")


def run(cmd, log=None):
    print("+", " ".join(cmd), flush=True)
    if log is None:
        subprocess.run(cmd, cwd=ROOT, check=True)
        return
    with open(log, "w") as f:
        proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        f.write(proc.stdout)
    sys.stdout.write(proc.stdout[-2000:])
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed; see {log}")


def criterion_results():
    """{full_id: mean time in ns} for every benchmark criterion has recorded."""
    results = {}
    for dirpath, _, files in os.walk(CRITERION):
        if os.path.basename(dirpath) == "new" and "benchmark.json" in files and "estimates.json" in files:
            with open(os.path.join(dirpath, "benchmark.json")) as f:
                bench = json.load(f)
            with open(os.path.join(dirpath, "estimates.json")) as f:
                est = json.load(f)
            results[bench["full_id"]] = est["mean"]["point_estimate"]
    return results


def memory_results(log=MEMORY_LOG):
    """{name: value} from the `RESULT {json}` lines of a benchmark's log; {} when there is no log."""
    out = {}
    if not os.path.exists(log):
        return out
    with open(log) as f:
        for line in f:
            if line.startswith("RESULT "):
                r = json.loads(line[len("RESULT "):])
                out[r["name"]] = r["value"]
    return out


def machine():
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            kib = int(f.readline().split()[1])
            mem = f", {kib / 1024 / 1024:.0f} GiB RAM"
    except OSError:
        pass
    rustc = subprocess.run(["rustc", "-V"], capture_output=True, text=True).stdout.strip()
    lock = open(os.path.join(ROOT, "Cargo.lock")).read()
    st = re.search(r'name = "safetensors"\nversion = "([^"]+)"', lock)
    return (
        f"{model}, {os.cpu_count()} cores{mem}; {platform.system()} {platform.release()}; {rustc}; "
        f"safetensors crate {st.group(1) if st else '?'}; measured {datetime.date.today().isoformat()}"
    )


def fmt_time(ns):
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns:.0f} ns"


CONVERT_INTRO = [
    "## `tpack convert` of 1 GiB, against `cp` + `sync` of the same bytes",
    "",
    "`benches/convert.py` writes a 1.07 GiB GGUF with gguf-py (four F16 tensors of 256 MiB, one Q8_0 of 68 MiB) and",
    "a 1.13 GiB sharded safetensors model with `safetensors.numpy.save_file` (4 shards of two 144 MiB tensors, with",
    "its index), of random bytes, and converts each to one container with the release build. Each of 9",
    "repetitions runs `cp IN… DIR/ && sync DIR/*`, then `tpack convert IN OUT && sync OUT`, and deletes the",
    "output; the inputs are read once first, so both sides read them from the page cache. `sync FILE…` fsyncs",
    "just those files (`tpack convert` has fsynced its output already): both times include getting the bytes to",
    "disk, and neither pays for what other processes wrote, which a bare `sync` would charge to whichever side",
    "ran it. Medians; CPU is user + system of the child processes. Peak `RssAnon` is sampled every 2 ms from",
    "`/proc/PID/status`; `time -v`'s maximum RSS counts the mapped input pages too, so it is the input's size.",
    "",
]

PYTHON_READ_INTRO = [
    "## Python: every tensor of a 592 MiB checkpoint as numpy, against safetensors",
    "",
    "`benches/python_read.py` writes 325 tensors (592 MiB: 36 layers of four 512×512 and three 512×2048 F32",
    "matrices and two norms, and a 16384×512 F16 embedding) with numpy and PyPI `safetensors`",
    "(`safetensors.numpy.save_file`), converts them with `tpack convert`, and reads every tensor as a numpy array",
    "with each reader, from the page cache. Each job runs in a fresh interpreter (imports not timed); the jobs",
    "are interleaved over the repetitions, and the median is shown. safetensors' numpy path copies every tensor",
    "out of its map into new memory; tpack hands out read-only views of its map. The `+ sum` rows also read every",
    "element, which is what using the weights costs: page faults on the map for tpack, the copy for",
    "safetensors. Memory: peak RSS (`VmHWM`, which counts mapped file pages touched, shared with the page cache)",
    "and anonymous RSS with every array alive (what the reader allocated).",
    "",
]

PYTHON_READ_OUTRO = [
    "Goal: at least 5× faster than `safe_open` + `get_tensor` for getting every tensor, with no copy (anonymous",
    "memory flat). Command: `python/ci.sh && target/python-ci-venv/bin/python benches/python_read.py`.",
    "",
]

CONVERT_OUTRO = [
    "Goal: convert at least 0.9× the speed of `cp` (time ratio at most 1.11×), under 32 MiB anonymous memory.",
    "Command: `cargo build --release -p tpack-cli && python3 benches/convert.py` (needs gguf, safetensors, numpy;",
    "about 4.5 GiB of temporary disk, deleted at the end).",
    "",
    "A profile (`perf record` of a GGUF conversion) puts 75% of the time in the kernel's copy of the mapped",
    "input into the output's page cache (`copy_folio_from_iter_atomic`, under `write`) and 4.5% in the CRC-32",
    "of the payloads; `cp` makes the same copy in the kernel (`copy_file_range`), so there is little left to",
    "win: writes are 1 MiB and bypass the 256 KiB buffer, and the output is fsynced once, as `sync FILE` does.",
    "An earlier version of the benchmark ran a bare `sync` after `cp`; on this shared machine that flushed",
    "other processes' writes and made `cp` look up to 3× slower than it is.",
    "",
]


def stream_section(c):
    """The push decoder against parse + verify (benches/stream.rs): report lines and headline rows."""
    pv = c.get("stream/baseline: parse + verify/1 GiB")
    crc = c.get("stream/crc32 alone, 4 KiB pieces/1 GiB")
    dec = c.get("stream/tpack Decoder, 4 KiB chunks/1 GiB")
    if not (pv and dec):
        return [], []
    gib = 1 << 30
    crc_cell = f"{gib / crc:.1f} GB/s ({fmt_time(crc)}), {pv / crc:.0%}" if crc else "—"
    lines = [
        "## Push decoding in 4 KiB chunks, against parse + verify of one slice",
        "",
        "A 1 GiB container of 8 entries of 128 MiB in memory (`benches/stream.rs`). The baseline is",
        "`Container::parse` + `verify` of the whole bytes in one slice; `tpack::stream::Decoder` is fed the same",
        "bytes in 4 KiB chunks, as a transfer delivers them, and gives the same verdict (its payload events are",
        "counted, so nothing is optimized away). The middle column is the decoder's floor: the same CRC-32",
        "(crc32fast) over the same bytes, resumed from a `u32` per 4 KiB piece, as the decoder must since it",
        "keeps no bytes.",
        "",
        "| parse + verify | CRC-32 alone in 4 KiB pieces | tpack `Decoder`, 4 KiB chunks | **decoder / parse + verify** |",
        "|---:|---:|---:|---:|",
        f"| {gib / pv:.1f} GB/s ({fmt_time(pv)}) | {crc_cell} | {gib / dec:.1f} GB/s ({fmt_time(dec)}) | "
        f"**{pv / dec:.0%}** |",
        "",
        "Goal: at least 80% of parse + verify. Command: `cargo bench -p tpack --bench stream`.",
        "",
        "A profile (`perf record` of the decoder) puts about 88% of its time in crc32fast's kernel and about 4%",
        "in the decoder's own code (`Level::step`, `Decoder::decode`). The gap splits between the CRC's fixed",
        "cost per call, which 4 KiB pieces pay 262,144 times and one slice once (the middle column), and the",
        "decoder's two steps per chunk. Reading the current entry's descriptor in place instead of copying its",
        "104 bytes for each chunk, and skipping the checksum on the empty call after each payload event, may help:",
        "the ratio wanders with the machine's load, within what they could change. Across five runs while other",
        "processes kept both cores busy it ranged from 73% to 88%; the three runs after those changes gave 85%",
        "to 88%.",
        "",
    ]
    return lines, [("Push decoding in 4 KiB chunks, 1 GiB", f"{pv / dec:.0%} of parse + verify's speed")]


def verify_signed_section(r):
    """Signed verification against SHA-256 alone (benches/verify_signed.rs): report lines and headline rows."""
    if "signed/baseline: sha2::Sha256 over the file/cpu" not in r:
        return [], []
    size = r["bytes"] / (1 << 30)
    size = f"{size:.0f} GiB" if size >= 1 else f"{r['bytes'] / (1 << 20):.0f} MiB"

    def speed(group, job):
        cpu = r.get(f"{group}/{job}/cpu")
        return f"{r['bytes'] / cpu / 1e9:.2f} GB/s" if cpu else "—"

    def ratio(group, job):
        value = r.get(f"{group}/{job}/ratio")
        return f"{value:.0%}" if value is not None else "—"

    base, auth, verify = "baseline: sha2::Sha256 over the file", "parse + authenticate", "parse + authenticate + verify"
    each, cores = "parse + authenticate + verify_entry each", "parse + authenticate + verify_entry, every core"
    rows = []
    for group, label in [("signed", "256 entries of 4 MiB"), ("signed, one entry", "one entry of 1 GiB")]:
        if f"{group}/{base}/cpu" not in r:
            continue
        rows.append(
            f"| {label} | {speed(group, base)} | {r[f'{group}/{auth}/cpu'] * 1e3:.1f} ms "
            f"({r[f'{group}/{auth}/ratio']:.1%}) | {speed(group, verify)}, **{ratio(group, verify)}** | "
            f"{speed(group, each)}, **{ratio(group, each)}** |"
        )
    crc = r.get("unsigned/baseline: crc32fast::hash over the file/cpu")
    openssl = r.get("openssl sha256")
    lines = [
        f"## Verifying a signed {size} container, against SHA-256 alone",
        "",
        "`benches/verify_signed.rs`: a container of 256 entries of 4 MiB, and one of a single 1 GiB entry, signed with",
        "Ed25519, in memory. The baseline is RustCrypto's `sha2::Sha256` over the whole file in one call, on the same",
        "bytes in the same run: one core's SHA-256 speed"
        + (" (SHA-NI: `sha_ni` is in /proc/cpuinfo, and `sha2` detects it at run time)." if r.get("sha_ni") else "."),
        "`authenticate` checks R58–R63: it hashes the prefix and the digests and verifies one Ed25519 signature (salty);",
        "`verify` is the whole payload-integrity group (R37, R64, R50: each payload hashed and CRC-checked in one pass,",
        "16 KiB at a time); `verify_entry` is the lazy check of one entry (R64), here of every entry in turn.",
        "Each job runs once per round after the others, 5 rounds; a ratio is the median over the rounds of the",
        "baseline's time over the job's in the same round, which cancels the machine's drift between rounds (so it",
        "can differ by a few percent from the ratio of the speeds shown, which come from median times). Times are",
        "CPU time of the process: other jobs share this machine's two cores, and wall time counts the time they run.",
        "",
        "| container | SHA-256 alone | `authenticate` (share of SHA-256's time) | + `verify` | + `verify_entry` each |",
        "|---|---:|---:|---:|---:|",
        *rows,
        "",
    ]
    if openssl:
        soft = r.get("openssl sha256 without SHA extensions")
        lines += [
            f"For reference, `openssl speed -evp sha256` (16 KiB blocks) gave {openssl / 1e9:.2f} GB/s in the same run"
            + (
                f", and {soft / 1e9:.2f} GB/s told that the CPU has no SHA extensions (`OPENSSL_ia32cap=:~0x20000000`):"
                " `sha2` runs at the speed of SHA-NI, not of software."
                if soft
                else "."
            ),
            "",
        ]
    lines += [
        "Goal: at least 90% of SHA-256's speed. CI runs the same benchmark on 256 MiB and fails below 90%",
        "(`TPACK_BENCH_SIGNED_MIB=256 cargo bench -p tpack --bench verify_signed`; the default size is 1 GiB).",
        "",
        "`verify` first hashed each payload whole and then CRC-checked it whole: two passes over memory, at 87.6%",
        "(256 × 4 MiB) and 88.8% (1 GiB entry) of SHA-256's speed, under the goal. The payload now crosses the memory",
        "bus once: each 16 KiB piece is hashed, then CRC-checked while it is still in the L1 cache, and R64 is still",
        "reported before R50 (`tests/auth_verify.rs`). What is left over SHA-256 alone is the CRC's own work on",
        "bytes already in the cache, and `authenticate`'s fixed cost, almost all of it one",
        "Ed25519 verification by salty, which is built for size, not speed. The lazy path, `verify_entry`, checks",
        "R64 alone (the spec's lazy use: R50 is not needed once the digest has authenticated the payload) and runs",
        "at SHA-256's speed.",
        "",
    ]
    multi = r.get(f"signed/{cores}/ratio")
    if multi is not None:
        lines += [
            f"**Every core.** `verify_entry` on {r['threads']:.0f} threads (`std::thread::scope`, each thread taking the",
            f"next unchecked entry) against SHA-256 alone on one thread, in wall time: **{multi:.2f}×**. Its CPU time",
            f"is {r[f'signed/{cores}/cpu'] / r[f'signed/{base}/cpu']:.0%} of the single thread's: threads add no work, and",
            "entries are independent, so the speed-up is what the free cores allow. The load average (which counts",
            f"this benchmark's own threads) was {r.get('load average before', float('nan')):.1f} before the run and "
            f"{r.get('load average after', float('nan')):.1f} after it, on {r['threads']:.0f} cores; in earlier runs",
            "while other builds kept both cores busy (load average 6 to 10), the speed-up fell to 1.0× to 1.1×.",
            "",
        ]
    if crc:
        lines += [
            "**CRC verification of unsigned files is unchanged.** The same 256-entry container unsigned:",
            "`Container::parse` + `verify` against `crc32fast::hash` over the whole file, in the same run:",
            f"{speed('unsigned', 'parse + Container::verify')} against {r['bytes'] / crc / 1e9:.2f} GB/s, "
            f"**{ratio('unsigned', 'parse + Container::verify')}**. Its code (`src/read/verify.rs`, `src/checksum.rs`) is the",
            "same as before format 1.2. Measured once against that code too (2026-12-02: commit 6e3dd3d, before",
            "`sign-core`, and this branch, each built as a small release binary with `tpack` features `std`, run",
            "alternately 8 times each on the same 1 GiB container, CPU time, medians of 7 rounds per run): `verify`",
            "at 100.9% of crc32fast before and 101.8% after, 98.8 ms and 101.7 ms, within the spread of crc32fast",
            "itself between runs (91 to 116 ms).",
            "",
        ]
    verify = r.get(f"signed/{verify}/ratio")
    headline = []
    if verify:
        on_cores = f"; {multi:.1f}× on {r['threads']:.0f} cores (`verify_entry`)" if multi is not None else ""
        headline.append((f"Verifying a signed {size} container", f"{verify:.0%} of SHA-256's speed{on_cores}"))
    return lines, headline


def size_results(log):
    """The figures measure.sh printed into `log`, in bytes, or None when it has not run."""
    if not os.path.exists(log):
        return None
    text = open(log).read()
    patterns = {
        "reader": r"the reader \(parse \+ verify \+ lookups\) costs (\d+) B",
        "decoder_total": r"reader \+ decoder cost (\d+) B",
        "decoder": r"of which the decoder (\d+) B",
        "signature": r"of which SHA-256 \+ Ed25519 verification (\d+) B",
        "streaming": r"as well: (\d+) B in all",
        "reader_budget": r"costs \d+ B \(budget (\d+) B\)",
        "decoder_budget": r"reader \+ decoder cost .*\(budget (\d+) B\)",
        "signature_budget": r"verification \d+ B \(budget (\d+) B\)",
    }
    found = {k: re.search(p, text) for k, p in patterns.items()}
    if not all(found.values()):
        return None
    return {k: int(m.group(1)) for k, m in found.items()}


def size_section():
    """Code size on a Cortex-M4 (embedded/size-probe): report lines and headline rows."""
    rows = [(feature, size_results(log)) for feature, log in SIZE_LOGS]
    rows = [(feature, r) for feature, r in rows if r]
    if not rows:
        return [], []
    names = {"crc-table": "256 entries, 1 KiB (`crc-table`, default)", "": "none (`default-features = false`)"}
    lines = [
        "## Code size on a Cortex-M4, against the same program without tpack",
        "",
        "`embedded/size-probe` is a `#![no_std]` program for `thumbv7em-none-eabihf` (opt-level \"s\", LTO) that",
        "validates a signed container in place and looks up an entry and a key; `measure.sh --decoder --signature",
        "[features]` builds it with and without tpack and reports the difference in .text + .rodata. *Reader*:",
        "parse + `verify`. *+ push decoder*: it also receives the container through `tpack::stream::Decoder` in",
        "64-byte chunks. *Verification*: `Container::authenticate` with a one-key Ed25519 policy and a counter floor,",
        "then `Authenticated::verify` (every entry against its signed digest), through `SoftwareCrypto` (sha2 with",
        "its compact backend, `--cfg sha2_backend_soft=\"compact\"`, and salty), instead of `verify`; shown as",
        "what it adds to the reader. *Signed streaming*: reader, verification and the `SignedDecoder` together.",
        "",
        "| CRC table (feature) | reader | reader + push decoder (decoder) | SHA-256 + Ed25519 verification, on top of the reader | signed streaming, all in |",
        "|---|---:|---:|---:|---:|",
    ]
    for feature, r in rows:
        lines.append(
            f"| {names[feature]} | {r['reader']:,} B | {r['decoder_total']:,} B ({r['decoder']:,} B) "
            f"| **{r['signature']:,} B** | {r['streaming']:,} B |"
        )
    b = rows[0][1]
    lines += [
        "",
        f"CI budgets (`measure.sh`, which fails above them): reader {b['reader_budget']:,} B, reader + decoder "
        f"{b['decoder_budget']:,} B,",
        f"verification {b['signature_budget']:,} B. Format 1.2's structural rules R54–R57 took the reader from 10,488 B",
        "to 11,720 B and reader + decoder from 17,284 B to 18,460 B (`crc-table`); the three budgets are sizes",
        "measured on 2026-12-02 rounded up to 512 B, so that growth fails CI.",
        "",
        "**The issue's goal for verification, 12 KiB (12,288 B) on top of the reader, is not met.** By symbols",
        "(`crc-table`, 2026-12-02: rustc 1.95.0, sha2 0.11.1, salty 0.3.0): salty's Ed25519 verification about",
        "8.9 KB (6.3 KB of its own symbols, 2.6 KB inlined into `SoftwareCrypto::verify` with tpack's S < L check),",
        "sha2's compact SHA-256 1.1 KB, the `memcpy` and `memclr` of compiler-builtins that both bring 1.4 KB, and",
        "tpack's authentication (the policy, the signed attributes, the message, the digest checks) with the reader",
        "code LTO splits out again, about 2.4 KB.",
        "The crypto alone, with the reader hashing the file and verifying one signature and no tpack",
        "authentication, measured 12,484 B; the authentication adds 1,412 B to that. With sha2's default backend",
        "the verification costs 20,572 B. At opt-level \"z\" (`OPT_LEVEL=z measure.sh`) it costs 14,540 B, more",
        "than at \"s\"; signed streaming all in is 872 B smaller there (33,232 B).",
        "",
    ]
    r = dict(rows)
    best = r.get("crc-table") or rows[0][1]
    return lines, [("SHA-256 + Ed25519 verification on a Cortex-M4", f"{best['signature']:,} B on top of the reader (goal 12 KiB: not met)")]


def main():
    if "--no-run" not in sys.argv:
        run(["cargo", "bench", "-p", "tpack", "--bench", "compare"])
        run(["cargo", "bench", "-p", "tpack", "--bench", "stream"])
        run(["cargo", "bench", "-p", "tpack", "--bench", "verify_signed"], VERIFY_SIGNED_LOG)
        run(["cargo", "bench", "-p", "tpack", "--bench", "writer"])
        run(["cargo", "bench", "-p", "tpack-cli", "--bench", "memory"], MEMORY_LOG)
        run(["cargo", "test", "-p", "tpack", "--release", "--test", "zero_alloc"], ALLOC_LOG)
        python = os.environ.get("TPACK_PYTHON", sys.executable)
        has = subprocess.run([python, "-c", "import gguf, safetensors, numpy"], capture_output=True).returncode == 0
        if has:
            run(["cargo", "build", "--release", "-p", "tpack-cli"])
            run([python, "benches/convert.py", "--json", CONVERT_JSON])
        else:
            print(f"skipping benches/convert.py: {python} lacks gguf, safetensors or numpy (set TPACK_PYTHON)")
        if os.path.exists(PYTHON_VENV):
            run([PYTHON_VENV, "benches/python_read.py", "--json", PYTHON_READ_JSON])
        else:
            print("skipping benches/python_read.py: run python/ci.sh first (it makes target/python-ci-venv)")
        targets = subprocess.run(["rustup", "target", "list", "--installed"], capture_output=True, text=True).stdout
        if "thumbv7em-none-eabihf" in targets:
            for feature, log in SIZE_LOGS:
                run(["embedded/size-probe/measure.sh", "--decoder", "--signature"] + ([feature] if feature else []), log)
        else:
            print("skipping embedded/size-probe/measure.sh: rustup target add thumbv7em-none-eabihf")
    c = criterion_results()
    m = memory_results()
    alloc_ok = "test result: ok" in open(ALLOC_LOG).read()

    lines = [
        "# Benchmarks",
        "",
        "Regenerate with `python3 benches/report.py` (it runs the benchmarks, about 10 minutes). Every figure",
        "is a ratio against a baseline measured in the same run on the same machine. The machine is a shared",
        "cloud VM, so absolute times wander between runs; the ratios are what the goals are about.",
        "",
        f"**Machine:** {machine()}.",
        "",
    ]
    headline = []

    # Open + validate.
    lines += [
        "## Open + full structural validation, against safetensors' `deserialize`",
        "",
        "The same tensors in both formats: names like `model.layers.17.self_attn.q_proj.weight`, BF16 and F32,",
        "64-byte payloads, so the header dominates (`benches/compare.rs`, group `open`). tpack's `parse` checks",
        "every structural rule, the header checksum over the table, names and metadata included; safetensors'",
        "`deserialize` parses its JSON header into a hash map. `NameIndex::new` is tpack's optional hash index",
        "(std) for constant-time lookups, built after `parse`.",
        "",
        "| tensors | safetensors `deserialize` | tpack `parse` | per entry | **speed-up** | `parse` + `NameIndex::new` | speed-up |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n in [10, 1000, 100000]:
        st = c.get(f"open/safetensors deserialize/{n}")
        tp = c.get(f"open/tpack parse/{n}")
        ix = c.get(f"open/tpack parse + NameIndex::new/{n}")
        if st and tp:
            lines.append(
                f"| {n:,} | {fmt_time(st)} | {fmt_time(tp)} | {tp / n:.1f} ns | **{st / tp:.0f}×** | "
                f"{fmt_time(ix) if ix else '—'} | {f'{st / ix:.0f}×' if ix else '—'} |"
            )
            if n == 1000:
                headline.append(
                    ("Open + validate 1,000 tensors", f"{st / tp:.0f}× faster than safetensors `deserialize` "
                     f"({tp / n:.1f} ns per entry)")
                )
    lines += [
        "",
        "Goal: at least 20× faster at 1,000 entries and under 20 ns per entry.",
        "",
        "A profile of `parse` at 1,000 entries (`perf record`) guided four fixes, which together cut about a third",
        "of the time per entry:",
        "",
        "- one UTF-8 pass over the whole name pool instead of one call per name (it had been 24% of the time);",
        "- a branch-free OR over the unused dimensions instead of a search (41% of `check_descriptors`);",
        "- word-wise name comparison in the index-order check;",
        "- a lighter `Entry`.",
        "",
        "The time per entry rises at 100,000 entries because the table no longer fits in cache. The index check",
        "visits descriptors in name order, which is a permutation of table order.",
        "",
        "## Heap allocations while parsing",
        "",
        "`tests/zero_alloc.rs` installs a counting global allocator and asserts that `parse`, `verify`, `get`,",
        "`meta` and iterating entries and metadata make **zero** allocations at 0, 10, 1,000 and 100,000 entries,",
        "and that refusing damaged files allocates nothing either. This is a test, not a timing:",
        f"**{'passed' if alloc_ok else 'FAILED'}** in this run.",
        "",
    ]
    headline.append(("Heap allocations while parsing", "0 (asserted by a counting-allocator test)"))

    # Lookup.
    lines += [
        "## Lookup by name, against safetensors' `tensor()`",
        "",
        "1,024 pseudo-random names per iteration; the time per lookup (`benches/compare.rs`, group `lookup`).",
        "safetensors looks the name up in a `HashMap` (SipHash) and returns a view with a cloned shape. tpack's",
        "`get` binary-searches the name index stored in the file, with no memory and no set-up (what a",
        "microcontroller uses); `NameIndex::get` looks up a keyed SipHash table built once.",
        "",
        "| tensors | safetensors `tensor()` | tpack `get` (binary search) | ratio | tpack `NameIndex::get` | **ratio** |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for n in [1000, 100000]:
        st = c.get(f"lookup/safetensors tensor()/{n}")
        tp = c.get(f"lookup/tpack get()/{n}")
        ix = c.get(f"lookup/tpack NameIndex::get()/{n}")
        if st and tp and ix:
            lines.append(
                f"| {n:,} | {st / 1024:.0f} ns | {tp / 1024:.0f} ns | {st / tp:.2f}× | {ix / 1024:.0f} ns | "
                f"**{st / ix:.2f}×** |"
            )
            headline.append(
                (f"Lookup by name, {n:,} tensors", f"`NameIndex` {st / ix:.1f}× safetensors' speed; "
                 f"binary search {st / tp:.2f}×")
            )
    lines += [
        "",
        "Ratios are safetensors' time over tpack's: above 1 means tpack is faster. Goal: not slower.",
        "",
        "**What remains, and why.** The goal is met by `NameIndex`. The binary search (`get`) is slower than a hash",
        "map, and the gap grows with the table. A profile (`perf record` on `lookup/tpack get()`) shows almost",
        "all the time in `Container::get`. Each of its log2(n) probes, about 10 at 1,000 entries and 17 at",
        "100,000, is a chain of three dependent loads: the index slot, the 104-byte descriptor and the name",
        "bytes. At 100,000 entries the table, index and names are 14 MB, so most probes miss the cache. Two fixes",
        "have been applied:",
        "",
        "- the search skips the prefix that the current bounds already share with the name (names like",
        "  `model.layers.17.self_attn.` share long prefixes);",
        "- names are compared 8 bytes at a time, and an `Entry` no longer copies the whole `Container`.",
        "",
        "Together they cut the search time: criterion measured -41% at 1,000 and -54% at 100,000 entries against",
        "the plain search, both runs on an equally loaded machine. Closing the rest",
        "would need a hash table in the file, a format change for a cost only servers pay. So the stored index stays",
        "a sorted one, which a microcontroller can search with no memory at all. Servers that look up many names",
        "build a `NameIndex` once; its build cost is in the `open` table above.",
        "",
    ]

    # Verify.
    rp = c.get("verify/baseline: read pass/1 GiB")
    vf = c.get("verify/tpack verify/1 GiB")
    if rp and vf:
        gib = 1 << 30
        lines += [
            "## Full checksum verification, against a plain read pass",
            "",
            "A 1 GiB container of 64 entries in memory (`benches/compare.rs`, group `verify`). The baseline reads",
            "every byte once (an XOR fold of 8-byte words, which the compiler vectorizes). `verify` checks every",
            "padding byte and CRC-32s every payload, with crc32fast (PCLMULQDQ) under `std`; the portable `crc`",
            "crate is the `no_std` core, proven equal by `tests/checksum.rs` and fuzzing.",
            "",
            "| read pass | tpack `verify` | **verify / read pass** |",
            "|---:|---:|---:|",
            f"| {gib / rp:.1f} GB/s ({fmt_time(rp)}) | {gib / vf:.1f} GB/s ({fmt_time(vf)}) | **{rp / vf:.0%}** |",
            "",
            "Goal: at least 90% of the read pass.",
            "",
        ]
        headline.append(("Checksum verification, 1 GiB", f"{rp / vf:.0%} of a plain read pass's speed"))

    stream_lines, stream_headline = stream_section(c)
    lines += stream_lines
    headline += stream_headline

    signed_lines, signed_headline = verify_signed_section(memory_results(VERIFY_SIGNED_LOG))
    lines += signed_lines
    headline += signed_headline

    # Writer.
    cp = c.get("write 1 GiB in 1 MiB chunks to a file/baseline: std::io::copy")
    sw = c.get("write 1 GiB in 1 MiB chunks to a file/tpack SeekWriter")
    if cp and sw:
        lines += [
            "## Writer throughput, against `std::io::copy`",
            "",
            "1 GiB in 1 MiB chunks to a file, 16 entries (`benches/writer.rs`): `SeekWriter` pads, checksums and",
            "back-patches; the baseline copies the same bytes to the same kind of file.",
            "",
            "| `io::copy` | tpack `SeekWriter` | **writer / copy** |",
            "|---:|---:|---:|",
            f"| {fmt_time(cp)} | {fmt_time(sw)} | **{cp / sw:.0%}** |",
            "",
            "Goal: at least 90%.",
            "",
        ]
        headline.append(("Writer throughput", f"{cp / sw:.0%} of `std::io::copy`"))

    if m:
        base = m["convert_peak_anon_baseline_kib"]
        tp = m["convert_peak_anon_tpack_kib"]
        st = m["convert_peak_anon_safetensors_kib"]
        mem = m.get("convert_peak_anon_safetensors_in_memory_kib")
        lines += [
            "## Peak anonymous memory converting a 2 GiB model",
            "",
            f"A {m['convert_model_gib']:.2f} GiB safetensors model (64 tensors), each figure from a fresh",
            "process sampling its `RssAnon` every millisecond (`cli/benches/memory.rs`). Anonymous memory is what",
            "the converter allocates; the mapped input's page cache is file-backed and not counted.",
            "",
            "| process | peak anonymous memory |",
            "|---|---:|",
            f"| baseline: map and parse the input only | {base:,.0f} KiB |",
            f"| **`tpack convert` (safetensors → tpack, streaming `SeekWriter`)** | **{tp:,.0f} KiB** |",
            f"| safetensors `serialize_to_file` (same model, same input) | {st:,.0f} KiB |",
        ]
        if mem:
            lines.append(f"| safetensors `serialize` (builds the file in memory) | {mem:,.0f} KiB |")
        lines += [
            "",
            f"tpack's converter adds {tp - base:,.0f} KiB to the baseline, {tp / st:.2f}× what safetensors' streaming",
            "serializer uses. Goal: under 32 MiB; `cargo bench -p tpack-cli --bench memory` fails above it.",
            "",
        ]
        headline.append(("Peak memory converting 2 GiB", f"{tp / 1024:.1f} MiB ({tp / st:.2f}× safetensors' streaming serializer)"))
        f1, f4 = m["open_faults_1mib"], m["open_faults_4gib"]
        lines += [
            "## Page faults of opening a memory-mapped container",
            "",
            "`MappedFile::open` + `container()` + one lookup, in a fresh process, on a 1 MiB and a 4 GiB container",
            "(sparse files, same table); minor + major faults from `/proc/self/stat`.",
            "",
            "| 1 MiB container | 4 GiB container | **ratio** |",
            "|---:|---:|---:|",
            f"| {f1:.0f} | {f4:.0f} | **{f4 / f1:.2f}×** |",
            "",
            "Opening reads the prefix pages only (the header, table, index, names and metadata), so it costs the",
            "same whatever the payload size.",
            "",
        ]
        headline.append(("Page faults opening 4 GiB vs 1 MiB", f"{f4:.0f} vs {f1:.0f}"))

    results = kept(CONVERT_JSON)
    if results is not None:
        import convert as convert_bench  # noqa: E402  (benches/convert.py; numpy is imported there)

        lines += CONVERT_INTRO + [convert_bench.table(results), ""] + CONVERT_OUTRO
        worst = max(r["ratio"] for r in results)
        peak = max(r["peak_anon_kib"] for r in results)
        headline.append(("`tpack convert` of 1 GiB vs `cp` + `sync`", f"{worst:.2f}× the time; {peak:,} KiB anonymous memory"))

    results = kept(PYTHON_READ_JSON)
    if results is not None:
        import python_read  # noqa: E402  (benches/python_read.py)

        lines += PYTHON_READ_INTRO + [python_read.table(results), ""] + PYTHON_READ_OUTRO
        jobs = results["jobs"]
        ratio = jobs["st_safe_open"]["seconds"] / jobs["tpack_get"]["seconds"]
        headline.append(("Python: get every tensor of 592 MiB as numpy",
                         f"{ratio:.0f}× faster than safetensors `safe_open` + `get_tensor`; no copy"))

    size_lines, size_headline = size_section()
    lines += size_lines
    headline += size_headline

    with open(os.path.join(ROOT, "BENCHMARKS.md"), "w") as f:
        f.write("\n".join(lines).rstrip() + "\n")

    table = ["| measure | result |", "|---|---|"] + [f"| {a} | {b} |" for a, b in headline]
    readme_path = os.path.join(ROOT, "README.md")
    readme = open(readme_path).read()
    start, end = "<!-- benchmarks:start -->", "<!-- benchmarks:end -->"
    if start in readme and end in readme:
        before, rest = readme.split(start, 1)
        _, after = rest.split(end, 1)
        readme = before + start + "\n" + "\n".join(table) + "\n" + end + after
        with open(readme_path, "w") as f:
            f.write(readme)
    print("wrote BENCHMARKS.md" + (" and the README table" if start in readme else ""))


if __name__ == "__main__":
    main()

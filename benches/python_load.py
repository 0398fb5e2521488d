#!/usr/bin/env python3
"""Loading a ≥ 1 GiB checkpoint into process memory, cold and warm, against `cat FILE > /dev/null`.

    python/ci.sh   # or any venv with the tpack-weights wheel, safetensors and numpy installed
    target/python-ci-venv/bin/python benches/python_load.py [--dir /tmp] [--rounds 5] [--save-rounds 5]

Writes one set of tensors (1.1 GiB: 24 layers of four 1024×1024 and two 1024×4096 float32 matrices, their
norms, and a 32000×1024 float16 embedding; random values) as a tpack file (`tpack.save`) and as a safetensors
file (`safetensors.numpy.save_file`) in a temporary directory (default under /tmp, deleted at the end), then
in each of `--rounds` rounds runs every job cold and then warm:

- `cat FILE > /dev/null` of each file (the throughput of reading the file, and nothing else);
- `tpack.load` (every payload's CRC-32 and padding checked on the way);
- `tpack.numpy.load_file` (the same reader, sorted dict);
- `safetensors.numpy.load_file` (no checksum: the format has none).

Cold: the file is fsynced once after writing, then before each cold run its pages are dropped with
`posix_fadvise(POSIX_FADV_DONTNEED)`, and `fincore` (util-linux) tells how many of its bytes were still in the
page cache when the run started (printed: it must be 0 for the run to be cold). Warm: the same job right
after, every page cached. The median over the rounds is printed, as MiB/s and as a ratio to `cat` of the same
file in the same state. The VM's disk may itself be cached by its host: "cold" is then what this machine's
page cache does not hold, which is what `cat` meets too.

Then `--save-rounds` rounds of saving a 90 MiB dict (the size of MiniLM-L6): `tpack.save` (writes a temporary
file, fsyncs it, renames it, fsyncs the directory), the same bytes written without any fsync
(`tpack.save_bytes` + a plain write), `safetensors.numpy.save_file`, and `save_file` followed by the same two
fsyncs: what the durability costs, on each side.
"""
from __future__ import annotations

import argparse
import gc
import os
import platform
import shutil
import statistics
import subprocess
import tempfile
import time

import numpy as np
import safetensors
import safetensors.numpy as st_numpy

import tpack
import tpack.numpy as tp_numpy

MIB = 1 << 20


def tensors_1g(rng: np.random.Generator) -> dict:
    """1.1 GiB of float32 layers and a float16 embedding, shaped like a small transformer's."""
    out = {"embed.weight": rng.standard_normal((32000, 1024), dtype=np.float32).astype(np.float16)}
    for layer in range(24):
        p = f"layers.{layer}."
        for name in ("q", "k", "v", "o"):
            out[p + f"attn.{name}.weight"] = rng.standard_normal((1024, 1024), dtype=np.float32)
        out[p + "mlp.up.weight"] = rng.standard_normal((4096, 1024), dtype=np.float32)
        out[p + "mlp.down.weight"] = rng.standard_normal((1024, 4096), dtype=np.float32)
        out[p + "norm.weight"] = np.ones(1024, np.float32)
    return out


def resident_bytes(path: str) -> int:
    """Bytes of `path` in the page cache, by `fincore --bytes` (-1 when fincore is missing)."""
    if shutil.which("fincore") is None:
        return -1
    out = subprocess.run(["fincore", "--bytes", "--noheadings", "--output", "RES", path],
                         capture_output=True, text=True, check=True).stdout.split()
    return int(out[0])


def drop_pages(path: str) -> int:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    return resident_bytes(path)


def fsync_path(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def timed(job) -> float:
    gc.collect()
    start = time.perf_counter()
    result = job()
    elapsed = time.perf_counter() - start
    del result
    gc.collect()
    return elapsed


def cat(path: str):
    return lambda: subprocess.run(f"cat '{path}' > /dev/null", shell=True, check=True)


def fresh_memory(nbytes: int):
    """New memory of `nbytes` with every page touched (numpy's allocator, as the loaders' arrays): what getting
    the result's memory from the kernel costs, with nothing read. Not a loader: the floor they all share."""
    def job():
        a = np.empty(nbytes, np.uint8)
        a[::4096] = 0
        return a
    return job


def load_jobs(tp_path: str, st_path: str):
    """(name, file, job) of every loading job, `cat` of each file first."""
    return [
        ("cat tpack file", tp_path, cat(tp_path)),
        ("(floor: fresh memory of the file's size, touched)", tp_path, fresh_memory(os.path.getsize(tp_path))),
        ("tpack.load (CRC-32 verified)", tp_path, lambda: tpack.load(tp_path)),
        ("tpack.numpy.load_file", tp_path, lambda: tp_numpy.load_file(tp_path)),
        ("cat safetensors file", st_path, cat(st_path)),
        ("safetensors.numpy.load_file", st_path, lambda: st_numpy.load_file(st_path)),
    ]


def bench_load(d: str, rounds: int) -> None:
    rng = np.random.default_rng(0)
    tensors = tensors_1g(rng)
    tp_path, st_path = f"{d}/model.tpack", f"{d}/model.safetensors"
    tpack.save(tp_path, tensors)
    st_numpy.save_file(tensors, st_path)
    fsync_path(st_path)
    reference = {k: v for k, v in tensors.items()}
    del tensors
    # The loaders give what was saved (checked once, outside the timings).
    for name, loaded in (("tpack.load", tpack.load(tp_path)), ("load_file", tp_numpy.load_file(tp_path))):
        assert loaded.keys() == reference.keys() and all(np.array_equal(loaded[k], v) for k, v in reference.items()), name
    del reference, loaded
    gc.collect()
    sizes = {p: os.path.getsize(p) for p in (tp_path, st_path)}
    print(f"tpack file {sizes[tp_path] / MIB:.1f} MiB, safetensors file {sizes[st_path] / MIB:.1f} MiB; "
          f"{rounds} rounds, median")
    jobs = load_jobs(tp_path, st_path)
    times = {(name, state): [] for name, _, _ in jobs for state in ("cold", "warm")}
    left_cached = []
    for _ in range(rounds):
        for name, path, job in jobs:
            left_cached.append(drop_pages(path))
            times[(name, "cold")].append(timed(job))
            times[(name, "warm")].append(timed(job))
    print(f"bytes still cached when a cold run started (fincore): max {max(left_cached)}")
    print()
    print("Throughput: the file's size over the median time. Ratio: the median over the rounds of `cat`'s time "
          "over the job's in the same round (above 1: faster than `cat`).")
    print()
    print("| job | file | cold MiB/s | cold, ratio to cat | warm MiB/s | warm, ratio to cat |")
    print("|---|---|---:|---:|---:|---:|")
    cat_of = {}
    for name, path, _ in jobs:
        if name.startswith("cat"):
            cat_of[path] = name
        speed = {s: sizes[path] / MIB / statistics.median(times[(name, s)]) for s in ("cold", "warm")}
        ratio = {s: statistics.median(c / t for c, t in zip(times[(cat_of[path], s)], times[(name, s)]))
                 for s in ("cold", "warm")}
        kind = "tpack" if path == tp_path else "safetensors"
        print(f"| {name} | {kind} | {speed['cold']:.0f} | **{ratio['cold']:.2f}×** | {speed['warm']:.0f} | "
              f"{ratio['warm']:.2f}× |")
    print()
    print("every run (s):", {f"{n} {s}": [round(t, 3) for t in v] for (n, s), v in times.items()})


def bench_save(d: str, rounds: int) -> None:
    rng = np.random.default_rng(1)
    # 22.7 M float32 parameters, 90.6 MiB: MiniLM-L6's size.
    tensors = {f"layer.{i}.w": rng.standard_normal((384, 1536), dtype=np.float32) for i in range(36)}
    tensors["embed"] = rng.standard_normal((30522, 384), dtype=np.float32)
    tp_path, st_path = f"{d}/save.tpack", f"{d}/save.safetensors"

    def tpack_no_fsync():
        data = tpack.save_bytes(tensors)
        with open(tp_path, "wb") as f:
            f.write(data)

    def st_fsync():
        st_numpy.save_file(tensors, st_path)
        fsync_path(st_path)
        fsync_path(d)

    jobs = [
        ("tpack.save (fsync file + directory)", lambda: tpack.save(tp_path, tensors)),
        ("tpack.save_bytes + write, no fsync", tpack_no_fsync),
        ("safetensors save_file (no fsync)", lambda: st_numpy.save_file(tensors, st_path)),
        ("safetensors save_file + fsync file + directory", st_fsync),
    ]
    times = {name: [] for name, _ in jobs}
    for _ in range(rounds):
        for name, job in jobs:
            times[name].append(timed(job))
    size = sum(a.nbytes for a in tensors.values())
    print(f"\nsaving {size / MIB:.1f} MiB ({len(tensors)} tensors), {rounds} rounds, median\n")
    print("| job | median | every run |")
    print("|---|---:|---|")
    for name, _ in jobs:
        print(f"| {name} | {statistics.median(times[name]) * 1e3:.0f} ms | "
              f"{', '.join(f'{t * 1e3:.0f}' for t in times[name])} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default="/tmp", help="where the temporary directory goes (default /tmp)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--save-rounds", type=int, default=5)
    args = parser.parse_args()
    print(f"{platform.node()}: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"Linux {platform.release()}; numpy {np.__version__}, safetensors {safetensors.__version__}, "
          f"tpack {tpack.__version__}; load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="tpack-load-", dir=args.dir) as d:
        if args.rounds:
            bench_load(d, args.rounds)
        if args.save_rounds:
            bench_save(d, args.save_rounds)


if __name__ == "__main__":
    main()

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

Memory: on a VM whose guest hands freed memory back to its host (virtio-balloon free page reporting, as on this
project's machines), the first touch of memory that was freed a few seconds earlier costs a fault in the host
too: 1 GiB of "fresh" memory then takes 1 to 8 s to get instead of 0.4 s, whoever asks, which swamps every
loader (not `cat`, which reuses one small buffer). So before each timed run of every job, `--prewarm-mib`
(default 1536) MiB are touched and freed, which leaves the guest's free pages backed; `--prewarm-mib 0` shows
the raw behaviour. The "floor" row times getting the result's memory alone (new pages, zeroed by the kernel).

Then `--save-rounds` rounds of saving an 89 MiB dict shaped like MiniLM-L6: `tpack.save` (writes a temporary
file, fsyncs it, renames it, fsyncs the directory); the same bytes written without any fsync (`tpack.save_bytes`
+ a plain write) and then the two fsyncs, timed apart; `safetensors.numpy.save_file` and then the same two
fsyncs, timed apart: what the durability costs, on each side.
"""
from __future__ import annotations

import argparse
import gc
import os
import platform
import resource
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


#: Bytes of memory touched and freed before each timed run (``--prewarm-mib``): see the module's doc.
PREWARM = 0


def prewarm() -> None:
    """Touches and frees `PREWARM` bytes: the guest kernel's free pages are then backed by the host again."""
    if PREWARM:
        a = np.empty(PREWARM, np.uint8)
        a[::4096] = 1
        del a


#: CPU seconds (user + system, this process's threads and its children) of the last `timed` run.
last_cpu = 0.0


def cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(job) -> float:
    """The wall time of `job()`; its CPU time in `last_cpu`."""
    global last_cpu
    gc.collect()
    prewarm()
    cpu = cpu_seconds()
    start = time.perf_counter()
    result = job()
    elapsed = time.perf_counter() - start
    last_cpu = cpu_seconds() - cpu
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
    cpu = {(name, state): [] for name, _, _ in jobs for state in ("cold", "warm")}
    left_cached = []
    for _ in range(rounds):
        for name, path, job in jobs:
            left_cached.append(drop_pages(path))
            for state in ("cold", "warm"):
                times[(name, state)].append(timed(job))
                cpu[(name, state)].append(last_cpu)
    print(f"bytes still cached when a cold run started (fincore): max {max(left_cached)}; "
          f"load average now {os.getloadavg()[0]:.1f}")
    print()
    print("Throughput: the file's size over the median time. Ratio: the median over the rounds of `cat`'s time "
          "over the job's in the same round (above 1: faster than `cat`).")
    print()
    print("| job | file | cold MiB/s | cold, ratio to cat | warm MiB/s | warm, ratio to cat | CPU s, cold / warm |")
    print("|---|---|---:|---:|---:|---:|---:|")
    cat_of = {}
    for name, path, _ in jobs:
        if name.startswith("cat"):
            cat_of[path] = name
        speed = {s: sizes[path] / MIB / statistics.median(times[(name, s)]) for s in ("cold", "warm")}
        ratio = {s: statistics.median(c / t for c, t in zip(times[(cat_of[path], s)], times[(name, s)]))
                 for s in ("cold", "warm")}
        kind = "tpack" if path == tp_path else "safetensors"
        used = "{:.2f} / {:.2f}".format(*(statistics.median(cpu[(name, s)]) for s in ("cold", "warm")))
        print(f"| {name} | {kind} | {speed['cold']:.0f} | **{ratio['cold']:.2f}×** | {speed['warm']:.0f} | "
              f"{ratio['warm']:.2f}× | {used} |")
    print()
    print("every run (s):", {f"{n} {s}": [round(t, 3) for t in v] for (n, s), v in times.items()})


def bench_save(d: str, rounds: int) -> None:
    rng = np.random.default_rng(1)
    # MiniLM-L6's shapes: a 30522×384 embedding and 6 layers of four 384×384 and two 384×1536 matrices (89 MiB).
    tensors = {"embed": rng.standard_normal((30522, 384), dtype=np.float32)}
    for layer in range(6):
        for name in ("q", "k", "v", "o"):
            tensors[f"layer.{layer}.{name}"] = rng.standard_normal((384, 384), dtype=np.float32)
        tensors[f"layer.{layer}.up"] = rng.standard_normal((1536, 384), dtype=np.float32)
        tensors[f"layer.{layer}.down"] = rng.standard_normal((384, 1536), dtype=np.float32)
    tp_path, st_path = f"{d}/save.tpack", f"{d}/save.safetensors"

    def durable(write, path):
        """`write()`, then fsync of the file and of its directory (what `tpack.save` adds): both times."""
        start = time.perf_counter()
        write()
        written = time.perf_counter()
        fsync_path(path)
        fsync_path(d)
        return written - start, time.perf_counter() - written

    def tpack_bytes():
        data = tpack.save_bytes(tensors)
        with open(tp_path, "wb") as f:
            f.write(data)

    jobs = {
        "tpack.save (writes, fsyncs the file, renames, fsyncs the directory)":
            lambda: (timed(lambda: tpack.save(tp_path, tensors)), None),
        "tpack.save_bytes + a plain write, then the two fsyncs": lambda: durable(tpack_bytes, tp_path),
        "safetensors.numpy.save_file, then the two fsyncs":
            lambda: durable(lambda: st_numpy.save_file(tensors, st_path), st_path),
    }
    times = {name: ([], []) for name in jobs}
    for _ in range(rounds):
        for name, job in jobs.items():
            gc.collect()
            write, sync = job()
            times[name][0].append(write)
            if sync is not None:
                times[name][1].append(sync)
    size = sum(a.nbytes for a in tensors.values())
    print(f"\nsaving {size / MIB:.1f} MiB ({len(tensors)} tensors), {rounds} rounds, median\n")
    print("| job | write (median) | the two fsyncs after it (median) | every write, ms |")
    print("|---|---:|---:|---|")
    for name, (write, sync) in times.items():
        fsyncs = f"{statistics.median(sync) * 1e3:.0f} ms" if sync else "(included)"
        print(f"| {name} | {statistics.median(write) * 1e3:.0f} ms | {fsyncs} | "
              f"{', '.join(f'{t * 1e3:.0f}' for t in write)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default="/tmp", help="where the temporary directory goes (default /tmp)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--save-rounds", type=int, default=5)
    parser.add_argument("--prewarm-mib", type=int, default=1536,
                        help="memory touched and freed before each timed run (0: none); see the module's doc")
    args = parser.parse_args()
    global PREWARM
    PREWARM = args.prewarm_mib * MIB
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

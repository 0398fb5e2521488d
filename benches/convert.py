#!/usr/bin/env python3
"""`tpack convert` against `cp` of the same bytes, on >= 1 GiB inputs: a GGUF, a sharded safetensors model, a
PyTorch checkpoint, a NumPy .npy and .npz, an ONNX model with external data, and a TensorFlow checkpoint.

    cargo build --release -p tpack-cli
    python3 benches/convert.py [--reps N] [--json OUT.json] [--dir TMPDIR] [--formats gguf,sharded,...]

Each input is written by its own library, in a temporary directory that is deleted at the end (about 2.5 GiB of
disk at a time): gguf-py's GGUFWriter, safetensors.numpy.save_file, torch.save, numpy.save and numpy.savez, and
onnx.save_model with save_as_external_data, and tf.train.Checkpoint.write. The formats run are those of
`--formats` (default: all of gguf, sharded, pytorch, npy, npz, onnx, tensorflow); a missing package for one of them
is an error, not a skip.

For each input, the repetitions interleave the two sides, `cp IN… DIR/ && sync DIR/*` then `tpack convert IN
OUT && sync OUT`, so that both see the same machine state; each output is deleted after its repetition, and the input
files are read once before the first repetition, so both sides read them from the page cache (nothing is
dropped: that needs root). `sync FILE…` fsyncs just those files: `tpack convert` fsyncs its output itself, so
the `sync` after it finds nothing left, and the one after `cp` writes what `cp` left in the page cache; both
times include getting the bytes to disk, and neither pays for other processes' writes (a bare `sync` would). Reported: the median of each, and their ratio (convert time / cp time; the target is at most 1/0.9).

Memory: while each convert runs, its /proc/PID/status `RssAnon` is sampled every 2 ms and the largest value
kept: anonymous memory is what the converter allocates; the mapped input's pages are file-backed and not
counted (target: under 32 MiB). One extra run under `/usr/bin/time -v` gives its maximum RSS for reference,
which counts the mapped input pages it touched.
"""
from __future__ import annotations

import argparse
import json
import resource
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

from kept_results import show_and_keep

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TPACK = os.path.join(ROOT, "target", "release", "tpack")
GIB = 1 << 30
MIB = 1 << 20


def random_bytes(rng, n):
    """n random-ish bytes (so that nothing compresses or dedups them)."""
    return rng.integers(0, 256, size=n, dtype=np.uint8)


def make_gguf(path):
    import gguf

    rng = np.random.default_rng(1)
    w = gguf.GGUFWriter(path, arch="llama")
    w.add_name("tpack convert benchmark")
    # Four F16 tensors of 256 MiB and one Q8_0 tensor of 68 MiB (2^21 blocks of 34 bytes): 1.07 GiB.
    for i in range(4):
        w.add_tensor(f"blk.{i}.ffn_up.weight", random_bytes(rng, 256 * MIB).view(np.float16).reshape(16384, 8192))
    q8 = random_bytes(rng, 34 * (1 << 21)).reshape(4096, 34 * 512)
    w.add_tensor("blk.4.attn_q.weight", q8, raw_dtype=gguf.GGMLQuantizationType.Q8_0)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return [path]


def make_sharded(dir_):
    import safetensors.numpy

    rng = np.random.default_rng(2)
    os.makedirs(dir_)
    n, files, weight_map, total = 4, [], {}, 0
    for s in range(n):
        name = f"model-{s + 1:05d}-of-{n:05d}.safetensors"
        # Two BF16-sized (uint16 here) tensors of 144 MiB per shard: 4 shards of 288 MiB, 1.125 GiB.
        tensors = {f"model.layers.{2 * s + j}.mlp.weight": random_bytes(rng, 144 * MIB).view(np.uint16).reshape(-1, 4096)
                   for j in range(2)}
        safetensors.numpy.save_file(tensors, os.path.join(dir_, name), metadata={"format": "pt"})
        for t, a in tensors.items():
            weight_map[t] = name
            total += a.nbytes
        files.append(os.path.join(dir_, name))
    with open(os.path.join(dir_, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}, f, indent=2)
    return files


def tensor_bytes(seed, count=4, mib=256):
    """`count` random float32 arrays of `mib` MiB each (1 GiB by default), for the single-file formats."""
    rng = np.random.default_rng(seed)
    return {f"layers.{i}.mlp.weight": random_bytes(rng, mib * MIB).view(np.float32).reshape(-1, 4096)
            for i in range(count)}


def make_pytorch(path):
    import torch

    torch.save({k: torch.from_numpy(a) for k, a in tensor_bytes(3).items()}, path)
    return [path]


def make_npy(path):
    # One array of 1 GiB: a .npy holds one.
    np.save(path, np.concatenate(list(tensor_bytes(4).values())))
    return [path]


def make_npz(path):
    np.savez(path, **tensor_bytes(5))  # stored members, as numpy.savez writes them
    return [path]


def make_onnx(dir_):
    import onnx
    from onnx import helper, numpy_helper

    os.makedirs(dir_)
    inits = [numpy_helper.from_array(a, name=k) for k, a in tensor_bytes(6).items()]
    graph = helper.make_graph([], "bench", [], [], initializer=inits)
    path = os.path.join(dir_, "model.onnx")
    onnx.save_model(helper.make_model(graph), path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location="model.onnx.data", size_threshold=0)
    return path, [path, os.path.join(dir_, "model.onnx.data")]


def status_kib(pid, field):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def run_polled(cmd):
    """Runs cmd; returns (seconds, peak RssAnon KiB)."""
    start = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0
    while p.poll() is None:
        v = status_kib(p.pid, "RssAnon:")
        if v is not None:
            peak = max(peak, v)
        time.sleep(0.002)
    elapsed = time.perf_counter() - start
    err = p.stderr.read().decode()
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {err}")
    return elapsed, peak


def timed(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def sync_time(paths):
    """`sync PATH…`: fsync these files only. A bare `sync` would also flush whatever else the (shared) machine
    has written, and charge it to whichever side ran it."""
    return timed(["sync", *paths])


def children_cpu():
    """User + system CPU seconds of every finished child so far."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def bench(label, convert_input, files, work, reps):
    size = sum(os.path.getsize(f) for f in files)
    for f in files:  # warm: both sides read the inputs from the page cache
        with open(f, "rb") as fh:
            while fh.read(64 * MIB):
                pass
    subprocess.run(["sync"], check=True)
    cp_times, cv_times, cp_cpu, cv_cpu, peaks = [], [], [], [], []
    copy_dir = os.path.join(work, "copy")
    out = os.path.join(work, "out.tpack")
    for _ in range(reps):
        os.makedirs(copy_dir)
        c = children_cpu()
        t = timed(["cp", *files, copy_dir + "/"])
        t += sync_time([os.path.join(copy_dir, os.path.basename(f)) for f in files])
        cp_times.append(t)
        cp_cpu.append(children_cpu() - c)
        shutil.rmtree(copy_dir)
        subprocess.run(["sync"], check=True)

        c = children_cpu()
        t, peak = run_polled([TPACK, "-q", "convert", convert_input, out])
        t += sync_time([out])
        cv_times.append(t)
        cv_cpu.append(children_cpu() - c)
        peaks.append(peak)
        os.remove(out)
        subprocess.run(["sync"], check=True)
    # Reference: maximum RSS (file-backed pages included) from /usr/bin/time -v.
    max_rss = None
    if os.path.exists("/usr/bin/time"):
        p = subprocess.run(["/usr/bin/time", "-v", TPACK, "-q", "convert", convert_input, out],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True)
        for line in p.stderr.splitlines():
            if "Maximum resident set size" in line:
                max_rss = int(line.split(":")[1])
        os.remove(out)
    cp, cv = statistics.median(cp_times), statistics.median(cv_times)
    return {
        "label": label, "bytes": size, "files": len(files), "reps": reps,
        "cp_median_s": cp, "convert_median_s": cv, "ratio": cv / cp,
        "cp_times_s": cp_times, "convert_times_s": cv_times,
        "cp_cpu_median_s": statistics.median(cp_cpu), "convert_cpu_median_s": statistics.median(cv_cpu),
        "peak_anon_kib": max(peaks), "max_rss_kib": max_rss,
    }


def table(results):
    """The results as the Markdown table of BENCHMARKS.md (`benches/report.py` prints the same)."""
    lines = [
        "| input | size | `cp` + `sync` | `tpack convert` + `sync` | **time ratio** | CPU: `cp` / convert | "
        "peak `RssAnon` | max RSS (`time -v`) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r['label']} | {r['bytes'] / GIB:.2f} GiB | {r['cp_median_s']:.2f} s | {r['convert_median_s']:.2f} s | "
            f"**{r['ratio']:.2f}×** | {r['cp_cpu_median_s']:.2f} s / {r['convert_cpu_median_s']:.2f} s | "
            f"{r['peak_anon_kib']:,} KiB | {r['max_rss_kib'] or 0:,} KiB |")
    return "\n".join(lines)


def make_tensorflow(dir_):
    import tensorflow as tf

    os.makedirs(dir_)
    ckpt = tf.train.Checkpoint(**{f"w{i}": tf.Variable(a) for i, a in enumerate(tensor_bytes(7).values())})
    prefix = ckpt.write(os.path.join(dir_, "ckpt"))
    return prefix, [os.path.join(dir_, f) for f in os.listdir(dir_)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--json")
    ap.add_argument("--dir", default=None, help="where the inputs are written (default: a new temporary directory)")
    ap.add_argument("--formats", default="gguf,sharded,pytorch,npy,npz,onnx,tensorflow")
    args = ap.parse_args()
    if not os.path.exists(TPACK):
        sys.exit(f"{TPACK} is missing; run `cargo build --release -p tpack-cli` first")
    formats = args.formats.split(",")
    unknown = set(formats) - {"gguf", "sharded", "pytorch", "npy", "npz", "onnx", "tensorflow"}
    if unknown:
        sys.exit(f"unknown formats: {', '.join(sorted(unknown))}")
    work = tempfile.mkdtemp(prefix="tpack-convert-bench-", dir=args.dir)
    results = []

    def one(label, make, name):
        """Writes the input with `make`, converts it `--reps` times against cp, and deletes it."""
        where = os.path.join(work, name)
        made = make(where)
        convert_input, files = made if isinstance(made, tuple) else (where, made)
        results.append(bench(label, convert_input, files, work, args.reps))
        shutil.rmtree(where) if os.path.isdir(where) else os.remove(where)

    try:
        for f in formats:
            if f == "gguf":
                one("GGUF (4 F16 + 1 Q8_0 tensors)", make_gguf, "model.gguf")
            elif f == "sharded":
                one("sharded safetensors (4 shards, 8 tensors)", make_sharded, "sharded")
            elif f == "pytorch":
                one("PyTorch `torch.save` (4 F32 tensors)", make_pytorch, "model.pt")
            elif f == "npy":
                one("NumPy .npy (one F32 array)", make_npy, "model.npy")
            elif f == "npz":
                one("NumPy .npz, stored (4 F32 arrays)", make_npz, "model.npz")
            elif f == "onnx":
                one("ONNX, external data (4 F32 initializers)", make_onnx, "onnx")
            elif f == "tensorflow":
                one("TensorFlow checkpoint (4 F32 variables)", make_tensorflow, "tensorflow")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    show_and_keep(results, table, args.json)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Reading every tensor of a >= 500 MB checkpoint as numpy: `tpack.open` + `get` against safetensors'
`safe_open` + `get_tensor` and `load_file`, on the same weights, in one run.

    python/ci.sh   # or any venv with the tpack-weights wheel, safetensors and numpy installed
    target/python-ci-venv/bin/python benches/python_read.py [--reps N] [--json OUT.json] [--dir TMPDIR]

The checkpoint (325 tensors, 592 MiB: 36 layers of four 512×512 F32 attention matrices, three 512×2048 F32
MLP matrices and two norms, and a 16384×512 F16 embedding) is written by numpy + PyPI `safetensors`
(`safetensors.numpy.save_file`) and converted with the CLI (`tpack convert`), never by tpack's own writer.
Both files are read once first, so every job reads from the page cache.

Each job runs in a fresh Python process, which imports everything, then times the job alone; the
repetitions interleave the jobs so that they see the same machine state, and the median is reported. The
`get` jobs hand back every tensor as a numpy array and keep them all alive; the `+ sum` jobs also read every
element (summing each tensor), which is what using the weights costs. Memory: the child's peak RSS
(`VmHWM`, which counts the mapped file pages it touched) and its anonymous RSS with every array still alive
(`RssAnon`: memory the reader allocated, that is copies). The `python + imports` row is the floor both start from.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from kept_results import show_and_keep

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = r"""
import json, sys, time
import numpy as np
import tpack
from safetensors import safe_open
from safetensors.numpy import load_file
job, st, tp = sys.argv[1:4]

def status_kib(field):
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith(field + ":"))

t0 = time.perf_counter()
if job == "tpack_get":
    with tpack.open(tp) as f:
        arrays = [f.get(k) for k in f.keys()]
elif job == "tpack_load":
    arrays = list(tpack.load(tp).values())
elif job == "st_safe_open":
    with safe_open(st, framework="np") as f:
        arrays = [f.get_tensor(k) for k in f.keys()]
elif job == "st_load_file":
    arrays = list(load_file(st).values())
elif job == "tpack_get_sum":
    with tpack.open(tp) as f:
        arrays = [f.get(k) for k in f.keys()]
        total = sum(float(a.sum(dtype=np.float64)) for a in arrays)
elif job == "st_safe_open_sum":
    with safe_open(st, framework="np") as f:
        arrays = [f.get_tensor(k) for k in f.keys()]
        total = sum(float(a.sum(dtype=np.float64)) for a in arrays)
elif job == "floor":
    arrays = []
seconds = time.perf_counter() - t0
# VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the parent across exec.
print(json.dumps({"seconds": seconds, "tensors": len(arrays), "peak_kib": status_kib("VmHWM"),
                  "anon_kib": status_kib("RssAnon")}))
"""

JOBS = [
    ("st_safe_open", "safetensors `safe_open` + `get_tensor` (numpy)"),
    ("st_load_file", "safetensors `load_file` (numpy)"),
    ("tpack_get", "tpack `open` + `get` (numpy views)"),
    ("tpack_load", "tpack `load`"),
    ("st_safe_open_sum", "safetensors `safe_open` + `get_tensor`, + sum every tensor"),
    ("tpack_get_sum", "tpack `open` + `get`, + sum every tensor"),
    ("floor", "python + imports (nothing read)"),
]
BASELINES = {"tpack_get": "st_safe_open", "tpack_load": "st_safe_open", "st_load_file": "st_safe_open",
             "tpack_get_sum": "st_safe_open_sum"}


def make_checkpoint(directory: str, cli: str):
    import numpy as np
    from safetensors.numpy import save_file

    rng = np.random.default_rng(0)
    tensors = {"model.embed_tokens.weight": rng.standard_normal((16384, 512), dtype=np.float32).astype(np.float16)}
    for layer in range(36):
        p = f"model.layers.{layer}."
        for proj in ("q", "k", "v", "o"):
            tensors[p + f"self_attn.{proj}_proj.weight"] = rng.standard_normal((512, 512), dtype=np.float32)
        for proj in ("gate", "up", "down"):
            shape = (512, 2048) if proj != "down" else (2048, 512)
            tensors[p + f"mlp.{proj}_proj.weight"] = rng.standard_normal(shape, dtype=np.float32)
        tensors[p + "input_layernorm.weight"] = np.ones(512, np.float32)
        tensors[p + "post_attention_layernorm.weight"] = np.ones(512, np.float32)
    st = os.path.join(directory, "model.safetensors")
    save_file(tensors, st)
    tp = os.path.join(directory, "model.tpack")
    subprocess.run([cli, "convert", st, tp], check=True, capture_output=True)
    return st, tp, len(tensors), sum(t.nbytes for t in tensors.values())


def table(results: dict) -> str:
    rows = ["| job | median time | speed-up vs its safetensors baseline | peak RSS | anonymous RSS, arrays alive |",
            "|---|---:|---:|---:|---:|"]
    for job, label in JOBS:
        r = results["jobs"][job]
        base = BASELINES.get(job)
        ratio = f"**{results['jobs'][base]['seconds'] / r['seconds']:.0f}×**" if base and job.startswith("tpack") else (
            f"{results['jobs'][base]['seconds'] / r['seconds']:.2f}×" if base else "")
        time_s = r["seconds"]
        shown = f"{time_s * 1e3:.1f} ms" if time_s >= 1e-3 else f"{time_s * 1e6:.0f} µs"
        rows.append(f"| {label} | {shown} | {ratio} | {r['peak_kib'] / 1024:.0f} MiB | {r['anon_kib'] / 1024:.0f} MiB |")
    return "\n".join(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--json")
    parser.add_argument("--dir")
    parser.add_argument("--make", help=argparse.SUPPRESS)
    parser.add_argument("--cli", default=next((c for c in (os.path.join(ROOT, "target", "release", "tpack"),
                                                          os.path.join(ROOT, "target", "debug", "tpack"))
                                               if os.path.exists(c)), "tpack"))
    args = parser.parse_args()
    if args.make:
        print(json.dumps(make_checkpoint(args.make, args.cli)))
        return
    with tempfile.TemporaryDirectory(dir=args.dir) as d:
        # In a child, so that this process never holds the weights (its memory would not matter, but keeping
        # it small keeps the machine's state the same for every job).
        made = subprocess.run([sys.executable, __file__, "--make", d, "--cli", args.cli], check=True,
                              capture_output=True, text=True).stdout
        st, tp, count, nbytes = json.loads(made)
        for path in (st, tp):
            with open(path, "rb") as f:
                while f.read(1 << 24):
                    pass
        samples = {job: [] for job, _ in JOBS}
        for _ in range(args.reps):
            for job, _ in JOBS:
                out = subprocess.run([sys.executable, "-c", CHILD, job, st, tp], check=True, capture_output=True,
                                     text=True).stdout
                samples[job].append(json.loads(out))
    results = {"tensors": count, "bytes": nbytes, "reps": args.reps, "jobs": {}}
    for job, runs in samples.items():
        results["jobs"][job] = {
            "seconds": statistics.median(r["seconds"] for r in runs),
            "peak_kib": max(r["peak_kib"] for r in runs),
            "anon_kib": max(r["anon_kib"] for r in runs),
        }
    print(f"{count} tensors, {nbytes / (1 << 20):.0f} MiB, median of {args.reps} interleaved runs each\n")
    show_and_keep(results, table, args.json)


if __name__ == "__main__":
    main()

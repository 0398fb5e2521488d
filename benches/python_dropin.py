#!/usr/bin/env python3
"""The safetensors drop-in against safetensors itself, on the same dict: a quick, warm-cache comparison.

    python/ci.sh   # or any venv with the tpack-weights wheel, safetensors and numpy installed
    target/python-ci-venv/bin/python benches/python_dropin.py [--dir TMPDIR]

64 float32 tensors of 1024×1024 (256 MiB) are written with each library's `save_file` (the two writers are
timed, each writing its own format), then read back with `load_file`, with `safe_open` + `get_tensor` of every
tensor (both copy each tensor into process memory), and with `get_slice(k)[:8]` of every tensor (8 rows each).
Every job runs in this one process, files in the page cache; the best of 5 runs (3 for saving) is printed.
It is a smoke comparison, not `python_read.py`'s interleaved, per-process measurement.
"""
from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np
import safetensors
import safetensors.numpy as st_numpy

import tpack
import tpack.numpy as tp_numpy


def best_ms(job, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        job()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", help="where to write the two files (default: a temporary directory)")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    tensors = {f"layer.{i}.w": rng.standard_normal((1024, 1024), dtype=np.float32) for i in range(64)}
    with tempfile.TemporaryDirectory(dir=args.dir) as d:
        libraries = [
            ("safetensors", st_numpy, safetensors.safe_open, f"{d}/m.safetensors"),
            ("tpack", tp_numpy, tpack.safe_open, f"{d}/m.tpack"),
        ]
        for name, module, safe_open, path in libraries:
            save_ms = best_ms(lambda: module.save_file(tensors, path), 3)

            def get_all():
                with safe_open(path, "np") as f:
                    return [f.get_tensor(k) for k in f.keys()]

            def slices():
                with safe_open(path, "np") as f:
                    return [f.get_slice(k)[:8] for k in f.keys()]

            print(f"{name:<12} save_file {save_ms:7.1f} ms   load_file {best_ms(lambda: module.load_file(path), 5):7.1f} ms"
                  f"   safe_open+get_tensor {best_ms(get_all, 5):7.1f} ms   get_slice[:8] {best_ms(slices, 5):6.2f} ms")


if __name__ == "__main__":
    main()

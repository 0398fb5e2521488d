#!/usr/bin/env python3
"""tpack.torch against safetensors.torch on the same state dict: a quick, warm-cache comparison.

    any venv with the tpack-weights wheel, torch and safetensors installed:
    python benches/python_torch.py [--dir TMPDIR]

64 bfloat16 tensors of 2048×1024 (256 MiB) are written with each library's `save_file`, then read back with
`load_file` (tpack: into process memory, checksums verified; safetensors: over a private map of the file), with
`safe_open(framework="pt")` + `get_tensor` of every tensor (both over private maps: nothing is read yet), and
the same followed by summing every tensor (which reads every page). Every job runs in this one process, files
in the page cache; the best of 5 runs (3 for saving) is printed. A smoke comparison on a shared machine.
"""
from __future__ import annotations

import argparse
import tempfile
import time

import safetensors
import safetensors.torch as st_torch
import torch

import tpack
import tpack.torch as tp_torch


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
    g = torch.Generator().manual_seed(0)
    state = {f"layer.{i}.w": torch.randn(2048, 1024, generator=g).to(torch.bfloat16) for i in range(64)}
    with tempfile.TemporaryDirectory(dir=args.dir) as d:
        libraries = [
            ("safetensors", st_torch, safetensors.safe_open, f"{d}/m.safetensors"),
            ("tpack", tp_torch, tpack.safe_open, f"{d}/m.tpack"),
        ]
        for name, module, safe_open, path in libraries:
            save_ms = best_ms(lambda: module.save_file(state, path), 3)

            def get_all():
                with safe_open(path, framework="pt") as f:
                    return [f.get_tensor(k) for k in f.keys()]

            def get_and_read_all():
                return [t.float().sum() for t in get_all()]

            print(f"{name:<12} save_file {save_ms:7.1f} ms   load_file {best_ms(lambda: module.load_file(path), 5):7.1f} ms"
                  f"   get_tensor (all) {best_ms(get_all, 5):7.2f} ms   get_tensor + sum (all) "
                  f"{best_ms(get_and_read_all, 5):7.1f} ms")


if __name__ == "__main__":
    main()

"""Zero copy and lifetime: arrays view the map, keep it alive after close, and reading costs no anonymous
memory; a file shrinking under the map is the documented SIGBUS risk."""

from __future__ import annotations

import gc
import mmap
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tpack
from tpack import _native


def mapped(path) -> bool:
    """Whether this process maps `path` (Linux)."""
    with open("/proc/self/maps") as maps:
        return any(line.rstrip().endswith(str(path)) for line in maps)


def rss_kib(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise LookupError(field)


linux = pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs Linux /proc")


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "m.tpack"
    tpack.save(path, {"a": np.arange(1000, dtype=np.float32), "b": np.ones((10, 10), np.int64)})
    return path


def test_the_array_views_the_map(model):
    with tpack.open(model) as f:
        a = f.get("a")
        base = a
        while isinstance(base, np.ndarray):
            base = base.base
        assert isinstance(base, _native.PayloadView)
        address = a.__array_interface__["data"][0]
        assert address % 64 == 0  # payloads are 64-byte aligned in the file, and the map is page aligned
        again = f.get("a")
        assert np.shares_memory(a, again)  # two reads, one memory: the map's
        assert not a.flags.writeable and not a.flags.owndata
        with pytest.raises(ValueError):
            a[0] = 1
        with pytest.raises(ValueError):
            a.flags.writeable = True
        # The view starts at the entry's offset within the mapping.
        b = f.get("b")
        assert b.__array_interface__["data"][0] - address == f.entry("b").offset - f.entry("a").offset


@linux
def test_arrays_keep_the_map_alive_after_close(model):
    f = tpack.open(model)
    a = f.get("a")
    s = f.get_slice("b")
    f.close()
    assert f.closed
    for call in (lambda: f.get("a"), f.keys, f.metadata, f.verify, lambda: len(f), lambda: s[0]):
        with pytest.raises(ValueError, match="closed"):
            call()
    del f
    gc.collect()
    assert mapped(model)
    assert a.sum() == sum(range(1000))  # still readable: the map stays while an array needs it
    del a
    gc.collect()
    assert not mapped(model)  # the last array gone, the map is gone


@linux
def test_load_reads_into_process_memory_and_keeps_no_map(model):
    """`load` reads every payload into arrays of its own (it used to hand out views of a map it kept)."""
    arrays = tpack.load(model)
    assert arrays["b"].sum() == 100
    assert not mapped(model)
    arrays["b"][:] = 0  # writable, and private
    assert tpack.load(model)["b"].sum() == 100


@linux
def test_reading_every_tensor_costs_no_anonymous_memory(tmp_path):
    """64 MiB of tensors: getting and even summing all of them leaves anonymous RSS flat, while a copy of
    them (what safetensors' numpy reader makes) grows it by their size — so the measure can fail."""
    path = tmp_path / "big.tpack"
    size = 64 << 20
    tensors = {f"t{i}": np.full(size // 16 // 4, i, np.float32) for i in range(16)}
    tpack.save(path, tensors)
    del tensors
    gc.collect()
    before = rss_kib("RssAnon")
    with tpack.open(path) as f:
        arrays = [f.get(n) for n in f.keys()]
        total = sum(float(a.sum(dtype=np.float64)) for a in arrays)
        grown = rss_kib("RssAnon") - before
        assert total == sum(i * (size // 64) for i in range(16))
        assert grown < (size >> 10) // 8, f"anonymous memory grew by {grown} KiB"
        # The control: a copy of them, into fresh anonymous memory (np.array's malloc may reuse heap pages freed
        # by earlier tests, which are resident already and would not show).
        fresh = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        copies = np.frombuffer(fresh, np.uint8)
        at = 0
        for a in arrays:
            copies[at:at + a.nbytes] = a.reshape(-1).view(np.uint8)
            at += a.nbytes
        assert rss_kib("RssAnon") - before > (size >> 10) * 3 // 4
        del copies, arrays
        fresh.close()


@linux
def test_a_file_shrinking_under_the_map_is_sigbus_as_documented(model):
    """The documented risk, shown in a child process: opening and viewing are safe, touching a page past the
    new end of a truncated file kills the process with SIGBUS (docs/python.md)."""
    code = textwrap.dedent(f"""
        import os, tpack
        f = tpack.open({str(model)!r})
        a = f.get("b")
        os.truncate({str(model)!r}, 0)
        print("viewed", flush=True)
        a.sum()
        print("survived", flush=True)
    """)
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "viewed" in child.stdout
    assert child.returncode == -signal.SIGBUS, (child.returncode, child.stderr)

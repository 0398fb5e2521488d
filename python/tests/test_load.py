"""`tpack.load` and `tpack.numpy.load_file`: every payload read into process memory in parallel blocks, with
its padding (R37) and checksum (R50) checked on the way; damage names its entry, wherever it falls against
the blocks; a file that shrinks gives an error, never SIGBUS."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tpack
import tpack.numpy as tp_numpy
from conftest import VECTORS, manifest

#: The reader's block (python/src/load.rs, `BLOCK`): damage is placed on both sides of its boundaries.
BLOCK = 8 << 20
VECTORS_ALL = manifest()
VALID = [v for v in VECTORS_ALL if v["valid"]]
INTEGRITY = [v for v in VECTORS_ALL if not v["valid"] and v["rule"] in ("R37", "R50")]


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("vector", VALID, ids=[v["file"] for v in VALID])
def test_load_equals_get_for_every_valid_vector(vector):
    """Every dtype, alignment, nesting and signature entry of the golden vectors comes out as `get` gives it,
    in table order, as writable arrays of their own (not views of a map)."""
    path = VECTORS / vector["file"]
    loaded = tpack.load(path)
    with tpack.open(path) as f:
        assert list(loaded) == f.keys()
        for name in f.keys():
            assert _same(loaded[name], f.get(name)), name
    for array in loaded.values():
        assert array.flags.writeable and array.flags.c_contiguous and array.flags.owndata


@pytest.mark.parametrize("vector", INTEGRITY, ids=[v["file"] for v in INTEGRITY])
def test_load_raises_the_integrity_rule_of_every_damaged_vector(vector):
    path = VECTORS / vector["file"]
    with tpack.open(path) as f, pytest.raises(tpack.IntegrityError) as expected:
        f.verify()
    with pytest.raises(tpack.IntegrityError) as got:
        tpack.load(path)
    assert got.value.rule == vector["rule"] == expected.value.rule
    assert (got.value.entry, got.value.entry_name) == (expected.value.entry, expected.value.entry_name)


def _flip(path, offset: int) -> None:
    with open(path, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)[0]
        f.seek(offset)
        f.write(bytes([byte ^ 0x40]))


@pytest.fixture(scope="module")
def large(tmp_path_factory):
    """An entry of two blocks and a bit (the payload straddles two block boundaries), between small ones."""
    path = tmp_path_factory.mktemp("large") / "large.tpack"
    rng = np.random.default_rng(7)
    tensors = {
        "head": np.arange(5, dtype=np.int8),
        "big": rng.integers(0, 256, 2 * BLOCK + 1000, dtype=np.uint8),
        "tail": np.arange(3, dtype=np.float32),
    }
    tpack.save(path, tensors, alignment=4096)
    return path, tensors


def test_an_entry_larger_than_a_block_loads_whole(large):
    path, tensors = large
    loaded = tpack.load(path)
    assert all(_same(loaded[k], v) for k, v in tensors.items())
    assert all(_same(tp_numpy.load_file(path)[k], v) for k, v in tensors.items())


@pytest.mark.parametrize("at", [0, BLOCK - 1, BLOCK, 2 * BLOCK - 1, 2 * BLOCK, 2 * BLOCK + 999],
                         ids=["first byte", "end of block 1", "start of block 2", "end of block 2", "start of block 3",
                              "last byte"])
def test_a_damaged_byte_anywhere_in_a_multi_block_entry_is_r50_naming_it(large, tmp_path, at):
    source, _ = large
    path = tmp_path / "damaged.tpack"
    path.write_bytes(source.read_bytes())
    with tpack.open(path) as f:
        big = f.entry("big")
    _flip(path, big.offset + at)
    for load in (tpack.load, tp_numpy.load_file):
        with pytest.raises(tpack.IntegrityError) as info:
            load(path)
        err = info.value
        assert (err.rule, err.entry, err.entry_name) == ("R50", big.position, "big")
        assert err.stored == big.checksum and err.computed != big.checksum


def test_many_tiny_entries_damage_in_one_names_that_one(tmp_path):
    path = tmp_path / "tiny.tpack"
    tensors = {f"t{i:04}": np.full(1 + i % 3, i % 251, np.uint8) for i in range(2000)}
    tpack.save(path, tensors, alignment=1)
    loaded = tpack.load(path)
    assert list(loaded) == list(tensors) and all(_same(loaded[k], v) for k, v in tensors.items())
    with tpack.open(path) as f:
        victim = f.entry("t1234")
    _flip(path, victim.offset + victim.nbytes - 1)
    with pytest.raises(tpack.IntegrityError) as info:
        tpack.load(path)
    assert (info.value.rule, info.value.entry_name) == ("R50", "t1234")


def test_the_first_damaged_entry_in_table_order_is_reported(tmp_path):
    """Blocks finish in any order on the threads; the error is still the first entry's, as `verify` says."""
    path = tmp_path / "two.tpack"
    tpack.save(path, {"a": np.zeros(BLOCK + 10, np.uint8), "b": np.zeros(10, np.uint8)})
    with tpack.open(path) as f:
        a, b = f.entry("a"), f.entry("b")
    _flip(path, b.offset)
    _flip(path, a.offset + BLOCK + 5)
    with pytest.raises(tpack.IntegrityError) as info:
        tpack.load(path)
    assert info.value.entry_name == "a"


def test_non_zero_padding_is_r37(tmp_path):
    path = tmp_path / "pad.tpack"
    tpack.save(path, {"a": np.ones(3, np.uint8), "b": np.ones(64, np.uint8)}, alignment=64)
    with tpack.open(path) as f:
        a, b = f.entry("a"), f.entry("b")
    assert b.offset > a.offset + a.nbytes
    _flip(path, a.offset + a.nbytes)
    with pytest.raises(tpack.IntegrityError) as info:
        tpack.load(path)
    assert (info.value.rule, info.value.offset) == ("R37", a.offset + a.nbytes)


def test_a_truncated_file_is_a_format_error(large, tmp_path):
    path = tmp_path / "cut.tpack"
    path.write_bytes(source_bytes := large[0].read_bytes())
    os.truncate(path, len(source_bytes) // 2)
    with pytest.raises(tpack.FormatError):
        tpack.load(path)


@pytest.mark.skipif(sys.platform == "win32", reason="a mapped file cannot be truncated on Windows")
def test_a_file_cut_after_it_was_opened_is_an_oserror_not_sigbus(large, tmp_path):
    """The payloads are read with pread, not through the map: a file truncated between opening and reading
    gives a short read, an `OSError`; the process lives (run in a child, which SIGBUS would
    kill)."""
    path = tmp_path / "shrinks.tpack"
    path.write_bytes(large[0].read_bytes())
    script = textwrap.dedent(f"""
        import os, tpack
        from tpack import _native
        path = {str(path)!r}
        c = tpack.Container._wrap(_native.open_file_for_load(path), path)
        big = c.entry("big")
        os.truncate(path, big.offset + 100)
        try:
            c._read_all()
        except OSError as e:
            print("OSError", e)
        else:
            print("no error")
    """)
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert child.returncode == 0, child.stderr
    # The trailer (the stored checksums, at the end) is read first, with pread too.
    assert child.stdout.startswith("OSError") and "trailer" in child.stdout and "shrank" in child.stdout, child.stdout


def test_the_destinations_are_checked(large):
    """The native reader writes only into arrays it can prove are right: one writable uint8 buffer of each
    payload's length per entry, none overlapping another."""
    path, _ = large
    from tpack import _native
    c = _native.open_file_for_load(str(path))
    sizes = [c.entry(i)[6] for i in range(len(c))]
    good = [np.empty(n, np.uint8) for n in sizes]
    shared = np.empty(sum(sizes), np.uint8)
    bad_cases = [
        good[:-1],
        [np.empty(n + 1, np.uint8) for n in sizes],
        [np.empty(n, np.uint8)[::1].view(np.int8) for n in sizes],
        [np.zeros(n, np.uint8) if i else np.zeros(2 * n, np.uint8)[::2] for i, n in enumerate(sizes)],
        [shared[:sizes[0]], shared[1:1 + sizes[1]], shared[-sizes[2]:]],  # the first two overlap
    ]
    readonly = [np.empty(n, np.uint8) for n in sizes]
    readonly[1].flags.writeable = False
    bad_cases.append(readonly)
    for bad in bad_cases:
        with pytest.raises(ValueError):
            c.read_into(bad)
    c.read_into(good)
    with pytest.raises(ValueError, match="no file"):
        tpack.open(path)._native.read_into(good)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_load_keeps_no_map_and_memory_is_the_result(large):
    """The result is in process memory: the file is neither mapped nor open once `load` returns."""
    path, tensors = large
    loaded = tpack.load(path)
    with open("/proc/self/maps") as maps:
        assert str(path) not in maps.read()
    fds = os.listdir("/proc/self/fd")
    assert not any(os.path.realpath(f"/proc/self/fd/{fd}") == str(path) for fd in fds if os.path.exists(f"/proc/self/fd/{fd}"))
    loaded["big"][:] = 0  # writable, and the file does not change
    assert _same(tpack.load(path)["big"], tensors["big"])


def test_with_a_policy_a_payload_changed_with_its_crc_recomputed_is_r64(tmp_path):
    """Signed and loaded with keys: each entry's SHA-256 is checked against its signed digest before its CRC,
    so a forged payload whose CRCs were all recomputed is still refused, naming the entry."""
    from test_signing import forge_payload

    key = tpack.generate_key("ed25519")
    path = tmp_path / "signed.tpack"
    tensors = {"a": np.arange(10, dtype=np.float32), "b": np.zeros(BLOCK + 3, np.uint8)}
    tpack.save(path, tensors, sign_key=key)
    policy = {"keys": [tpack.public_key_pem(key)]}
    loaded = tpack.load(path, **policy)
    assert all(_same(loaded[k], v) for k, v in tensors.items())
    path.write_bytes(forge_payload(path.read_bytes(), "b", at=BLOCK + 1))
    assert tpack.load(path)["b"][BLOCK + 1] != 0  # without a policy the CRCs are all that is checked
    with pytest.raises(tpack.SignatureError) as info:
        tpack.load(path, **policy)
    assert (info.value.rule, info.value.entry_name) == ("R64", "b")


def _drop_cache(path) -> None:
    """Evicts `path`'s pages from the page cache, so that the next read comes from the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def _mixed(rng: np.random.Generator) -> dict:
    """Payloads across the reader's 8 MiB blocks and page boundaries, and small ones."""
    return {
        "big": rng.integers(0, 256, BLOCK * 2 + 4096 * 3 + 17, dtype=np.uint8),
        "odd": rng.integers(0, 256, (1 << 20) + 1, dtype=np.uint8),
        "f32": rng.standard_normal((513, 1031)).astype(np.float32),
        "tiny": np.arange(7, dtype=np.int16),
        "exact": rng.integers(0, 256, 1 << 20, dtype=np.uint8),
    }


@pytest.mark.skipif(not hasattr(os, "posix_fadvise"), reason="no posix_fadvise to make the file cold")
@pytest.mark.parametrize("alignment", [1, 64, 4096])
@pytest.mark.parametrize("cached", ["cold", "half", "warm"])
def test_large_payloads_read_equal_from_a_cold_partly_cached_or_warm_file(tmp_path, alignment, cached):
    """Payloads come back equal whether their pages are on the disk, in the page cache, or alternately (every
    other MiB), at alignments that put block and page boundaries inside payloads (1, 64) or on them (4096)."""
    path = tmp_path / "mixed.tpack"
    tensors = _mixed(np.random.default_rng(alignment))
    tpack.save(path, tensors, alignment=alignment)
    if cached != "warm":
        _drop_cache(path)
    if cached == "half":
        with tpack.open(path) as f:
            big = f.entry("big")
        with open(path, "rb") as raw:  # every other MiB of `big` into the page cache
            for at in range(0, big.nbytes, 2 << 20):
                os.pread(raw.fileno(), 1 << 20, big.offset + at)
    loaded = tpack.load(path)
    assert list(loaded) == list(tensors)
    for name, array in tensors.items():
        assert _same(loaded[name], array), name

"""Regressions of the defects a safetensors user met (issue 25), one test (or a few) each: every one failed
before its fix."""

from __future__ import annotations

import importlib.resources
import mmap
import os
import pydoc
import struct
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import tpack
from conftest import REPO, VECTORS

linux = pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs Linux /proc")


# -- 1. get() of a file that lost its last page ---------------------------------------------------------------
@linux
def test_get_touches_no_page_past_the_prefix_of_a_truncated_file(tmp_path):
    """`get` used to read the entry's checksum from the trailer (the file's last page), so any `get` of a file
    truncated under its map died of SIGBUS. Now opening, `get`, `get_slice`, `items`, `metadata` and the
    names read only the prefix: the child cuts the file right after its prefix and must exit normally."""
    path = tmp_path / "m.tpack"
    tpack.save(path, {"a": np.arange(1000, dtype=np.float32), "b": np.ones((10, 10), np.int64),
                      "big": np.zeros(1 << 16, np.float64)}, metadata={"arch": "t"})
    with tpack.open(path) as f:
        prefix = min(e.offset for e in f.entries())
    keep = -(-prefix // mmap.PAGESIZE) * mmap.PAGESIZE
    assert keep < os.path.getsize(path) - mmap.PAGESIZE  # every payload page and the trailer are cut
    code = textwrap.dedent(f"""
        import os, tpack
        f = tpack.open({str(path)!r})
        os.truncate({str(path)!r}, {keep})
        arrays = [f.get(name) for name in f]
        arrays += [f["big"], f.get_tensor("a"), f.get_slice("big")[:2], *dict(f.items()).values()]
        assert [a.shape for a in arrays[:3]] == [(1000,), (10, 10), (1 << 16,)]
        assert f.metadata() == {{"arch": "t"}} and len(f) == 3 and "b" in f
        f.prefetch("big")
        print("survived", flush=True)
    """)
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert child.returncode == 0, (child.returncode, child.stderr)
    assert "survived" in child.stdout


# -- 2. safetensors' argument order ---------------------------------------------------------------------------
def test_save_in_safetensors_order_is_refused_with_the_expected_order(tmp_path):
    path = tmp_path / "x.tpack"
    for wrong in (str(path), path):
        with pytest.raises(TypeError, match=r"path first: tpack\.save\(path, tensors") as info:
            tpack.save({"w": np.ones(2, np.float32)}, wrong)
        assert "save_file(tensors, filename)" in str(info.value)
    assert not path.exists()
    with pytest.raises(TypeError, match="tensors must be a mapping"):
        tpack.save_bytes([np.ones(2)])
    with pytest.raises(TypeError, match="metadata must be a mapping"):
        tpack.save_bytes({}, metadata=[("k", 1)])


# -- 3. every save error names its tensor or key --------------------------------------------------------------
@pytest.mark.parametrize("tensors, error, name", [
    ({"ok": np.ones(2), "cplx": np.ones(2, np.complex128)}, TypeError, "tensor 'cplx'"),
    ({"strs": np.array(["a", "b"])}, TypeError, "tensor 'strs'"),
    ({"q": tpack.Typed("Q4_K", np.ones(3, np.uint8))}, ValueError, "tensor 'q'"),
    ({"n": tpack.Typed("NOPE", np.ones(3, np.uint8))}, ValueError, "tensor 'n'"),
    ({"ok": np.ones(2), "x" * 1025: np.ones(1)}, tpack.FormatError, "tensor 'xxxx"),
])
def test_save_errors_name_the_tensor(tensors, error, name):
    with pytest.raises(error) as info:
        tpack.save_bytes(tensors)
    assert name in str(info.value)
    if isinstance(info.value, tpack.FormatError):  # the rule and the context stay
        assert info.value.rule == "R17" and info.value.entry_name == "x" * 1025 and info.value.entry == 1


@pytest.mark.parametrize("key, value, error, rule", [
    ("obj", object(), TypeError, None),
    ("huge", 2**70, OverflowError, None),
    ("mixed", ("u8", 3), TypeError, None),
    ("narrow", tpack.MetaValue("u8", 300), OverflowError, None),
    ("kind", tpack.MetaValue("nope", 1), ValueError, None),
    ("newer", tpack.MetaValue(99, b"\0"), TypeError, None),
    ("", 1, tpack.FormatError, "R42"),
    ("tpack.sig.mine", 1, tpack.FormatError, "R54"),
])
def test_save_errors_name_the_metadata_key(key, value, error, rule):
    with pytest.raises(error) as info:
        tpack.save_bytes({"w": np.ones(2)}, metadata={"fine": 1, key: value})
    assert f"metadata key {key!r}: " in str(info.value)
    if rule is not None:
        assert info.value.rule == rule


@pytest.mark.parametrize("short, message", [(True, "1 bytes written"), (False, "producer broke")])
def test_a_failure_while_streaming_names_the_tensor_being_written(short, message):
    """What `save` hands the writer, driven directly: the second tensor's bytes fall short, or its producer
    raises; either way the error names that tensor."""
    from tpack import _native

    def chunks():
        yield b"\0\0"
        yield None
        if not short:
            raise ValueError("producer broke")
        yield b"\0"
        yield None

    decls = [("a", "U8", [2], 64, None), ("b", "U8", [2], 64, None)]
    with pytest.raises(ValueError) as info:
        _native.write_bytes(decls, [], chunks())
    assert str(info.value).startswith("tensor 'b': ") and message in str(info.value)


def test_a_tuple_value_error_points_at_metavalue():
    with pytest.raises(TypeError, match=r"tpack\.MetaValue\(type, value\)"):
        tpack.save_bytes({}, metadata={"k": ("u8", 3)})


# -- 4. the Container constructor ----------------------------------------------------------------------------
def test_the_container_constructor_opens_like_open(tmp_path):
    path = tmp_path / "m.tpack"
    tpack.save(path, {"w": np.arange(6, dtype=np.float32)}, metadata={"arch": "t"})
    with tpack.Container(path) as c, tpack.open(path) as f:
        assert c.keys() == f.keys() and c.metadata() == f.metadata() and c.path == str(path)
        assert np.array_equal(c.get("w"), f.get("w")) and repr(c) == repr(f)
    assert c.closed
    with pytest.raises(tpack.SignatureError) as info:
        tpack.Container(path, require_signature=True)
    assert info.value.rule == "R58"
    with pytest.raises(FileNotFoundError):
        tpack.Container(tmp_path / "missing.tpack")


# -- 5. close() while another thread is inside verify() -----------------------------------------------------
def test_close_from_another_thread_during_verify_lets_verify_finish(tmp_path):
    """It raised PyO3's "Already borrowed". Now close() returns at once, the running verify finishes on the
    bytes it started with, and the container is closed for every later call."""
    path = tmp_path / "m.tpack"
    tpack.save(path, {"a": np.arange(1 << 20, dtype=np.float32), "b": np.ones(1 << 20, np.float32)})
    c = tpack.open(path)
    in_verify, closed = threading.Event(), threading.Event()
    raised = []

    def progress(done, total):
        in_verify.set()
        assert closed.wait(30)

    def close_it():
        assert in_verify.wait(30)
        try:
            c.close()
        except BaseException as e:  # noqa: BLE001 - the defect was an exception here
            raised.append(e)
        finally:
            closed.set()

    closer = threading.Thread(target=close_it)
    closer.start()
    c.verify(progress=progress)
    closer.join()
    assert raised == [] and c.closed
    with pytest.raises(ValueError, match="closed"):
        c.get("a")


def test_close_from_a_verify_callback_closes_after_it():
    c = tpack.open_bytes(tpack.save_bytes({"a": np.ones(8, np.float32)}))
    c.verify(progress=lambda done, total: c.close())
    assert c.closed


def test_threads_reading_while_one_closes_see_arrays_or_a_closed_error(tmp_path):
    path = tmp_path / "m.tpack"
    tpack.save(path, {f"t{i}": np.full(1000, i, np.int32) for i in range(50)})
    c = tpack.open(path)
    outcomes = []

    def read():
        try:
            while True:
                for i in range(50):
                    assert c.get(f"t{i}")[-1] == i
        except ValueError as e:
            outcomes.append(str(e))
        except BaseException as e:  # noqa: BLE001
            outcomes.append(repr(e))

    readers = [threading.Thread(target=read) for _ in range(4)]
    for t in readers:
        t.start()
    c.close()
    for t in readers:
        t.join(30)
    assert outcomes == ["I/O operation on a closed tpack container"] * 4


# -- 6. metadata round trip with its types ------------------------------------------------------------------
def _bits(value):
    """A typed metadata value with its floats as their bits (NaN payloads and -0.0 compare exactly)."""
    if isinstance(value, float):
        return struct.pack("<d", value)
    if isinstance(value, (list, tuple)):
        return type(value).__name__, [_bits(v) for v in value]
    return value


@pytest.mark.parametrize("vector", ["metadata.tpack", "format-1-1.tpack"])
def test_typed_metadata_saves_with_every_type_kept(vector):
    """Between them the two vectors hold every metadata type of format 1.1. Saving used to refuse the typed
    pairs ("a metadata list must hold one kind of value"), and plain values lost their widths."""
    with tpack.open(VECTORS / "valid" / vector) as f:
        typed = f.metadata(typed=True)
        tensors = {e.name: tpack.Typed(e.dtype, f.get(e.name), e.target) for e in f.entries()}
        saved = tpack.save_bytes(tensors, metadata=typed)
    with tpack.open_bytes(saved) as g:
        again = g.metadata(typed=True)
    assert list(again) == list(typed)
    assert {k: _bits(v) for k, v in again.items()} == {k: _bits(v) for k, v in typed.items()}
    assert all(isinstance(v, tpack.MetaValue) for v in again.values())
    if vector == "metadata.tpack":  # no entries, no f32 signalling NaN: the same bytes
        assert saved == (VECTORS / "valid" / vector).read_bytes()


def test_typed_values_are_metavalue_pairs_and_still_compare_as_tuples():
    data = tpack.save_bytes({}, metadata={"n": np.uint16(7), "a": [[1, 2], ["x"]]})
    m = tpack.open_bytes(data).metadata(typed=True)
    assert m["n"] == ("u16", 7) and m["n"].type == "u16" and m["n"].value == 7
    assert m["a"] == ("array[]", [("u64[]", [1, 2]), ("string[]", ["x"])])
    assert isinstance(m["a"].value[0], tpack.MetaValue)
    assert tpack.open_bytes(tpack.save_bytes({}, metadata={"n": tpack.MetaValue("i8", -3)})).metadata(
        typed=True)["n"] == ("i8", -3)


# -- 7. a directory ------------------------------------------------------------------------------------------
def test_opening_a_directory_says_it_is_one(tmp_path):
    for opener in (tpack.open, tpack.Container, tpack.load):
        with pytest.raises(IsADirectoryError) as info:
            opener(tmp_path)
        assert info.value.filename == str(tmp_path) and "Is a directory" in str(info.value)


# -- 8. the docs help() points at are installed --------------------------------------------------------------
def test_the_guide_ships_with_the_package():
    guide = importlib.resources.files("tpack") / "docs" / "python.md"
    assert guide.is_file(), "the wheel lacks tpack/docs/python.md"
    assert guide.read_text(encoding="utf-8") == (REPO / "docs" / "python.md").read_text(encoding="utf-8")
    text = pydoc.render_doc(tpack)
    assert 'files("tpack") / "docs" / "python.md"' in text

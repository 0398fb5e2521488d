"""The Python API's contract: the mapping protocol, entries, slices, verify's progress, errors, docs."""

from __future__ import annotations

import pickle
import pydoc

import numpy as np
import pytest

import tpack
from conftest import VECTORS


@pytest.fixture
def c():
    tensors = {"w": np.arange(24, dtype=np.float32).reshape(2, 3, 4), "b": np.arange(5, dtype=np.int8),
               "s": np.array(7, np.uint16)}
    return tpack.open_bytes(tpack.save_bytes(tensors, metadata={"arch": "t"}))


def test_reads_like_a_mapping(c):
    assert len(c) == 3 and list(c) == ["w", "b", "s"] == c.keys()
    assert "w" in c and "nope" not in c and 3 not in c
    assert np.array_equal(c["b"], np.arange(5))
    assert [n for n, _ in c.items()] == c.keys()
    with pytest.raises(KeyError):
        c.get("nope")
    with pytest.raises(TypeError):
        c.get(3)
    assert c.get("s").shape == () and c.get("s") == 7
    assert np.array_equal(c.get_tensor("w"), c.get("w"))


def test_entry_describes_the_table(c):
    e = c.entry("w")
    assert (e.name, e.dtype, e.shape, e.nbytes, e.alignment, e.target, e.position, e.block) == \
        ("w", "F32", (2, 3, 4), 96, 64, None, 0, None)
    assert e.offset % 64 == 0 and isinstance(e.checksum, int)
    assert c.entries()[0] == e


def test_get_slice_reads_part_of_a_tensor(c):
    s = c.get_slice("w")
    assert s.get_shape() == [2, 3, 4] and s.get_dtype() == "F32" and len(s) == 2
    part = s[1, :2, 1:3]
    assert np.array_equal(part, np.arange(24, dtype=np.float32).reshape(2, 3, 4)[1, :2, 1:3])
    assert np.shares_memory(part, c.get("w"))  # basic indexing: a view of the map
    fancy = s[[0, 1], 0]
    assert fancy.flags.owndata or fancy.base is not None
    with pytest.raises(TypeError):
        len(c.get_slice("s"))


def test_blocks_and_raw_entries_come_as_bytes():
    with tpack.open(VECTORS / "valid" / "example.tpack") as f:
        q = f.get("layers.0.ffn.q8")
        assert q.dtype == np.uint8 and q.shape == (2, 34)  # rows of whole blocks
        assert f.entry("layers.0.ffn.q8").block == (32, 34)
        assert tpack.dequantize(q, "Q8_0").shape == (2, 32)
        assert f.get("boot.code").shape == (100,) and f.entry("boot.code").target == 536870912
        assert f.get("empty").shape == (0, 5)
    with tpack.open(VECTORS / "valid" / "unknown-dtype-with-geometry.tpack") as f:
        for e in f.entries():
            if isinstance(e.dtype, int):
                assert f.get(e.name).dtype == np.uint8
                assert f.get(e.name).nbytes == e.nbytes


def test_verify_reports_progress_and_stops_when_it_raises(c):
    calls = []
    c.verify(progress=lambda done, total: calls.append((done, total)))
    assert calls and calls[-1][0] == calls[-1][1] == sum(e.nbytes for e in c.entries())
    assert all(a[0] <= b[0] for a, b in zip(calls, calls[1:]))

    def stop(done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        c.verify(progress=stop)


def test_errors_carry_the_rule_and_pickle():
    with pytest.raises(tpack.FormatError) as info:
        tpack.open_bytes(b"\x00" * 200)
    e = info.value
    assert (e.rule, e.rule_name, e.entry) == ("R2", "BadMagic", None)
    assert isinstance(e, tpack.TpackError) and not isinstance(e, tpack.IntegrityError)
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is tpack.FormatError and (back.rule, str(back)) == (e.rule, str(e))
    assert repr(tpack.TpackError).startswith("<class 'tpack.TpackError'")


def test_context_manager_closes(c):
    with c as same:
        assert same is c and not c.closed
    assert c.closed and "closed" in repr(c)
    c.close()  # idempotent


def test_help_reads_well():
    text = pydoc.render_doc(tpack.open)
    assert "memory map" in text and "FormatError" in text and "SIGBUS" in text
    for fn in (tpack.save, tpack.load, tpack.dequantize, tpack.Container.get, tpack.Container.verify):
        assert fn.__doc__ and len(fn.__doc__) > 80, fn
    assert "ml_dtypes" in tpack.Container.get.__doc__ and "tpack.torch" in tpack.__doc__
    assert "writable=True" in tpack.Container.get.__doc__ and "torch.from_dlpack" in tpack.Container.get.__doc__


def test_the_native_view_refuses_what_would_leave_the_payload(c):
    """numpy trusts an array interface, so the extension checks type and shape against the payload's length."""
    native = c._native
    position = c.entry("w").position
    assert np.asarray(native.payload(position, "<f4", [24])).sum() == sum(range(24))
    for typestr, shape in [("<f4", [25]), ("<f4", [2**62, 4]), ("<f8", [24]), ("|O8", [12]), (">f4", [24]),
                           ("<f", [24]), ("", [96]), ("<V4", [24])]:
        with pytest.raises(ValueError):
            native.payload(position, typestr, shape)
    with pytest.raises(IndexError):
        native.payload(99, "|u1", [0])


def test_writing_errors_name_their_cause(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        tpack.save(tmp_path / "missing" / "m.tpack", {"w": np.ones(2)})
    assert info.value.filename == str(tmp_path / "missing" / "m.tpack")
    with pytest.raises(tpack.FormatError) as info:
        tpack.save_bytes({}, metadata={"": 1})
    assert info.value.rule == "R42"
    with pytest.raises(tpack.FormatError) as info:
        tpack.save_bytes({"x" * 1025: np.ones(1)})
    assert info.value.rule == "R17"


def test_verify_with_progress_still_raises_for_damage():
    data = bytearray(tpack.save_bytes({"a": np.ones(8, np.float32), "b": np.ones(8, np.float32)}))
    with tpack.open_bytes(bytes(data)) as c:
        data[c.entry("b").offset + 3] ^= 0x10
    seen = []
    with tpack.open_bytes(bytes(data)) as c:
        with pytest.raises(tpack.IntegrityError) as info:
            c.verify(progress=lambda done, total: seen.append(done))
    assert info.value.rule == "R50" and info.value.entry_name == "b" and seen




def test_prefetch_hints_and_refuses_unknown_names(tmp_path, c):
    path = tmp_path / "m.tpack"
    tpack.save(path, {"w": np.ones(100000, np.float32), "e": np.ones(0, np.float32)})
    with tpack.open(path) as f:
        f.prefetch("w")
        f.prefetch("e")  # an empty payload: nothing to ask for
        with pytest.raises(KeyError):
            f.prefetch("nope")
        assert f.get("w").sum() == 100000
    c.prefetch("w")  # in memory: a no-op

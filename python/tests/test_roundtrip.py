"""save → open/load round trips for every dtype and metadata type; what save writes, `tpack verify` accepts."""

from __future__ import annotations

import numpy as np
import pytest

import tpack
from tpack import _dtypes
from conftest import run_cli

ml_dtypes = pytest.importorskip("ml_dtypes")
RNG = np.random.default_rng(17)

NUMPY_DTYPES = {
    "F64": np.float64, "F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32,
    "I16": np.int16, "I8": np.int8, "U64": np.uint64, "U32": np.uint32, "U16": np.uint16, "U8": np.uint8,
    "BOOL": np.bool_, "C64": np.complex64,
    "BF16": ml_dtypes.bfloat16, "F8E4M3": ml_dtypes.float8_e4m3fn, "F8E5M2": ml_dtypes.float8_e5m2,
    "F8E8M0": ml_dtypes.float8_e8m0fnu, "F8E4M3FNUZ": ml_dtypes.float8_e4m3fnuz,
    "F8E5M2FNUZ": ml_dtypes.float8_e5m2fnuz,
}


def random_array(np_dtype, shape):
    dt = np.dtype(np_dtype)
    raw = RNG.integers(0, 256, size=int(np.prod(shape)) * dt.itemsize, dtype=np.uint8)
    if dt == np.bool_:
        raw = raw & 1
    return raw.view(dt).reshape(shape)


def bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).view(np.uint8).tobytes()


def test_every_plain_dtype_round_trips(tmp_path):
    tensors = {name: random_array(dt, (3, 5)) for name, dt in NUMPY_DTYPES.items()}
    tensors["scalar"] = np.array(2.5, dtype=np.float32)
    tensors["empty"] = np.zeros((0, 7), dtype=np.int32)
    path = tmp_path / "all.tpack"
    tpack.save(path, tensors)
    with tpack.open(path) as f:
        f.verify()
        assert f.keys() == list(tensors)
        for name, original in tensors.items():
            got = f.get(name)
            assert got.dtype == original.dtype, name
            assert got.shape == original.shape, name
            assert bits(got) == bits(original), name  # bit-exact, NaNs included
            if name in NUMPY_DTYPES:
                assert f.entry(name).dtype == name


def test_every_tpack_dtype_round_trips_through_typed(tmp_path):
    """Every dtype this build knows, written from raw bytes with tpack.Typed and read back byte for byte."""
    tensors = {}
    for name, (_, (kind, elems, block_bytes)) in _dtypes.INFO.items():
        if name in ("CONTAINER", "SIGNATURE"):  # a container, and the signing writer's own entry (below)
            continue
        if kind == "block":
            data = RNG.integers(0, 256, size=(2, 3 * block_bytes), dtype=np.uint8)
        elif kind == "bytes":
            data = RNG.integers(0, 256, size=(11,), dtype=np.uint8)
        else:
            data = RNG.integers(0, 256, size=(2, 3 * block_bytes), dtype=np.uint8).view(f"<u{block_bytes}")
        tensors[name] = tpack.Typed(name, data)
    assert {"Q8_0", "Q4_K", "IQ2_XXS", "MXFP4", "F4E2M1", "RAW", "BF16"} <= set(tensors)
    data = tpack.save_bytes(tensors)
    c = tpack.open_bytes(data)
    c.verify()
    for name, typed in tensors.items():
        e = c.entry(name)
        assert e.dtype == name
        assert bits(c.get(name)) == bits(typed.array), name
        if e.block is not None:
            assert c.get(name).shape == typed.array.shape
            assert e.shape[-1] == typed.array.shape[-1] // e.block[1] * e.block[0]
    # The signature entry is written by the signing writer only (sign_key=), never declared by hand.
    with pytest.raises(tpack.FormatError) as info:
        tpack.save_bytes({"s": tpack.Typed("SIGNATURE", np.zeros(96, np.uint8))})
    assert info.value.rule == "R55"


def test_without_ml_dtypes_bf16_and_fp8_read_as_unsigned_bits(monkeypatch):
    data = tpack.save_bytes({"b": np.array([1.0, -2.0], dtype=ml_dtypes.bfloat16),
                             "f": np.array([0.5], dtype=ml_dtypes.float8_e4m3fn)})
    monkeypatch.setattr(_dtypes, "_ml", None)
    c = tpack.open_bytes(data)
    assert c.get("b").dtype == np.uint16
    assert c.get("b").tolist() == [0x3F80, 0xC000]
    assert c.get("f").dtype == np.uint8


METADATA = {
    "u64": 2**64 - 1, "i64": -(2**63), "f64": float("inf"), "bool": True, "string": "wörld\x00\n",
    "bytes": b"\x00\xff", "u64[]": [1, 2**64 - 1], "i64[]": [-1, 5], "f64[]": [0.5, -0.0], "string[]": ["a", ""],
    "u8": np.uint8(255), "i8": np.int8(-128), "u16": np.uint16(65535), "i16": np.int16(-5),
    "u32": np.uint32(7), "i32": np.int32(-7), "f32": np.float32(1.5),
    "u8[]": np.array([1, 2], np.uint8), "i8[]": np.array([-1], np.int8), "u16[]": np.array([3], np.uint16),
    "i16[]": np.array([-3], np.int16), "u32[]": np.array([4], np.uint32), "i32[]": np.array([-4], np.int32),
    "f32[]": np.array([0.25], np.float32), "bool[]": [True, False],
    "array[]": [[1, 2], ["x", "y"], [[True], [-1]]],
}


def test_every_metadata_type_round_trips():
    c = tpack.open_bytes(tpack.save_bytes({}, metadata=METADATA))
    typed = c.metadata(typed=True)
    assert list(typed) == sorted(METADATA, key=lambda k: k.encode())
    for key, value in METADATA.items():
        ty, got = typed[key]
        assert ty == key
        expected = value.tolist() if isinstance(value, (np.ndarray, np.generic)) else value
        if key == "array[]":
            assert got == [("u64[]", [1, 2]), ("string[]", ["x", "y"]),
                           ("array[]", [("bool[]", [True]), ("i64[]", [-1])])]
        else:
            assert got == expected, key
    assert c.metadata()["array[]"] == [[1, 2], ["x", "y"], [[True], [-1]]]
    assert type(c.metadata()["bool"]) is bool


@pytest.mark.parametrize("bad, error", [
    ({"k": object()}, TypeError),
    ({"k": 2**64}, OverflowError),
    ({"k": [1, "a"]}, TypeError),
    ({1: 2}, TypeError),
    ({"k": [[[[[[[[[[1]]]]]]]]]]}, ValueError),
])
def test_bad_metadata_is_refused(bad, error):
    with pytest.raises(error):
        tpack.save_bytes({}, metadata=bad)


def test_bad_tensors_are_refused(tmp_path):
    with pytest.raises(TypeError):
        tpack.save_bytes({"c": np.zeros(2, np.complex128)})
    with pytest.raises(TypeError):
        tpack.save_bytes({3: np.zeros(2)})
    with pytest.raises(tpack.FormatError) as info:
        tpack.save_bytes({"": np.zeros(2)})
    assert info.value.rule == "R17"
    with pytest.raises(tpack.FormatError) as info:
        tpack.save_bytes({"w": np.zeros(2)}, alignment=3)
    assert info.value.rule == "R29"
    with pytest.raises(ValueError):
        tpack.save_bytes({"q": tpack.Typed("Q8_0", np.zeros((2, 33), np.uint8))})
    with pytest.raises(ValueError):
        tpack.save_bytes({"q": tpack.Typed("NOPE", np.zeros(2, np.uint8))})
    for dtype, data in [("F32", np.zeros(4, np.uint8)), ("RAW", np.zeros((2, 2), np.uint8)),
                        ("RAW", np.zeros(2, np.uint16)), ("Q8_0", np.zeros((1, 17), np.uint16))]:
        with pytest.raises(ValueError):
            tpack.save_bytes({"t": tpack.Typed(dtype, data)})


def test_a_failed_save_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "m.tpack"
    tpack.save(path, {"w": np.ones(3, np.float32)})
    before = path.read_bytes()

    def failing(arrays):
        yield b"\x00" * 4  # part of the first payload is written, then the producer fails
        raise RuntimeError("the producer failed")

    monkeypatch.setattr(tpack, "_chunks", failing)
    with pytest.raises(RuntimeError, match="producer failed"):
        tpack.save(path, {"w": np.zeros(3, np.float32)})
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["m.tpack"]  # no temporary file left behind
    monkeypatch.undo()
    with pytest.raises(TypeError):  # refused before anything is written
        tpack.save(path, {"w": np.ones(4, np.float32), "x": np.zeros(2, np.complex128)})
    assert path.read_bytes() == before


def test_save_and_save_bytes_write_the_same_bytes(tmp_path):
    tensors = {"b": np.arange(100, dtype=np.int16), "a": np.eye(3, dtype=np.float64)}
    path = tmp_path / "m.tpack"
    tpack.save(path, tensors, metadata={"arch": "x"}, alignment=256)
    assert path.read_bytes() == tpack.save_bytes(tensors, metadata={"arch": "x"}, alignment=256)
    with tpack.open(path) as f:
        assert all(e.alignment == 256 and e.offset % 256 == 0 for e in f.entries())


def test_big_endian_and_strided_arrays_are_saved_as_their_values():
    be = np.arange(6, dtype=">i4").reshape(2, 3)
    strided = np.arange(20, dtype=np.float32)[::2]
    loaded = tpack.load_bytes(tpack.save_bytes({"be": be, "s": strided}))
    assert loaded["be"].dtype == np.int32 and loaded["be"].tolist() == be.tolist()
    assert loaded["s"].tolist() == strided.tolist()


def test_large_tensors_are_written_in_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(tpack, "_CHUNK", 1000)
    a = RNG.standard_normal((301, 7)).astype(np.float32)
    assert np.array_equal(tpack.load_bytes(tpack.save_bytes({"a": a}))["a"], a)


def test_tpack_verify_accepts_what_save_wrote(tmp_path, cli):
    path = tmp_path / "m.tpack"
    tpack.save(path, {n: random_array(dt, (4, 4)) for n, dt in NUMPY_DTYPES.items()}, metadata=METADATA)
    result = run_cli(cli, "verify", str(path))
    assert result.returncode == 0, result.stderr
    # … and refuses it once a payload byte is flipped (so the check can fail).
    data = bytearray(path.read_bytes())
    with tpack.open(path) as f:
        data[f.entry("F32").offset] ^= 1
    path.write_bytes(bytes(data))
    assert run_cli(cli, "verify", str(path)).returncode != 0
    with tpack.open(path) as f:
        with pytest.raises(tpack.IntegrityError) as info:
            f.verify()
        assert info.value.rule == "R50" and info.value.entry_name == "F32"


def test_a_container_copies_with_its_dtypes_through_typed():
    with tpack.open(__import__("conftest").VECTORS / "valid" / "example.tpack") as f:
        copy = tpack.open_bytes(tpack.save_bytes({e.name: tpack.Typed(e.dtype, f.get(e.name), e.target)
                                                  for e in f.entries()}))
        assert any(e.target is not None for e in f.entries())
        for e in f.entries():
            got = copy.entry(e.name)
            assert (got.dtype, got.shape, got.target) == (e.dtype, e.shape, e.target)
            assert bits(copy.get(e.name)) == bits(f.get(e.name))


def test_a_target_that_overflows_is_refused():
    with pytest.raises(tpack.FormatError) as info:
        tpack.save_bytes({"r": tpack.Typed("RAW", np.zeros(16, np.uint8), 2**64 - 8)})
    assert info.value.rule == "R32"

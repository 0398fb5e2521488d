"""Every golden vector through the Python API: valid ones decode as the manifest says (spec §13), invalid
ones raise with the manifest's rule."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

import tpack
from conftest import VECTORS, manifest

VECTORS_ALL = manifest()
VALID = [v for v in VECTORS_ALL if v["valid"]]
INVALID = [v for v in VECTORS_ALL if not v["valid"]]
INTEGRITY = {"R37", "R50"}


def f64_hex(x: float) -> str:
    return struct.pack(">d", x).hex()


def f32_hex(x: float) -> str:
    return struct.pack(">f", x).hex()


def meta_value(ty, value):
    """A typed Python value written the §13 way."""
    if ty == "f64":
        return f64_hex(value)
    if ty == "f64[]":
        return [f64_hex(v) for v in value]
    if ty == "f32":
        return f32_hex(value)
    if ty == "f32[]":
        return [f32_hex(v) for v in value]
    if ty == "bytes" or isinstance(ty, int):
        return value.hex()
    if ty == "array[]":
        return [{"type": t, "value": meta_value(t, v)} for t, v in value]
    return value


def decode(c: tpack.Container) -> dict:
    entries = []
    for e in c.entries():
        d = {"name": e.name, "dtype": e.dtype, "shape": list(e.shape), "offset": e.offset, "length": e.nbytes,
             "alignment": e.alignment, "target": e.target, "checksum": e.checksum}
        if e.dtype == "CONTAINER":
            d["container"] = decode(c.nested(e.name))
        entries.append(d)
    metadata = [{"key": k, "type": t, "value": meta_value(t, v)} for k, (t, v) in c.metadata(typed=True).items()]
    return {"version": list(c.version), "compat_flags": c.compat_flags, "entries": entries, "metadata": metadata}


def same_nan_aware(expected, actual):
    """Equal, except that an f32 signalling NaN (which Python floats cannot hold) may come back quiet."""
    if isinstance(expected, dict):
        return expected.keys() == actual.keys() and all(same_nan_aware(expected[k], actual[k]) for k in expected)
    if isinstance(expected, list):
        return len(expected) == len(actual) and all(same_nan_aware(a, b) for a, b in zip(expected, actual))
    if isinstance(expected, str) and len(expected) == 8 and expected != actual:
        try:
            bits = int(expected, 16)
        except ValueError:
            return False
        is_nan = (bits >> 23) & 0xFF == 0xFF and bits & 0x7FFFFF
        return bool(is_nan) and math.isnan(struct.unpack(">f", bytes.fromhex(actual))[0])
    return expected == actual


@pytest.mark.parametrize("vector", VALID, ids=[v["file"] for v in VALID])
def test_valid_vector_decodes_as_the_manifest_says(vector):
    path = VECTORS / vector["file"]
    with tpack.open(path) as c:
        c.verify()
        got = decode(c)
        assert same_nan_aware(vector["decoding"], got), (vector["decoding"], got)
        # Every entry reads as an array of its payload's bytes, in place.
        for e in c.entries():
            a = c.get(e.name)
            assert a.nbytes == e.nbytes
            assert not a.flags.writeable
            raw = path.read_bytes()[e.offset:e.offset + e.nbytes]
            assert np.ascontiguousarray(a).view(np.uint8).tobytes() == raw
    # The same through an in-memory copy.
    with tpack.open_bytes(path.read_bytes()) as c:
        assert same_nan_aware(vector["decoding"], decode(c))


def test_an_f32_signalling_nan_is_the_one_inexact_value():
    """The allowance in `same_nan_aware` is needed (and used) exactly for the f32 sNaN vector."""
    assert not same_nan_aware("7f800001", f32_hex(1.0))
    assert same_nan_aware("7f800001", f32_hex(float("nan")))


@pytest.mark.parametrize("vector", INVALID, ids=[v["file"] for v in INVALID])
def test_invalid_vector_raises_its_rule(vector):
    path = VECTORS / vector["file"]
    rule = vector["rule"]
    if rule in INTEGRITY:
        with tpack.open(path) as c:
            with pytest.raises(tpack.IntegrityError) as info:
                c.verify()
    else:
        with pytest.raises(tpack.FormatError) as info:
            tpack.open(path)
        with pytest.raises(tpack.FormatError):
            tpack.load_bytes(path.read_bytes())
    err = info.value
    assert isinstance(err, tpack.TpackError)
    assert err.rule == rule
    assert str(err).startswith(rule + " ")
    assert err.rule_name and err.rule_name in str(err)


def test_an_integrity_error_names_the_entry():
    damaged = next(v for v in INVALID if v["rule"] == "R50")
    with tpack.open(VECTORS / damaged["file"]) as c:
        with pytest.raises(tpack.IntegrityError) as info:
            c.verify()
        assert info.value.entry is not None
        assert info.value.entry_name == c.keys()[info.value.entry]
        assert repr(info.value.entry_name) in str(info.value)


def test_nested_containers_open_as_containers():
    with tpack.open(VECTORS / "valid" / "nested.tpack") as c:
        outer = [e for e in c.entries() if e.dtype == "CONTAINER"]
        assert outer
        inner = c.nested(outer[0].name)
        assert isinstance(inner, tpack.Container)
        assert len(inner) >= 0
        inner.verify()
        plain = [e for e in c.entries() if e.dtype != "CONTAINER"]
        if plain:
            with pytest.raises(ValueError):
                c.nested(plain[0].name)

"""Every golden vector through the Python API: valid ones decode as the manifest says (spec §13), invalid
ones raise with the manifest's rule."""

from __future__ import annotations

import math
import pickle
import struct

import numpy as np
import pytest

import tpack
from conftest import VECTORS, manifest

VECTORS_ALL = manifest()
VALID = [v for v in VECTORS_ALL if v["valid"]]
INVALID = [v for v in VECTORS_ALL if not v["valid"]]
INTEGRITY = {"R37", "R50"}
ALGORITHM_CODES = {"ed25519": 1, "p256": 2}


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
    decoded = {"version": list(c.version), "compat_flags": c.compat_flags, "entries": entries, "metadata": metadata}
    signer = c.signer
    if signer is not None:
        decoded["signature"] = {
            "algorithm": ALGORITHM_CODES.get(signer.algorithm, signer.algorithm), "key": signer.key_id,
            "counter": signer.counter, "subject": signer.subject,
            "public_key": None if signer.public_key is None else signer.public_key.hex(),
            "message": c._native.signed_message.hex(),
        }
    return decoded


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


# Which context attributes each rule's error carries (spec §12, as `tpack.TpackError` documents them); every
# other attribute is None. `verify()` also names the entry of every integrity error (R37 included).
CONTEXT = ("entry", "record", "position", "offset", "section", "value", "stored", "computed", "depth", "outer_entry",
           "inner_rule")
CARRIES = {
    **{r: {"value"} for r in ("R1", "R3", "R4", "R5", "R6", "R8", "R9")},
    "R2": set(),
    "R7": {"offset"},
    **{r: {"section"} for r in ("R10", "R11", "R12")},
    **{r: {"stored", "computed"} for r in ("R13", "R14")},
    **{f"R{n}": {"entry"} for n in (15, 16, 18, 21, 25, 26, 27, 31, 32, 33, 34, 35, 36, 38)},
    **{f"R{n}": {"entry", "value"} for n in (17, 22, 23, 24, 28, 29, 53)},
    **{r: {"position"} for r in ("R19", "R20")},
    "R30": {"entry", "offset"},
    "R37": {"entry", "offset"},
    "R39": {"entry", "depth", "outer_entry", "inner_rule"},
    **{f"R{n}": {"record"} for n in (40, 41, 42, 43, 44, 45, 47, 48, 49, 52)},
    "R46": {"record", "value"},
    "R50": {"entry", "stored", "computed"},
    "R51": {"offset"},
    # Signatures (spec §14): R54–R57 are structural; R58–R64 come from a policy (test_signing.py).
    **{r: set() for r in ("R54", "R58", "R59", "R61", "R63")},
    **{r: {"entry"} for r in ("R55", "R64")},
    **{r: {"value"} for r in ("R56", "R60", "R62")},
    "R57": {"entry", "value"},
}


# R56's `value`: the signed attribute at fault, by its code (`tpack.TpackError` documents them).
SIGNED_ATTRIBUTES = ("tpack.sig.alg", "tpack.sig.key", "tpack.sig.counter", "tpack.sig.subject", "tpack.sig.pubkey",
                     "an undefined tpack.sig. key")


def raised(vector) -> tpack.TpackError:
    path = VECTORS / vector["file"]
    try:
        with tpack.open(path) as c:
            c.verify()
    except tpack.TpackError as e:
        return e
    raise AssertionError(f"{vector['file']} raised nothing")


def test_every_rule_has_a_row():
    assert sorted(CARRIES, key=lambda r: int(r[1:])) == [f"R{n}" for n in range(1, 65)]


@pytest.mark.parametrize("vector", INVALID, ids=[v["file"] for v in INVALID])
def test_an_error_carries_its_rules_context_and_its_message_shows_it(vector):
    err = raised(vector)
    carries = CARRIES[err.rule]
    if err.rule in INTEGRITY and "nested" in vector["file"]:
        # Found inside a nested container: how deep, and in which outer entry.
        carries = carries | {"depth", "outer_entry"}
        assert (err.depth, err.outer_entry) == (1, err.entry), vector["file"]
    assert {name for name in CONTEXT if getattr(err, name) is not None} == carries, vector["file"]
    message = str(err)
    for name in ("record", "position", "offset", "value", "depth"):
        field = getattr(err, name)
        if field is not None:
            # Flags (R5) are shown in hex, a signed attribute (R56) by its key, every other number in decimal.
            shown = f"{field:#x}" if err.rule == "R5" and name == "value" else str(field)
            if err.rule == "R56" and name == "value":
                shown = SIGNED_ATTRIBUTES[field]
            assert shown in message, (name, message)
    for name in ("stored", "computed"):
        if getattr(err, name) is not None:
            assert f"{getattr(err, name):#010x}" in message, (name, message)
    if err.section is not None:
        assert f"section {err.section}" in message
    if err.inner_rule is not None:
        assert f"{err.inner_rule} " in message
    if err.entry is not None and err.rule not in INTEGRITY:
        assert f"entry {err.entry}" in message
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is type(err)
    assert [getattr(back, n) for n in CONTEXT] == [getattr(err, n) for n in CONTEXT]


def test_every_context_attribute_is_filled_by_some_vector():
    filled = {name for v in INVALID for name in CONTEXT if getattr(raised(v), name) is not None}
    assert filled == set(CONTEXT)


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

"""Python and numpy values to typed metadata values, for saving."""

from __future__ import annotations

from typing import Any, NamedTuple, Tuple, Union

import numpy as np


class MetaValue(NamedTuple):
    """A metadata value with its spec type, as ``Container.metadata(typed=True)`` gives it, and as ``save``
    takes it to write a value with exactly that type: ``tpack.MetaValue("u16", 7)``.

    ``type`` is the spec's name (``"u8"`` … ``"f64"``, ``"bool"``, ``"string"``, ``"bytes"``, ``"u8[]"`` …,
    ``"array[]"``), or the integer code of a type of a newer format version (read only: such a value cannot be
    written). For ``"array[]"``, ``value`` is a list of ``MetaValue``. A plain tuple is a list to ``save``, not
    a typed value.
    """

    type: Union[str, int]
    value: Any


def meta_value(ty: Union[str, int], value: Any) -> MetaValue:
    """``MetaValue(ty, value)`` from the extension's typed reading, with an ``array[]``'s items too."""
    if ty == "array[]":
        value = [meta_value(t, v) for t, v in value]
    return MetaValue(ty, value)

_SCALARS = {
    np.dtype("uint8"): "u8", np.dtype("int8"): "i8", np.dtype("uint16"): "u16", np.dtype("int16"): "i16",
    np.dtype("uint32"): "u32", np.dtype("int32"): "i32", np.dtype("uint64"): "u64", np.dtype("int64"): "i64",
    np.dtype("float32"): "f32", np.dtype("float64"): "f64", np.dtype("bool"): "bool",
}
_U64_MAX = 2**64 - 1


def typed(value: Any) -> Tuple[str, Any]:
    """``(type name, value)`` for a metadata value.

    ``bool`` → bool; ``int`` → u64, or i64 when negative; ``float`` → f64; ``str`` → string; ``bytes`` →
    bytes; numpy scalars keep their width (``np.uint8(3)`` → u8, ``np.float32`` → f32); 1-D numpy arrays
    likewise (``u8[]`` … ``f64[]``, ``bool[]``); a list of bools, ints (u64[] or i64[]), floats (f64[]) or str
    (string[]) → that array; a list of arrays → ``array[]``; an empty list → ``u64[]``; a :class:`MetaValue`
    → its own type.
    """
    if isinstance(value, MetaValue):
        return _given(value)
    if isinstance(value, (bool, np.bool_)):
        return "bool", bool(value)
    if isinstance(value, np.generic):
        ty = _SCALARS.get(value.dtype)
        if ty is None:
            raise TypeError(f"no tpack metadata type for numpy {value.dtype}")
        return ty, value.item()
    if isinstance(value, int):
        if 0 <= value <= _U64_MAX:
            return "u64", value
        if -(2**63) <= value < 0:
            return "i64", value
        raise OverflowError(f"metadata integer {value} does not fit 64 bits")
    if isinstance(value, float):
        return "f64", value
    if isinstance(value, str):
        return "string", value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "bytes", bytes(value)
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            raise TypeError("metadata arrays must be 1-D")
        ty = _SCALARS.get(value.dtype.newbyteorder("=") if value.dtype.byteorder == ">" else value.dtype)
        if ty is None:
            raise TypeError(f"no tpack metadata type for numpy arrays of {value.dtype}")
        return ty + "[]", value.tolist()
    if isinstance(value, (list, tuple)):
        items = list(value)
        if not items:
            return "u64[]", []
        if all(isinstance(v, (bool, np.bool_)) for v in items):
            return "bool[]", [bool(v) for v in items]
        if all(isinstance(v, int) and not isinstance(v, bool) for v in items):
            if all(0 <= v <= _U64_MAX for v in items):
                return "u64[]", items
            if all(-(2**63) <= v < 2**63 for v in items):
                return "i64[]", items
            raise OverflowError("metadata integers do not fit 64 bits")
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in items):
            return "f64[]", [float(v) for v in items]
        if all(isinstance(v, str) for v in items):
            return "string[]", items
        if all(isinstance(v, (list, tuple, np.ndarray)) for v in items):
            return "array[]", [typed(v) for v in items]
        raise TypeError("a metadata list must hold one kind of value: bools, ints, floats, str, or arrays "
                        "(a value with its type is tpack.MetaValue(type, value), not a tuple)")
    raise TypeError(f"no tpack metadata type for {type(value).__name__}")


def _given(value: MetaValue) -> Tuple[str, Any]:
    """The ``(type name, value)`` pair of a value typed by the caller; the extension checks the value fits."""
    ty, inner = value
    if not isinstance(ty, str):
        raise TypeError(f"metadata type code {ty!r} is of a newer format version: it cannot be written")
    if ty != "array[]":
        return ty, inner
    if not isinstance(inner, (list, tuple)) or not all(isinstance(item, MetaValue) for item in inner):
        raise TypeError("an array[] MetaValue holds a list of MetaValue items")
    return ty, [_given(item) for item in inner]

"""Between tpack dtypes and numpy dtypes (the table is in ``docs/python.md``)."""

from __future__ import annotations

from typing import Dict, Optional, Tuple

import numpy as np

from . import _native

try:  # BF16 and the FP8 types have numpy dtypes only through ml_dtypes.
    import ml_dtypes as _ml
except ImportError:  # then they read as same-width unsigned integers (tested by patching `_ml`)
    _ml = None

#: ``name -> (code, (kind, block elements, block bytes))`` for every dtype this build knows.
INFO: Dict[str, Tuple[int, Tuple[str, int, int]]] = {
    name: (code, packing) for code, name, packing in _native.dtype_info()
}

#: Plain dtypes with a numpy equivalent: the array-interface type string of their little-endian bytes.
PLAIN: Dict[str, str] = {
    "F64": "<f8", "F32": "<f4", "F16": "<f2",
    "I64": "<i8", "I32": "<i4", "I16": "<i2", "I8": "|i1",
    "U64": "<u8", "U32": "<u4", "U16": "<u2", "U8": "|u1",
    "BOOL": "|b1", "C64": "<c8", "RAW": "|u1", "CONTAINER": "|u1", "SIGNATURE": "|u1",
}
#: Byte dtypes: rank 1, one byte per element.
BYTES = ("RAW", "CONTAINER", "SIGNATURE")

#: Plain dtypes that numpy has only through ml_dtypes: (ml_dtypes attribute, same-width unsigned type string).
ML: Dict[str, Tuple[str, str]] = {
    "BF16": ("bfloat16", "<u2"),
    "F8E4M3": ("float8_e4m3fn", "|u1"),
    "F8E5M2": ("float8_e5m2", "|u1"),
    "F8E8M0": ("float8_e8m0fnu", "|u1"),
    "F8E4M3FNUZ": ("float8_e4m3fnuz", "|u1"),
    "F8E5M2FNUZ": ("float8_e5m2fnuz", "|u1"),
}


def ml_dtype(name: str) -> Optional[np.dtype]:
    """The ml_dtypes dtype for tpack dtype ``name``, or ``None`` (not such a dtype, or ml_dtypes missing)."""
    if _ml is None or name not in ML:
        return None
    attr = getattr(_ml, ML[name][0], None)
    return None if attr is None else np.dtype(attr)


#: numpy dtype names (``dtype.name`` of the little-endian form) to tpack dtypes, for saving.
_FROM_NUMPY: Dict[str, str] = {
    "float64": "F64", "float32": "F32", "float16": "F16",
    "int64": "I64", "int32": "I32", "int16": "I16", "int8": "I8",
    "uint64": "U64", "uint32": "U32", "uint16": "U16", "uint8": "U8",
    "bool": "BOOL", "complex64": "C64",
}
_FROM_NUMPY.update({attr: name for name, (attr, _) in ML.items()})


def from_numpy(dtype: np.dtype) -> str:
    """The tpack dtype that stores ``dtype``'s values exactly.

    Raises:
        TypeError: numpy dtypes tpack has no type for (complex128, strings, objects, …).
    """
    name = _FROM_NUMPY.get(dtype.name)
    if name is None:
        raise TypeError(
            f"tpack has no dtype for numpy {dtype}; convert the array, or wrap raw bytes in tpack.Typed(dtype, array)"
        )
    return name


def view_spec(dtype: str, shape: Tuple[int, ...], nbytes: int, packing) -> Tuple[str, Tuple[int, ...], Optional[np.dtype]]:
    """``(typestr, shape, final dtype or None)`` of the array that views an entry's payload.

    Block-quantized and sub-byte dtypes (and dtypes of a newer minor version) come as ``uint8`` rows of whole
    blocks: shape ``(*shape[:-1], blocks * block_bytes)``, as gguf-py holds them; an entry whose geometry is
    unknown comes as its raw bytes, shape ``(nbytes,)``.
    """
    if dtype in PLAIN:
        return PLAIN[dtype], (shape[0],) if dtype in BYTES else shape, None
    if dtype in ML:
        final = ml_dtype(dtype)
        return ML[dtype][1], shape, final
    if packing is not None and packing[0] == "block" and len(shape) > 0:
        _, elems, block_bytes = packing
        return "|u1", tuple(shape[:-1]) + (shape[-1] // elems * block_bytes,), None
    if packing is not None and packing[0] == "element" and packing[2] in (1, 2, 4, 8):
        return f"<u{packing[2]}", shape, None
    return "|u1", (nbytes,), None


def logical_shape(dtype: str, array_shape: Tuple[int, ...], itemsize: int) -> Tuple[int, ...]:
    """The tpack shape of an array of dtype ``dtype`` laid out as :func:`view_spec` gives it (for saving).

    Raises:
        ValueError: an unknown dtype, or an array whose element width or layout does not fit it.
    """
    if dtype not in INFO:
        raise ValueError(f"unknown tpack dtype {dtype!r}")
    kind, elems, block_bytes = INFO[dtype][1]
    if kind == "element" and itemsize != block_bytes:
        raise ValueError(f"{dtype} has {block_bytes}-byte elements; the array's are {itemsize} bytes")
    if kind == "bytes" and (itemsize != 1 or len(array_shape) != 1):
        raise ValueError(f"{dtype} data must be a 1-D array of bytes")
    if kind != "block":
        return array_shape
    if itemsize != 1:
        raise ValueError(f"{dtype} data must be uint8 rows of whole {block_bytes}-byte blocks")
    if len(array_shape) == 0 or array_shape[-1] % block_bytes:
        raise ValueError(
            f"{dtype} data must be uint8 rows of whole {block_bytes}-byte blocks; the last dimension is "
            f"{array_shape[-1] if array_shape else 'missing'}"
        )
    return tuple(array_shape[:-1]) + (array_shape[-1] // block_bytes * elems,)

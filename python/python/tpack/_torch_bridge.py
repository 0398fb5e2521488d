"""Between torch tensors and what tpack stores and gives: dtypes both ways, without copying through numpy.

torch is imported only when a function here is called (``import tpack`` never imports it).
"""

from __future__ import annotations

import importlib
from typing import Any, Tuple, Union

import numpy as np

from . import Typed

#: tpack dtypes that numpy has only through ml_dtypes → (torch dtype attribute, same-width signed torch dtype
#: attribute used to hand the bits to numpy).
_BITS = {
    "BF16": ("bfloat16", "int16"),
    "F8E4M3": ("float8_e4m3fn", "int8"),
    "F8E5M2": ("float8_e5m2", "int8"),
    "F8E8M0": ("float8_e8m0fnu", "int8"),
    "F8E4M3FNUZ": ("float8_e4m3fnuz", "int8"),
    "F8E5M2FNUZ": ("float8_e5m2fnuz", "int8"),
}
#: torch dtypes numpy holds as they are → tpack dtype.
_PLAIN = {
    "float64": "F64", "float32": "F32", "float16": "F16",
    "int64": "I64", "int32": "I32", "int16": "I16", "int8": "I8",
    "uint64": "U64", "uint32": "U32", "uint16": "U16", "uint8": "U8",
    "bool": "BOOL", "complex64": "C64",
}


def import_torch() -> Any:
    """The ``torch`` module.

    Raises:
        ModuleNotFoundError: torch cannot be imported (``.name`` is ``"torch"``).
    """
    try:
        return importlib.import_module("torch")
    except ImportError as e:
        raise ModuleNotFoundError(f"tpack.torch needs torch, which cannot be imported ({e})", name="torch") from e


def _dtype_name(tensor: Any) -> str:
    return str(tensor.dtype).rpartition(".")[2]


def to_torch(torch: Any, bits: np.ndarray, dtype: Union[str, int]) -> Any:
    """A tensor sharing ``bits``' memory: ``bits`` is an entry as ``Container._bits`` gives it (BF16 and FP8
    as same-width unsigned integers), ``dtype`` its tpack dtype. ``bits`` should be writable (torch has no
    read-only tensors).

    Raises:
        TypeError: a tpack dtype this torch has no dtype for (an FP8 variant of a newer torch).
    """
    tensor = torch.from_numpy(bits)
    if dtype not in _BITS:
        return tensor  # plain dtypes as numpy holds them; block-quantized ones as uint8 rows, like numpy
    target = getattr(torch, _BITS[dtype][0], None)
    if target is None:
        raise TypeError(f"torch {torch.__version__} has no dtype for tpack {dtype}")
    return tensor.view(target)


def from_torch(name: str, tensor: Any) -> Union[np.ndarray, Typed]:
    """What ``tpack.save`` stores for ``tensor``: a numpy array over its memory (a CPU tensor is not copied;
    a non-contiguous one keeps its strides, and is stored by value), or a :class:`tpack.Typed` of its bits for
    the dtypes numpy lacks (BF16, FP8).

    Raises:
        ValueError: ``tensor`` is not a tensor, or a sparse one (as safetensors raises).
        TypeError: a dtype tpack has no type for (complex128, quantized and packed sub-byte types, …).
    """
    torch = import_torch()
    if not isinstance(tensor, torch.Tensor):
        raise ValueError(f"Key `{name}` is invalid, expected torch.Tensor but received {type(tensor)}")
    if tensor.layout != torch.strided:
        raise ValueError(f"tensor {name!r} is sparse ({tensor.layout}): make it dense with .to_dense() first")
    t = tensor.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    t = t.resolve_conj().resolve_neg()
    dtype = _dtype_name(t)
    if dtype in _PLAIN:
        return t.numpy()
    for tpack_dtype, (torch_name, signed) in _BITS.items():
        if dtype == torch_name:
            bits = t.view(getattr(torch, signed)).numpy()
            return Typed(tpack_dtype, bits.view(bits.dtype.str.replace("i", "u")))
    raise TypeError(f"tensor {name!r}: tpack has no dtype for torch {t.dtype}")


def byte_span(tensor: Any) -> Tuple[int, int]:
    """``(first, end)``: the addresses of the first byte and one past the last byte ``tensor`` can read in its
    storage (torch strides are never negative); ``(p, p)`` for an empty tensor."""
    start = tensor.data_ptr()
    if tensor.numel() == 0:
        return start, start
    last = sum((size - 1) * stride for size, stride in zip(tensor.shape, tensor.stride()))
    return start, start + (last + 1) * tensor.element_size()

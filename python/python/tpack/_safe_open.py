"""``tpack.safe_open``: safetensors' lazy reader, over a tpack container (the drop-in layer, ``docs/python.md``).

Every tensor it returns is private (as safetensors' are): a user's in-place update never reaches the file, and
the file is not read up front. numpy gets a copy of each tensor; torch and JAX share a private copy-on-write
mapping of its payload. ``tpack.open`` is the zero-copy, read-only reader.
"""

from __future__ import annotations

import abc
import importlib
import json
import os
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np

from . import Container, TpackError, _dtypes
from ._torch_bridge import to_torch

__all__ = ["safe_open", "SafetensorError", "str_metadata"]

#: safetensors' catch-all exception, by its name: tpack's base exception, so that ``except SafetensorError``
#: catches what it caught there (a damaged file, an unknown framework, a missing tensor).
SafetensorError = TpackError


class _NoTensor(TpackError, KeyError):
    """No tensor has the name asked for: safetensors raises its ``SafetensorError`` there, tpack a
    ``KeyError``; this is both."""

    def __str__(self) -> str:  # KeyError's would quote the message
        return str(self.args[0])


#: safetensors' framework names → the package that provides the framework's tensors.
_FRAMEWORKS = {"np": "numpy", "numpy": "numpy", "pt": "torch", "torch": "torch", "jax": "jax", "flax": "jax"}

class _Framework(abc.ABC):
    """How one framework's tensors are made from a container's entries."""

    @abc.abstractmethod
    def tensor(self, c: Container, name: str) -> Any:
        """Entry ``name`` of ``c`` as a private tensor."""

    @abc.abstractmethod
    def part(self, bits: np.ndarray, dtype: Union[str, int]) -> Any:
        """The selected elements of an entry's plain view (BF16 and FP8 as same-width unsigned integers, see
        ``Container._bits``), of tpack dtype ``dtype``, as a tensor of their own."""


class _Numpy(_Framework):
    """numpy: a private copy of each tensor, taken on the call (as safetensors gives)."""

    def tensor(self, c: Container, name: str) -> Any:
        return np.array(c.get(name))

    def part(self, bits: np.ndarray, dtype: Union[str, int]) -> Any:
        return _typed(np.array(bits), dtype)


class _Torch(_Framework):
    """torch: each tensor over a private copy-on-write mapping of its payload (safetensors maps the file
    privately too): no copy up front, writes never reach the file; then moved to ``device``."""

    def __init__(self, torch: Any, device: Any) -> None:
        self._torch = torch
        self._device = device

    def _on_device(self, tensor: Any) -> Any:
        return tensor if str(self._device) == "cpu" else tensor.to(self._device)

    def tensor(self, c: Container, name: str) -> Any:
        bits, dtype = c._bits(name, writable=True)
        return self._on_device(to_torch(self._torch, bits, dtype))

    def part(self, bits: np.ndarray, dtype: Union[str, int]) -> Any:
        return self._on_device(to_torch(self._torch, np.array(bits), dtype))


class _Jax(_Framework):
    """JAX (CPU): each tensor shares a private copy-on-write mapping of its payload through DLPack (no copy;
    JAX never writes to it). BF16 and FP8, which numpy cannot export through DLPack, are copied into JAX."""

    def __init__(self, jnp: Any) -> None:
        self._jnp = jnp

    def tensor(self, c: Container, name: str) -> Any:
        bits, dtype = c._bits(name, writable=True)
        if _dtypes.ml_dtype(dtype if isinstance(dtype, str) else "") is not None:
            return self._jnp.asarray(_typed(bits, dtype))
        return self._jnp.from_dlpack(bits)

    def part(self, bits: np.ndarray, dtype: Union[str, int]) -> Any:
        return self._jnp.asarray(_typed(bits, dtype))


def _typed(bits: np.ndarray, dtype: Union[str, int]) -> np.ndarray:
    """``bits`` seen with its ml_dtypes dtype, when it is BF16 or FP8 and ml_dtypes is installed."""
    final = _dtypes.ml_dtype(dtype) if isinstance(dtype, str) else None
    return bits if final is None else bits.view(final)


def _framework(framework: str, device: Any) -> _Framework:
    """The framework ``framework`` names, making tensors on ``device``.

    Raises:
        TypeError: ``framework`` is not a str.
        SafetensorError: ``framework`` is none of safetensors' names tpack serves (``"tf"`` included).
        ModuleNotFoundError: the framework's package is not installed (as safetensors raises it).
        ValueError: numpy or JAX asked for a device other than ``"cpu"``.
    """
    if not isinstance(framework, str):
        raise TypeError(f"framework must be a str ('np', 'pt', 'jax', …), not {type(framework).__name__}")
    package = _FRAMEWORKS.get(framework)
    if package is None:
        raise SafetensorError(
            f"framework {framework!r} is invalid: tpack.safe_open serves 'np'/'numpy', 'pt'/'torch', 'jax'/'flax'"
        )
    if package == "numpy":
        _cpu_only(framework, device)
        return _Numpy()
    try:
        module = importlib.import_module(package)
    except ImportError as e:
        raise ModuleNotFoundError(
            f"safe_open(framework={framework!r}) needs {package}, which cannot be imported ({e}); "
            f"install it, or use framework='np'",
            name=package,
        ) from e
    if package == "torch":
        return _Torch(module, device)
    _cpu_only(framework, device)
    return _Jax(importlib.import_module("jax.numpy"))


def _cpu_only(framework: str, device: Any) -> None:
    if device != "cpu":
        raise ValueError(f"safe_open(framework={framework!r}) gives CPU arrays only; device={device!r} was asked")


def str_metadata(metadata: Dict[str, Any]) -> Optional[Dict[str, str]]:
    """tpack's typed metadata as safetensors gives it: ``None`` when there is none, else ``{str: str}``.

    A string is itself; bool, numbers and arrays are their JSON text (``true``, ``32``, ``0.5``, ``[1, 2]``); bytes
    (and a value of a newer format version's type, read as bytes) are lowercase hex.
    """
    if not metadata:
        return None
    return {key: _text(value) for key, value in metadata.items()}


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    return json.dumps(value)


class _SafeSlice:
    """Part of one tensor, read when indexed (``f.get_slice(name)[0:10]``), as safetensors' slice object.

    Indexing gives a private, writable copy of the selected elements in the safe_open's framework; only their
    pages of the file are read.
    """

    def __init__(self, owner: "safe_open", name: str) -> None:
        self._owner = owner
        self._name = name
        self._view = owner._container.get_slice(name)

    def get_shape(self) -> List[int]:
        """The tensor's shape, as a list."""
        return self._view.get_shape()

    def get_dtype(self) -> Union[str, int]:
        """The tensor's dtype name as safetensors spells it (``"F32"``, ``"BF16"``, …)."""
        return self._view.get_dtype()

    def __getitem__(self, index: Any) -> Any:
        bits, dtype = self._owner._container._bits(self._name, writable=False)
        part = bits[index]
        # A view of the map is never writable (and an int index gives a numpy scalar): those are copied; a
        # writable result is already numpy's own copy (advanced indexing), which is not copied twice.
        if not (isinstance(part, np.ndarray) and part.flags.writeable):
            part = np.array(part)
        return self._owner._framework.part(part, dtype)

    def __len__(self) -> int:
        return len(self._view)

    def __repr__(self) -> str:
        return f"<tpack safe_open slice {self._name!r}: {self.get_dtype()} {self.get_shape()}>"


class safe_open:  # noqa: N801 - safetensors' name
    """``safetensors.safe_open`` over a tpack file: ``with tpack.safe_open(path, framework="np") as f: ...``.

    ``framework`` is ``"np"``/``"numpy"``, ``"pt"``/``"torch"`` or ``"jax"``/``"flax"``; ``device`` is where
    torch tensors go (numpy and JAX: ``"cpu"`` only). The file is memory-mapped and its structure checked
    on opening, as by :func:`tpack.open`; each ``get_tensor`` copies that tensor alone out of the map.

    Raises:
        SafetensorError: an unknown ``framework`` (a :class:`tpack.TpackError`, as every tpack error is).
        ModuleNotFoundError: the framework's package is missing.
        FormatError, OSError: as :func:`tpack.open`.
    """

    def __init__(self, filename: Union[str, "os.PathLike[str]"], framework: str, device: str = "cpu") -> None:
        self._framework = _framework(framework, device)
        self._container = Container(filename)

    def __enter__(self) -> "safe_open":
        return self

    def __exit__(self, *exc: object) -> None:
        self._container.close()

    def keys(self) -> List[str]:
        """Tensor names, sorted (as safetensors sorts them)."""
        return sorted(self._container.keys())

    def offset_keys(self) -> List[str]:
        """Tensor names in the order of their payloads in the file."""
        order: List[Tuple[int, str]] = [(e.offset, e.name) for e in self._container.entries()]
        return [name for _, name in sorted(order)]

    def metadata(self) -> Optional[Dict[str, str]]:
        """The metadata as ``{str: str}``, or ``None`` if there is none (see :func:`str_metadata`)."""
        return str_metadata(self._container.metadata())

    def _known(self, name: str) -> str:
        """``name``, if a tensor has it."""
        if not isinstance(name, str) or name not in self._container:
            raise _NoTensor(f"File does not contain tensor {name!r}")
        return name

    def get_tensor(self, name: str) -> Any:
        """Tensor ``name`` in the framework's type, private: a user's in-place update never reaches the file.

        numpy: a writable copy taken on the call. torch: a writable tensor over a private copy-on-write mapping
        of the payload (nothing copied up front; a page is copied when first written), moved to ``device``.
        JAX: an array sharing such a mapping through DLPack (BF16 and FP8 are copied).

        Raises:
            SafetensorError: no tensor has this name (also a ``KeyError``).
        """
        return self._framework.tensor(self._container, self._known(name))

    def get_slice(self, name: str) -> _SafeSlice:
        """A slice object for tensor ``name``: ``get_shape()``, ``get_dtype()``, and ``[...]`` to read part.

        Raises:
            SafetensorError: no tensor has this name (also a ``KeyError``).
        """
        return _SafeSlice(self, self._known(name))

    def get_tensors(self) -> Dict[str, Any]:
        """Every tensor, as :meth:`get_tensor` gives it, keyed by name in :meth:`keys` order."""
        return {name: self.get_tensor(name) for name in self.keys()}

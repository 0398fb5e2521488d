"""``tpack.safe_open``: safetensors' lazy reader, over a tpack container (the drop-in layer, ``docs/python.md``).

Arrays it returns are private, writable copies of one tensor each (as safetensors' are): a user's in-place
update never reaches the file, and the file is not read up front. ``tpack.open`` is the zero-copy reader.
"""

from __future__ import annotations

import importlib
import json
import os
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import numpy as np

from . import Container, TpackError

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

#: ml_dtypes' names → torch's dtype attribute, for the dtypes ``torch.from_numpy`` does not take.
_TORCH_BITS = {
    "bfloat16": ("bfloat16", np.uint16),
    "float8_e4m3fn": ("float8_e4m3fn", np.uint8),
    "float8_e5m2": ("float8_e5m2", np.uint8),
    "float8_e8m0fnu": ("float8_e8m0fnu", np.uint8),
    "float8_e4m3fnuz": ("float8_e4m3fnuz", np.uint8),
    "float8_e5m2fnuz": ("float8_e5m2fnuz", np.uint8),
}


def _converter(framework: str, device: str) -> Callable[[np.ndarray], Any]:
    """The function that turns a private numpy copy into the framework's tensor on ``device``.

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
        return lambda array: array
    try:
        module = importlib.import_module(package)
    except ImportError as e:
        raise ModuleNotFoundError(
            f"safe_open(framework={framework!r}) needs {package}, which cannot be imported ({e}); "
            f"install it, or use framework='np'",
            name=package,
        ) from e
    if package == "torch":
        return lambda array: _to_torch(module, array, device)
    _cpu_only(framework, device)
    jnp = importlib.import_module("jax.numpy")
    # jax copies host arrays onto its device anyway, and takes the ml_dtypes dtypes (it uses ml_dtypes itself).
    return jnp.asarray


def _cpu_only(framework: str, device: str) -> None:
    if device != "cpu":
        raise ValueError(f"safe_open(framework={framework!r}) gives CPU arrays only; device={device!r} was asked")


def _to_torch(torch: Any, array: np.ndarray, device: str) -> Any:
    """A torch tensor sharing ``array``'s (private, writable) memory, moved to ``device`` if not the CPU.

    torch cannot take ml_dtypes arrays: BF16 and FP8 cross as same-width integers and are viewed back."""
    bits = _TORCH_BITS.get(array.dtype.name)
    if bits is None:
        tensor = torch.from_numpy(array)
    else:
        tensor = torch.from_numpy(array.view(bits[1])).view(getattr(torch, bits[0]))
    return tensor if device == "cpu" else tensor.to(device)


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
        part = self._view[index]
        # A view of the map is never writable (and an int index gives a numpy scalar): those are copied; a
        # writable result is already numpy's own copy (advanced indexing), which is not copied twice.
        if not (isinstance(part, np.ndarray) and part.flags.writeable):
            part = np.array(part)
        return self._owner._convert(part)

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
        self._convert = _converter(framework, device)
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
        """Tensor ``name``: a private, writable copy (in the framework's type) that never writes to the file.

        Raises:
            SafetensorError: no tensor has this name (also a ``KeyError``).
        """
        return self._convert(np.array(self._container.get(self._known(name))))

    def get_slice(self, name: str) -> _SafeSlice:
        """A slice object for tensor ``name``: ``get_shape()``, ``get_dtype()``, and ``[...]`` to read part.

        Raises:
            SafetensorError: no tensor has this name (also a ``KeyError``).
        """
        return _SafeSlice(self, self._known(name))

    def get_tensors(self) -> Dict[str, Any]:
        """Every tensor, as :meth:`get_tensor` gives it, keyed by name in :meth:`keys` order."""
        return {name: self.get_tensor(name) for name in self.keys()}

"""``safetensors.numpy``'s four functions over tpack files: change the import, keep the calls.

    from tpack.numpy import save_file, load_file   # was: from safetensors.numpy import ...
    save_file({"w": w}, "model.tpack", metadata={"format": "np"})
    tensors = load_file("model.tpack")             # writable numpy arrays in process memory

Every deviation from safetensors is listed, with its reason, in ``docs/python.md`` ("Migrating from
safetensors"). ``tpack.open`` / ``tpack.load`` remain the zero-copy, read-only readers.
"""

from __future__ import annotations

import os
from typing import Any, Dict, Mapping, Optional, Union

import numpy as np

from . import Container, load as _load, open_bytes, save as _save, save_bytes as _save_bytes

__all__ = ["save", "save_file", "load", "load_file"]

#: safetensors' ``load_file`` backends; tpack reads the same way for both (see ``load_file``).
_BACKENDS = ("mmap", "pread")


def save(tensor_dict: Mapping[str, np.ndarray], metadata: Optional[Mapping[str, Any]] = None) -> bytes:
    """The tpack container holding ``tensor_dict`` and ``metadata``, as bytes.

    Any array layout is stored by value (non-contiguous and Fortran-order arrays included); ``metadata``'s str
    values are stored as strings (other values as ``tpack.save`` types them). Raises as :func:`tpack.save_bytes`.
    """
    return _save_bytes(tensor_dict, metadata)


def save_file(tensor_dict: Mapping[str, np.ndarray], filename: Union[str, "os.PathLike[str]"],
              metadata: Optional[Mapping[str, Any]] = None) -> None:
    """Writes ``tensor_dict`` and ``metadata`` to a tpack file at ``filename`` (atomically, as ``tpack.save``).

    Raises as :func:`tpack.save`.
    """
    _save(filename, tensor_dict, metadata)


def load(data: bytes) -> Dict[str, np.ndarray]:
    """Every tensor of the tpack container in ``data``, as writable arrays of their own, keyed by name
    (sorted). Raises as :func:`tpack.open_bytes`."""
    with open_bytes(data) as c:
        return _copies(c)


def load_file(filename: Union[str, "os.PathLike[str]"], *, backend: str = "mmap") -> Dict[str, np.ndarray]:
    """Every tensor of the tpack file, as writable arrays in process memory, keyed by name (sorted), every
    payload's checksum verified on the way in.

    Whichever ``backend`` (safetensors' choice of ``"mmap"`` or ``"pread"``) is named, it reads as
    :func:`tpack.load` does: large parallel ``pread`` s straight into each array, checksummed as they land; the
    file is never written.

    Raises:
        ValueError: ``backend`` is neither ``"mmap"`` nor ``"pread"``.
        FormatError, OSError: as :func:`tpack.open`.
        IntegrityError: a damaged payload (R37, R50), naming its entry.
    """
    if backend not in _BACKENDS:
        raise ValueError(f"backend must be one of {_BACKENDS}, not {backend!r}")
    arrays = _load(filename)
    return {name: arrays[name] for name in sorted(arrays)}


def _copies(c: Container) -> Dict[str, np.ndarray]:
    return {name: np.array(c.get(name)) for name in sorted(c.keys())}

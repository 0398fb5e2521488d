"""``safetensors.torch``'s functions over tpack files: change the import, keep the calls.

    from tpack.torch import save_file, load_file, save_model, load_model   # was: from safetensors.torch import ...
    save_file(model.state_dict(), "model.tpack", metadata={"format": "pt"})
    state = load_file("model.tpack")                # writable tensors in process memory, checksums verified
    missing, unexpected = load_model(model, "model.tpack")

torch is imported when a function is called, not when this module is imported. Shared (tied) tensors are
refused by ``save``/``save_file`` and stored once by ``save_model``, as safetensors does; non-contiguous
tensors are stored by value, where safetensors refuses them. Every deviation is listed, with its reason, in
``docs/python.md`` ("Migrating from safetensors").
"""

from __future__ import annotations

import os
from collections import defaultdict
from typing import Any, Dict, List, Mapping, Optional, Set, Tuple, Union

import numpy as np

from . import Container, _native, open_bytes
from . import save as _save, save_bytes as _save_bytes
from ._torch_bridge import byte_span, from_torch, import_torch, to_torch

__all__ = ["save", "save_file", "load", "load_file", "save_model", "load_model"]

PathLike = Union[str, "os.PathLike[str]"]


def save(tensors: Mapping[str, Any], metadata: Optional[Mapping[str, Any]] = None) -> bytes:
    """The tpack container holding ``tensors`` (name → tensor) and ``metadata``, as bytes.

    Raises as :func:`save_file`.
    """
    return _save_bytes(_flatten(tensors), metadata)


def save_file(tensors: Mapping[str, Any], filename: PathLike, metadata: Optional[Mapping[str, Any]] = None) -> None:
    """Writes ``tensors`` (name → tensor) and ``metadata`` to a tpack file at ``filename`` (atomically, as
    :func:`tpack.save`). CPU tensors are streamed from their own memory; others are copied to the CPU one at a
    time. A non-contiguous tensor is stored by value (as ``t.contiguous()`` reads).

    Raises:
        RuntimeError: some tensors share memory (tied weights; the message names each group): save one of
            each, or use :func:`save_model`, as with safetensors.
        ValueError: a value is not a tensor, or a sparse one.
        TypeError: a dtype tpack has no type for (the message names the tensor).
        FormatError, OSError: as :func:`tpack.save`.
    """
    _save(filename, _flatten(tensors), metadata)


def load(data: bytes) -> Dict[str, Any]:
    """Every tensor of the tpack container in ``data``, as writable tensors of their own, keyed by name
    (sorted). Raises as :func:`tpack.open_bytes`."""
    torch = import_torch()
    with open_bytes(data) as c:
        return {name: _tensor(torch, c, name) for name in sorted(c.keys())}


def load_file(filename: PathLike, device: Union[str, int, Any] = "cpu") -> Dict[str, Any]:
    """Every tensor of the tpack file, as writable tensors in process memory on ``device``, keyed by name
    (sorted), every payload's checksum verified on the way in.

    The tensors are read as :func:`tpack.numpy.load_file` reads them and handed to torch without a copy
    (BF16 and FP8 as their bits, viewed with torch's dtype); a ``device`` other than the CPU gets a copy.

    Raises:
        FormatError, IntegrityError, OSError: as :func:`tpack.numpy.load_file`.
        ModuleNotFoundError: torch is missing.
    """
    torch = import_torch()
    path = os.fspath(filename)
    # One open for both the table (each entry's tpack dtype, which numpy may not hold: BF16, FP8) and the read,
    # as tpack.load reads: the dtypes are those of the bytes read, whatever happens to the path meanwhile.
    with Container._wrap(_native.open_file_for_load(path), path) as c:
        dtypes = {name: c._layout(name).dtype for name in c.keys()}
        arrays = c._read_all()
    return {name: _on(to_torch(torch, _plain(arrays[name]), dtypes[name]), device) for name in sorted(arrays)}


def save_model(model: Any, filename: PathLike, metadata: Optional[Mapping[str, Any]] = None,
               force_contiguous: bool = False) -> None:
    """Writes ``model.state_dict()`` to ``filename``, each group of tensors that share memory (tied weights)
    stored once, as safetensors' ``save_model`` does: under the name that covers the whole shared storage
    (the first in sorted order), each other name recorded in the metadata as ``{removed: kept}`` (unless the
    caller's metadata already has that key).

    ``force_contiguous`` is accepted for safetensors' sake and changes nothing: every tensor is stored by value.

    Raises:
        RuntimeError: a group of shared tensors none of which covers its whole storage.
        TypeError, ValueError, FormatError, OSError: as :func:`save_file`.
    """
    del force_contiguous  # non-contiguous tensors are stored by value anyway
    state_dict = dict(model.state_dict())
    removed = _duplicate_names(state_dict)
    extra: Dict[str, Any] = {}
    for kept, names in removed.items():
        for name in names:
            extra[name] = kept
            del state_dict[name]
    if extra:
        metadata = {**extra, **(metadata or {})}
    save_file(state_dict, filename, metadata)


def load_model(model: Any, filename: PathLike, strict: bool = True,
               device: Union[str, int, Any] = "cpu") -> Tuple[Set[str], List[str]]:
    """Loads the tensors of ``filename`` into ``model`` (``load_state_dict``), as safetensors' ``load_model``
    does: a tensor the file stores once for a group of the model's shared parameters fills the whole group.

    Returns:
        ``(missing, unexpected)``: the model's names the file lacks (a set), and the file's names the model
        lacks (a list), tied names accounted for.

    Raises:
        RuntimeError: ``strict`` and some names are missing or unexpected (the message lists them).
        FormatError, IntegrityError, OSError: as :func:`load_file`.
    """
    state_dict = load_file(filename, device=device)
    removed = _duplicate_names(model.state_dict(), preferred=set(state_dict))
    missing_keys, unexpected = model.load_state_dict(state_dict, strict=False)
    missing = set(missing_keys)
    unexpected = list(unexpected)
    for names in removed.values():
        for name in names:
            if name in missing:
                missing.remove(name)
            else:
                unexpected.append(name)
    if strict and (missing or unexpected):
        error = f"Error(s) in loading state_dict for {model.__class__.__name__}:"
        if missing:
            error += "\n    Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in sorted(missing))
        if unexpected:
            error += "\n    Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in sorted(unexpected))
        raise RuntimeError(error)
    return missing, unexpected


# -- conversion ---------------------------------------------------------------------------------------------

def _tensor(torch: Any, c: Container, name: str) -> Any:
    """Entry ``name`` of ``c`` as a writable tensor of its own: over a private copy-on-write mapping of the
    payload for a file, a private copy for a container in memory."""
    bits, dtype = c._bits(name, writable=True)
    return to_torch(torch, bits, dtype)


def _plain(array: np.ndarray) -> np.ndarray:
    """``array`` with BF16 and FP8 (ml_dtypes) seen as the same-width unsigned integers torch takes."""
    return array.view(f"u{array.dtype.itemsize}") if array.dtype.name in _ML else array


#: ml_dtypes names of the types ``to_torch`` takes as bits.
_ML = ("bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu", "float8_e4m3fnuz", "float8_e5m2fnuz")


def _on(tensor: Any, device: Union[str, int, Any]) -> Any:
    return tensor if str(device) == "cpu" else tensor.to(device)


def _flatten(tensors: Mapping[str, Any]) -> Dict[str, Any]:
    """What ``tpack.save`` stores for each tensor, after refusing tensors that share memory."""
    import_torch()
    if not isinstance(tensors, Mapping):
        raise ValueError(f"Expected a dict of [str, torch.Tensor] but received {type(tensors)}")
    converted = {name: from_torch(name, tensor) for name, tensor in tensors.items()}
    shared = [sorted(group) for group in _shared_groups(tensors) if len(group) > 1]
    if shared:
        raise RuntimeError(
            f"Some tensors share memory, which would store their bytes twice and load them as separate tensors: "
            f"{shared}. Save one name of each group, or use tpack.torch.save_model, which stores each group once."
        )
    return converted


def _shared_groups(tensors: Mapping[str, Any]) -> List[Set[str]]:
    """The names of tensors grouped by shared memory: two tensors share when their byte spans
    (:func:`byte_span`) in one storage overlap, as safetensors decides; every tensor is in one group."""
    by_storage: Dict[Tuple[Any, ...], List[Tuple[int, int, str]]] = defaultdict(list)
    groups: List[Set[str]] = []
    for name, t in tensors.items():
        storage = t.untyped_storage() if t.device.type != "meta" else None
        if storage is None or storage.data_ptr() == 0 or storage.nbytes() == 0:
            groups.append({name})
            continue
        by_storage[(str(t.device), storage.data_ptr(), storage.nbytes())].append((*byte_span(t), name))
    for spans in by_storage.values():
        spans.sort()
        end = None
        for start, stop, name in spans:
            if end is not None and start < end:
                groups[-1].add(name)
                end = max(end, stop)
            else:
                groups.append({name})
                end = stop
    return groups


def _is_complete(t: Any) -> bool:
    """Whether ``t`` covers its whole storage."""
    storage = t.untyped_storage()
    return t.data_ptr() == storage.data_ptr() and t.numel() * t.element_size() == storage.nbytes()


def _duplicate_names(state_dict: Mapping[str, Any], preferred: Optional[Set[str]] = None) -> Dict[str, List[str]]:
    """For each group of shared tensors, ``{kept name: [the other names]}``: the kept name covers the whole
    storage, the first in sorted order, or the first of ``preferred`` (the names a file holds) among those.

    Raises:
        RuntimeError: a group none of whose tensors covers its whole storage.
    """
    removed: Dict[str, List[str]] = {}
    for group in _shared_groups(state_dict):
        if len(group) < 2:
            continue
        complete = sorted(name for name in group if _is_complete(state_dict[name]))
        if not complete:
            raise RuntimeError(
                f"tensors {sorted(group)} share memory, and none covers the whole storage: saving them would "
                "store more than the model holds; save a tensor that covers it"
            )
        favoured = [name for name in complete if preferred and name in preferred]
        kept = (favoured or complete)[0]
        removed[kept] = sorted(name for name in group if name != kept)
    return removed

"""tpack: zero-copy, checksummed model weights for numpy (and torch through ``torch.from_numpy``).

Reading::

    import tpack
    with tpack.open("model.tpack") as f:          # maps the file, checks every structural rule
        f.verify()                                # payload checksums (optional; one pass over the file)
        w = f.get("layers.0.weight")              # a read-only numpy view of the map: no copy
        meta = f.metadata()                       # {"arch": "llama", "layers": 32, ...}
        part = f.get_slice("embed.weight")[:100]  # part of a huge tensor; only its pages are read

Writing::

    tpack.save("out.tpack", {"w": np.zeros((4, 4), np.float32)}, metadata={"arch": "mlp"})

Arrays stay valid after the container is closed: each one keeps the memory map alive until it is garbage
collected. torch: ``torch.from_numpy(f.get(name))`` shares the same memory (torch warns that the array is not
writable; copy it with ``.clone()`` before writing to it). Details: ``docs/python.md``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Mapping, NamedTuple, Optional, Tuple, Union

import numpy as np

from . import _dtypes, _meta, _native, _quant
from ._errors import FormatError, IntegrityError, TpackError

__all__ = [
    "open", "open_bytes", "load", "load_bytes", "save", "save_bytes", "dequantize",
    "Container", "Entry", "TensorSlice", "Typed",
    "TpackError", "FormatError", "IntegrityError",
    "DEFAULT_ALIGNMENT",
]
__version__ = "0.1.0"

#: The alignment ``save`` gives payloads unless told otherwise (bytes; a power of two up to 65536).
DEFAULT_ALIGNMENT = 64
#: Bytes handed to the writer per call while saving: what saving costs in memory beyond the arrays.
_CHUNK = 4 << 20

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class Entry:
    """What the table says about one entry.

    Attributes:
        name: the entry's name.
        dtype: the tpack dtype name (``"F32"``, ``"Q4_K"``, …), or its integer code for a dtype of a newer
            format version.
        shape: the tpack shape, outermost dimension first (for a block dtype, in elements, not bytes).
        offset: the payload's byte offset from the container's start.
        nbytes: the payload's length in bytes.
        alignment: the payload's alignment in bytes.
        target: the load address, or ``None``.
        checksum: the payload's CRC-32 as stored in the trailer.
        position: the entry's position in the table.
        block: ``(block elements, block bytes)`` for a block-quantized or sub-byte dtype, else ``None``.
    """

    name: str
    dtype: Union[str, int]
    shape: Tuple[int, ...]
    offset: int
    nbytes: int
    alignment: int
    target: Optional[int]
    checksum: int
    position: int
    block: Optional[Tuple[int, int]]
    _packing: Optional[Tuple[str, int, int]] = field(default=None, repr=False, compare=False)


class Typed(NamedTuple):
    """An array saved as an explicit tpack dtype: ``tpack.save(path, {"w": tpack.Typed("Q4_K", blocks)})``.

    For a block dtype, ``array`` is uint8 rows of whole blocks (as ``Container.get`` returns them); for a plain
    dtype, any array of the same element width (a uint16 array as ``"BF16"``, say); for ``RAW`` and
    ``CONTAINER``, 1-D uint8. ``target``, if given, is the entry's load address (spec §4).
    """

    dtype: str
    array: np.ndarray
    target: Optional[int] = None


def _entry(info: tuple) -> Entry:
    position, name, code, dtype, shape, offset, nbytes, alignment, target, checksum, packing = info
    block = (packing[1], packing[2]) if packing is not None and packing[0] == "block" else None
    return Entry(name, dtype if dtype is not None else code, tuple(shape), offset, nbytes, alignment, target,
                 checksum, position, block, packing)


class TensorSlice:
    """Part of one tensor, read on indexing (``f.get_slice(name)[0:10, :]``), like safetensors' ``get_slice``.

    Basic indexing (ints, slices, ``...``) returns a read-only view of the map: only the pages of the selected
    elements are read. Advanced indexing returns a copy, as numpy does.
    """

    def __init__(self, container: "Container", entry: Entry) -> None:
        self._container = container
        self._entry = entry

    @property
    def shape(self) -> Tuple[int, ...]:
        """The shape of the array ``Container.get`` returns (for a block dtype: rows of block bytes)."""
        return self._container._view_spec(self._entry)[1]

    @property
    def dtype(self) -> Union[str, int]:
        """The tpack dtype name."""
        return self._entry.dtype

    def get_shape(self) -> List[int]:
        """The shape as a list (safetensors' spelling)."""
        return list(self.shape)

    def get_dtype(self) -> Union[str, int]:
        """The tpack dtype name (safetensors' spelling)."""
        return self._entry.dtype

    def __getitem__(self, index: Any) -> np.ndarray:
        return self._container.get(self._entry.name)[index]

    def __len__(self) -> int:
        shape = self.shape
        if not shape:
            raise TypeError("len() of a scalar tensor")
        return shape[0]

    def __repr__(self) -> str:
        return f"TensorSlice({self._entry.name!r}, dtype={self.dtype!r}, shape={self.shape})"


class Container:
    """An open tpack container: a file's memory map, or a private copy of some bytes.

    Made by :func:`tpack.open` (or :func:`Container.nested`); a context manager. Its structure was fully
    checked when it was opened; the payload checksums are checked by :meth:`verify`.

    It reads like a read-only mapping from entry names to arrays: ``len(f)``, ``name in f``, ``for name in f``,
    ``f[name]``, ``f.keys()``, ``f.items()``, in the file's table order.

    Closing (or leaving the ``with`` block) releases the container's own hold on the map; arrays already
    returned keep the map alive until the last of them is gone, so they never dangle. Every method of a closed
    container raises ``ValueError``.
    """

    def __init__(self, native: "_native.NativeContainer", path: Optional[str] = None) -> None:
        self._native = native
        self._path = path

    # -- lifetime --------------------------------------------------------------------------------------
    def close(self) -> None:
        """Releases the map (once no array uses it). Idempotent."""
        self._native.close()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._native.closed

    def __enter__(self) -> "Container":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        if self.closed:
            return "<tpack.Container closed>"
        where = f" {self._path!r}" if self._path is not None else ""
        return f"<tpack.Container{where}: {len(self)} entries, format {self.version[0]}.{self.version[1]}>"

    # -- the header ------------------------------------------------------------------------------------
    @property
    def version(self) -> Tuple[int, int]:
        """The file's format version ``(major, minor)``."""
        return self._native.version

    @property
    def compat_flags(self) -> int:
        """The header's compatible-feature flags."""
        return self._native.compat_flags

    @property
    def path(self) -> Optional[str]:
        """The file opened, or ``None`` for bytes and nested containers."""
        return self._path

    # -- names -----------------------------------------------------------------------------------------
    def keys(self) -> List[str]:
        """Entry names, in table order."""
        return self._native.names()

    def __len__(self) -> int:
        return len(self._native)

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._native.find(name) is not None

    def _position(self, name: str) -> int:
        if not isinstance(name, str):
            raise TypeError(f"entry names are str, not {type(name).__name__}")
        position = self._native.find(name)
        if position is None:
            raise KeyError(name)
        return position

    # -- entries ---------------------------------------------------------------------------------------
    def entry(self, name: str) -> Entry:
        """The table's description of entry ``name``: dtype, shape, offset, length, alignment, target, checksum.

        Raises:
            KeyError: no entry has this name.
        """
        return _entry(self._native.entry(self._position(name)))

    def entries(self) -> List[Entry]:
        """Every entry's :class:`Entry`, in table order."""
        return [_entry(self._native.entry(i)) for i in range(len(self))]

    def _view_spec(self, e: Entry):
        return _dtypes.view_spec(e.dtype if isinstance(e.dtype, str) else "", e.shape, e.nbytes, e._packing)

    def get(self, name: str) -> np.ndarray:
        """Entry ``name`` as a read-only numpy array viewing the payload in place (no copy).

        dtypes: F64, F32, F16, I64 … U8, BOOL and C64 as their numpy dtypes; BF16 and the FP8 types
        (F8E4M3, F8E5M2, F8E8M0, F8E4M3FNUZ, F8E5M2FNUZ) as ``ml_dtypes`` dtypes when ml_dtypes is installed,
        otherwise as the same-width unsigned integers (uint16, uint8) holding the same bits;
        block-quantized types (Q8_0, Q4_K, IQ…, MXFP4, …) and the sub-byte F4/F6 types as uint8 rows of whole
        blocks, shape ``(*shape[:-1], blocks × block_bytes)`` (dequantize with :func:`tpack.dequantize`);
        RAW and CONTAINER as 1-D uint8 (:meth:`nested` opens a CONTAINER); a dtype of a newer format version as
        its raw bytes.

        The array's ``base`` keeps the map alive, also after :meth:`close`. For torch: ``torch.from_numpy(a)``.

        Raises:
            KeyError: no entry has this name.
            ValueError: the container is closed.
        """
        return self._array(self.entry(name))

    __getitem__ = get

    def get_tensor(self, name: str) -> np.ndarray:
        """Alias of :meth:`get`, for code written for safetensors' ``safe_open``."""
        return self.get(name)

    def _array(self, e: Entry) -> np.ndarray:
        typestr, shape, final = self._view_spec(e)
        array = np.asarray(self._native.payload(e.position, typestr, list(shape)))
        return array if final is None else array.view(final)

    def items(self) -> Iterator[Tuple[str, np.ndarray]]:
        """``(name, array)`` for every entry, in table order."""
        for e in self.entries():
            yield e.name, self._array(e)

    def get_slice(self, name: str) -> TensorSlice:
        """A :class:`TensorSlice` of entry ``name``: index it to read part of a huge tensor."""
        return TensorSlice(self, self.entry(name))

    def prefetch(self, name: str) -> None:
        """Asks the kernel to start reading entry ``name``'s pages from disk (``madvise(MADV_WILLNEED)``), so
        that a later read of the array waits less; a no-op for a container in memory.

        Raises:
            KeyError: no entry has this name.
        """
        self._native.prefetch(self._position(name))

    def nested(self, name: str) -> "Container":
        """The container held by ``CONTAINER`` entry ``name``, sharing this one's map (validated with it).

        Raises:
            KeyError: no entry has this name.
            ValueError: the entry is not a ``CONTAINER``.
        """
        return Container(self._native.nested(self._position(name)))

    # -- metadata ----------------------------------------------------------------------------------------
    def metadata(self, typed: bool = False) -> Dict[str, Any]:
        """The metadata as a dict of native Python values, in key order.

        u64, i64 and the narrower integers → int; f64, f32 → float (an f32 signalling NaN comes out quiet);
        bool → bool; string → str; bytes → bytes; numeric, bool and string arrays → lists; ``array[]`` → a
        list of lists; a type of a newer format version → its raw bytes. With ``typed=True`` each value is a
        ``(type name, value)`` pair, and so is each item of an ``array[]``.
        """
        return {k: ((t, v) if typed else v) for k, t, v in self._native.metadata(typed)}

    # -- integrity ----------------------------------------------------------------------------------------
    def verify(self, progress: Optional[Callable[[int, int], Any]] = None) -> None:
        """Checks the zero padding and every payload checksum (R37, R50), nested containers included.

        Reads every payload once (the GIL is released while it does, unless ``progress`` is given).
        ``progress(done_bytes, total_bytes)`` is called every few megabytes and after each entry; an exception
        it raises stops the verification and propagates.

        Raises:
            IntegrityError: the first damaged entry, with ``rule``, ``entry`` and ``entry_name``.
        """
        self._native.verify(progress)


def open(path: PathLike) -> Container:  # noqa: A001 - the name users expect (safetensors' safe_open, io.open)
    """Opens the tpack file at ``path`` as a read-only memory map and checks its structure.

    Every rule of the spec is checked except the payload checksums and padding, which :meth:`Container.verify`
    checks; only the file's first pages (header, table, names, metadata) are read.

    Use it as a context manager::

        with tpack.open("model.tpack") as f:
            w = f.get("w")

    A mapped file must not shrink while it is open: reading a page past the new end kills the process with
    SIGBUS (as for every memory-mapped reader; see ``docs/python.md``).

    Raises:
        FormatError: the file breaks a structural rule (``.rule`` says which).
        OSError: the file cannot be opened or mapped (``FileNotFoundError``, …).
    """
    path = os.fspath(path)
    return Container(_native.open_file(path), path)


def load_bytes(data: bytes) -> Dict[str, np.ndarray]:
    """Every entry of the container in ``data`` as a read-only array, keyed by name in table order.

    The arrays view one private, aligned copy of ``data``. Raises :class:`FormatError` as :func:`open`.
    """
    c = Container(_native.open_bytes(bytes(data)))
    return dict(c.items())


def open_bytes(data: bytes) -> Container:
    """Like :func:`open`, for a container held in memory (over a private, aligned copy of ``data``)."""
    return Container(_native.open_bytes(bytes(data)))


def load(path: PathLike) -> Dict[str, np.ndarray]:
    """Every entry of the file as a read-only array viewing its map (no copy), keyed by name in table order.

    The file is closed on return; the arrays keep the map alive. Raises as :func:`open`.
    """
    with open(path) as f:
        return dict(f.items())


def _plan(tensors: Mapping[str, Any], alignment: int):
    decls, arrays = [], []
    for name, value in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"tensor names must be str, not {type(name).__name__}")
        target = None
        if isinstance(value, Typed):
            target = None if value.target is None else int(value.target)
            dtype, array = value.dtype, np.asarray(value.array)
            shape = _dtypes.logical_shape(dtype, array.shape, array.dtype.itemsize)
        else:
            array = np.asarray(value)
            if array.dtype.byteorder == ">":
                array = array.astype(array.dtype.newbyteorder("<"))
            dtype = _dtypes.from_numpy(array.dtype)
            shape = array.shape
        decls.append((name, dtype, [int(d) for d in shape], int(alignment), target))
        arrays.append(array)
    return decls, arrays


def _chunks(arrays: List[np.ndarray]) -> Iterator[Optional[bytes]]:
    for array in arrays:
        # One tensor at a time is made contiguous (a no-op for the usual contiguous array), then handed over
        # in bounded chunks: saving never holds a second copy of the model.
        flat = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        for start in range(0, flat.size, _CHUNK):
            yield flat[start:start + _CHUNK].tobytes()
        yield None


def _metadata(metadata: Optional[Mapping[str, Any]]):
    if metadata is None:
        return []
    out = []
    for key, value in metadata.items():
        if not isinstance(key, str):
            raise TypeError(f"metadata keys must be str, not {type(key).__name__}")
        out.append((key, _meta.typed(value)))
    return out


def save(path: PathLike, tensors: Mapping[str, Any], metadata: Optional[Mapping[str, Any]] = None,
         alignment: int = DEFAULT_ALIGNMENT) -> None:
    """Writes ``tensors`` (name → numpy array, or :class:`Typed`) and ``metadata`` to a tpack file at ``path``.

    Entries keep the dict's order. Arrays are streamed to the Rust writer in 4 MiB chunks, so memory stays at
    the arrays themselves plus one chunk; the file appears under ``path`` only once complete and synced
    (written to a temporary file beside it, then renamed), so a failure leaves any previous file intact.

    Metadata values: bool, int (u64, or i64 when negative), float (f64), str, bytes, numpy scalars and 1-D
    arrays (their exact width: ``np.uint32(7)`` is a u32), lists of one kind, lists of lists (``array[]``).

    Raises:
        TypeError: an array's dtype has no tpack dtype (complex128, strings, objects, …).
        FormatError: the container would break a rule (an empty or duplicate name, a bad alignment, …).
        OSError: the file cannot be written.
    """
    decls, arrays = _plan(tensors, alignment)
    _native.write_file(os.fspath(path), decls, _metadata(metadata), _chunks(arrays))


def save_bytes(tensors: Mapping[str, Any], metadata: Optional[Mapping[str, Any]] = None,
               alignment: int = DEFAULT_ALIGNMENT) -> bytes:
    """Like :func:`save`, returning the container's bytes (the same bytes ``save`` writes)."""
    decls, arrays = _plan(tensors, alignment)
    return _native.write_bytes(decls, _metadata(metadata), _chunks(arrays))


def dequantize(array: np.ndarray, dtype: str) -> np.ndarray:
    """Block-quantized data (uint8 rows of whole blocks, as :meth:`Container.get` returns) as float32.

    Supports Q8_0, Q4_0 and the K-quants Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K, following ggml's reference
    dequantizers; the result has shape ``(*array.shape[:-1], elements per row)``.

    Raises:
        KeyError: another dtype.
        ValueError: ``array`` is not uint8 rows of whole blocks.
    """
    if dtype not in _quant.DEQUANTIZERS:
        raise KeyError(f"cannot dequantize {dtype!r}; supported: {', '.join(_quant.DEQUANTIZERS)}")
    return _quant.dequantize(array, dtype)

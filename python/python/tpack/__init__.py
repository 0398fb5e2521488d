"""tpack: zero-copy, checksummed model weights for numpy, torch (``tpack.torch``) and JAX.

Reading::

    import tpack
    with tpack.open("model.tpack") as f:          # maps the file, checks every structural rule
        f.verify()                                # payload checksums (optional; one pass over the file)
        w = f.get("layers.0.weight")              # a read-only numpy view of the map: no copy
        meta = f.metadata()                       # {"arch": "llama", "layers": 32, ...}
        part = f.get_slice("embed.weight")[:100]  # part of a huge tensor; only its pages are read

Writing::

    tpack.save("out.tpack", {"w": np.zeros((4, 4), np.float32)}, metadata={"arch": "mlp"})

Signing and verifying (format 1.2)::

    tpack.save("out.tpack", tensors, sign_key="private.pem", counter=7, subject="acme.kws")
    with tpack.open("out.tpack", keys=["public.pem"], min_counter=7) as f:  # checks the signature
        w = f.get("w")                            # checks w's signed digest, the first time only

Arrays stay valid after the container is closed: each one keeps the memory map alive until it is garbage
collected. ``f.get(name, writable=True)`` is writable, over a private copy-on-write mapping of that payload.

Coming from safetensors: ``from tpack.numpy import save_file, load_file``, ``from tpack.torch import save_file,
load_file, save_model, load_model`` and ``tpack.safe_open(path, framework="np"/"pt"/"jax")`` take safetensors'
calls unchanged (the guide's "Migrating from safetensors" lists the
differences).

The full guide is installed with the package: ``importlib.resources.files("tpack") / "docs" / "python.md"``
(the repository's ``docs/python.md``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, NamedTuple, Optional, Tuple, Union

import numpy as np

from . import _dtypes, _errors, _meta, _native, _quant, _signing
import json as _json

from ._errors import ConvertError, FormatError, IntegrityError, SignatureError, TpackError
from ._meta import MetaValue
from ._signing import KeyLike, Signer, TrustedKey, generate_key, public_key_pem

__all__ = [
    "open", "open_bytes", "load", "load_bytes", "save", "save_bytes", "dequantize", "safe_open", "convert", "inspect",
    "generate_key", "public_key_pem",
    "Container", "Entry", "TensorSlice", "Typed", "MetaValue", "TrustedKey", "Signer",
    "TpackError", "FormatError", "IntegrityError", "SignatureError", "SafetensorError", "ConvertError",
    "DEFAULT_ALIGNMENT",
]
__version__ = "0.1.0"

#: The alignment ``save`` gives payloads unless told otherwise (bytes; a power of two up to 65536).
DEFAULT_ALIGNMENT = 64
#: Bytes handed to the writer per call while saving: what saving costs in memory beyond the arrays.
_CHUNK = 4 << 20

PathLike = Union[str, "os.PathLike[str]"]
#: What ``keys=`` takes: trusted keys, each a :class:`TrustedKey`, PEM text or the path of a PEM file.
Keys = Iterable[Union[TrustedKey, KeyLike]]


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


class _Layout(NamedTuple):
    """What reading an entry needs, all from the container's prefix: unlike :class:`Entry` it lacks the
    checksum, which lies in the trailer at the file's end (so ``get`` never touches the file's last page)."""

    position: int
    name: str
    dtype: Union[str, int]
    shape: Tuple[int, ...]
    offset: int
    nbytes: int
    alignment: int
    target: Optional[int]
    packing: Optional[Tuple[str, int, int]]


def _layout(info: tuple) -> _Layout:
    position, name, code, dtype, shape, offset, nbytes, alignment, target, packing = info
    return _Layout(position, name, dtype if dtype is not None else code, tuple(shape), offset, nbytes, alignment,
                   target, packing)


def _entry(layout: _Layout, checksum: int) -> Entry:
    packing = layout.packing
    block = (packing[1], packing[2]) if packing is not None and packing[0] == "block" else None
    return Entry(layout.name, layout.dtype, layout.shape, layout.offset, layout.nbytes, layout.alignment,
                 layout.target, checksum, layout.position, block, packing)


class TensorSlice:
    """Part of one tensor, read on indexing (``f.get_slice(name)[0:10, :]``), like safetensors' ``get_slice``.

    Basic indexing (ints, slices, ``...``) returns a read-only view of the map: only the pages of the selected
    elements are read. Advanced indexing returns a copy, as numpy does.
    """

    def __init__(self, container: "Container", entry: "_Layout") -> None:
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

    Made by :func:`tpack.open` or ``tpack.Container(path, ...)``, which is the same (or by :func:`open_bytes`,
    :meth:`Container.nested`); a context manager. Its structure was fully
    checked when it was opened; the payload checksums are checked by :meth:`verify`. Opened with a policy
    (``keys=``, ``require_signature=``, ``min_counter=``, ``subject=``), its signature was checked too, and each
    entry is checked against its signed digest the first time it is read (:attr:`signer` says who signed it).

    It reads like a read-only mapping from entry names to arrays: ``len(f)``, ``name in f``, ``for name in f``,
    ``f[name]``, ``f.keys()``, ``f.items()``, in the file's table order.

    Closing (or leaving the ``with`` block) releases the container's own hold on the map; arrays already
    returned keep the map alive until the last of them is gone, so they never dangle. Every method of a closed
    container raises ``ValueError``.
    """

    def __init__(self, path: PathLike, *, keys: Optional[Keys] = None, require_signature: Optional[bool] = None,
                 min_counter: Optional[int] = None, subject: Optional[str] = None) -> None:
        """``tpack.Container(path, ...)`` is :func:`tpack.open` (``path``, policy and errors the same)."""
        path = os.fspath(path)
        self._native = _native.open_file(path)
        self._path = path
        _authenticated(self, keys, require_signature, min_counter, subject)

    @classmethod
    def _wrap(cls, native: "_native.NativeContainer", path: Optional[str] = None) -> "Container":
        """A container over ``native``, already open (bytes, nested containers)."""
        c = cls.__new__(cls)
        c._native = native
        c._path = path
        return c

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
    def signer(self) -> Optional[Signer]:
        """Who signed the container (:class:`Signer`: algorithm, key id, counter, subject, …), or ``None`` for
        an unsigned one. ``signer.authenticated`` is true only when it was opened with ``keys=`` and the
        signature verified; otherwise the fields are the file's unchecked claims."""
        return _signing.signer(self._native)

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

        The checksum is read from the trailer, at the file's end: of all the reading methods, only ``entry``,
        ``entries`` and ``verify`` touch the file's last page.

        Raises:
            KeyError: no entry has this name.
        """
        position = self._position(name)
        return _entry(_layout(self._native.entry(position)), self._native.checksum(position))

    def entries(self) -> List[Entry]:
        """Every entry's :class:`Entry`, in table order (reading the trailer, as :meth:`entry` does)."""
        return [_entry(_layout(self._native.entry(i)), self._native.checksum(i)) for i in range(len(self))]

    def _layout(self, name: str) -> _Layout:
        return _layout(self._native.entry(self._position(name)))

    def _view_spec(self, e: _Layout):
        return _dtypes.view_spec(e.dtype if isinstance(e.dtype, str) else "", e.shape, e.nbytes, e.packing)

    def get(self, name: str, *, writable: bool = False) -> np.ndarray:
        """Entry ``name`` as a read-only numpy array viewing the payload in place (no copy).

        With ``writable=True``, a writable array over a private copy-on-write mapping of this payload alone
        (``MAP_PRIVATE``): nothing is copied up front, a page is copied into process memory when first written,
        writes never reach the file, and each call gives an array of its own (for a container in memory, a
        private copy). Reading it has the shared map's SIGBUS hazard (see :func:`open`).

        dtypes: F64, F32, F16, I64 … U8, BOOL and C64 as their numpy dtypes; BF16 and the FP8 types
        (F8E4M3, F8E5M2, F8E8M0, F8E4M3FNUZ, F8E5M2FNUZ) as ``ml_dtypes`` dtypes when ml_dtypes is installed,
        otherwise as the same-width unsigned integers (uint16, uint8) holding the same bits;
        block-quantized types (Q8_0, Q4_K, IQ…, MXFP4, …) and the sub-byte F4/F6 types as uint8 rows of whole
        blocks, shape ``(*shape[:-1], blocks × block_bytes)`` (dequantize with :func:`tpack.dequantize`);
        RAW, CONTAINER and SIGNATURE as 1-D uint8 (:meth:`nested` opens a CONTAINER); a dtype of a newer format
        version as its raw bytes.

        The array's ``base`` keeps the map alive, also after :meth:`close`. It exports DLPack:
        ``torch.from_dlpack(a)`` shares the read-only map (torch cannot mark it read-only: a write kills the
        process with SIGSEGV, so take ``writable=True`` for a tensor you will write to).

        In a container opened with a policy (``keys=``…), the entry's payload is checked the first time it is
        read, here or by any other method: against its signed digest (SHA-256), or its CRC if the container is
        unsigned and the policy allowed that. Later reads cost nothing.

        Raises:
            KeyError: no entry has this name.
            ValueError: the container is closed.
            SignatureError: (opened with a policy) the payload is not the one that was signed (R64).
            IntegrityError: (opened with a policy, unsigned container) the payload's checksum is wrong (R50).
        """
        return self._array(self._layout(name), writable)

    def __getitem__(self, name: str) -> np.ndarray:
        return self.get(name)

    def get_tensor(self, name: str, *, writable: bool = False) -> np.ndarray:
        """Alias of :meth:`get`, for code written for safetensors' ``safe_open``."""
        return self.get(name, writable=writable)

    def _array(self, e: _Layout, writable: bool = False) -> np.ndarray:
        typestr, shape, final = self._view_spec(e)
        array = self._raw(e, typestr, shape, writable)
        return array if final is None else array.view(final)

    def _read_all(self) -> Dict[str, np.ndarray]:
        """Every entry read into new, writable arrays and checked (:func:`load`); only for a container opened by
        ``_native.open_file_for_load``."""
        layouts = [_layout(self._native.entry(i)) for i in range(len(self))]
        out = {}
        for e in layouts:
            typestr, shape, final = self._view_spec(e)
            # Each array owns its memory (``owndata``, as safetensors' arrays do); the reader fills its bytes.
            out[e.name] = np.empty(shape, np.dtype(typestr) if final is None else final)
        self._native.read_into([a.reshape(-1).view(np.uint8) for a in out.values()])
        return out

    def _raw(self, e: _Layout, typestr: str, shape: Tuple[int, ...], writable: bool) -> np.ndarray:
        """The payload as ``shape`` elements of ``typestr``: the read-only map, or a private writable mapping."""
        if writable:
            private = self._native.private_payload(e.position, typestr, list(shape))
            if private is not None:
                return np.asarray(private)
            return np.array(self._native.payload(e.position, typestr, list(shape)))  # in memory: a copy
        return np.asarray(self._native.payload(e.position, typestr, list(shape)))

    def _bits(self, name: str, writable: bool) -> Tuple[np.ndarray, Union[str, int]]:
        """Entry ``name`` as its plain numpy view (BF16 and FP8 as same-width unsigned integers, whether
        ml_dtypes is installed or not) and its tpack dtype: what the framework bridges convert."""
        e = self._layout(name)
        typestr, shape, _ = self._view_spec(e)
        return self._raw(e, typestr, shape, writable), e.dtype

    def items(self) -> Iterator[Tuple[str, np.ndarray]]:
        """``(name, array)`` for every entry, in table order."""
        for position in range(len(self)):
            e = _layout(self._native.entry(position))
            yield e.name, self._array(e)

    def get_slice(self, name: str) -> TensorSlice:
        """A :class:`TensorSlice` of entry ``name``: index it to read part of a huge tensor."""
        return TensorSlice(self, self._layout(name))

    def prefetch(self, name: str) -> None:
        """Asks the kernel to start reading entry ``name``'s pages from disk (``madvise(MADV_WILLNEED)``), so
        that a later read of the array waits less; a no-op for a container in memory.

        Raises:
            KeyError: no entry has this name.
        """
        self._native.prefetch(self._position(name))

    def nested(self, name: str, *, keys: Optional[Keys] = None, require_signature: Optional[bool] = None,
               min_counter: Optional[int] = None, subject: Optional[str] = None) -> "Container":
        """The container held by ``CONTAINER`` entry ``name``, sharing this one's map (validated with it).

        If this container was opened with a policy, the entry is checked first like any payload read. The
        nested container's own signature, if any, is checked only with a policy of its own, given as to
        :func:`tpack.open`.

        Raises:
            KeyError: no entry has this name.
            ValueError: the entry is not a ``CONTAINER``.
            SignatureError: as :func:`tpack.open` for the nested container's policy; or (this container
                opened with a policy) the entry is not the one that was signed (R64).
        """
        inner = Container._wrap(self._native.nested(self._position(name)))
        return _authenticated(inner, keys, require_signature, min_counter, subject)

    # -- metadata ----------------------------------------------------------------------------------------
    def metadata(self, typed: bool = False) -> Dict[str, Any]:
        """The metadata as a dict of native Python values, in key order.

        u64, i64 and the narrower integers → int; f64, f32 → float (an f32 signalling NaN comes out quiet);
        bool → bool; string → str; bytes → bytes; numeric, bool and string arrays → lists; ``array[]`` → a
        list of lists; a type of a newer format version → its raw bytes. With ``typed=True`` each value is a
        :class:`MetaValue` ``(type, value)`` pair, and so is each item of an ``array[]``: saving that dict
        (``tpack.save(path, tensors, metadata=f.metadata(typed=True))``) writes every value with its type.
        """
        if not typed:
            return {k: v for k, _, v in self._native.metadata(False)}
        return {k: _meta.meta_value(t, v) for k, t, v in self._native.metadata(True)}

    # -- integrity ----------------------------------------------------------------------------------------
    def verify(self, progress: Optional[Callable[[int, int], Any]] = None) -> None:
        """Checks the zero padding and every payload checksum (R37, R50), nested containers included; in a
        signed container opened with a policy (``keys=``…), each entry's signed digest too (R64), in the
        spec's order (padding, digest, checksum) entry by entry. Afterwards no entry is checked again when read.

        Reads every payload (the GIL is released while it does, unless ``progress`` is given).
        ``progress(done_bytes, total_bytes)`` is called every few megabytes and after each entry; an exception
        it raises stops the verification and propagates.

        Without a policy, a signed container's digests and signature are not checked: anyone who changes a
        payload can recompute its CRC, so only a policy tells a forged container from a genuine one.

        Raises:
            IntegrityError: the first damaged entry, with ``rule``, ``entry`` and ``entry_name``.
            SignatureError: the first entry whose payload is not the one that was signed (R64), likewise.
        """
        self._native.verify(progress)


def _authenticated(c: Container, keys: Optional[Keys], require_signature: Optional[bool],
                   min_counter: Optional[int], subject: Optional[str]) -> Container:
    """``c`` once the policy the arguments make (if any) accepts it; closed if it does not."""
    try:
        _signing.authenticate(c._native, keys, require_signature, min_counter, subject)
    except BaseException:
        c.close()
        raise
    return c


def open(path: PathLike, *, keys: Optional[Keys] = None,  # noqa: A001 - the name users expect (safe_open, io.open)
         require_signature: Optional[bool] = None, min_counter: Optional[int] = None,
         subject: Optional[str] = None) -> Container:
    """Opens the tpack file at ``path`` as a read-only memory map and checks its structure.

    Every rule of the spec is checked except the payload checksums and padding, which :meth:`Container.verify`
    checks; only the file's first pages (header, table, names, metadata) are read.

    With a policy — any of ``keys``, ``require_signature``, ``min_counter``, ``subject`` given — the signature
    is checked too (spec §14, rules R58–R63 in that order), which hashes only the prefix and the signed digests:
    a signature is required unless ``require_signature=False``; it must be by one of ``keys`` (each a
    :class:`TrustedKey`, PEM text or the path of a PEM file; a private key's PEM gives its public key); its
    counter must be at least ``min_counter``; it must declare ``subject`` if given. Then each entry is checked
    against its signed digest (R64) the first time it is read, and never again; :meth:`Container.verify`
    checks them all. An unsigned file that ``require_signature=False`` lets through has its entries checked
    against their CRCs instead.

    Use it as a context manager::

        with tpack.open("model.tpack") as f:
            w = f.get("w")

    ``tpack.Container(path, ...)`` takes the same arguments and does the same.

    A mapped file must not shrink while it is open: reading a page past the new end kills the process with
    SIGBUS (as for every memory-mapped reader). Opening, ``get`` and ``metadata`` read only the first pages;
    reading an array's values, ``verify``, ``entry`` and ``entries`` (the checksums, in the last page) read
    further (the guide, ``tpack/docs/python.md``, says how to avoid it).

    Raises:
        FormatError: the file breaks a structural rule (``.rule`` says which).
        SignatureError: (with a policy) the first of R58 (not signed), R59 (no trusted key signed it), R60
            (another algorithm), R61 (another subject), R62 (a counter below ``min_counter``), R63 (a bad
            signature) that applies.
        OSError: the file cannot be opened or mapped (``FileNotFoundError``, …).
        ValueError: a key is not an Ed25519 or P-256 key.
    """
    return Container(path, keys=keys, require_signature=require_signature, min_counter=min_counter, subject=subject)


def load_bytes(data: bytes, *, keys: Optional[Keys] = None, require_signature: Optional[bool] = None,
               min_counter: Optional[int] = None, subject: Optional[str] = None) -> Dict[str, np.ndarray]:
    """Every entry of the container in ``data`` as a read-only array, keyed by name in table order.

    The arrays view one private, aligned copy of ``data``. With a policy (as :func:`open`), the signature and
    every entry's signed digest are checked. Raises as :func:`open`.
    """
    c = open_bytes(data, keys=keys, require_signature=require_signature, min_counter=min_counter,
                   subject=subject)
    return dict(c.items())


def open_bytes(data: bytes, *, keys: Optional[Keys] = None, require_signature: Optional[bool] = None,
               min_counter: Optional[int] = None, subject: Optional[str] = None) -> Container:
    """Like :func:`open`, for a container held in memory (over a private, aligned copy of ``data``)."""
    c = Container._wrap(_native.open_bytes(bytes(data)))
    return _authenticated(c, keys, require_signature, min_counter, subject)


def load(path: PathLike, *, keys: Optional[Keys] = None, require_signature: Optional[bool] = None,
         min_counter: Optional[int] = None, subject: Optional[str] = None) -> Dict[str, np.ndarray]:
    """Every entry of the file as a writable array in process memory, keyed by name in table order, with
    every payload checked on the way in (padding R37, checksum R50, nested containers; with a policy, as
    :func:`open`, the signature and each entry's signed digest R64 too).

    Reads at disk speed: ``pread`` of up to 8 MiB straight into each array's own buffer (one copy, from the page
    cache), on several threads with the GIL released, each block CRC-32'd as it lands; memory is the arrays
    plus a few kilobytes. The file is not mapped for the payloads, so a file that shrinks meanwhile gives an
    ``OSError``, never SIGBUS. The file is closed on return; the arrays are the caller's (writing to them never
    reaches the file). For zero-copy read-only views of the map instead, ``tpack.open(path)`` and ``get``.

    Raises:
        FormatError, SignatureError, OSError: as :func:`open`.
        IntegrityError: the first damaged entry in table order (``rule`` R37 or R50, ``entry_name``).
        SignatureError: (with a policy) the first entry whose payload is not the one that was signed (R64).
        OSError: a read failed, or the file ended early (it was truncated after it was opened).
    """
    path = os.fspath(path)
    c = _authenticated(Container._wrap(_native.open_file_for_load(path), path), keys, require_signature,
                       min_counter, subject)
    with c:
        return c._read_all()


def _plan(tensors: Mapping[str, Any], alignment: int):
    if not isinstance(tensors, Mapping):
        raise TypeError(f"tensors must be a mapping of names to arrays, not {type(tensors).__name__}")
    decls, arrays = [], []
    for name, value in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"tensor names must be str, not {type(name).__name__} ({name!r})")
        try:
            decl, array = _declare(name, value, alignment)
        except (TypeError, ValueError, OverflowError) as e:
            raise _errors._naming(e, "tensor", name) from None
        decls.append(decl)
        arrays.append(array)
    return decls, arrays


def _declare(name: str, value: Any, alignment: int):
    """The writer's declaration of tensor ``name`` and the array whose bytes it stores."""
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
    return (name, dtype, [int(d) for d in shape], int(alignment), target), array


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
    if not isinstance(metadata, Mapping):
        raise TypeError(f"metadata must be a mapping of keys to values, not {type(metadata).__name__}")
    out = []
    for key, value in metadata.items():
        if not isinstance(key, str):
            raise TypeError(f"metadata keys must be str, not {type(key).__name__} ({key!r})")
        try:
            out.append((key, _meta.typed(value)))
        except (TypeError, ValueError, OverflowError) as e:
            raise _errors._naming(e, "metadata key", key) from None
    return out


def _check_order(path: Any, tensors: Any) -> None:
    """Refuses safetensors' argument order (``save_file(tensors, filename)``) with a message that says so."""
    if isinstance(path, Mapping) and isinstance(tensors, (str, bytes, os.PathLike)):
        raise TypeError(
            "tpack.save takes the path first: tpack.save(path, tensors, metadata=None); it was given the "
            "tensors first, as safetensors' save_file(tensors, filename) takes them"
        )


def save(path: PathLike, tensors: Mapping[str, Any], metadata: Optional[Mapping[str, Any]] = None,
         alignment: int = DEFAULT_ALIGNMENT, *, sign_key: Optional[KeyLike] = None, counter: Optional[int] = None,
         subject: Optional[str] = None, embed_public_key: bool = False) -> None:
    """Writes ``tensors`` (name → numpy array, or :class:`Typed`) and ``metadata`` to a tpack file at ``path``.

    Entries keep the dict's order. Arrays are streamed to the Rust writer in 4 MiB chunks, so memory stays at
    the arrays themselves plus one chunk; the file appears under ``path`` only once complete and synced
    (written to a temporary file beside it, then renamed), so a failure leaves any previous file intact.

    Metadata values: bool, int (u64, or i64 when negative), float (f64), str, bytes, numpy scalars and 1-D
    arrays (their exact width: ``np.uint32(7)`` is a u32), lists of one kind, lists of lists (``array[]``).

    Signing (format 1.2, spec §14): ``sign_key`` is a private key, PKCS#8 PEM text (``str`` or ``bytes``) or
    the path of a PEM file, Ed25519 or P-256, as ``openssl genpkey`` or :func:`generate_key` writes it. The
    payloads are hashed as they stream; the signature entry is written last. ``counter`` is the security
    counter (default 0) a verifier compares with its floor, ``subject`` the model line (1 to 255 bytes),
    ``embed_public_key`` stores the public key too, for verifiers that keep only key ids. The same input and key
    always give the same bytes.

    Metadata read with ``f.metadata(typed=True)`` (:class:`MetaValue` pairs) is written with its types as read.

    Every error about one tensor or metadata value names it (``tensor 'w': …``, ``metadata key 'arch': …``;
    a :class:`FormatError` about a tensor also has it in ``entry_name``).

    Raises:
        TypeError: the arguments are in safetensors' order (``save(tensors, path)``); ``tensors`` is not a
            mapping; an array's dtype has no tpack dtype (complex128, strings, objects, …); a metadata value
            has no tpack type.
        FormatError: the container would break a rule (an empty or duplicate name, a bad alignment, a subject
            of the wrong length: R56, a ``tpack.sig.`` metadata key: R54, …).
        ValueError: ``sign_key`` is not an Ed25519 or P-256 private key; signing options without ``sign_key``.
        OSError: the file (or the key's file) cannot be read or written.
    """
    _check_order(path, tensors)
    sign = _signing.sign_request(sign_key, counter, subject, embed_public_key)
    decls, arrays = _plan(tensors, alignment)
    _native.write_file(os.fspath(path), decls, _metadata(metadata), _chunks(arrays), sign)


def save_bytes(tensors: Mapping[str, Any], metadata: Optional[Mapping[str, Any]] = None,
               alignment: int = DEFAULT_ALIGNMENT, *, sign_key: Optional[KeyLike] = None,
               counter: Optional[int] = None, subject: Optional[str] = None,
               embed_public_key: bool = False) -> bytes:
    """Like :func:`save`, returning the container's bytes (the same bytes ``save`` writes)."""
    sign = _signing.sign_request(sign_key, counter, subject, embed_public_key)
    decls, arrays = _plan(tensors, alignment)
    return _native.write_bytes(decls, _metadata(metadata), _chunks(arrays), sign)


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


def convert(src: PathLike, dst: PathLike, *, to: Optional[str] = None, force: bool = False,
            max_shard_size: Optional[int] = None) -> str:
    """Convert a model file, as ``tpack convert SRC DST`` does, and return its report.

    ``src`` may be a PyTorch checkpoint (``torch.save`` zip or legacy file, TorchScript, ``pytorch_model.bin``),
    a NumPy ``.npy`` or ``.npz``, an ONNX model, a TensorFlow checkpoint or SavedModel (by its directory, prefix
    or ``.index`` file), a GGUF or safetensors file, a Hugging Face shard set (its index or directory), or a
    tpack container. Nothing of the input's code runs: pickles are read by a restricted machine that builds only
    tensors and plain values, and refuses anything else by name. ``dst``'s extension, or ``to`` (``"tpack"``,
    ``"safetensors"``, ``"gguf"``, ``"npz"``, ``"onnx"``), names the output format; ``max_shard_size`` (bytes)
    shards a safetensors or GGUF output. The output is written to a temporary file and renamed into place only
    when complete; the GIL is released meanwhile.

    Raises:
        ConvertError: the input is not valid in its format or holds what the output cannot store (a
            ``ValueError``).
        FormatError: a tpack input is invalid or corrupt.
        OSError: a file cannot be read or written, or ``dst`` exists and ``force`` is false.
    """
    to_name = None if to is None else str(to)
    return _native.convert(os.fspath(src), os.fspath(dst), to_name, bool(force), max_shard_size)


def inspect(path: PathLike) -> Dict[str, Any]:
    """What a model file holds, read as ``tpack convert`` reads it: the document of ``tpack inspect --json``
    (schema ``tpack-inspect/3``, ``docs/cli.md``): ``format``, ``entries`` (each ``name``, ``dtype``, ``shape``,
    ...), ``totals`` and ``metadata``. ``path`` is any input :func:`convert` takes.

    Raises:
        ConvertError, FormatError, OSError: as :func:`convert`.
    """
    return _json.loads(_native.inspect_json(os.fspath(path)))


# The safetensors drop-in reader is built on Container, so it is imported once everything above exists.
from ._safe_open import SafetensorError, safe_open  # noqa: E402

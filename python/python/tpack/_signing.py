"""Signed containers (format 1.2, spec §14): keys, trusted keys, the signer of a container, policies.

The extension reads and writes the PEM files and does every check; this module only turns what users pass
(PEM text, paths, :class:`TrustedKey`) into what it takes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable, List, NamedTuple, Optional, Tuple, Union

from . import _native

__all__ = ["TrustedKey", "Signer", "generate_key", "public_key_pem"]

#: A key as users pass it: PEM text (``str`` or ``bytes``), or the path of a PEM file.
KeyLike = Union[str, bytes, "os.PathLike[str]"]

_PEM_START = "-----BEGIN "
_ALGORITHM_CODES = {"ed25519": 1, "p256": 2}
_KEY_ID_LEN = 32


def read_pem(key: KeyLike) -> str:
    """The PEM text of ``key``: ``key`` itself when it is PEM text, else the file it names."""
    if isinstance(key, bytes) and _PEM_START.encode() in key:
        return key.decode("ascii")
    if isinstance(key, str) and _PEM_START in key:
        return key
    if isinstance(key, (str, bytes, os.PathLike)):
        with open(key, "rb") as f:
            return f.read().decode("ascii")
    raise TypeError(f"a key is PEM text or the path of a PEM file, not {type(key).__name__}")


def generate_key(algorithm: str = "ed25519") -> str:
    """A new private key as PKCS#8 PEM text (what ``openssl genpkey`` writes), from the OS's random generator.

    ``algorithm``: ``"ed25519"`` (the one every verifier implements) or ``"p256"`` (ECDSA P-256 with SHA-256).
    Keep the text secret; :func:`public_key_pem` gives the public key to hand to verifiers.
    """
    return _native.generate_key(algorithm)


def public_key_pem(key: KeyLike) -> str:
    """The public key of ``key`` (a private or public key, as PEM text or a path) as SubjectPublicKeyInfo PEM
    text, what ``openssl pkey -pubout`` writes.

    Raises:
        ValueError: ``key`` is not an Ed25519 or P-256 key.
    """
    return _native.public_key_from_pem(read_pem(key))[3]


def _algorithm_name(code: int) -> str:
    name = _native.algorithm_name(code)
    if name is None:
        raise ValueError(f"unknown signature algorithm code {code}")
    return name


@dataclass(frozen=True)
class TrustedKey:
    """A key a verifier trusts. Usually made from a PEM file (:meth:`from_pem`) or a raw public key
    (:meth:`from_public_key`), which compute its id; :func:`tpack.open` also takes the PEM text or path directly.
    The constructor takes the parts as given, as a device stores them: a raw key that is not the one its id
    names, or not of its algorithm, is not refused here; a container it would verify is refused on open.

    Attributes:
        algorithm: ``"ed25519"`` or ``"p256"``; a container naming this key with another algorithm is refused
            (R60).
        key_id: the key id as hex: SHA-256 of the DER SubjectPublicKeyInfo (what ``openssl pkey -pubin
            -outform DER | sha256sum`` prints).
        public_key: the raw public key (32 bytes Ed25519, 65 bytes uncompressed SEC1 P-256), or ``None`` to
            trust the key by its id only: a container must then carry its public key (``embed_public_key``).
        subject: the subject every container signed by this key must declare (R61), or ``None``.
    """

    algorithm: str
    key_id: str
    public_key: Optional[bytes] = None
    subject: Optional[str] = None

    def __post_init__(self) -> None:
        if self.algorithm not in _ALGORITHM_CODES:
            raise ValueError(f"unknown signature algorithm {self.algorithm!r}; known: 'ed25519', 'p256'")
        if len(bytes.fromhex(self.key_id)) != _KEY_ID_LEN:
            raise ValueError("a key id is 32 bytes (64 hex digits)")
        if self.public_key is not None and not isinstance(self.public_key, bytes):
            raise TypeError(f"a raw public key is bytes, not {type(self.public_key).__name__}")

    @classmethod
    def from_pem(cls, key: KeyLike, subject: Optional[str] = None) -> "TrustedKey":
        """The public key of ``key``: a public key PEM (``-----BEGIN PUBLIC KEY-----``) or a private key's, as
        text or the path of a file.

        Raises:
            ValueError: ``key`` is not an Ed25519 or P-256 key.
        """
        code, raw, key_id, _ = _native.public_key_from_pem(read_pem(key))
        return cls(_algorithm_name(code), key_id.hex(), raw, subject)

    @classmethod
    def from_public_key(cls, algorithm: str, public_key: bytes, subject: Optional[str] = None) -> "TrustedKey":
        """The raw public key ``public_key`` of ``algorithm`` (32 bytes Ed25519, 65 bytes uncompressed SEC1
        P-256), checked, its id computed.

        Raises:
            ValueError: not a valid key of ``algorithm``.
        """
        if algorithm not in _ALGORITHM_CODES:
            raise ValueError(f"unknown signature algorithm {algorithm!r}; known: 'ed25519', 'p256'")
        _, raw, key_id, _ = _native.public_key_from_raw(_ALGORITHM_CODES[algorithm], bytes(public_key))
        return cls(algorithm, key_id.hex(), raw, subject)

    def _declaration(self) -> Tuple[int, Optional[bytes], bytes, Optional[str]]:
        return _ALGORITHM_CODES[self.algorithm], self.public_key, bytes.fromhex(self.key_id), self.subject


def trusted_keys(keys: Iterable[Union[TrustedKey, KeyLike]]) -> List[TrustedKey]:
    """``keys`` as :class:`TrustedKey`: each one a :class:`TrustedKey`, PEM text or a path."""
    if isinstance(keys, (str, bytes, os.PathLike, TrustedKey)):
        keys = [keys]  # one key where a list was expected: accepted, rather than iterated by character
    return [k if isinstance(k, TrustedKey) else TrustedKey.from_pem(k) for k in keys]


class Signer(NamedTuple):
    """Who signed a container, from its prefix (``Container.signer``).

    Attributes:
        algorithm: ``"ed25519"``, ``"p256"``, or the code of an algorithm of a newer format version.
        key_id: the signing key's id, as hex.
        counter: the security counter.
        subject: the model line the signer named, or ``None``.
        public_key: the raw public key, when the container carries it.
        authenticated: whether the signature was checked against trusted keys (the container was opened with
            ``keys=``); otherwise every field is only the file's claim.
    """

    algorithm: Union[str, int]
    key_id: str
    counter: int
    subject: Optional[str]
    public_key: Optional[bytes]
    authenticated: bool


def signer(native: "_native.NativeContainer") -> Optional[Signer]:
    """The :class:`Signer` of an open container, or ``None`` when it is not signed."""
    attributes = native.signer
    if attributes is None:
        return None
    code, key_id, counter, subject, public_key = attributes
    name = _native.algorithm_name(code)
    return Signer(name if name is not None else code, key_id.hex(), counter, subject, public_key,
                  native.authenticated)


def authenticate(native: "_native.NativeContainer", keys, require_signature: Optional[bool],
                 min_counter: Optional[int], subject: Optional[str]) -> None:
    """Applies the policy the arguments make, if any (one of them is not ``None``): a signature required unless
    ``require_signature=False``, by one of ``keys``, a counter of at least ``min_counter``, ``subject``."""
    if keys is None and require_signature is None and min_counter is None and subject is None:
        return
    declared = [k._declaration() for k in trusted_keys(keys if keys is not None else [])]
    required = True if require_signature is None else bool(require_signature)
    native.authenticate(declared, required, 0 if min_counter is None else int(min_counter), subject)


def sign_request(sign_key: Optional[KeyLike], counter: Optional[int], subject: Optional[str],
                 embed_public_key: bool) -> Optional[Tuple[str, int, Optional[str], bool]]:
    """What the writer takes to sign, or ``None`` without ``sign_key``."""
    if sign_key is None:
        if counter is not None or subject is not None or embed_public_key:
            raise ValueError("counter, subject and embed_public_key sign a container: pass sign_key too")
        return None
    return read_pem(sign_key), 0 if counter is None else int(counter), subject, bool(embed_public_key)

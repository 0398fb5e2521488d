"""Exceptions of the tpack package."""

from __future__ import annotations

from typing import Optional

__all__ = ["TpackError", "FormatError", "IntegrityError", "SignatureError", "ConvertError"]


class TpackError(Exception):
    """A container breaks a rule of the tpack spec (``spec/FORMAT.md`` §12).

    Attributes (each ``None`` when the rule's error does not carry it):
        rule: the rule's id, ``"R1"`` … ``"R64"``.
        rule_name: its short name, ``"LengthMismatch"``.
        entry: the table position of the entry involved.
        entry_name: that entry's name when the container's names are valid.
        record: the metadata record (R40–R49), or the block geometry record (R52), by position.
        position: the position in the name index (R19, R20).
        offset: a byte offset from the start of the container that breaks the rule (R7, R30, R37, R51).
        section: the section's name (R10–R12): ``"table"``, ``"index"``, ``"names"``, ``"metadata"``,
            ``"payloads"`` or ``"trailer"``.
        value: the one number the rule is about: a length, a version, flags, a dtype or type code, a rank, a
            dimension, an alignment (R1, R3–R6, R8, R9, R17, R22–R24, R28, R29, R46, R53); the signed
            attribute at fault (R56: 0 alg, 1 key, 2 counter, 3 subject, 4 pubkey, 5 another ``tpack.sig.``
            key), the expected length (R57), the container's algorithm code (R60) or signed counter (R62).
        stored: the stored checksum (R13, R14, R50).
        computed: the checksum computed from the bytes (R13, R14, R50).
        depth: for an error found inside a nested container, how deep that container is (1 for one the
            container holds directly): R37 and R50 from ``verify()`` (``entry`` is then the outer entry that
            holds it, and the message gives the nested container's own entry or offset), and R39 (the depth of
            the nested container that breaks ``inner_rule``).
        outer_entry: with ``depth``, the outermost container's entry that holds the nested one (for R39 the
            same as ``entry``).
        inner_rule: for R39, the id of the rule the nested container breaks.
    """

    record: Optional[int]
    position: Optional[int]
    offset: Optional[int]
    section: Optional[str]
    value: Optional[int]
    stored: Optional[int]
    computed: Optional[int]
    depth: Optional[int]
    outer_entry: Optional[int]

    def __init__(
        self,
        message: str,
        rule: Optional[str] = None,
        rule_name: Optional[str] = None,
        entry: Optional[int] = None,
        entry_name: Optional[str] = None,
        inner_rule: Optional[str] = None,
        **context: object,
    ) -> None:
        """``context`` takes the other attributes by name (``record=3``); an unknown name is a TypeError."""
        unknown = set(context) - set(_CONTEXT_ONLY)
        if unknown:
            raise TypeError(f"unknown error context {sorted(unknown)}")
        super().__init__(message)
        self.rule = rule
        self.rule_name = rule_name
        self.entry = entry
        self.entry_name = entry_name
        self.inner_rule = inner_rule
        for name in _CONTEXT_ONLY:
            setattr(self, name, context.get(name))

    def __reduce__(self):  # keeps the attributes through pickling (multiprocessing)
        args = (str(self), self.rule, self.rule_name, self.entry, self.entry_name, self.inner_rule)
        return (_rebuild, (type(self), args, {name: getattr(self, name) for name in _CONTEXT_ONLY}))


# The context attributes passed by name (the others are positional, as in the first release).
_CONTEXT_ONLY = ("record", "position", "offset", "section", "value", "stored", "computed", "depth", "outer_entry")


def _rebuild(cls, args, context):
    return cls(*args, **context)


class FormatError(TpackError):
    """A structural rule is broken: found when a container is opened (or refused when one is written)."""


class IntegrityError(TpackError):
    """Padding or a payload checksum is wrong (R37, R50): found by ``verify()``, or when an entry of a container
    opened with a policy (``keys=``…) is first read."""


class SignatureError(TpackError):
    """The container is not one the policy accepts (R58–R63: no signature, an untrusted key, another algorithm,
    another subject, a counter below the floor, a bad signature), found when it is opened with ``keys=``…; or
    an entry's payload is not the one that was signed (R64), found when that entry is first read or by
    ``verify()``."""


class ConvertError(ValueError):
    """``tpack.convert`` or ``tpack.inspect`` cannot use an input: a file that is not valid in its format (a
    hostile pickle is one: it is refused by the name of the global it calls, and nothing of it runs), holds what
    the output format cannot store, or names nothing the tool reads. The message says which file and why."""


for _cls in (TpackError, FormatError, IntegrityError, SignatureError, ConvertError):
    _cls.__module__ = "tpack"


def _from_native(
    kind: str,
    rule: str,
    rule_name: str,
    message: str,
    entry_name: Optional[str],
    context: dict,
) -> TpackError:
    """Builds the exception the extension raises; ``context`` holds the core's error context, slot for slot
    (``entry`` … ``inner_rule``). Names from files appear only through ``repr`` (escaped)."""
    if entry_name is not None:
        message = f"{message} [entry {entry_name!r}]"
    cls = {"integrity": IntegrityError, "signature": SignatureError}.get(kind, FormatError)
    return cls(message, rule, rule_name, entry_name=entry_name, **context)


def _naming(exc: BaseException, subject: str, name: str) -> BaseException:
    """``exc`` told again with what it is about first (``tensor 'w': …``, ``metadata key 'arch': …``), for
    ``save``'s errors. A :class:`TpackError` keeps its class, rule and context (a tensor's name becomes its
    ``entry_name``); ``TypeError``, ``ValueError`` and ``OverflowError`` keep their class; anything else (an
    ``OSError``, which names its path; ``KeyboardInterrupt``) is returned as it is."""
    message = f"{subject} {name!r}: {exc}"
    if isinstance(exc, TpackError):
        entry_name = name if subject == "tensor" and exc.entry_name is None else exc.entry_name
        named = type(exc)(message, exc.rule, exc.rule_name, exc.entry, entry_name, exc.inner_rule,
                          **{attr: getattr(exc, attr) for attr in _CONTEXT_ONLY})
    elif type(exc) in (TypeError, ValueError, OverflowError):
        named = type(exc)(message)
    else:
        return exc
    named.__traceback__ = exc.__traceback__
    return named

"""Exceptions of the tpack package."""

from __future__ import annotations

from typing import Optional

__all__ = ["TpackError", "FormatError", "IntegrityError"]


class TpackError(Exception):
    """A container breaks a rule of the tpack spec (``spec/FORMAT.md`` §12).

    Attributes:
        rule: the rule's id, ``"R1"`` … ``"R53"``.
        rule_name: its short name, ``"LengthMismatch"``.
        entry: the table position of the entry involved, or ``None``.
        entry_name: that entry's name when the container's names are valid, else ``None``.
        inner_rule: for R39 (a nested container is invalid), the rule the nested container breaks.
    """

    def __init__(
        self,
        message: str,
        rule: Optional[str] = None,
        rule_name: Optional[str] = None,
        entry: Optional[int] = None,
        entry_name: Optional[str] = None,
        inner_rule: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.rule = rule
        self.rule_name = rule_name
        self.entry = entry
        self.entry_name = entry_name
        self.inner_rule = inner_rule

    def __reduce__(self):  # keeps the attributes through pickling (multiprocessing)
        return (
            type(self),
            (str(self), self.rule, self.rule_name, self.entry, self.entry_name, self.inner_rule),
        )


class FormatError(TpackError):
    """A structural rule is broken: found when a container is opened (or refused when one is written)."""


class IntegrityError(TpackError):
    """Padding or a payload checksum is wrong (R37, R50): found by ``verify()``."""


for _cls in (TpackError, FormatError, IntegrityError):
    _cls.__module__ = "tpack"


def _from_native(
    kind: str,
    rule: str,
    rule_name: str,
    message: str,
    entry: Optional[int],
    entry_name: Optional[str],
    inner_rule: Optional[str],
) -> TpackError:
    """Builds the exception the extension raises. Names from files appear only through ``repr`` (escaped)."""
    if entry_name is not None:
        message = f"{message} [entry {entry_name!r}]"
    cls = IntegrityError if kind == "integrity" else FormatError
    return cls(message, rule, rule_name, entry, entry_name, inner_rule)

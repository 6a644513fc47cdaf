"""A short, safe repr for mismatch reports: bounded like ``reprlib``, never raising, even when ``__repr__``
raises or returns something huge. Standard library only: it runs inside the sandbox."""

from __future__ import annotations

import builtins
import reprlib
from typing import Any


def describe(value: object, limit: int = 200) -> str:
    """A repr of ``value`` of at most ``limit`` characters that never raises."""
    try:
        text = _BoundedRepr(limit).repr(value)
    except Exception:
        text = f"<{_type_name(value)} object>"
    return _truncate(text, limit)


class _BoundedRepr(reprlib.Repr):
    """reprlib with limits taken from the character budget and no way to raise."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        budget = max(limit, 16)
        self.maxlevel = 4
        self.maxtuple = self.maxlist = self.maxarray = self.maxdeque = 12
        self.maxset = self.maxfrozenset = 12
        self.maxdict = 8
        self.maxstring = budget
        self.maxlong = budget
        self.maxother = budget

    def repr_instance(self, x: Any, level: int) -> str:
        try:
            text = builtins.repr(x)
        except Exception as exc:
            return f"<{_type_name(x)} object; repr raised {type(exc).__name__}>"
        if not isinstance(text, str):
            return f"<{_type_name(x)} object>"
        return _truncate(text, self.maxother)

    def repr_int(self, x: Any, level: int) -> str:
        try:
            return super().repr_int(x, level)
        except ValueError:
            # Ints beyond sys.get_int_max_str_digits() refuse to become text at all.
            return f"<int with {x.bit_length()} bits>"

    def repr_bytes(self, x: Any, level: int) -> str:
        # Slice before repr so a huge payload is never converted whole.
        if len(x) <= self.maxstring:
            return builtins.repr(x)
        return builtins.repr(x[: self.maxstring]) + "..."

    repr_bytearray = repr_bytes


def _truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    if limit <= 3:
        return text[: max(limit, 0)]
    return text[: limit - 3] + "..."


def _type_name(value: object) -> str:
    try:
        return str(type(value).__qualname__)
    except Exception:
        return "object"

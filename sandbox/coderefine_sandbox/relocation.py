"""Recorded calls replayed in another folder than the one they were recorded in.

The tests run (and their calls are recorded) in one workspace, with it as the working folder; a candidate is
replayed and timed in its own workspace, with that as the working folder. A path argument recorded as an
absolute path into the recording's folder would still point there, and a function whose result depends on the
working folder (`os.getcwd()`, `os.path.relpath`, a path made from `__file__`) would give a correct candidate
another result than the recorded one. So every recorded value is read as if it had been recorded where it is
replayed: the recording folder's prefix, in the strings, bytes and paths of the arguments and of the recorded
outcome (return value, exception message, printed text, arguments after the call), becomes the replaying
workspace's. Both sides then see the same folder layout: the original replayed in its own workspace (the
identity, nothing done), a candidate in its own.

What a candidate writes through a relocated path lands in its own workspace (or, in a layered workspace, on a
link into the original's copy, which the sandboxed backends mount read-only for candidates).

Standard library only: this runs inside the sandbox.
"""

from __future__ import annotations

import enum
import functools
import os
import pickle
import re
import types
from pathlib import PurePath
from typing import Any

MAX_DEPTH = 60  # nested levels walked; deeper values are left as recorded

# A folder's name ends where a character that cannot continue it follows (so `/run/original` is not found
# inside `/run/original-wide`), and starts where none precedes it.
_NAME_CHARS = r"\w.\-"


class Relocation:
    """Maps the recording folder (`origin`, as given and resolved) to the replaying `folder`.

    The folder is found however many separators stand between its parts (`//run//original/a`, as a boundary
    variant with repeated separators makes it), and those separators are kept when the two folders have as
    many parts (siblings in one run's scratch folder), so a function sees the same shape of path."""

    def __init__(self, origin: str | None, folder: str) -> None:
        self.folder = os.path.abspath(folder)
        same = {self.folder, os.path.realpath(self.folder)}
        forms = [os.path.abspath(origin), os.path.realpath(origin)] if origin else []
        # Longest first: one form may contain the other.
        sources = sorted({form for form in forms if form not in same}, key=len, reverse=True)
        self.active = bool(sources) and os.path.realpath(origin or "") != os.path.realpath(self.folder)
        self._parts = [part for part in self.folder.split(os.sep) if part]
        self._text = [re.compile(_pattern(source)) for source in sources]
        # Bytes paths, as the file system encodes them.
        self._data = [re.compile(os.fsencode(_pattern(source))) for source in sources]

    def text(self, value: str) -> str:
        if not self.active:
            return value
        for pattern in self._text:
            if pattern.search(value) is not None:
                value = pattern.sub(self._moved, value)
        return value  # the same object when nothing changed: the walk tells a change by identity

    def data(self, value: bytes) -> bytes:
        # A pickle (a lazy result's items, an iterator argument's) is left whole: its strings are
        # length-prefixed, and a folder of another length would break it.
        if not self.active or value[:1] == b"\x80":
            return value
        for pattern in self._data:
            if pattern.search(value) is not None:
                value = pattern.sub(lambda found: os.fsencode(self._moved(found)), value)
        return value

    def _moved(self, found: re.Match[Any]) -> str:
        separators = [os.fsdecode(separator) for separator in found.groups()]
        if len(separators) != len(self._parts):
            return self.folder
        return "".join(separator + part for separator, part in zip(separators, self._parts, strict=True))

    def value(self, value: Any) -> Any:
        """`value` (freshly unpickled: mutable parts are changed in place) with the folder relocated."""
        if not self.active:
            return value
        return _Walk(self).go(value, 0)

    def loads(self, blob: bytes) -> Any:
        """A recorded pickle, relocated."""
        return self.value(pickle.loads(blob))

    def touches(self, blob: bytes) -> bool:
        """Whether relocating this recorded pickle changes anything in it."""
        if not self.active:
            return False
        try:
            walk = _Walk(self)
            walk.go(pickle.loads(blob), 0)
            return walk.changed
        except Exception:
            return False

    def blob(self, blob: bytes) -> bytes:
        """A recorded pickle relocated and pickled again (the timing worker unpickles it afresh each pass); as it
        was when nothing in it names the recording folder, or when it cannot be pickled again."""
        if not self.active:
            return blob
        try:
            value = pickle.loads(blob)
            moved = _Walk(self)
            value = moved.go(value, 0)
            return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL) if moved.changed else blob
        except Exception:
            return blob


def _pattern(source: str) -> str:
    """`source` as a pattern: each of its parts after one separator or more (captured), as a whole name."""
    separator = re.escape(os.sep)
    parts = "".join(f"({separator}+){re.escape(part)}" for part in source.split(os.sep) if part)
    return f"(?<![{_NAME_CHARS}])" + parts + f"(?![{_NAME_CHARS}])"


@functools.lru_cache(maxsize=64)
def relocation(origin: str | None, folder: str) -> Relocation:
    """The relocation from a recording folder to `folder` (one per pair: a calls file names few folders)."""
    return Relocation(origin, folder)


class _Walk:
    """One walk over a value: each object once (shared and cyclic parts stay shared), builtin containers and
    plain objects' attributes entered, immutable containers rebuilt only when something in them changed."""

    def __init__(self, relocation: Relocation) -> None:
        self.relocation = relocation
        self.seen: dict[int, Any] = {}
        self.changed = False

    def go(self, value: Any, depth: int) -> Any:
        kind = type(value)
        if kind is str:
            moved = self.relocation.text(value)
            self.changed |= moved is not value
            return moved
        if kind is bytes:
            moved_data = self.relocation.data(value)
            self.changed |= moved_data is not value
            return moved_data
        if value is None or kind in (int, float, bool, complex) or depth > MAX_DEPTH:
            return value
        key = id(value)
        if key in self.seen:
            return self.seen[key]
        self.seen[key] = value  # a cycle back to it finds it as it is
        moved_value = self._container(value, depth + 1)
        self.seen[key] = moved_value
        return moved_value

    def _container(self, value: Any, depth: int) -> Any:
        if isinstance(value, PurePath):
            text = str(value)
            moved = self.relocation.text(text)
            if moved == text:
                return value
            self.changed = True
            return type(value)(moved)
        if isinstance(value, list):
            for index, item in enumerate(value):
                new = self.go(item, depth)
                if new is not item:
                    value[index] = new
            return value
        if isinstance(value, dict):
            items = [(self.go(k, depth), self.go(v, depth)) for k, v in value.items()]
            if any(new_key is not old_key for (new_key, _), old_key in zip(items, value, strict=True)):
                value.clear()  # in place and in order: a key changed
                value.update(items)
            else:
                for (k, new), old in zip(items, value.values(), strict=True):
                    if new is not old:
                        value[k] = new
            return value
        if isinstance(value, set):
            members = [self.go(item, depth) for item in value]
            if any(new is not old for new, old in zip(members, value, strict=True)):
                value.clear()
                value.update(members)
            return value
        if isinstance(value, (tuple, frozenset)):
            members = [self.go(item, depth) for item in value]
            if all(new is old for new, old in zip(members, value, strict=True)):
                return value
            if type(value) is tuple:
                return tuple(members)
            if type(value) is frozenset:
                return frozenset(members)
            make = getattr(type(value), "_make", None)  # a namedtuple
            return make(members) if make is not None else value
        # A plain object's attributes, changed in place. Never a class, module, function or enum member: pickle
        # gives those by reference, shared with the module, not a copy of the recording's own.
        state = getattr(value, "__dict__", None)
        if type(state) is dict and not isinstance(value, (type, types.ModuleType, enum.Enum)) and not callable(value):
            for name, item in list(state.items()):
                new = self.go(item, depth)
                if new is not item:
                    state[name] = new
        return value

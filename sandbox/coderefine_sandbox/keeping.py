"""Keeping a recorded call's values for replay: pickled, except the project's module-level constants that code
compares by identity, which are kept by reference.

A pickled copy of `PROCESS_AS_KEYWORD = object()` (sqlparse.keywords) is another object, so the lexer's
`action is PROCESS_AS_KEYWORD` is false on a replayed copy of the lexer: the original drops every keyword on
its own recorded calls, and all of them read "not deterministic". The same holds for a token type kept as a
module constant (sqlparse.tokens' `Keyword`, a tuple subclass compared with `is` and `in`). Functions,
classes and enum members already pickle by reference; this does the same for a project module's globals
that cannot be told apart from a copy only by identity and that a replay cannot change by sharing them:

- bare `object()` sentinels, and instances of the project's classes holding no state (`_MISSING = _Missing()`);
- instances of subclasses of the immutable builtins (tuple, frozenset, str, bytes, int, float).

Mutable globals (a module-level list, dict or object with state) are still copied: a replay sharing them
would change the module's state between calls.

Standard library only: this runs inside the sandbox, in the user's test process.
"""

from __future__ import annotations

import importlib
import io
import os
import pickle
import sys
import types
from typing import Any

_IMMUTABLE = (tuple, frozenset, str, bytes, int, float)
_EXACT_BUILTINS = frozenset({tuple, frozenset, str, bytes, int, float, bool, complex, type(None)})
_BY_REFERENCE_ALREADY = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType)


def module_global(module: str, name: str) -> object:
    """The object a kept reference names (what unpickling a kept reference calls)."""
    return getattr(importlib.import_module(module), name)


def _shared_safely(value: object) -> bool:
    try:
        return _constant(value)
    except Exception:  # a global whose attributes misbehave (a lazy proxy's __getattr__): copied, as before
        return False


def _constant(value: object) -> bool:
    kind = type(value)
    if kind in _EXACT_BUILTINS or isinstance(value, _BY_REFERENCE_ALREADY):
        return False
    if kind is object:
        return True
    if isinstance(value, _IMMUTABLE):
        return True
    if kind.__module__ == "builtins":
        return False  # lists, dicts, sets and the other builtin containers are state
    state = getattr(value, "__dict__", None)
    slots = any("__slots__" in vars(base) for base in kind.__mro__[:-1])
    return state is not None and not state and not slots


class _References:
    """The project's module-level constants by id, rescanned when modules are added or a module's globals change."""

    def __init__(self) -> None:
        self.root = os.path.realpath(os.getcwd()) + os.sep  # the workspace: the tests run from it
        self.by_id: dict[int, tuple[object, str, str]] = {}
        self.sizes: dict[str, int] = {}  # project module -> its number of globals when scanned
        self.modules_seen = 0

    def _project_module(self, module: types.ModuleType) -> bool:
        file = getattr(module, "__file__", None)
        if not file:
            return False
        real = os.path.realpath(file)
        return real.startswith(self.root) and "site-packages" not in real

    def refresh(self) -> None:
        if len(sys.modules) != self.modules_seen:
            self.modules_seen = len(sys.modules)
            for name, module in list(sys.modules.items()):
                if name not in self.sizes and isinstance(module, types.ModuleType) and self._project_module(module):
                    self.sizes[name] = -1
        for name, size in list(self.sizes.items()):
            module = sys.modules.get(name)
            if module is None:
                continue
            names = vars(module)
            if len(names) != size:
                self.sizes[name] = len(names)
                for attribute, value in list(names.items()):
                    if not attribute.startswith("__") and _shared_safely(value):
                        self.by_id.setdefault(id(value), (value, name, attribute))

    def lookup(self, value: object) -> tuple[str, str] | None:
        entry = self.by_id.get(id(value))
        if entry is None or entry[0] is not value or not _shared_safely(value):  # it may have gained state since
            return None
        return entry[1], entry[2]


_references: _References | None = None


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        assert _references is not None
        found = _references.lookup(obj)
        if found is None:
            return NotImplemented
        return module_global, found


def dumps(value: object, protocol: int) -> bytes:
    """`pickle.dumps`, keeping the project's module-level constants by reference."""
    global _references
    if _references is None:
        _references = _References()
    _references.refresh()
    if not _references.by_id:
        return pickle.dumps(value, protocol=protocol)
    buffer = io.BytesIO()
    _Pickler(buffer, protocol=protocol).dump(value)
    return buffer.getvalue()

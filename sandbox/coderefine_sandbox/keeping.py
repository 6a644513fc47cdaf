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

import builtins
import importlib
import io
import marshal
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


def dumps(value: object, protocol: int, functions: bool = False) -> bytes:
    """`pickle.dumps`, keeping the project's module-level constants by reference; with `functions`, a function
    that pickle cannot name (a lambda, a nested function, one defined in a test module) by its code."""
    global _references
    if _references is None:
        _references = _References()
    _references.refresh()
    if not _references.by_id and not functions:
        return pickle.dumps(value, protocol=protocol)
    buffer = io.BytesIO()
    (_FunctionPickler if functions else _Pickler)(buffer, protocol=protocol).dump(value)
    return buffer.getvalue()


# ----------------------------------------------------------------------------- functions kept by their code
# Only function ARGUMENTS are kept this way (behaviour/functions.py taps them): a function is an input there, and
# the calls the target makes to it are recorded and compared. A returned lambda is still "cannot be kept": two
# functions compare by qualified name, so keeping results by code would let a candidate return another lambda.

_MARSHALLED: dict[types.CodeType, bytes] = {}  # one marshalling per code object: the bytes stay equal between dumps


def _marshalled(code: types.CodeType) -> bytes:
    found = _MARSHALLED.get(code)
    if found is None:
        found = _MARSHALLED[code] = marshal.dumps(code)
    return found


def _test_module(name: str) -> bool:
    """A pytest test module or conftest: imported by pytest from a path the replay process does not have."""
    last = name.rpartition(".")[2]
    return last.startswith("test_") or last.endswith("_test") or last == "conftest" or name == "__main__"


def by_reference(func: types.FunctionType) -> bool:
    """Whether pickle keeps `func` by its qualified name and the replay process can import it by that name."""
    module_name = getattr(func, "__module__", None)
    qualname = getattr(func, "__qualname__", "")
    if not module_name or "<" in qualname or _test_module(module_name):
        return False
    found: Any = sys.modules.get(module_name)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return found is func


def _referenced_names(code: types.CodeType) -> set[str]:
    """The global names a function's code (and the code nested in it: comprehensions, inner functions) reads."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _referenced_names(const)
    return names


def function_parts(func: types.FunctionType) -> tuple[dict[str, Any], list[Any]]:
    """What a function kept by code carries besides its code: the globals it reads (builtins excepted: the
    replay's own are used) and its closure's values. Raises ValueError for an empty closure cell."""
    globals_used = {
        name: func.__globals__[name] for name in _referenced_names(func.__code__) if name in func.__globals__
    }
    cells = [cell.cell_contents for cell in func.__closure__ or ()]  # ValueError: a cell not yet assigned
    return globals_used, cells


def _make_function(code: bytes, module: str, name: str, qualname: str, free: int) -> types.FunctionType:
    """A function kept by code, recreated with empty cells and globals (filled by `_fill_function`, so that a
    function reaching itself through its closure or globals is kept too)."""
    namespace: dict[str, Any] = {"__builtins__": builtins, "__name__": module}
    closure = tuple(types.CellType() for _ in range(free)) or None
    func = types.FunctionType(marshal.loads(code), namespace, name, None, closure)
    func.__qualname__ = qualname
    func.__module__ = module
    return func


def _fill_function(func: types.FunctionType, state: tuple[Any, ...]) -> None:
    globals_used, cells, defaults, kwdefaults, attributes = state
    func.__globals__.update(globals_used)
    for cell, value in zip(func.__closure__ or (), cells, strict=True):
        cell.cell_contents = value
    func.__defaults__ = defaults
    func.__kwdefaults__ = kwdefaults
    func.__dict__.update(attributes)


def _import_module(name: str) -> types.ModuleType:
    return importlib.import_module(name)


class _FunctionPickler(_Pickler):
    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, types.ModuleType) and obj.__name__ in sys.modules:
            return _import_module, (obj.__name__,)  # a module a kept function reads as a global
        if isinstance(obj, types.FunctionType) and not by_reference(obj):
            globals_used, cells = function_parts(obj)
            free = len(obj.__code__.co_freevars)
            module = obj.__module__ or "__main__"
            made = (_marshalled(obj.__code__), module, obj.__name__, obj.__qualname__, free)
            state = (globals_used, cells, obj.__defaults__, obj.__kwdefaults__, dict(obj.__dict__))
            return _make_function, made, state, None, None, _fill_function
        return super().reducer_override(obj)

"""Behavioural equality of a value recorded from the original function and one produced by a candidate.

This module runs inside the sandbox, so it imports only the standard library (and its helpers here,
values.py and describe.py, which do too).

``deep_equal(expected, got, *, rel_tol=1e-9, abs_tol=0.0)`` is True when the candidate's value behaves
like the recorded one. The rules, in the order they apply:

* Types must match exactly (``1``, ``1.0`` and ``True`` all differ). Classes count as the same when they
  are the same object or have the same ``__module__`` and ``__qualname__``: the recording is unpickled
  against the candidate's module, and a class loaded twice is still "the same class" to a user.
* ``float`` (and subclasses): ``math.isclose(rel_tol, abs_tol)``; NaN equals NaN; ``0.0 == -0.0``.
  ``complex``: the same, per component.
* Enum members: same name and deep-equal value.
* numpy (detected by the type's module name; numpy is never imported): arrays need the same shape and
  dtype and deep-equal ``.tolist()``; numpy scalars compare their ``.item()``. pandas objects: ``equals``,
  or else the same shape, index, columns, dtypes, name and deep-equal values (for float tolerance).
* ``int``, ``bool``, ``str``, ``bytes``, ``None`` and other plain builtins: ``==``.
* ``list`` / ``tuple`` (also namedtuples and subclasses that keep the builtin ``__eq__``): same length,
  elementwise deep equality, plus the instance ``__dict__`` if a subclass has one.
* ``dict`` (and subclasses keeping ``dict.__eq__``): same length, keys matched by ``==``, values deep-equal;
  insertion order ignored. Keys that ``==`` cannot match (e.g. instances of a reloaded class whose
  ``__eq__`` checks ``type(other) is type(self)``) are paired by deep equality instead. ``OrderedDict``
  compares in order (its ``==`` does); ``defaultdict`` also compares ``default_factory``.
* ``set`` / ``frozenset``: ``==``; failing that, elements are paired by deep equality (up to
  ``PAIRING_LIMIT`` unmatched elements), which covers reloaded-class elements and float tolerance.
* Classes and functions: same module and qualified name; bound methods also need deep-equal ``self``;
  ``functools.partial``: deep-equal function, arguments and keywords; modules: same name.
* Exceptions: same type, deep-equal ``args`` and instance state.
* Objects whose class defines its own ``__eq__``: ``==``. If that says False and the classes are two
  loads of one class, or the object is a dataclass, the instance state is compared deeply instead (a
  dataclass ``__eq__`` has no float tolerance; a reloaded class's ``__eq__`` may reject the other copy).
* Other objects: ``vars()`` and ``__slots__`` state, compared recursively. Objects with no reachable state
  (C-level objects such as generators or locks) are equal only if ``==`` says so.

Cyclic structures are handled with a memo of ``(id(expected), id(got))`` pairs under comparison (a pair
met again is assumed equal; assumptions made in a branch that turns out unequal are withdrawn). Below
``MAX_DEPTH`` nested levels the comparison falls back to ``==``. Any ``Exception`` raised while comparing
(by a user ``__eq__``, ``__getattr__``, property...) makes the result False; it never propagates.
``BaseException`` subclasses that are not ``Exception`` (KeyboardInterrupt, SystemExit, the sandbox's
own time limit) are deliberately let through.

``unordered_equal`` is the same, except that a returned list or tuple may hold its elements in any order
(for the targets a user names with the ``unordered`` setting).

``describe(value, limit=200)`` (describe.py) is a short, safe repr for mismatch reports: bounded like ``reprlib``, never
raising, even when ``__repr__`` raises or returns something huge.
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import functools
import math
import types
from typing import Any

from coderefine_sandbox.behaviour.describe import describe as describe  # re-exported: the mismatch reports use both
from coderefine_sandbox.behaviour.values import (
    callable_key,
    instance_state,
    is_array_library_object,
    module_root,
    safe_contains,
    safe_eq,
    type_key,
)

MAX_DEPTH = 100  # nested levels compared deeply; ~3 interpreter frames each, well inside the limit
PAIRING_LIMIT = 200  # unmatched keys/elements paired one by one (quadratic) at most

_EXACT_TYPES = frozenset({int, str, bytes, bool, type(None)})
_PLAIN_TYPES = (
    int,
    str,
    bytes,
    bytearray,
    memoryview,
    range,
    type(None),
    type(Ellipsis),
    type(NotImplemented),
)
_FUNCTION_TYPES = (types.FunctionType, types.BuiltinFunctionType, types.WrapperDescriptorType)
_METHOD_TYPES = (types.MethodType, types.MethodWrapperType)


def deep_equal(expected: object, got: object, *, rel_tol: float = 1e-9, abs_tol: float = 0.0) -> bool:
    """Whether ``got`` (from the candidate) behaves like ``expected`` (recorded from the original)."""
    try:
        return _Comparer(rel_tol, abs_tol).equal(expected, got, 0)
    except Exception:
        return False


def unordered_equal(expected: object, got: object, *, rel_tol: float = 1e-9, abs_tol: float = 0.0) -> bool:
    """``deep_equal``, except that a returned list or tuple may hold the same elements in another order
    (only its own elements: nested sequences still compare in order). Only for targets the user names:
    for everything else order is behaviour."""
    if deep_equal(expected, got, rel_tol=rel_tol, abs_tol=abs_tol):
        return True
    if not (isinstance(expected, (list, tuple)) and type_key(type(expected)) == type_key(type(got))):
        return False
    assert isinstance(got, (list, tuple))
    if len(expected) != len(got):
        return False
    try:  # orderable elements: sorting both is n log n, where pairing would be quadratic
        in_order = sorted(expected), sorted(got)  # type: ignore[type-var]
    except Exception:
        in_order = None
    if in_order is not None and deep_equal(list(in_order[0]), list(in_order[1]), rel_tol=rel_tol, abs_tol=abs_tol):
        return True
    try:
        return _Comparer(rel_tol, abs_tol)._pair_up([(e, None) for e in expected], [(e, None) for e in got], 0)
    except Exception:
        return False


# --- comparison ------------------------------------------------------------------------------------


class _Comparer:
    def __init__(self, rel_tol: float, abs_tol: float) -> None:
        self.rel_tol = rel_tol
        self.abs_tol = abs_tol
        # Pairs under comparison or already found equal; a log so a failed branch can withdraw its own.
        self.assumed: set[tuple[int, int]] = set()
        self.log: list[tuple[int, int]] = []

    def equal(self, a: Any, b: Any, depth: int) -> bool:
        if a is b:
            return True
        type_a, type_b = type(a), type(b)
        if type_a is type_b:
            # Fast paths for the values that make up most recorded data.
            if type_a in _EXACT_TYPES:
                return bool(a == b)
            if type_a is float:
                return self._close(a, b)
            # Every call's arguments and keywords. Neither needs the cycle memo below (a cycle always runs
            # through a mutable container, whose pair the memo holds; an empty one holds nothing), and the
            # memo's two id() calls are each an audit event when the replay's audit hook is on.
            if type_a is tuple and depth < MAX_DEPTH:
                return self._sequence_equal(a, b, depth + 1)
            if (type_a is dict or type_a is list) and not a:
                return not b
        elif type_key(type_a) != type_key(type_b):
            return False
        if isinstance(a, float):
            return self._close(a, b)
        if isinstance(a, complex):
            return self._close(a.real, b.real) and self._close(a.imag, b.imag)
        if isinstance(a, enum.Enum):
            return a.name == b.name and self.equal(a.value, b.value, depth + 1)
        if isinstance(a, _PLAIN_TYPES):
            return safe_eq(a, b)
        if depth >= MAX_DEPTH:
            return safe_eq(a, b)
        pair = (id(a), id(b))
        if pair in self.assumed:
            return True  # met again inside itself: a cycle, equal unless something else differs
        mark = len(self.log)
        self.assumed.add(pair)
        self.log.append(pair)
        try:
            result = self._compare_structured(a, b, depth + 1)
        except Exception:
            result = False
        if not result:
            self._withdraw(mark)
        return result

    def _withdraw(self, mark: int) -> None:
        while len(self.log) > mark:
            self.assumed.discard(self.log.pop())

    def _close(self, x: float, y: float) -> bool:
        if math.isnan(x) and math.isnan(y):
            return True
        return math.isclose(x, y, rel_tol=self.rel_tol, abs_tol=self.abs_tol)

    def _compare_structured(self, a: Any, b: Any, depth: int) -> bool:
        kind = type(a)
        # Exact builtin containers first: they are most of the data and need no further checks.
        if kind is list or kind is tuple:
            return self._sequence_equal(a, b, depth)
        if kind is dict:
            return self._dict_equal(a, b, depth)
        if kind is set or kind is frozenset:
            return self._set_equal(a, b, depth)
        if is_array_library_object(kind):
            return self._array_library_equal(a, b, depth)
        if isinstance(a, (list, tuple)) and kind.__eq__ in (list.__eq__, tuple.__eq__):
            return self._sequence_equal(a, b, depth) and self._extra_state_equal(a, b, depth)
        if isinstance(a, collections.OrderedDict):
            return self._ordered_dict_equal(a, b, depth) and self._extra_state_equal(a, b, depth)
        if isinstance(a, dict) and kind.__eq__ is dict.__eq__:
            if isinstance(a, collections.defaultdict) and not self.equal(a.default_factory, b.default_factory, depth):
                return False
            return self._dict_equal(a, b, depth) and self._extra_state_equal(a, b, depth)
        if isinstance(a, (set, frozenset)) and kind.__eq__ in (set.__eq__, frozenset.__eq__):
            return self._set_equal(a, b, depth)
        if isinstance(a, type):
            return type_key(a) == type_key(b)
        if isinstance(a, _FUNCTION_TYPES):
            return callable_key(a) == callable_key(b) and self._bound_self_equal(a, b, depth)
        if isinstance(a, _METHOD_TYPES):
            return callable_key(a) == callable_key(b) and self.equal(a.__self__, b.__self__, depth)
        if isinstance(a, types.ModuleType):
            # A module's namespace holds the changed code itself; what matters is which module it is.
            return a.__name__ == b.__name__
        if isinstance(a, functools.partial):
            return (
                self.equal(a.func, b.func, depth)
                and self.equal(a.args, b.args, depth)
                and self.equal(a.keywords, b.keywords, depth)
            )
        if isinstance(a, BaseException):
            return self.equal(a.args, b.args, depth) and self._state_equal(a, b, depth, fallback=True)
        if kind.__eq__ is not object.__eq__:
            if safe_eq(a, b):
                return True
            reloaded = type(a) is not type(b)
            if reloaded or dataclasses.is_dataclass(a):
                return self._state_equal(a, b, depth, fallback=False)
            return False
        return self._state_equal(a, b, depth, fallback=True)

    def _sequence_equal(self, a: Any, b: Any, depth: int) -> bool:
        if len(a) != len(b):
            return False
        return all(self.equal(x, y, depth) for x, y in zip(a, b, strict=True))

    def _ordered_dict_equal(self, a: Any, b: Any, depth: int) -> bool:
        if len(a) != len(b):
            return False
        for (key_a, value_a), (key_b, value_b) in zip(a.items(), b.items(), strict=True):
            if not (self.equal(key_a, key_b, depth) and self.equal(value_a, value_b, depth)):
                return False
        return True

    def _dict_equal(self, a: Any, b: Any, depth: int) -> bool:
        if len(a) != len(b):
            return False
        missing = object()
        unmatched: list[tuple[Any, Any]] = []
        for key, value in a.items():
            # dict.get, not b[key]: a subclass's __getitem__/__missing__ must not run or insert.
            other = dict.get(b, key, missing)
            if other is missing:
                unmatched.append((key, value))
            elif not self.equal(value, other, depth):
                return False
        if not unmatched:
            return True
        spare = [(key, value) for key, value in b.items() if dict.get(a, key, missing) is missing]
        return self._pair_up(unmatched, spare, depth)

    def _set_equal(self, a: Any, b: Any, depth: int) -> bool:
        if len(a) != len(b):
            return False
        if safe_eq(a, b):
            return True
        unmatched = [element for element in a if not safe_contains(b, element)]
        spare = [element for element in b if not safe_contains(a, element)]
        return self._pair_up([(e, None) for e in unmatched], [(e, None) for e in spare], depth)

    def _pair_up(self, left: list[tuple[Any, Any]], right: list[tuple[Any, Any]], depth: int) -> bool:
        """Match every (key, value) on the left with a distinct deep-equal one on the right."""
        if len(left) != len(right) or len(left) > PAIRING_LIMIT:
            return False
        remaining = list(right)
        for key, value in left:
            for index, (other_key, other_value) in enumerate(remaining):
                mark = len(self.log)
                if self.equal(key, other_key, depth) and self.equal(value, other_value, depth):
                    del remaining[index]
                    break
                self._withdraw(mark)
            else:
                return False
        return True

    def _bound_self_equal(self, a: Any, b: Any, depth: int) -> bool:
        # Builtin methods ([].append) carry their object in __self__; for functions it is the module.
        self_a = getattr(a, "__self__", None)
        self_b = getattr(b, "__self__", None)
        if isinstance(self_a, types.ModuleType) or self_a is None:
            return isinstance(self_b, types.ModuleType) or self_b is None
        return self.equal(self_a, self_b, depth)

    def _extra_state_equal(self, a: Any, b: Any, depth: int) -> bool:
        """Attributes a subclass of a builtin container carries besides its items."""
        state_a = instance_state(a)
        state_b = instance_state(b)
        if not state_a and not state_b:
            return True
        return state_a is not None and state_b is not None and self._mapping_state_equal(state_a, state_b, depth)

    def _state_equal(self, a: Any, b: Any, depth: int, *, fallback: bool) -> bool:
        state_a = instance_state(a)
        state_b = instance_state(b)
        if state_a is None or state_b is None:
            # C-level state: == tells, or, for a type without an __eq__ of its own, what pickling keeps of it
            # (a list iterator's list and position, an itemgetter's items): a replay works on exactly that.
            if not fallback:
                return False
            if safe_eq(a, b):
                return True
            return state_a is None and state_b is None and self._reduction_equal(a, b, depth)
        return self._mapping_state_equal(state_a, state_b, depth)

    def _reduction_equal(self, a: Any, b: Any, depth: int) -> bool:
        try:
            reduced_a, reduced_b = a.__reduce_ex__(4), b.__reduce_ex__(4)
        except Exception:
            return False  # not picklable (a lock, a generator): nothing but identity tells
        if isinstance(reduced_a, str) or isinstance(reduced_b, str):
            return reduced_a == reduced_b  # a global kept by name
        if not (isinstance(reduced_a, tuple) and isinstance(reduced_b, tuple)) or len(reduced_a) != len(reduced_b):
            return False
        if not reduced_a or callable_key(reduced_a[0]) != callable_key(reduced_b[0]):
            return False
        return self.equal(tuple(reduced_a[1:]), tuple(reduced_b[1:]), depth)

    def _mapping_state_equal(self, state_a: dict[str, Any], state_b: dict[str, Any], depth: int) -> bool:
        if state_a.keys() != state_b.keys():
            return False
        return all(self.equal(state_a[name], state_b[name], depth) for name in state_a)

    def _array_library_equal(self, a: Any, b: Any, depth: int) -> bool:
        root = module_root(type(a))
        if root == "numpy":
            if hasattr(a, "shape") and hasattr(a, "dtype") and type(a).__name__ in ("ndarray", "matrix"):
                if tuple(a.shape) != tuple(b.shape) or str(a.dtype) != str(b.dtype):
                    return False
                return self.equal(a.tolist(), b.tolist(), depth)
            if hasattr(a, "item") and getattr(a, "shape", None) == ():
                # numpy scalar: compare as the Python value (float tolerance, NaN == NaN), dtype included.
                return str(getattr(a, "dtype", "")) == str(getattr(b, "dtype", "")) and self.equal(
                    a.item(), b.item(), depth
                )
            return safe_eq(a, b)
        # pandas
        if hasattr(a, "equals") and bool(a.equals(b)):
            return True
        if tuple(getattr(a, "shape", ())) != tuple(getattr(b, "shape", ())):
            return False
        for attribute in ("index", "columns"):
            if hasattr(a, attribute) and not self.equal(
                getattr(a, attribute).tolist(), getattr(b, attribute).tolist(), depth
            ):
                return False
        if str(getattr(a, "dtypes", getattr(a, "dtype", None))) != str(getattr(b, "dtypes", getattr(b, "dtype", None))):
            return False
        if hasattr(a, "name") and not self.equal(a.name, b.name, depth):
            return False
        if hasattr(a, "to_numpy"):
            return self.equal(a.to_numpy().tolist(), b.to_numpy().tolist(), depth)
        return False

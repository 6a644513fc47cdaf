"""What the behavioural comparison (compare.py) asks of any value: which class or function it is (by module
and qualified name, so that two loads of one class count as the same), its instance state, and == and `in`
that never raise. Standard library only: it runs inside the sandbox."""

from __future__ import annotations

from typing import Any


def safe_eq(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:
        return False


def safe_contains(container: Any, element: Any) -> bool:
    try:
        return element in container
    except Exception:
        return False


def type_key(kind: type) -> tuple[str, str]:
    return (
        str(getattr(kind, "__module__", "")),
        str(getattr(kind, "__qualname__", getattr(kind, "__name__", ""))),
    )


def callable_key(function: Any) -> tuple[str, str]:
    target = getattr(function, "__func__", function)
    module = getattr(target, "__module__", None)
    if module is None:
        owner = getattr(target, "__objclass__", None) or type(getattr(target, "__self__", None))
        module = getattr(owner, "__module__", "")
    return str(module), str(getattr(target, "__qualname__", getattr(target, "__name__", "")))


def module_root(kind: type) -> str:
    return str(getattr(kind, "__module__", "") or "").split(".", 1)[0]


def is_array_library_object(kind: type) -> bool:
    return module_root(kind) in ("numpy", "pandas")


def instance_state(obj: Any) -> dict[str, Any] | None:
    """``vars()`` merged with filled ``__slots__``; None when the object has neither."""
    state: dict[str, Any] | None = None
    try:
        namespace = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        namespace = None
    if isinstance(namespace, dict):
        state = dict(namespace)
    for cls in type(obj).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        if isinstance(slots, str):
            slots = (slots,)
        for slot in slots:
            if slot in ("__dict__", "__weakref__"):
                continue
            # Private slots are stored under their mangled name.
            name = f"_{cls.__name__.lstrip('_')}{slot}" if slot.startswith("__") and not slot.endswith("__") else slot
            descriptor = cls.__dict__.get(name)
            if descriptor is None or not hasattr(descriptor, "__get__"):
                continue
            if state is None:
                state = {}
            try:
                state[f"slot:{name}"] = descriptor.__get__(obj, cls)
            except AttributeError:
                state[f"slot:{name}"] = _UNSET
    return state


class _Unset:
    """Marks a declared but unassigned slot (equal only to itself)."""

    def __repr__(self) -> str:
        return "<unset>"


_UNSET = _Unset()

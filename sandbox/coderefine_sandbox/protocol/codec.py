"""Records <-> JSON for the sandbox protocol (the dataclasses of this package), written once over dataclass fields
and type hints.

Decoding is strict: a field missing, a field unknown, or a value of the wrong type raises `ProtocolError`
naming the type and the field. Supported field types: bool, int, float (an int is accepted), str, Any,
`X | None`, `Literal[...]`, `tuple[X, ...]`, fixed tuples, `dict[str, X]` and nested dataclasses.
Standard library only: the sandbox runs it.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import types
import typing
from typing import Any, Literal, TypeVar

T = TypeVar("T")


class ProtocolError(ValueError):
    """A request or report that does not match its type."""


def to_dict(record: Any) -> dict[str, Any]:
    """A dataclass as a JSON-ready dict (tuples become lists; nested dataclasses become dicts)."""
    if not dataclasses.is_dataclass(record) or isinstance(record, type):
        raise ProtocolError(f"not a protocol record: {type(record).__name__}")
    return _encode(record)


def from_dict(kind: type[T], data: Any) -> T:
    """`kind` rebuilt from `data`; any difference from the type raises ProtocolError."""
    return _decode_record(kind, data, kind.__name__)


def to_json(record: Any) -> str:
    return json.dumps(to_dict(record))


def from_json(kind: type[T], text: str) -> T:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProtocolError(f"{kind.__name__}: not JSON ({exc})") from None
    return from_dict(kind, data)


def write_json(path: str, record: Any) -> None:
    """`record` as JSON in the file `path`: a step's request, or what one step leaves for another."""
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(to_json(record))


def read_json(kind: type[T], path: str) -> T:
    """The `kind` in the file `path`, decoded as strictly as `from_json`."""
    with open(path, encoding="utf-8") as fh:
        return from_json(kind, fh.read())


def _encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (tuple, list)):
        return [_encode(item) for item in value]
    if isinstance(value, dict):
        return {key: _encode(item) for key, item in value.items()}
    return value


@functools.cache
def _hints(kind: type) -> dict[str, Any]:
    return typing.get_type_hints(kind)


def _decode_record(kind: type[T], data: Any, where: str) -> T:
    if not isinstance(data, dict):
        raise ProtocolError(f"{where}: expected an object for {kind.__name__}, got {type(data).__name__}")
    names = [f.name for f in dataclasses.fields(kind)]  # type: ignore[arg-type]
    unknown = sorted(set(data) - set(names))
    if unknown:
        raise ProtocolError(f"{where}: unknown field {unknown[0]!r} for {kind.__name__}")
    missing = [name for name in names if name not in data]
    if missing:
        raise ProtocolError(f"{where}: {kind.__name__} is missing field {missing[0]!r}")
    hints = _hints(kind)
    values = {name: _decode(hints[name], data[name], f"{where}.{name}") for name in names}
    return kind(**values)


def _decode(hint: Any, value: Any, where: str) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if dataclasses.is_dataclass(hint):
        return _decode_record(hint, value, where)
    if origin is typing.Union or origin is types.UnionType:
        if value is None and type(None) in args:
            return None
        options = [arg for arg in args if arg is not type(None)]
        if len(options) != 1:
            raise ProtocolError(f"{where}: unions other than 'X | None' are not part of the protocol")
        return _decode(options[0], value, where)
    if origin is Literal:
        if value not in args:
            raise ProtocolError(f"{where}: expected one of {', '.join(map(repr, args))}, got {value!r}")
        return value
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise ProtocolError(f"{where}: expected a list, got {type(value).__name__}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], item, f"{where}[{i}]") for i, item in enumerate(value))
        if len(value) != len(args):
            raise ProtocolError(f"{where}: expected {len(args)} items, got {len(value)}")
        return tuple(_decode(arg, item, f"{where}[{i}]") for i, (arg, item) in enumerate(zip(args, value, strict=True)))
    if origin is dict:
        if not isinstance(value, dict):
            raise ProtocolError(f"{where}: expected an object, got {type(value).__name__}")
        return {
            _decode(args[0], key, f"{where} key"): _decode(args[1], item, f"{where}[{key!r}]")
            for key, item in value.items()
        }
    return _decode_scalar(hint, value, where)


def _decode_scalar(hint: Any, value: Any, where: str) -> Any:
    if hint is Any:
        return value
    # bool is an int to Python, but never a count or a size here; an int is a fine float.
    accepted = {bool: (bool,), int: (int,), float: (int, float), str: (str,)}.get(hint)
    if accepted is None:
        raise ProtocolError(f"{where}: the protocol has no type {hint!r}")
    if (isinstance(value, bool) and hint is not bool) or not isinstance(value, accepted):
        raise ProtocolError(f"{where}: expected {hint.__name__}, got {type(value).__name__} {value!r:.60}")
    return float(value) if hint is float else value

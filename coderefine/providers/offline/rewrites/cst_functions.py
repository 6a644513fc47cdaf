"""The functions a codemod visits, and walks over the nodes of one function.

These look at libcst nodes only (no session), so the session machinery (cst_session.py) and the
analyses built on it (cst_locals.py, cst_patterns.py) can all use them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import libcst as cst


@dataclass(frozen=True)
class FunctionInfo:
    qualname: str  # "f", "Cls.meth", or "f.<inner>" for a nested function
    is_method: bool  # defined directly in a class body
    nested: bool  # defined inside another function


def functions_in(module: cst.Module, targets: Sequence[str] | None) -> Iterator[tuple[cst.FunctionDef, FunctionInfo]]:
    """The target definitions (all of them when `targets` is None) and every function nested in them."""
    wanted = None if targets is None else set(targets)
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef) and (wanted is None or stmt.name.value in wanted):
            yield from _with_nested(stmt, FunctionInfo(stmt.name.value, is_method=False, nested=False))
        elif isinstance(stmt, cst.ClassDef) and isinstance(stmt.body, cst.IndentedBlock):
            for item in stmt.body.body:
                qualname = f"{stmt.name.value}.{item.name.value}" if isinstance(item, cst.FunctionDef) else ""
                if isinstance(item, cst.FunctionDef) and (wanted is None or qualname in wanted):
                    yield from _with_nested(item, FunctionInfo(qualname, is_method=True, nested=False))


def _with_nested(func: cst.FunctionDef, info: FunctionInfo) -> Iterator[tuple[cst.FunctionDef, FunctionInfo]]:
    yield func, info
    for node in own_nodes(func.body):
        if isinstance(node, cst.FunctionDef):
            yield from _with_nested(node, FunctionInfo(f"{info.qualname}.<{node.name.value}>", False, True))


def own_nodes(root: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node under `root` in the same function: nested defs and classes are yielded, not entered."""
    stack = list(reversed(root.children))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            stack.extend(reversed(node.children))


def all_nodes(root: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node under `root`, nested functions and classes included."""
    stack = list(reversed(root.children))
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children))


def names_in(node: cst.CSTNode) -> set[str]:
    """Every identifier (Name node) in the subtree, attributes' and keywords' names included."""
    found = {node.value} if isinstance(node, cst.Name) else set()
    for child in node.children:
        found |= names_in(child)
    return found


_DYNAMIC = frozenset({"locals", "vars", "exec", "eval"})


def uses_dynamic_scope(func: cst.FunctionDef) -> bool:
    """`locals()`, `vars()`, `exec`, `eval` can read or write any local behind the analyses' back."""
    for node in own_nodes(func.body):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in _DYNAMIC:
            return True
    return False

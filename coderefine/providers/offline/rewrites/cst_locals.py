"""What a codemod must know about a function's local variables before it may change them.

`local_var` says where a local is bound and read (or that it escapes our analysis); `confined` and
`in_loop` say whether a loop may change how it binds one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import ComprehensionScope, Scope

from coderefine.providers.offline.rewrites.cst_functions import all_nodes, names_in, uses_dynamic_scope
from coderefine.providers.offline.rewrites.cst_session import Session


@dataclass
class LocalVar:
    name: str
    bindings: list[cst.CSTNode]  # what binds it: the target Name of an assignment, a Param, ...
    uses: list[cst.Name]  # reads, in the function itself or in its comprehensions
    escapes: bool  # read or bound in a nested function/lambda/class, or deleted: we cannot follow it


def local_var(session: Session, func: cst.FunctionDef, name: str) -> LocalVar | None:
    """How `name`, a local variable (or parameter) of `func`, is bound and used; None if not local.

    Bindings come from libcst's scope analysis. Uses do not: libcst links a read to the bindings that
    precede it, so a read before the binding (in a loop, the value from the previous iteration) would
    be missed. Every occurrence of the identifier in the function counts instead, and one in a nested
    function, lambda or class, or in a comprehension that binds the same name, makes the variable
    "escape" (we then decline rather than work out which variable it is).
    """
    scopes = session.scopes(func)
    scope = scopes.get(func.body)
    if scope is None or name not in scope.assignments:
        return None
    bindings: list[cst.CSTNode] = []
    escapes = uses_dynamic_scope(func)
    for assignment in scope.assignments[name]:
        node = getattr(assignment, "node", None)
        if node is None:
            return None
        bindings.append(node)
        if isinstance(node, cst.Name) and scopes.get(node) is not scope:
            escapes = True  # bound in a comprehension or through `nonlocal` in a nested function
    binding_ids = {id(b) for b in bindings}
    param_names = {id(b.name) for b in bindings if isinstance(b, cst.Param)}
    uses: list[cst.Name] = []
    for node in all_nodes(func.body):
        if not isinstance(node, cst.Name) or node.value != name:
            if isinstance(node, (cst.Del, cst.Match)) and name in names_in(node):
                escapes = True
            continue
        if id(node) in binding_ids or id(node) in param_names:
            continue
        role = _name_role(session, node)
        if role == "other":
            continue
        if role == "binding" or not _same_function(scopes, node, scope):
            escapes = True
            continue
        uses.append(node)
    return LocalVar(name, bindings, uses, escapes)


def confined(session: Session, var: LocalVar, loop: cst.CSTNode, func: cst.FunctionDef) -> bool:
    """Nothing reads `var` after `loop` ends, so the loop may stop binding it (or bind it differently).

    Every binding and use must be inside the loop or before it in the source; the latter only
    proves "before it runs" when no enclosing loop can come back to it.
    """
    if var.escapes:
        return False
    # A for loop's `else:` runs after the loop, with the variable's final value: that is outside.
    parts = [loop.target, loop.iter, loop.body] if isinstance(loop, cst.For) else [loop]
    outside = [n for n in [*var.bindings, *var.uses] if not any(session.contains(p, n) for p in parts)]
    if not outside:
        return True
    if in_loop(session, loop, func) is not None:
        return False
    start = session.position(loop)
    return all(session.position(n) < start for n in outside)


COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)


def in_loop(session: Session, node: cst.CSTNode, stop: cst.CSTNode) -> cst.CSTNode | None:
    """The outermost loop (for/while statement or comprehension) around `node` below `stop`, if any.

    A for statement's iterable and else clause, and a comprehension's first iterable, run once: a node
    there is not inside that loop.
    """
    outermost: cst.CSTNode | None = None
    child = node
    for ancestor in session.ancestors(node):
        if ancestor is stop:
            break
        if (
            (isinstance(ancestor, cst.For) and child is ancestor.body)
            or (isinstance(ancestor, cst.While) and child in (ancestor.body, ancestor.test))
            or (isinstance(ancestor, COMPREHENSIONS) and not session.contains(ancestor.for_in.iter, node))
        ):
            outermost = ancestor
        child = ancestor
    return outermost


def _name_role(session: Session, node: cst.Name) -> str:
    """What an occurrence of a name is: a "use", a "binding", or "other" (an attribute or keyword)."""
    parent = session.parent(node)
    if isinstance(parent, cst.Attribute) and parent.attr is node:
        return "other"
    if isinstance(parent, cst.Arg) and parent.keyword is node:
        return "other"
    if isinstance(parent, (cst.FunctionDef, cst.ClassDef)) and parent.name is node:
        return "binding"
    if isinstance(parent, (cst.Param, cst.AsName, cst.ImportAlias, cst.NameItem)):
        return "binding"
    targets = (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.NamedExpr)
    if isinstance(parent, targets) and getattr(parent, "target", None) is node:
        return "binding"  # one libcst did not attribute to this function's scope
    child: cst.CSTNode = node
    for ancestor in session.ancestors(node):  # loop targets, possibly inside tuples
        if isinstance(ancestor, (cst.For, cst.CompFor)):
            return "binding" if child is ancestor.target else "use"
        if not isinstance(ancestor, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
            break
        child = ancestor
    return "use"


def _same_function(scopes: Mapping[cst.CSTNode, Scope | None], node: cst.CSTNode, scope: Scope) -> bool:
    """`node` runs in `scope` itself or in a comprehension of it (not in a nested function or lambda)."""
    current = scopes.get(node)
    while current is not None and current is not scope:
        if not isinstance(current, ComprehensionScope):
            return False
        current = current.parent
    return current is scope

"""Accumulation loops to one comprehension.

    s = ''                               s = ''.join([f(c) if c.isalpha() else c for c in text])
    for c in text:                 ->
        if c.isalpha():
            s += f(c)
        else:
            s += c

and the same with `out = []` / `out.append(...)` (`out = [...]`). The loop must directly follow the
initialisation, hold nothing but the accumulation (possibly under if/elif/else), and its variable must
not be read after the loop (a comprehension does not leak it). A loop inside `try` or `with` is left
alone: there an exception could expose the half-built value. For strings, a non-str item still raises
TypeError, but only after the loop has evaluated the remaining items.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import libcst as cst

from coderefine.providers.offline.rewrites.cst_functions import FunctionInfo, names_in, own_nodes
from coderefine.providers.offline.rewrites.cst_locals import confined, local_var
from coderefine.providers.offline.rewrites.cst_patterns import is_str_literal
from coderefine.providers.offline.rewrites.cst_session import Session

_NEEDS_PARENS = (cst.IfExp, cst.Lambda, cst.NamedExpr, cst.Yield)
_MAX_WIDTH = 100  # beyond this, the comprehension gets one line per clause
_FORBIDDEN = (cst.NamedExpr, cst.Yield, cst.Await, cst.Lambda)


@dataclass(frozen=True)
class _Shape:
    element: cst.BaseExpression  # the item expression (nested conditional expressions for if/else)
    condition: cst.BaseExpression | None  # the filter of a lone `if` without else


def find_str_concat(session: Session, func: cst.FunctionDef, info: FunctionInfo) -> None:
    del info
    _find(session, func, mode="str")


def find_append_loop(session: Session, func: cst.FunctionDef, info: FunctionInfo) -> None:
    del info
    _find(session, func, mode="list")


def _find(session: Session, func: cst.FunctionDef, mode: str) -> None:
    for block in [func.body, *own_nodes(func.body)]:
        if not isinstance(block, cst.IndentedBlock):
            continue
        statements = list(block.body)
        for first, second in itertools.pairwise(statements):
            if isinstance(second, cst.For):
                _try_pair(session, func, first, second, mode)


def _try_pair(session: Session, func: cst.FunctionDef, init: cst.BaseStatement, loop: cst.For, mode: str) -> None:
    if not isinstance(init, cst.SimpleStatementLine) or len(init.body) != 1:
        return
    assign = init.body[0]
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
        return
    acc = assign.targets[0].target
    if not isinstance(acc, cst.Name):
        return
    if mode == "str" and not is_str_literal(assign.value):
        return
    if mode == "list" and not (isinstance(assign.value, cst.List) and not assign.value.elements):
        return
    if loop.asynchronous is not None or loop.orelse is not None or _has_comment(session, loop):
        return
    if not isinstance(loop.body, cst.IndentedBlock) or len(loop.body.body) != 1:
        return
    shape = _shape(loop.body.body[0], acc.value, mode, top=True)
    if shape is None or not _safe(session, func, loop, acc, shape):
        return
    new_value = _new_value(session, assign.value, loop, shape, mode)
    if new_value is None:
        return
    depth = sum(1 for a in session.ancestors(loop) if isinstance(a, cst.IndentedBlock))
    width = 4 * depth + len(acc.value) + 3 + len(session.module.code_for_node(new_value))
    if width > _MAX_WIDTH and "\n" not in session.module.code_for_node(new_value):
        new_value = _multiline(new_value)
    if session.replace(loop, lambda n: cst.RemovalSentinel.REMOVE):
        session.replace(assign, lambda n: n.with_changes(value=new_value))


def _has_comment(session: Session, loop: cst.For) -> bool:
    # The loop disappears; a comment in it would be lost. '#' in a string literal also declines: fine.
    return "#" in session.module.code_for_node(loop)


def _shape(stmt: cst.BaseStatement, acc: str, mode: str, *, top: bool) -> _Shape | None:
    leaf = _leaf(stmt, acc, mode)
    if leaf is not None:
        return _Shape(leaf, None)
    if not isinstance(stmt, cst.If):
        return None
    body = _only_statement(stmt.body)
    then = _leaf(body, acc, mode) if body is not None else None
    if then is None:
        return None
    if stmt.orelse is None:
        return _Shape(then, stmt.test) if top else None
    if isinstance(stmt.orelse, cst.If):
        rest = _shape(stmt.orelse, acc, mode, top=False)
    else:
        other = _only_statement(stmt.orelse.body)
        leaf_else = _leaf(other, acc, mode) if other is not None else None
        rest = _Shape(leaf_else, None) if leaf_else is not None else None
    if rest is None or rest.condition is not None:
        return None
    return _Shape(cst.IfExp(test=_paren(stmt.test), body=_paren(then), orelse=rest.element), None)


def _only_statement(suite: cst.BaseSuite) -> cst.BaseStatement | None:
    if isinstance(suite, cst.IndentedBlock) and len(suite.body) == 1:
        return suite.body[0]
    if isinstance(suite, cst.SimpleStatementSuite) and len(suite.body) == 1:
        return cst.SimpleStatementLine(body=[suite.body[0]])
    return None


def _leaf(stmt: cst.BaseStatement, acc: str, mode: str) -> cst.BaseExpression | None:
    """E of `acc += E` (str) or `acc.append(E)` (list), alone on its line."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    if mode == "str":
        is_add = isinstance(small, cst.AugAssign) and isinstance(small.operator, cst.AddAssign)
        if is_add and isinstance(small.target, cst.Name) and small.target.value == acc:
            return small.value
        return None
    if not isinstance(small, cst.Expr) or not isinstance(small.value, cst.Call):
        return None
    call = small.value
    if not isinstance(call.func, cst.Attribute) or call.func.attr.value != "append":
        return None
    if not (isinstance(call.func.value, cst.Name) and call.func.value.value == acc):
        return None
    if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        return None
    return call.args[0].value


def _safe(session: Session, func: cst.FunctionDef, loop: cst.For, acc: cst.Name, shape: _Shape) -> bool:
    parts: list[cst.CSTNode] = [loop.iter, loop.body]
    if any(acc.value in names_in(part) for part in [loop.iter, shape.element, *_opt(shape.condition)]):
        return False  # the loop reads the half-built value
    if any(_contains(part, _FORBIDDEN) for part in parts):
        return False
    for ancestor in session.ancestors(loop):
        if ancestor is func:
            break
        if isinstance(ancestor, (cst.Try, cst.TryStar, cst.With)):
            return False
    var = local_var(session, func, acc.value)
    if var is None or var.escapes:
        return False
    loop_names = _target_names(loop.target)
    if loop_names is None:
        return False
    for name in loop_names:
        target_var = local_var(session, func, name)
        if target_var is None or not confined(session, target_var, loop, func):
            return False
    return True


def _opt(node: cst.BaseExpression | None) -> list[cst.BaseExpression]:
    return [] if node is None else [node]


def _contains(node: cst.CSTNode, kinds: tuple[type[cst.CSTNode], ...]) -> bool:
    return isinstance(node, kinds) or any(_contains(child, kinds) for child in node.children)


def _target_names(target: cst.BaseAssignTargetExpression) -> list[str] | None:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        names: list[str] = []
        for element in target.elements:
            if not isinstance(element, cst.Element):
                return None
            inner = _target_names(element.value)  # type: ignore[arg-type]
            if inner is None:
                return None
            names.extend(inner)
        return names
    return None


def _new_value(
    session: Session, init: cst.BaseExpression, loop: cst.For, shape: _Shape, mode: str
) -> cst.BaseExpression | None:
    target = loop.target.with_changes(lpar=[], rpar=[]) if isinstance(loop.target, cst.Tuple) else loop.target
    plain = shape.condition is None and isinstance(target, cst.Name) and shape.element.deep_equals(target)
    if mode == "list":
        if plain:
            return _call("list", loop.iter) if session.facts.is_builtin("list") else None
        return _comprehension(target, loop.iter, shape)
    joined_arg = loop.iter if plain else _comprehension(target, loop.iter, shape)
    empty = isinstance(init, cst.SimpleString) and init.raw_value == ""
    receiver = init if empty else cst.SimpleString("''")
    join = cst.Call(func=cst.Attribute(value=receiver, attr=cst.Name("join")), args=[cst.Arg(joined_arg)])
    return join if empty else cst.BinaryOperation(left=init, operator=cst.Add(), right=join)


def _comprehension(target: cst.BaseAssignTargetExpression, iterable: cst.BaseExpression, shape: _Shape) -> cst.ListComp:
    ifs = [] if shape.condition is None else [cst.CompIf(test=_paren(shape.condition))]
    return cst.ListComp(
        elt=shape.element,
        for_in=cst.CompFor(target=target, iter=_paren(iterable), ifs=ifs),
    )


def _call(name: str, arg: cst.BaseExpression) -> cst.Call:
    return cst.Call(func=cst.Name(name), args=[cst.Arg(arg)])


def _paren(node: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(node, _NEEDS_PARENS) and not node.lpar:
        return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return node


def _multiline(node: cst.BaseExpression) -> cst.BaseExpression:
    """Lay a long comprehension out one clause per line (inside `''.join(...)` too)."""
    if isinstance(node, cst.Call):
        return node.with_changes(args=[node.args[0].with_changes(value=_multiline(node.args[0].value))])
    if isinstance(node, cst.BinaryOperation):
        return node.with_changes(right=_multiline(node.right))
    if not isinstance(node, cst.ListComp):
        return node
    for_in = node.for_in.with_changes(
        whitespace_before=_newline("    "),
        ifs=[i.with_changes(whitespace_before=_newline("    ")) for i in node.for_in.ifs],
    )
    return node.with_changes(
        elt=_break_chain(node.elt),
        for_in=for_in,
        lbracket=cst.LeftSquareBracket(whitespace_after=_newline("    ")),
        rbracket=cst.RightSquareBracket(whitespace_before=_newline("")),
    )


def _break_chain(node: cst.BaseExpression) -> cst.BaseExpression:
    """`a if x else b if y else c` with each `else` starting a line."""
    if isinstance(node, cst.IfExp) and not node.lpar:
        return node.with_changes(whitespace_before_else=_newline("    "), orelse=_break_chain(node.orelse))
    return node


def _newline(indent: str) -> cst.ParenthesizedWhitespace:
    # indent=True continues at the enclosing block's indentation, then `indent` more.
    return cst.ParenthesizedWhitespace(indent=True, last_line=cst.SimpleWhitespace(indent))

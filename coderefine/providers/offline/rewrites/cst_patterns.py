"""Small questions codemods ask about one node in its session (is this name used as `name.meth(...)`?),
and the helpers that build and print expressions."""

from __future__ import annotations

import libcst as cst

from coderefine.providers.offline.rewrites.cst_session import Session


def simple_assignment(session: Session, name_node: cst.CSTNode) -> tuple[cst.Assign, cst.SimpleStatementLine] | None:
    """`x = value` alone on its line, where `name_node` is the `x`."""
    target = session.parent(name_node)
    assign = session.parent(target) if target is not None else None
    line = session.parent(assign) if assign is not None else None
    if (
        isinstance(target, cst.AssignTarget)
        and isinstance(assign, cst.Assign)
        and len(assign.targets) == 1
        and isinstance(line, cst.SimpleStatementLine)
        and len(line.body) == 1
    ):
        return assign, line
    return None


def method_call(session: Session, name: cst.Name) -> tuple[str, cst.Call] | None:
    """(`meth`, the call) when `name` is used as `name.meth(...)`."""
    attribute = session.parent(name)
    call = session.parent(attribute) if attribute is not None else None
    if isinstance(attribute, cst.Attribute) and attribute.value is name and isinstance(call, cst.Call):
        return (attribute.attr.value, call) if call.func is attribute else None
    return None


def membership_test(session: Session, name: cst.Name) -> cst.Comparison | None:
    """The comparison when `name` is the container of a lone `x in name` / `x not in name`."""
    target = session.parent(name)
    comparison = session.parent(target) if target is not None else None
    if (
        isinstance(target, cst.ComparisonTarget)
        and target.comparator is name
        and isinstance(target.operator, (cst.In, cst.NotIn))
        and isinstance(comparison, cst.Comparison)
        and len(comparison.comparisons) == 1
    ):
        return comparison
    return None


def builtin_call_arg(session: Session, name: cst.Name, allowed: frozenset[str]) -> str | None:
    """The builtin's name when `name` is a plain positional argument of a call to one of `allowed`."""
    arg = session.parent(name)
    call = session.parent(arg) if arg is not None else None
    if not (isinstance(arg, cst.Arg) and arg.value is name and not arg.keyword and not arg.star):
        return None
    if isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value in allowed:
        return call.func.value if session.facts.is_builtin(call.func.value) else None
    return None


def is_str_literal(node: cst.CSTNode) -> bool:
    """A plain (not bytes, not f-) string literal, or an implicit concatenation of such."""
    if isinstance(node, cst.SimpleString):
        prefix = node.prefix.lower()
        return "b" not in prefix
    if isinstance(node, cst.ConcatenatedString):
        return is_str_literal(node.left) and is_str_literal(node.right)
    return False


def expr(code: str) -> cst.BaseExpression:
    return cst.parse_expression(code)


def code_of(session: Session, node: cst.CSTNode) -> str:
    return session.module.code_for_node(node)

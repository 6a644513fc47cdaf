"""Codemods on whole loops: trial division up to the square root, accumulation loops to comprehensions."""

from __future__ import annotations

import libcst as cst

from coderefine.providers.offline.rewrites.cst_functions import FunctionInfo, own_nodes
from coderefine.providers.offline.rewrites.cst_locals import confined, local_var
from coderefine.providers.offline.rewrites.cst_patterns import code_of, expr
from coderefine.providers.offline.rewrites.cst_session import Session

_EXITS = (cst.Return, cst.Break, cst.Raise)
_CONSTANTS = (cst.Integer, cst.Float, cst.SimpleString)


# -- trial-division-sqrt ----------------------------------------------------------------------------
#
#   for i in range(2, n):            ->   for i in range(2, math.isqrt(max(n, 0)) + 1):
#       if n % i == 0:                        if n % i == 0:
#           return False                          return False
#
# If n has a divisor in [2, n) its smallest one is at most isqrt(n), so the first hit is the same
# divisor and the loop ends the same way. Without an exit, the body may only set flags to constants,
# which gives the same state whether it runs once or many times. `range(2, n - 1)` is the same search
# (n - 1 never divides n > 2). The loop variable must not be read after the loop: its last value differs.


def find_trial_division(session: Session, func: cst.FunctionDef, info: FunctionInfo) -> None:
    del info
    if not session.facts.is_builtin("range"):
        return
    for node in own_nodes(func.body):
        if isinstance(node, cst.For) and node.asynchronous is None:
            bound = _trial_division_bound(session, func, node)
            if bound is not None:
                _rewrite_bound(session, node, bound)


def _trial_division_bound(session: Session, func: cst.FunctionDef, loop: cst.For) -> cst.BaseExpression | None:
    """The `n` of `for i in range(2, n)` when the loop is a trial division we can shorten."""
    if not isinstance(loop.target, cst.Name) or not isinstance(loop.iter, cst.Call):
        return None
    call = loop.iter
    if not (isinstance(call.func, cst.Name) and call.func.value == "range" and len(call.args) == 2):
        return None
    if any(a.keyword is not None or a.star for a in call.args):
        return None
    start, stop = call.args[0].value, call.args[1].value
    if not (isinstance(start, cst.Integer) and start.value == "2"):
        return None
    if (
        isinstance(stop, cst.BinaryOperation)
        and isinstance(stop.operator, cst.Subtract)
        and isinstance(stop.right, cst.Integer)
        and stop.right.value == "1"
    ):
        stop = stop.left
    if not _pure_bound(session, stop):
        return None
    body = loop.body
    if not isinstance(body, cst.IndentedBlock) or len(body.body) != 1 or not isinstance(body.body[0], cst.If):
        return None
    test = body.body[0]
    if test.orelse is not None or not _divides(test.test, stop, loop.target.value):
        return None
    statements = _small_statements(test.body)
    if statements is None or not _flag_or_exit(statements, loop.target.value, _bound_names(stop)):
        return None
    var = local_var(session, func, loop.target.value)
    if var is None or not confined(session, var, loop, func):
        return None  # the loop variable is read after the loop, where its last value would differ
    return stop


def _pure_bound(session: Session, node: cst.BaseExpression) -> bool:
    """`n` or `len(s)`: reading it twice gives the same value and does nothing else."""
    if isinstance(node, cst.Name):
        return True
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "len"):
        return False
    if len(node.args) != 1 or node.args[0].star or node.args[0].keyword is not None:
        return False
    return isinstance(node.args[0].value, cst.Name) and session.facts.is_builtin("len")


def _bound_names(node: cst.BaseExpression) -> set[str]:
    if isinstance(node, cst.Name):
        return {node.value}
    assert isinstance(node, cst.Call)
    arg = node.args[0].value
    return {arg.value} if isinstance(arg, cst.Name) else set()


def _divides(test: cst.BaseExpression, bound: cst.BaseExpression, var: str) -> bool:
    """`n % i == 0`, `0 == n % i` or `not n % i`."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _is_mod(test.expression, bound, var)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        if not isinstance(target.operator, cst.Equal):
            return False
        left, right = test.left, target.comparator
        if _is_zero(right):
            return _is_mod(left, bound, var)
        return _is_zero(left) and _is_mod(right, bound, var)
    return False


def _is_zero(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Integer) and node.value == "0" and not node.lpar


def _is_mod(node: cst.BaseExpression, bound: cst.BaseExpression, var: str) -> bool:
    return (
        isinstance(node, cst.BinaryOperation)
        and isinstance(node.operator, cst.Modulo)
        and node.left.deep_equals(bound)
        and isinstance(node.right, cst.Name)
        and node.right.value == var
    )


def _small_statements(body: cst.BaseSuite) -> list[cst.BaseSmallStatement] | None:
    if isinstance(body, cst.SimpleStatementSuite):
        return list(body.body)
    statements: list[cst.BaseSmallStatement] = []
    for line in body.body:
        if not isinstance(line, cst.SimpleStatementLine):
            return None
        statements.extend(line.body)
    return statements


def _flag_or_exit(statements: list[cst.BaseSmallStatement], var: str, protected: set[str]) -> bool:
    if not statements or any(isinstance(s, cst.Continue) for s in statements):
        return False
    protected = protected | {var}
    if isinstance(statements[-1], _EXITS):
        # Runs once, at the same (smallest) divisor in both versions; it must not move the bound.
        return not any(_stores(s) & protected for s in statements)
    for statement in statements:  # no exit: only idempotent `flag = <constant>`
        if not isinstance(statement, cst.Assign) or not isinstance(statement.value, _CONSTANTS):
            return False
        targets = [t.target for t in statement.targets]
        if not all(isinstance(t, cst.Name) and t.value not in protected for t in targets):
            return False
    return True


def _stores(node: cst.CSTNode) -> set[str]:
    """Names a small statement may rebind (assignment targets, walrus)."""
    found: set[str] = set()
    if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.NamedExpr)):
        target = node.target
        found |= {target.value} if isinstance(target, cst.Name) else _all_names(target)
    for child in node.children:
        found |= _stores(child)
    return found


def _all_names(node: cst.CSTNode) -> set[str]:
    found = {node.value} if isinstance(node, cst.Name) else set()
    for child in node.children:
        found |= _all_names(child)
    return found


def _rewrite_bound(session: Session, loop: cst.For, bound: cst.BaseExpression) -> None:
    call = loop.iter
    assert isinstance(call, cst.Call)
    if not session.can_replace(call) or not session.facts.is_builtin("max"):
        return
    isqrt = session.import_name("math", "isqrt")
    if isqrt is None:
        return
    # isqrt rejects negative numbers where range(2, n) is simply empty; len() is never negative.
    inner = code_of(session, bound) if isinstance(bound, cst.Call) else f"max({code_of(session, bound)}, 0)"
    stop = expr(f"{isqrt}({inner}) + 1")
    session.replace(call, lambda n: n.with_changes(args=[n.args[0], n.args[1].with_changes(value=stop)]))

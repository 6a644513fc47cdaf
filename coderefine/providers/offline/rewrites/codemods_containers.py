"""Codemods that give a local list a better-suited container (or method) for how it is used.

Each one first proves that the list is local, bound once, and that every use of its name is one of a
few known shapes (see uses.py); a single unknown use makes it decline. That is what lets `x in lst`
become `x in lst_set` without checking types at runtime: nothing else can see or change the list.
"""

from __future__ import annotations

import libcst as cst

from coderefine.providers.offline.rewrites.cst_functions import FunctionInfo, own_nodes
from coderefine.providers.offline.rewrites.cst_locals import LocalVar, in_loop, local_var
from coderefine.providers.offline.rewrites.cst_patterns import (
    code_of,
    expr,
    membership_test,
    method_call,
    simple_assignment,
)
from coderefine.providers.offline.rewrites.cst_session import Session
from coderefine.providers.offline.rewrites.uses import (
    index_load,
    index_store,
    is_simple_index,
    is_truth_test,
    pure_argument,
    read_only_use,
)

_LIST_BUILDERS = frozenset({"list", "sorted"})


def _list_names(
    session: Session, func: cst.FunctionDef, wanted: set[str], *, empty_only: bool
) -> list[tuple[LocalVar, cst.Assign]]:
    """Locals in `wanted` bound exactly once, alone on a line, to a new list (`[]`, `list(...)`, ...)."""
    found: list[tuple[LocalVar, cst.Assign]] = []
    seen: set[str] = set()
    for node in own_nodes(func.body):
        if not isinstance(node, cst.Assign) or len(node.targets) != 1:
            continue
        target = node.targets[0].target
        if not isinstance(target, cst.Name) or target.value in seen or target.value not in wanted:
            continue
        seen.add(target.value)
        if not _makes_list(session, node.value, empty_only=empty_only):
            continue
        var = local_var(session, func, target.value)
        if var is None or var.escapes or var.bindings != [target] or simple_assignment(session, target) is None:
            continue
        found.append((var, node))
    return found


def _syntactic_names(func: cst.FunctionDef, *, container: bool = False, method: str = "") -> set[str]:
    """Names used as `x in NAME` (container) or as `NAME.method(...)`.

    A cheap first filter: the scope analysis then runs only for functions that have a candidate.
    """
    names: set[str] = set()
    for node in own_nodes(func.body):
        name: cst.BaseExpression | None = None
        if container and isinstance(node, cst.ComparisonTarget):
            name = node.comparator if isinstance(node.operator, (cst.In, cst.NotIn)) else None
        elif method and isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            name = node.func.value if node.func.attr.value == method else None
        if isinstance(name, cst.Name):
            names.add(name.value)
    return names


def _makes_list(session: Session, value: cst.BaseExpression, *, empty_only: bool) -> bool:
    if isinstance(value, cst.List):
        return not value.elements or not empty_only
    if empty_only:
        return False
    if isinstance(value, cst.ListComp):
        return True
    return (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Name)
        and value.func.value in _LIST_BUILDERS
        and session.facts.is_builtin(value.func.value)
    )


# -- list-iadd-to-append: `lst += [x]` -> `lst.append(x)` ---------------------------------------------


def find_iadd_append(session: Session, func: cst.FunctionDef, info: FunctionInfo) -> None:
    del info
    for node in own_nodes(func.body):
        if not isinstance(node, cst.AugAssign) or not isinstance(node.operator, cst.AddAssign):
            continue
        if not isinstance(node.target, cst.Name) or not isinstance(node.value, cst.List):
            continue
        elements = node.value.elements
        if len(elements) != 1 or not isinstance(elements[0], cst.Element):
            continue
        if _always_list(session, func, node.target.value):
            session.replace(node, _to_append)


def _always_list(session: Session, func: cst.FunctionDef, name: str) -> bool:
    """Every binding of `name` in `func` makes it a list, so `+= [x]` is `list.extend`."""
    var = local_var(session, func, name)
    if var is None or var.escapes:
        return False
    for binding in var.bindings:
        parent = session.parent(binding)
        if isinstance(parent, cst.AugAssign):
            if not (isinstance(parent.operator, cst.AddAssign) and isinstance(parent.value, cst.List)):
                return False
            continue
        found = simple_assignment(session, binding)
        if found is None or not _makes_list(session, found[0].value, empty_only=False):
            return False
    return True


def _to_append(node: cst.CSTNode) -> cst.CSTNode:
    assert isinstance(node, cst.AugAssign) and isinstance(node.value, cst.List)
    element = node.value.elements[0].value
    call = cst.Call(func=cst.Attribute(value=node.target, attr=cst.Name("append")), args=[cst.Arg(element)])
    return cst.Expr(value=call, semicolon=node.semicolon)


# -- seen-list-to-set ----------------------------------------------------------------------------------


def find_seen_list(session: Session, func: cst.FunctionDef, info: FunctionInfo) -> None:
    """`seen = []` used for `x in seen` and `seen.append(x)`: keep the list, test a companion set."""
    del info
    if not session.facts.is_builtin("set"):
        return
    wanted = _syntactic_names(func, container=True) & _syntactic_names(func, method="append")
    for var, assign in _list_names(session, func, wanted, empty_only=True):
        appends: list[tuple[cst.Expr, cst.BaseExpression]] = []
        tests: list[cst.Name] = []
        for use in var.uses:
            call = method_call(session, use)
            statement = session.parent(call[1]) if call else None
            if call and call[0] == "append" and isinstance(statement, cst.Expr) and _single_arg(call[1]):
                appends.append((statement, call[1].args[0].value))
            elif membership_test(session, use) is not None:
                tests.append(use)
            elif not read_only_use(session, use):
                break
        else:
            looped = any(in_loop(session, t, func) is not None for t in tests)
            if appends and looped and all(pure_argument(a) for _, a in appends):
                _companion_set(session, func, var, assign, appends, tests)


def _single_arg(call: cst.Call) -> bool:
    return len(call.args) == 1 and call.args[0].keyword is None and not call.args[0].star


def _companion_set(
    session: Session,
    func: cst.FunctionDef,
    var: LocalVar,
    assign: cst.Assign,
    appends: list[tuple[cst.Expr, cst.BaseExpression]],
    tests: list[cst.Name],
) -> None:
    line = session.parent(assign)
    assert isinstance(line, cst.SimpleStatementLine)
    set_name = session.fresh(f"{var.name}_set", func)
    session.insert_after(line, [cst.parse_statement(f"{set_name} = set()\n")])
    for statement, arg in appends:
        add = cst.Expr(expr(f"{set_name}.add({code_of(session, arg)})"))
        holder = session.parent(statement)
        if isinstance(holder, cst.SimpleStatementLine) and len(holder.body) == 1:
            session.insert_after(holder, [cst.SimpleStatementLine(body=[add])])
        else:
            session.replace(statement, lambda n, a=add: cst.FlattenSentinel([n, a]))
    for test in tests:
        session.replace(test, lambda n: cst.Name(set_name))


# -- membership-in-loop-to-set --------------------------------------------------------------------------

_SEQUENCE_ANNOTATIONS = frozenset({"list", "List", "tuple", "Tuple"})


def find_membership_in_loop(session: Session, func: cst.FunctionDef, info: FunctionInfo) -> None:
    """`x in items` inside a loop, `items` a list nothing changes -> one `set(items)` before the loop."""
    del info
    if not session.facts.is_builtin("set") or not isinstance(func.body, cst.IndentedBlock):
        return
    wanted = _syntactic_names(func, container=True)
    if not wanted:
        return
    top = list(func.body.body)
    candidates: list[tuple[LocalVar, int]] = []  # the list, and the index of the first statement after it
    for var, assign in _list_names(session, func, wanted, empty_only=False):
        line = session.parent(assign)
        if line in top:
            candidates.append((var, top.index(line) + 1))
    for param in [*func.params.posonly_params, *func.params.params, *func.params.kwonly_params]:
        if param.name.value not in wanted or not _sequence_annotation(param):
            continue
        var = local_var(session, func, param.name.value)
        if var is not None and not var.escapes and var.bindings == [param]:
            candidates.append((var, 0))
    for var, earliest in candidates:
        _hoist_membership(session, func, top, var, earliest)


def _sequence_annotation(param: cst.Param) -> bool:
    if param.annotation is None:
        return False  # unannotated: could be a str, where `in` tests substrings
    node = param.annotation.annotation
    if isinstance(node, cst.Subscript):
        node = node.value
    if isinstance(node, cst.Attribute):
        node = node.attr
    return isinstance(node, cst.Name) and node.value in _SEQUENCE_ANNOTATIONS


def _hoist_membership(
    session: Session, func: cst.FunctionDef, top: list[cst.BaseStatement], var: LocalVar, earliest: int
) -> None:
    sites: list[tuple[cst.Name, int]] = []
    for use in var.uses:
        if not read_only_use(session, use):
            return  # it may change, or escape to code that changes it
        if membership_test(session, use) is not None and in_loop(session, use, func) is not None:
            statement = _top_statement(session, use, top)
            if statement is None:
                return
            sites.append((use, top.index(statement)))
    if not sites:
        return
    first = min(index for _, index in sites)
    if first < earliest:
        return
    set_name = session.fresh(f"{var.name}_set", func)
    session.insert_before(top[first], [cst.parse_statement(f"{set_name} = set({var.name})\n")])
    for use, _ in sites:
        session.replace(use, lambda n: cst.Name(set_name))


def _top_statement(session: Session, node: cst.CSTNode, top: list[cst.BaseStatement]) -> cst.BaseStatement | None:
    for ancestor in session.ancestors(node):
        if ancestor in top:
            return ancestor  # type: ignore[return-value]
    return None


# -- pop-front-deque ------------------------------------------------------------------------------------

# deque has these with the same meaning as list; anything else (sort, copy, slicing, iteration while
# changing it, printing it) would behave differently, so such a use makes the codemod decline.
_DEQUE_METHODS = frozenset({"append", "extend", "pop", "insert", "remove", "clear", "count", "index", "reverse"})


def find_pop_front(session: Session, func: cst.FunctionDef, info: FunctionInfo) -> None:
    """A local list used as a FIFO queue (`q.pop(0)` in a loop) -> `collections.deque` and `popleft()`."""
    del info
    wanted = _syntactic_names(func, method="pop")
    for var, assign in _list_names(session, func, wanted, empty_only=False):
        if isinstance(assign.value, cst.ListComp) or not _list_call_ok(assign.value):
            continue
        pops = _deque_uses(session, func, var)
        if pops and any(in_loop(session, p, func) is not None for p in pops):
            if not all(session.can_replace(n) for n in [assign.value, *pops]):
                continue
            deque = session.import_name("collections", "deque", prefer_from=True)
            if deque is None:
                return
            session.replace(assign.value, lambda n, d=deque: _deque_of(d, n))
            for pop in pops:
                session.replace(pop, _popleft)


def _list_call_ok(value: cst.BaseExpression) -> bool:
    """`[...]`, `list()` or `list(x)`; `sorted(...)` would need the list first anyway."""
    if isinstance(value, cst.List):
        return True
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "list"


def _deque_uses(session: Session, func: cst.FunctionDef, var: LocalVar) -> list[cst.Call] | None:
    """The `q.pop(0)` calls when every use of `q` means the same on a deque, else None."""
    pops: list[cst.Call] = []
    for use in var.uses:
        call = method_call(session, use)
        if call is not None:
            name, node = call
            if name not in _DEQUE_METHODS:
                return None
            if name == "pop" and node.args:
                if len(node.args) != 1 or not _is_zero(node.args[0].value):
                    return None
                pops.append(node)
            continue
        if membership_test(session, use) is not None or is_truth_test(session, use) or _len_of(session, use):
            continue
        subscript = index_load(session, use) or index_store(session, use)
        if subscript is None or len(subscript.slice) != 1:
            return None
        index = subscript.slice[0].slice
        if not isinstance(index, cst.Index):
            return None  # deque has no slicing
        if not is_simple_index(index) and in_loop(session, use, func) is not None:
            return None  # deque indexing is O(n) away from the ends
    return pops


def _is_zero(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Integer) and node.value == "0"


def _len_of(session: Session, use: cst.Name) -> bool:
    arg = session.parent(use)
    call = session.parent(arg) if arg is not None else None
    return (
        isinstance(arg, cst.Arg)
        and isinstance(call, cst.Call)
        and isinstance(call.func, cst.Name)
        and call.func.value == "len"
        and len(call.args) == 1
        and session.facts.is_builtin("len")
    )


def _deque_of(deque: str, node: cst.CSTNode) -> cst.CSTNode:
    if isinstance(node, cst.List):
        args = [cst.Arg(node)] if node.elements else []
    else:
        assert isinstance(node, cst.Call)
        args = list(node.args)
    return cst.Call(func=expr(deque), args=args)


def _popleft(node: cst.CSTNode) -> cst.CSTNode:
    assert isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
    return node.with_changes(func=node.func.with_changes(attr=cst.Name("popleft")), args=[])

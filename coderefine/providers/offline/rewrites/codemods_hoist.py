"""`hoist-loop-invariants`, for programs: work a loop repeats on values it never changes is done once,
before the loop.

Two kinds, each only where invariance can be read off the code:
- a call of a pure builtin (`len`, `sorted`, `min`, `max`, `sum`, ...) whose arguments are constants or
  names the loop neither binds nor may change: not assigned, augmented, deleted or bound as a target; no
  method called on them (`s.append` may change what `len(s)` gives); no item or attribute stored into;
  never passed to anything but one of these builtins; and the loop calls no function of the program (it
  could change a global). `sorted`/`set`, which return a new object, only where that object is read and
  never kept (`x in set(a)`, `sorted(a)[k]`, `for y in sorted(a)`); a call that can raise on some values
  (all but `len`) only where every pass of the loop evaluates it (not under an `if`, `and`/`or`, a
  conditional expression, `try` or an inner loop's body). `while i < len(s)` is the classic case.
- a bound method looked up on every pass (`out.append(x)`, `seen.add(x)`, `q.popleft()`): looked up once
  into a local (`out_append = out.append`) when the loop never rebinds `out`.

Each hoist goes before the outermost loop of the same scope it is invariant in. Left alone: modules
with `global`/`nonlocal` or calling `exec`, `eval`, `globals`, `locals`, `vars`, `setattr`, `delattr`, and
modules that rebind a builtin the rule relies on. What remains unprovable (an alias changing the object,
a loop that never runs evaluating a call the original never made) execution decides, as for every rule.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import libcst as cst
from libcst.metadata import ExpressionContext, ExpressionContextProvider, MetadataWrapper, ParentNodeProvider

from coderefine.source import runs_as_program

PURE = frozenset(
    {"len", "min", "max", "sum", "abs", "sorted", "set", "frozenset", "tuple", "str", "int", "float", "ord", "chr"}
)
FRESH = frozenset({"sorted", "set"})  # a new mutable object per call: hoisted only where it is only read
TOTAL = frozenset({"len"})  # cannot raise on a sized value: may be hoisted from a conditional place
METHODS = frozenset({"append", "add", "appendleft", "extend", "popleft", "pop", "discard", "write"})
# Calls a loop may make without stopping the hoisting of builtin calls: none can rebind or change a name.
SAFE_CALLS = PURE | frozenset(
    {"print", "range", "enumerate", "zip", "map", "input", "isinstance", "reversed", "divmod", "pow", "repr"}
)
_FORBIDDEN = frozenset({"exec", "eval", "globals", "locals", "vars", "setattr", "delattr", "__import__"})
_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
Loop = cst.For | cst.While


class _Facts(cst.CSTVisitor):
    """Every name, the names stored or deleted, and the module's disqualifiers, in one walk."""

    METADATA_DEPENDENCIES = (ExpressionContextProvider, ParentNodeProvider)

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.blocked = False
        self.calls: list[cst.Call] = []

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def visit_Global(self, node: cst.Global) -> None:
        self.blocked = True

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.blocked = True

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value in _FORBIDDEN:
            self.blocked = True
        self.calls.append(node)


class _Plan:
    def __init__(self, wrapper: MetadataWrapper, names: set[str]) -> None:
        self.parents = wrapper.resolve(ParentNodeProvider)
        self.contexts = wrapper.resolve(ExpressionContextProvider)
        self.taken = set(names)
        self.before: dict[Loop, list[tuple[str, cst.BaseExpression]]] = {}
        self.replace: dict[cst.CSTNode, cst.Name] = {}
        self.hoisted: dict[tuple[int, str], str] = {}  # (loop, code) -> the local holding it
        self._changes: dict[int, tuple[set[str], bool]] = {}

    # ------------------------------------------------------------ where a node sits
    def loops_around(self, node: cst.CSTNode) -> list[tuple[Loop, list[cst.CSTNode]]]:
        """The loops of the node's scope that repeat it, outermost first, each with the path down to it."""
        found = []
        path = [node]
        current = node
        while current in self.parents:
            parent = self.parents[current]
            if isinstance(parent, _SCOPES):
                break
            if isinstance(parent, (cst.For, cst.While)) and _repeated(parent, current):
                found.append((parent, list(path)))
            path.append(parent)
            current = parent
        return found[::-1]

    # ------------------------------------------------------------ what a loop changes
    def changes(self, loop: Loop) -> tuple[set[str], bool]:
        """(names the loop binds or may change, whether it calls anything that could change a global)."""
        key = id(loop)
        if key not in self._changes:
            walker = _Changes(self.contexts, self.parents)
            loop.visit(walker)
            self._changes[key] = (walker.changed, walker.unknown_call)
        return self._changes[key]

    def local(self, base: str) -> str:
        name, index = base, 1
        while name in self.taken:
            name, index = f"{base}_{index}", index + 1
        self.taken.add(name)
        return name

    def add(self, loop: Loop, node: cst.CSTNode, code: str, base: str, value: cst.BaseExpression) -> None:
        key = (id(loop), code)
        if key not in self.hoisted:
            self.hoisted[key] = self.local(base)
            self.before.setdefault(loop, []).append((self.hoisted[key], value))
        self.replace[node] = cst.Name(self.hoisted[key])


def _repeated(loop: Loop, child: cst.CSTNode) -> bool:
    """Whether `child` (a direct child of the loop) runs on every pass: a for loop's body, a while loop's
    test and body; not a for loop's iterable and target, nor either's `else`."""
    if isinstance(loop, cst.For):
        return child is loop.body
    return child is loop.body or child is loop.test


class _Changes(cst.CSTVisitor):
    def __init__(self, contexts: object, parents: object) -> None:
        self.contexts = contexts
        self.parents = parents
        self.changed: set[str] = set()
        self.unknown_call = False

    def visit_Name(self, node: cst.Name) -> None:
        context = self.contexts.get(node)  # type: ignore[attr-defined]
        parent = self.parents.get(node)  # type: ignore[attr-defined]
        if context in (ExpressionContext.STORE, ExpressionContext.DEL) or isinstance(
            parent, (cst.FunctionDef, cst.ClassDef, cst.ImportAlias, cst.AsName)
        ):
            self.changed.add(node.value)
        elif isinstance(parent, cst.Attribute) and parent.value is node:
            outer = self.parents.get(parent)  # type: ignore[attr-defined]
            stored = self.contexts.get(parent) in (ExpressionContext.STORE, ExpressionContext.DEL)  # type: ignore[attr-defined]
            if stored or (isinstance(outer, cst.Call) and outer.func is parent):
                self.changed.add(node.value)  # a method may change the object; x.a = ... does
        elif isinstance(parent, cst.Subscript) and parent.value is node:
            if self.contexts.get(parent) in (ExpressionContext.STORE, ExpressionContext.DEL):  # type: ignore[attr-defined]
                self.changed.add(node.value)
        elif isinstance(parent, cst.Arg):
            call = self.parents.get(parent)  # type: ignore[attr-defined]
            if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value in PURE):
                self.changed.add(node.value)  # handed to something that may change it

    def visit_Call(self, node: cst.Call) -> None:
        if not (isinstance(node.func, cst.Name) and node.func.value in SAFE_CALLS) and not isinstance(
            node.func, cst.Attribute
        ):
            self.unknown_call = True

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        self.unknown_call = True  # an import runs a module's code


_CONDITIONAL = (cst.If, cst.IfExp, cst.BooleanOperation, cst.Try, cst.TryStar, cst.Match, cst.For, cst.While)


def _unconditional(path: list[cst.CSTNode]) -> bool:
    """Whether every pass of the loop evaluates the node (`path`: the node up to the loop's direct child)."""
    for child, parent in itertools.pairwise(path):
        if isinstance(parent, cst.If) and child is not parent.test:
            return False
        if isinstance(parent, cst.IfExp) and child is not parent.test:
            return False
        if isinstance(parent, cst.BooleanOperation) and child is not parent.left:
            return False
        if isinstance(parent, (cst.Try, cst.TryStar, cst.Match)):
            return False
        if isinstance(parent, cst.For) and child is not parent.iter:
            return False
        if isinstance(parent, cst.While) and child is not parent.test:
            return False
    return True


def _only_read(node: cst.Call, parents: object) -> bool:
    """A fresh object (sorted's list, set's set) that nothing can keep: read where it is made."""
    parent = parents.get(node)  # type: ignore[attr-defined]
    if isinstance(parent, cst.Subscript) and parent.value is node:
        return True
    if isinstance(parent, cst.ComparisonTarget) and isinstance(parent.operator, (cst.In, cst.NotIn)):
        return True
    if isinstance(parent, (cst.For, cst.CompFor)) and parent.iter is node:
        return True
    if isinstance(parent, cst.Arg):
        call = parents.get(parent)  # type: ignore[attr-defined]
        return isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value in PURE - FRESH
    return False


def _builtin_call(plan: _Plan, call: cst.Call, module: cst.Module) -> None:
    func = call.func
    if not isinstance(func, cst.Name) or func.value not in PURE or not call.args:
        return
    names = []
    for arg in call.args:
        if arg.keyword is not None or arg.star:
            return
        if isinstance(arg.value, cst.Name):
            names.append(arg.value.value)
        elif not isinstance(arg.value, (cst.Integer, cst.Float, cst.SimpleString)):
            return
    if func.value in FRESH and not _only_read(call, plan.parents):
        return
    for loop, path in plan.loops_around(call):
        changed, unknown_call = plan.changes(loop)
        if unknown_call or changed & set(names):
            continue
        if func.value not in TOTAL and not _unconditional(path):
            continue
        base = "_".join([func.value, *names]) if names else func.value + "_value"
        plan.add(loop, call, module.code_for_node(call), base, call)
        return


def _method(plan: _Plan, call: cst.Call) -> None:
    func = call.func
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.attr.value in METHODS):
        return
    owner = func.value.value
    for loop, _ in plan.loops_around(call):
        if _rebinds(loop, owner, plan):
            continue
        plan.add(loop, func, f"{owner}.{func.attr.value}", f"{owner}_{func.attr.value}", func)
        return


def _rebinds(loop: Loop, name: str, plan: _Plan) -> bool:
    """Whether the loop binds `name` itself (a method call on it, which `changes` also counts, does not)."""
    found = False

    class Binds(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            nonlocal found
            context = plan.contexts.get(node)
            parent = plan.parents.get(node)
            stored = context in (ExpressionContext.STORE, ExpressionContext.DEL)
            if node.value == name and (stored or isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.AsName))):
                found = True

    loop.visit(Binds())
    return found


class _Apply(cst.CSTTransformer):
    def __init__(self, plan: _Plan) -> None:
        self.plan = plan

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode) -> object:  # type: ignore[override]
        if original in self.plan.replace:
            return self.plan.replace[original]
        if isinstance(original, (cst.For, cst.While)) and original in self.plan.before:
            lines = [
                cst.SimpleStatementLine(
                    body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=value)],
                    leading_lines=updated.leading_lines if index == 0 else (),  # type: ignore[attr-defined]
                )
                for index, (name, value) in enumerate(self.plan.before[original])
            ]
            return cst.FlattenSentinel([*lines, updated.with_changes(leading_lines=())])  # type: ignore[attr-defined]
        return updated


def hoist_loop_invariants(source: str, targets: Sequence[str] | None) -> str:
    if ("for " not in source and "while " not in source) or not runs_as_program(source):
        return source
    wrapper = MetadataWrapper(cst.parse_module(source))
    facts = _Facts()
    wrapper.visit(facts)
    if facts.blocked or _rebound_builtins(wrapper.module):
        return source
    plan = _Plan(wrapper, facts.names)
    for call in facts.calls:
        _builtin_call(plan, call, wrapper.module)
        if call not in plan.replace:
            _method(plan, call)
    if not plan.replace:
        return source
    return wrapper.module.visit(_Apply(plan)).code


def _rebound_builtins(module: cst.Module) -> set[str]:
    """The builtins the rule relies on that the module rebinds: a module that defines `len` is left alone."""
    bound: set[str] = set()

    class Bound(cst.CSTVisitor):
        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            bound.update(n.value for n in _names_in(node.target))

        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            bound.add(node.name.value)

        def visit_Param(self, node: cst.Param) -> None:
            bound.add(node.name.value)

        def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
            bound.add(node.evaluated_alias or node.evaluated_name.split(".")[0])

        def visit_For(self, node: cst.For) -> None:
            bound.update(n.value for n in _names_in(node.target))

    module.visit(Bound())
    return bound & (PURE | SAFE_CALLS)


def _names_in(node: cst.BaseExpression) -> list[cst.Name]:
    if isinstance(node, cst.Name):
        return [node]
    if isinstance(node, (cst.Tuple, cst.List)):
        return [name for element in node.elements for name in _names_in(element.value)]
    return []

"""The frame every libcst codemod runs in, and the analyses they share.

A codemod is a *finder*: it looks at one function and registers edits on a `Session` (replace a node,
insert statements before or after a statement, import a name). The session applies all edits in one
transform, so every node that no edit touches is printed back exactly as it was: formatting and comments
outside the rewritten nodes survive byte for byte. Finders are called for each target definition and for
every function nested in it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import ComprehensionScope, MetadataWrapper, Scope, ScopeProvider

from coderefine.cst_nodes import is_docstring
from coderefine.providers.offline.rewrites.facts import ModuleFacts, fresh_name, module_facts

Replacement = cst.CSTNode | cst.FlattenSentinel[cst.CSTNode] | cst.RemovalSentinel


@dataclass(frozen=True)
class FunctionInfo:
    qualname: str  # "f", "Cls.meth", or "f.<inner>" for a nested function
    is_method: bool  # defined directly in a class body
    nested: bool  # defined inside another function


@dataclass
class Session:
    source: str  # the module's text, exactly what `module` prints
    module: cst.Module
    facts: ModuleFacts
    replacements: dict[cst.CSTNode, Callable[[cst.CSTNode], Replacement]] = field(default_factory=dict)
    before: dict[cst.CSTNode, list[cst.BaseStatement]] = field(default_factory=dict)
    after: dict[cst.CSTNode, list[cst.BaseStatement]] = field(default_factory=dict)
    new_imports: list[str] = field(default_factory=list)
    taken: dict[cst.CSTNode, set[str]] = field(default_factory=dict)  # fresh names given out, per function
    _order: dict[cst.CSTNode, int] = field(default_factory=dict)
    _scopes: dict[cst.CSTNode, Mapping[cst.CSTNode, Scope | None]] = field(default_factory=dict)

    # -- metadata, computed on first use (scope analysis is most of a codemod's cost) ----------------
    @functools.cached_property
    def parents(self) -> Mapping[cst.CSTNode, cst.CSTNode]:
        parents: dict[cst.CSTNode, cst.CSTNode] = {}
        stack: list[cst.CSTNode] = [self.module]
        while stack:
            node = stack.pop()
            for child in node.children:
                parents[child] = node
                stack.append(child)
        return parents

    def scopes(self, func: cst.FunctionDef) -> Mapping[cst.CSTNode, Scope | None]:
        """Scope analysis of the outermost function around `func`, done on that function alone.

        A function's locals do not depend on the rest of the module, and analysing one definition
        instead of the whole module keeps the cost proportional to the code being rewritten.
        """
        outer = func
        for ancestor in self.ancestors(func):
            if isinstance(ancestor, cst.FunctionDef):
                outer = ancestor
        if outer not in self._scopes:
            wrapper = MetadataWrapper(cst.Module(body=[outer]), unsafe_skip_copy=True)
            self._scopes[outer] = wrapper.resolve(ScopeProvider)
        return self._scopes[outer]

    # -- edits -------------------------------------------------------------------------------------
    def replace(self, node: cst.CSTNode, make: Callable[[cst.CSTNode], Replacement]) -> bool:
        """Register `make(updated_node)` as the replacement of `node`; refuse overlapping edits.

        A node inside (or around) an already replaced node is left for the next pass: the two edits
        would otherwise be built from different versions of the same code.
        """
        if not self.can_replace(node):
            return False
        self.replacements[node] = make
        return True

    def can_replace(self, node: cst.CSTNode) -> bool:
        return not any(self.contains(done, node) or self.contains(node, done) for done in self.replacements)

    def insert_before(self, stmt: cst.BaseStatement, new: Sequence[cst.BaseStatement]) -> None:
        self.before.setdefault(stmt, []).extend(new)

    def insert_after(self, stmt: cst.BaseStatement, new: Sequence[cst.BaseStatement]) -> None:
        self.after.setdefault(stmt, []).extend(new)

    def contains(self, outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
        node: cst.CSTNode | None = inner
        while node is not None:
            if node is outer:
                return True
            node = self.parents.get(node)
        return False

    @property
    def has_edits(self) -> bool:
        return bool(self.replacements or self.before or self.after)

    # -- names -------------------------------------------------------------------------------------
    def fresh(self, base: str, func: cst.FunctionDef) -> str:
        """A new local name for `func`: used nowhere in the module nor given out before in `func`."""
        return fresh_name(self.facts, base, self.taken.setdefault(func, set()))

    def import_name(self, module: str, attr: str, *, prefer_from: bool = False) -> str | None:
        """Code that names `module.attr` here, reusing an import at the top of the module or adding one.

        None when the name the new import would bind is already used for something else.
        """
        for alias, imp in self.facts.imports.items():
            if imp.module == module and imp.attr == attr and self.facts.bound_once(alias):
                return alias
        for alias, imp in self.facts.imports.items():
            if imp.module == module and imp.attr is None and self.facts.bound_once(alias):
                return f"{alias}.{attr}"
        if prefer_from and self._free(attr):
            self._add_import(f"from {module} import {attr}")
            return attr
        if "." not in module and self._free(module):
            self._add_import(f"import {module}")
            return f"{module}.{attr}"
        return None

    def _free(self, name: str) -> bool:
        return not self.facts.star_import and self.facts.bindings[name] == 0

    def _add_import(self, line: str) -> None:
        if line not in self.new_imports:
            self.new_imports.append(line)

    # -- structure ---------------------------------------------------------------------------------
    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.parents.get(node)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        current = self.parents.get(node)
        while current is not None:
            yield current
            current = self.parents.get(current)

    def local(self, func: cst.FunctionDef, name: str) -> LocalVar | None:
        return local_var(self, func, name)

    def position(self, node: cst.CSTNode) -> int:
        """Rank of `node` in source order (a pre-order walk of the module)."""
        if not self._order:
            stack: list[cst.CSTNode] = [self.module]
            while stack:
                current = stack.pop()
                self._order[current] = len(self._order)
                stack.extend(reversed(current.children))
        return self._order[node]

    def confined(self, var: LocalVar, loop: cst.CSTNode, func: cst.FunctionDef) -> bool:
        """Nothing reads `var` after `loop` ends, so the loop may stop binding it (or bind it differently).

        Every binding and use must be inside the loop or before it in the source; the latter only
        proves "before it runs" when no enclosing loop can come back to it.
        """
        if var.escapes:
            return False
        # A for loop's `else:` runs after the loop, with the variable's final value: that is outside.
        parts = [loop.target, loop.iter, loop.body] if isinstance(loop, cst.For) else [loop]
        outside = [n for n in [*var.bindings, *var.uses] if not any(self.contains(p, n) for p in parts)]
        if not outside:
            return True
        if in_loop(self, loop, func) is not None:
            return False
        start = self.position(loop)
        return all(self.position(n) < start for n in outside)


class _Apply(cst.CSTTransformer):
    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> Replacement:
        result: Replacement = updated_node
        make = self.session.replacements.get(original_node)
        if make is not None:
            result = make(updated_node)
        before = self.session.before.get(original_node, [])
        after = self.session.after.get(original_node, [])
        if not before and not after:
            return result
        nodes = list(result.nodes) if isinstance(result, cst.FlattenSentinel) else [result]
        nodes = [n for n in nodes if isinstance(n, cst.CSTNode)]
        if before and nodes and isinstance(nodes[0], cst.BaseStatement):
            # Comments and blank lines above the statement stay above the inserted code.
            first = nodes[0]
            lead = getattr(first, "leading_lines", ())
            before = [before[0].with_changes(leading_lines=lead), *before[1:]]
            nodes[0] = first.with_changes(leading_lines=())
        return cst.FlattenSentinel([*before, *nodes, *after])


Finder = Callable[[Session, cst.FunctionDef, FunctionInfo], None]


def run_codemod(
    source: str, targets: Sequence[str] | None, finder: Finder, hint: str | None = None, *, passes: int = 4
) -> str:
    """Apply `finder` to the targets until it finds nothing more (nested sites need a second pass).

    `hint` is a regular expression every module with a site must match: a cheap way to skip parsing.
    """
    if hint is not None and not re.search(hint, source):
        return source
    code = source
    for _ in range(passes):
        new = _one_pass(code, targets, finder)
        if new == code:
            break
        code = new
    return code


def _one_pass(code: str, targets: Sequence[str] | None, finder: Finder) -> str:
    module = _parse(code)
    session = Session(source=code, module=module, facts=_facts(code))
    for func, info in _functions(module, targets):
        finder(session, func, info)
    if not session.has_edits:
        return code
    new_module = module.visit(_Apply(session))
    if session.new_imports:
        new_module = _add_imports(new_module, session.new_imports)
    return new_module.code


# Rules run one after another on the same text and most change nothing: parse each text once. The
# trees and facts are never modified (libcst nodes are immutable; sessions keep their own state).
@functools.lru_cache(maxsize=4)
def _parse(code: str) -> cst.Module:
    return cst.parse_module(code)


@functools.lru_cache(maxsize=4)
def _facts(code: str) -> ModuleFacts:
    return module_facts(code)


def _functions(module: cst.Module, targets: Sequence[str] | None) -> Iterator[tuple[cst.FunctionDef, FunctionInfo]]:
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


def _add_imports(module: cst.Module, lines: list[str]) -> cst.Module:
    """Insert import lines after the module's docstring and leading imports."""
    body = list(module.body)
    index = 0
    if body and is_docstring(body[0]):
        index = 1
    while index < len(body) and _is_import_line(body[index]):
        index += 1
    new: list[cst.BaseStatement] = [cst.parse_statement(line + "\n") for line in lines]
    if index < len(body) and isinstance(body[index], (cst.FunctionDef, cst.ClassDef)):
        # Imports directly above a definition: give them the two blank lines PEP 8 asks for.
        follower = body[index]
        blank = sum(1 for line in follower.leading_lines if line.comment is None)
        if blank < 2:
            padding = [cst.EmptyLine() for _ in range(2 - blank)]
            body[index] = follower.with_changes(leading_lines=[*padding, *follower.leading_lines])
    return module.with_changes(body=[*body[:index], *new, *body[index:]])


def _is_import_line(stmt: cst.BaseStatement) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body
    )


# -- local variables --------------------------------------------------------------------------------


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
    for node in _all_nodes(func.body):
        if not isinstance(node, cst.Name) or node.value != name:
            if isinstance(node, (cst.Del, cst.Match)) and name in _names_in(node):
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


def _all_nodes(root: cst.CSTNode) -> Iterator[cst.CSTNode]:
    stack = list(reversed(root.children))
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children))


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


def _names_in(node: cst.CSTNode) -> set[str]:
    found = {node.value} if isinstance(node, cst.Name) else set()
    for child in node.children:
        found |= _names_in(child)
    return found


def names_in(node: cst.CSTNode) -> set[str]:
    """Every identifier (Name node) in the subtree, attributes' and keywords' names included."""
    return _names_in(node)


_DYNAMIC = frozenset({"locals", "vars", "exec", "eval"})


def uses_dynamic_scope(func: cst.FunctionDef) -> bool:
    """`locals()`, `vars()`, `exec`, `eval` can read or write any local behind the analyses' back."""
    for node in own_nodes(func.body):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in _DYNAMIC:
            return True
    return False


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


COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)


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

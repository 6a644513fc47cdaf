"""The frame every libcst codemod runs in.

A codemod is a *finder*: it looks at one function and registers edits on a `Session` (replace a node,
insert statements before or after a statement, import a name). The session applies all edits in one
transform, so every node that no edit touches is printed back exactly as it was: formatting and comments
outside the rewritten nodes survive byte for byte. Finders are called for each target definition and for
every function nested in it.

What finders ask about the code lives beside this: cst_functions.py (which functions, walks over their
nodes), cst_locals.py (local variables and loops) and cst_patterns.py (one node's use, building code).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper, Scope, ScopeProvider

from coderefine.cst_nodes import is_docstring
from coderefine.providers.offline.rewrites.cst_functions import FunctionInfo, functions_in
from coderefine.providers.offline.rewrites.facts import ModuleFacts, fresh_name, module_facts

Replacement = cst.CSTNode | cst.FlattenSentinel[cst.CSTNode] | cst.RemovalSentinel


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

    def position(self, node: cst.CSTNode) -> int:
        """Rank of `node` in source order (a pre-order walk of the module)."""
        if not self._order:
            stack: list[cst.CSTNode] = [self.module]
            while stack:
                current = stack.pop()
                self._order[current] = len(self._order)
                stack.extend(reversed(current.children))
        return self._order[node]


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
    for func, info in functions_in(module, targets):
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

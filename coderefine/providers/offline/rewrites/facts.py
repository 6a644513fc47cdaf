"""Module-wide facts the codemods consult before they change anything (computed with `ast`).

The codemods decline whenever a name they rely on might mean something else: a builtin such as `len`
rebound anywhere in the module, a module (`math`) that a parameter shadows, a global that some function
reassigns. Counting every binding of a name in any scope is coarse, but coarse errs on the side of
declining.
"""

from __future__ import annotations

import ast
import builtins
import keyword
from collections import Counter
from dataclasses import dataclass, field

# Modules whose functions neither do I/O nor keep hidden state: calling them keeps a function pure.
PURE_MODULES = frozenset(
    {"math", "cmath", "operator", "itertools", "functools", "string", "bisect", "heapq", "fractions",
     "decimal", "statistics", "collections", "re", "typing", "numbers", "copy", "dataclasses", "enum"}
)  # fmt: skip


@dataclass(frozen=True)
class Import:
    module: str  # "math"
    attr: str | None  # "isqrt" for `from math import isqrt`, None for `import math`


@dataclass
class ModuleFacts:
    bindings: Counter[str] = field(default_factory=Counter)  # bindings of each name, all scopes together
    identifiers: set[str] = field(default_factory=set)  # every identifier in the module, for fresh names
    star_import: bool = False  # `from m import *` can bind any name, builtins included
    imports: dict[str, Import] = field(default_factory=dict)  # top-level imports before the first def/class
    constants: set[str] = field(default_factory=set)  # module names bound once, to an immutable literal
    functions: dict[str, ast.FunctionDef] = field(default_factory=dict)  # top-level defs bound once
    classes: set[str] = field(default_factory=set)  # top-level classes bound once

    def is_builtin(self, name: str) -> bool:
        """`name` certainly refers to the builtin of that name everywhere in the module."""
        return not self.star_import and self.bindings[name] == 0 and hasattr(builtins, name)

    def bound_once(self, name: str) -> bool:
        return not self.star_import and self.bindings[name] == 1


def module_facts(code: str) -> ModuleFacts:
    tree = ast.parse(code)
    facts = ModuleFacts()
    for node in ast.walk(tree):
        _count(node, facts)
    seen_def = False
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            seen_def = True
        if isinstance(stmt, ast.FunctionDef) and facts.bindings[stmt.name] == 1:
            facts.functions[stmt.name] = stmt
        elif isinstance(stmt, ast.ClassDef) and facts.bindings[stmt.name] == 1:
            facts.classes.add(stmt.name)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)) and not seen_def:
            _record_import(stmt, facts)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                if isinstance(target, ast.Name) and stmt.value is not None and is_immutable_literal(stmt.value):
                    facts.constants.add(target.id)
    facts.constants = {name for name in facts.constants if facts.bound_once(name)}
    return facts


def _count(node: ast.AST, facts: ModuleFacts) -> None:
    bound: list[str] = []
    if isinstance(node, ast.Name):
        facts.identifiers.add(node.id)
        if not isinstance(node.ctx, ast.Load):
            bound.append(node.id)
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        bound.append(node.name)
    elif isinstance(node, ast.arg):
        bound.append(node.arg)
    elif isinstance(node, ast.alias):
        if node.name == "*":
            facts.star_import = True
        else:
            bound.append(node.asname or node.name.split(".")[0])
    elif isinstance(node, (ast.Global, ast.Nonlocal)):
        bound.extend(node.names)  # a declared name is (re)bound somewhere else: never treat it as constant
    elif (isinstance(node, ast.ExceptHandler) and node.name) or (
        isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name
    ):
        bound.append(node.name)
    elif isinstance(node, ast.MatchMapping) and node.rest:
        bound.append(node.rest)
    elif isinstance(node, ast.Attribute):
        facts.identifiers.add(node.attr)
    for name in bound:
        facts.bindings[name] += 1
        facts.identifiers.add(name)


def _record_import(stmt: ast.Import | ast.ImportFrom, facts: ModuleFacts) -> None:
    if isinstance(stmt, ast.Import):
        for alias in stmt.names:
            if "." not in alias.name or alias.asname:
                facts.imports[alias.asname or alias.name] = Import(alias.name, None)
    elif stmt.module and not stmt.level:
        for alias in stmt.names:
            facts.imports[alias.asname or alias.name] = Import(stmt.module, alias.name)


def is_immutable_literal(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
        return True
    if isinstance(node, ast.Tuple):
        return all(is_immutable_literal(e) for e in node.elts)
    return False


def fresh_name(facts: ModuleFacts, base: str, taken: set[str]) -> str:
    """A name used nowhere in the module (and not yet handed out), derived from `base`."""
    candidates = [base, f"_{base}", *(f"{base}_{i}" for i in range(2, 100))]
    for name in candidates:
        used = name in facts.identifiers or name in taken
        if not used and not keyword.iskeyword(name) and not hasattr(builtins, name):
            taken.add(name)
            return name
    raise LookupError(base)  # a module using all of these names is not worth rewriting

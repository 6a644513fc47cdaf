"""memoize-recursion: memoize a pure, tree-recursive top-level function for the length of one call.

The recursion moves into an inner function of the same name decorated with `@functools.cache`, which
the outer function calls once:

    def paths(rows, cols):                      def paths(rows, cols):
        if rows == 0 or cols == 0:                  @functools.cache
            return 1                       ->       def paths(rows, cols):
        return paths(rows - 1, cols) + ...              if rows == 0 or cols == 0: ...
                                                        return paths(rows - 1, cols) + ...
                                                    return paths(rows, cols)

Inside, the recursive calls reach the cached inner function (the closure binds the name). The cache
lives for one top-level call: the exponential-to-polynomial gain stays, but no process-wide cache grows
without bound in a long-running program, no entry goes stale between calls, and repeated timing passes
cannot be flattered by results kept from an earlier pass.

Caching is only sound when the result depends on the arguments alone and nobody can change a returned
value, so the checks are deliberately strict: no I/O or hidden state (only builtins, immutable module
constants, pure stdlib modules and other functions that pass the same checks), parameters never
mutated, nothing mutable returned, no `global`/`nonlocal`/`yield`. The analysis uses `ast` and
`symtable` (which resolves every name to local, free or global exactly as the compiler does).

Known differences that remain (the behaviour gate catches them): unhashable arguments raise TypeError;
arguments that are equal but of different types (1, 1.0, True) share one cache entry; an argument
hashed by identity that changes between calls gets a stale result; and the cache wrapper is a C call,
so deep recursion reaches the recursion limit at about half the depth.
"""

from __future__ import annotations

import ast
import symtable

import libcst as cst

from coderefine.cst_nodes import is_docstring
from coderefine.providers.offline.rewrites.cst_functions import FunctionInfo
from coderefine.providers.offline.rewrites.cst_patterns import expr
from coderefine.providers.offline.rewrites.cst_session import Session
from coderefine.providers.offline.rewrites.facts import PURE_MODULES, ModuleFacts, is_immutable_literal

_IMPURE_BUILTINS = frozenset(
    {"print", "open", "input", "exec", "eval", "compile", "globals", "locals", "vars", "setattr", "delattr",
     "breakpoint", "__import__", "next", "iter", "id", "help", "exit", "quit", "memoryview"}
)  # fmt: skip
_MUTATORS = frozenset(
    {"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "update", "add", "discard",
     "setdefault", "popitem", "appendleft", "popleft", "extendleft", "rotate", "write", "send", "put",
     "__setitem__", "__delitem__", "difference_update", "intersection_update", "symmetric_difference_update"}
)  # fmt: skip
_MUTABLE_MAKERS = frozenset(
    {"list", "dict", "set", "sorted", "bytearray", "map", "filter", "zip", "iter", "reversed", "enumerate"}
)
_MUTABLE_HINTS = frozenset(
    {"list", "dict", "set", "List", "Dict", "Set", "Sequence", "MutableSequence", "Mapping", "MutableMapping",
     "Iterable", "Iterator", "Generator", "bytearray", "DefaultDict", "defaultdict", "Counter", "deque"}
)  # fmt: skip


def find_memoize(session: Session, func: cst.FunctionDef, info: FunctionInfo) -> None:
    if info.is_method or info.nested or func.decorators or func.asynchronous is not None:
        return
    name = func.name.value
    facts = session.facts
    node = facts.functions.get(name)
    if node is None or not _cacheable(session.source, facts, node):
        return
    cache = session.import_name("functools", "cache")
    if cache is not None:
        session.replace(func, lambda n: _memoized_per_call(n, cache))


def _memoized_per_call(func: cst.FunctionDef, cache: str) -> cst.FunctionDef:
    assert isinstance(func.body, cst.IndentedBlock)
    statements = list(func.body.body)
    docstring = statements[:1] if statements and is_docstring(statements[0]) else []
    inner = func.with_changes(
        decorators=[cst.Decorator(decorator=expr(cache))],
        body=func.body.with_changes(body=statements[len(docstring) :]),
        leading_lines=[],
    )
    params = func.params
    passed = [p.name.value for p in [*params.posonly_params, *params.params]]
    passed += [f"{p.name.value}={p.name.value}" for p in params.kwonly_params]
    call = cst.parse_statement(f"return {func.name.value}({', '.join(passed)})")
    call = call.with_changes(leading_lines=[cst.EmptyLine(indent=False)])
    return func.with_changes(body=func.body.with_changes(body=[*docstring, inner, call]))


def _cacheable(code: str, facts: ModuleFacts, fn: ast.FunctionDef) -> bool:
    if fn.decorator_list or not _plain_signature(fn) or _self_calls(fn) < 2:
        return False
    if _attribute_use(code, fn.name):
        return False  # `f.counter = ...` or `f.__wrapped__`: the wrapper is not the function
    tables = _function_tables(code)
    table = tables.get(fn.name)
    return table is not None and _pure(facts, tables, fn, {fn.name}) and not _returns_mutable(fn)


def _plain_signature(fn: ast.FunctionDef) -> bool:
    args = fn.args
    if args.vararg or args.kwarg:
        return False
    defaults = [*args.defaults, *(d for d in args.kw_defaults if d is not None)]
    if not all(is_immutable_literal(d) for d in defaults):
        return False
    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
        if arg.annotation is not None and _names(arg.annotation) & _MUTABLE_HINTS:
            return False
    return True


def _self_calls(fn: ast.FunctionDef) -> int:
    """Recursive call sites; one inside a loop or comprehension counts twice (it branches)."""
    count = 0
    looped = False
    for node in ast.walk(fn):
        if isinstance(node, (ast.For, ast.While, ast.comprehension)):
            looped = looped or any(_is_call_to(n, fn.name) for n in ast.walk(node))
        if _is_call_to(node, fn.name):
            count += 1
    return count + (1 if looped else 0)


def _is_call_to(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name


def _attribute_use(code: str, name: str) -> bool:
    return any(
        isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == name
        for n in ast.walk(ast.parse(code))
    )


def _function_tables(code: str) -> dict[str, symtable.SymbolTable]:
    """Symbol tables of the top-level functions whose name is defined only once."""
    try:
        top = symtable.symtable(code, "<module>", "exec")
    except SyntaxError:
        return {}
    functions = [t for t in top.get_children() if t.get_type() == "function"]
    names = [t.get_name() for t in functions]
    return {t.get_name(): t for t in functions if names.count(t.get_name()) == 1}


def _pure(facts: ModuleFacts, tables: dict[str, symtable.SymbolTable], fn: ast.FunctionDef, seen: set[str]) -> bool:
    """No I/O, no hidden state, nothing outside fresh local containers mutated (helpers included)."""
    params = {a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}
    fresh = _fresh_containers(fn)
    for node in ast.walk(fn):
        if isinstance(node, (ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom, ast.Await)):
            return False
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _IMPURE_BUILTINS:
            return False
        for target in _mutated(node):
            root = _root(target)
            if not isinstance(root, ast.Name) or root.id not in fresh or root.id in params:
                return False
    for global_name in _global_names(tables[fn.name]):
        if global_name in seen or global_name in facts.constants:
            continue
        if facts.is_builtin(global_name):
            if global_name in _IMPURE_BUILTINS:
                return False
            continue
        imported = facts.imports.get(global_name)
        if imported is not None:
            if imported.module.split(".")[0] not in PURE_MODULES or not facts.bound_once(global_name):
                return False
            continue
        helper = facts.functions.get(global_name)
        if helper is None or helper.decorator_list or global_name not in tables:
            return False
        if not _pure(facts, tables, helper, seen | {global_name}):
            return False
    return True


def _global_names(table: symtable.SymbolTable) -> set[str]:
    names = {s.get_name() for s in table.get_symbols() if s.is_global() and s.is_referenced()}
    for child in table.get_children():
        names |= _global_names(child)
    return names


def _fresh_containers(fn: ast.FunctionDef) -> set[str]:
    """Locals only ever bound to a new container made right there (`memo = {}`, `res = []`)."""
    fresh: dict[str, bool] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            fresh.setdefault(node.id, True)
            if not fresh[node.id]:
                continue
            # Only `name = <new container>` keeps a name fresh; any other binding (for, with, walrus,
            # augmented or tuple assignment) makes it unknown.
            fresh[node.id] = any(
                isinstance(a, ast.Assign) and node in a.targets and _new_container(a.value) for a in ast.walk(fn)
            )
    return {name for name, ok in fresh.items() if ok}


def _new_container(node: ast.expr | None) -> bool:
    if isinstance(node, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)):
        return True
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in {"list", "dict", "set"}


def _mutated(node: ast.AST) -> list[ast.expr]:
    """Objects this node changes in place: `x.append(...)`, `x[i] = ...`, `x.a = ...`, `del x[i]`."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS:
        return [node.func.value]
    if isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)):
        return [node.value]
    if isinstance(node, ast.AugAssign) and isinstance(node.target, (ast.Subscript, ast.Attribute)):
        return [node.target.value]
    return []


def _root(node: ast.expr) -> ast.expr:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node


def _returns_mutable(fn: ast.FunctionDef) -> bool:
    fresh = _fresh_containers(fn)
    return any(
        isinstance(node, ast.Return) and node.value is not None and _maybe_mutable(node.value, fresh)
        for node in ast.walk(fn)
    )


def _maybe_mutable(node: ast.expr, fresh: set[str]) -> bool:
    if isinstance(node, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp, ast.GeneratorExp)):
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _MUTABLE_MAKERS:
        return True
    if isinstance(node, ast.Name):
        return node.id in fresh
    if isinstance(node, ast.BinOp):
        return _maybe_mutable(node.left, fresh) or _maybe_mutable(node.right, fresh)
    if isinstance(node, ast.IfExp):
        return _maybe_mutable(node.body, fresh) or _maybe_mutable(node.orelse, fresh)
    if isinstance(node, (ast.BoolOp, ast.Tuple)):
        values = node.values if isinstance(node, ast.BoolOp) else node.elts
        return any(_maybe_mutable(v, fresh) for v in values)
    return False


def _names(node: ast.AST) -> set[str]:
    found = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    found |= {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
    found |= {n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    return found

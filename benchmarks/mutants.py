"""Small behaviour-changing mutations of one function, to check that the equivalence gate catches them.

    from mutants import mutants           # with benchmarks/ on sys.path
    for mutant in mutants(source, "count_routes"):   # or "Class.method"
        mutant.name, mutant.description, mutant.code  # code: the whole module, one mutation applied

    python benchmarks/mutants.py FILE FUNCTION      # list them

Operators (standard mutation-testing ones, each applied at one site at a time, inside the function only):
- `const+1`, `const-1`: an integer constant off by one (which covers `range(0, n)`, `a[1:]`, `x % 2`, ...);
- `slice+1`: a slice bound that is an expression, plus one (`a[:i]` -> `a[:i + 1]`);
- `range+1`, `range-1`: the stop of `range(...)` when it is an expression (`range(n)` -> `range(n + 1)`);
- `compare`: a comparison operator swapped for its neighbour (`<` <-> `<=`, `>` <-> `>=`, `==` <-> `!=`,
  `is` <-> `is not`, `in` <-> `not in`);
- `drop-branch`: an `if`/`elif` branch dropped (the statement becomes its `else` part, or `pass`);
- `bool-op`: `and` <-> `or`;
- `return-var`: `return x` returns another local variable of the function instead.

A mutant is not guaranteed to change behaviour (an equivalent mutant, e.g. `<` -> `<=` where equality
never happens): whoever uses them decides that by running original and mutant on the same inputs. Mutants
whose code equals the original or an earlier mutant are dropped. Only the function's own lines are
rewritten (with `ast.unparse`, so its comments go); the rest of the module is kept byte for byte.
Standard library only.
"""

from __future__ import annotations

import argparse
import ast
import copy
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class Mutant:
    name: str  # operator and site, e.g. "compare@L4:11"; unique within one mutants() call
    description: str  # "line 4: `i < n` -> `i <= n`"
    code: str  # the whole module with the mutation applied


_SWAPPED_COMPARISON: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}


def find_function(tree: ast.Module, function: str) -> FunctionNode:
    """The def of `name` or `Class.name` at the top level of the module."""
    owner_name, _, name = function.rpartition(".")
    body: list[ast.stmt] = tree.body
    if owner_name:
        owner = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == owner_name), None)
        if owner is None:
            raise LookupError(f"no class {owner_name}")
        body = owner.body
    node = next((n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name), None)
    if node is None:
        raise LookupError(f"no function {function}")
    return node


def _body_nodes(function: FunctionNode) -> Iterator[ast.AST]:
    """Every node of the function's body and defaults, in a fixed order; annotations are not behaviour."""
    roots: list[ast.AST] = [*function.args.defaults, *(d for d in function.args.kw_defaults if d), *function.body]
    for root in roots:
        for node in ast.walk(root):
            if isinstance(node, (ast.arg, ast.AnnAssign)):
                continue
            yield node


def _docstring(function: FunctionNode) -> ast.AST | None:
    first = function.body[0] if function.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return first.value
    return None


def _plus(node: ast.expr, delta: int) -> ast.expr:
    op: ast.operator = ast.Add() if delta > 0 else ast.Sub()
    return ast.BinOp(left=node, op=op, right=ast.Constant(abs(delta)))


def _local_names(function: FunctionNode) -> list[str]:
    """Parameters and assigned names, in order of first appearance."""
    names: list[str] = [a.arg for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)]
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id not in names:
            names.append(node.id)
    return names


# A site: (operator name, the node to change, a function that changes it in the copied tree, before -> after).
Site = tuple[str, ast.AST, Callable[[ast.AST], None]]


def _sites(function: FunctionNode) -> Iterator[Site]:
    docstring = _docstring(function)
    locals_ = _local_names(function)
    for node in _body_nodes(function):
        if node is docstring:
            continue
        if isinstance(node, ast.Constant) and type(node.value) is int:
            for delta in (1, -1):

                def shift(n: ast.AST, delta: int = delta) -> None:
                    assert isinstance(n, ast.Constant)
                    n.value = n.value + delta

                yield (f"const{delta:+d}", node, shift)
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            for field in ("lower", "upper"):
                bound = getattr(node.slice, field)
                if bound is not None and not isinstance(bound, ast.Constant):

                    def widen(n: ast.AST, field: str = field) -> None:
                        assert isinstance(n, ast.Subscript)
                        setattr(n.slice, field, _plus(getattr(n.slice, field), 1))

                    yield ("slice+1", node, widen)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "range"
            and node.args
            and not isinstance(node.args[min(1, len(node.args) - 1)], ast.Constant)
        ):
            for delta in (1, -1):

                def stop(n: ast.AST, delta: int = delta) -> None:
                    assert isinstance(n, ast.Call)
                    index = min(1, len(n.args) - 1)
                    n.args[index] = _plus(n.args[index], delta)

                yield (f"range{delta:+d}", node, stop)
        elif isinstance(node, ast.Compare):
            for position, op in enumerate(node.ops):
                if type(op) in _SWAPPED_COMPARISON:

                    def swap(n: ast.AST, position: int = position) -> None:
                        assert isinstance(n, ast.Compare)
                        n.ops[position] = _SWAPPED_COMPARISON[type(n.ops[position])]()

                    yield ("compare", node, swap)
        elif isinstance(node, ast.BoolOp):

            def flip(n: ast.AST) -> None:
                assert isinstance(n, ast.BoolOp)
                n.op = ast.Or() if isinstance(n.op, ast.And) else ast.And()

            yield ("bool-op", node, flip)
        elif isinstance(node, ast.If):

            def drop(n: ast.AST) -> None:
                assert isinstance(n, ast.If)
                # Never taking the branch drops it and keeps an `elif` chain's shape: the `else` part runs.
                n.test = ast.Constant(False)

            yield ("drop-branch", node, drop)
        elif isinstance(node, ast.Return) and isinstance(node.value, ast.Name):
            current = node.value.id
            others = [name for name in locals_ if name != current]
            if others and current in locals_:

                def other(n: ast.AST, replacement: str = others[0]) -> None:
                    assert isinstance(n, ast.Return)
                    n.value = ast.Name(id=replacement, ctx=ast.Load())

                yield ("return-var", node, other)


def _replace_function(source: str, original: FunctionNode, mutated: FunctionNode) -> str:
    lines = source.splitlines(keepends=True)
    first = (original.decorator_list[0].lineno if original.decorator_list else original.lineno) - 1
    last = original.end_lineno or original.lineno
    indent = " " * original.col_offset
    text = ast.unparse(ast.fix_missing_locations(mutated))
    block = "".join(indent + line + "\n" if line else "\n" for line in text.splitlines())
    return "".join(lines[:first]) + block + "".join(lines[last:])


def _segment(source: str, node: ast.AST) -> str:
    text = ast.get_source_segment(source, node) or ast.unparse(node)
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


def mutants(source: str, function: str) -> list[Mutant]:
    """One mutant per mutation site of `function` (`name` or `Class.name`) in `source`, in source order.

    Raises SyntaxError if the source does not parse, LookupError if the function is not there."""
    tree = ast.parse(source)
    target = find_function(tree, function)
    unchanged = ast.unparse(target)
    # Sites are found on the original tree and applied to a copy, matched by their position in the walk.
    order = {id(node): index for index, node in enumerate(ast.walk(target))}
    seen: set[str] = {source}
    found: list[tuple[int, int, Mutant]] = []
    for operator, node, change in _sites(target):
        mutated = copy.deepcopy(target)
        twin = next(n for i, n in enumerate(ast.walk(mutated)) if i == order[id(node)])
        before = _segment(source, node)
        change(twin)
        if ast.unparse(mutated) == unchanged:
            continue
        code = _replace_function(source, target, mutated)
        if code in seen:
            continue
        seen.add(code)
        line, column = getattr(node, "lineno", target.lineno), getattr(node, "col_offset", 0)
        after = " ".join(ast.unparse(twin).split())
        after = after if len(after) <= 60 else after[:57] + "..."
        name = f"{operator}@L{line}:{column}"
        found.append((line, column, Mutant(name, f"line {line}: `{before}` -> `{after}`", code)))
    found.sort(key=lambda entry: entry[:2])  # stable: operators at one site keep their order
    return [mutant for _, _, mutant in found]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="List the mutants of one function.")
    parser.add_argument("file", type=Path)
    parser.add_argument("function")
    args = parser.parse_args(argv)
    for mutant in mutants(args.file.read_text(encoding="utf-8"), args.function):
        print(f"{mutant.name:24} {mutant.description}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

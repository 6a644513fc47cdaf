"""Rewrites for programs (a script reading stdin and writing stdout), on the whole module.

- `stdin-readline`: `input()` flushes stdout and stderr before every line it reads (so a program that
  prints as it reads makes a write per line) and goes through more machinery than `sys.stdin.readline()`.
  `int(input())`, `float(input())`, `eval(input())`, `input().split()`, `.strip()` and `.rstrip()` ignore
  the newline readline keeps; elsewhere `.rstrip("\\n")` drops it as `input()` does. At end of input
  `input()` raises EOFError where readline returns "": a program relying on that is caught by its runs.
- `print-batching`: a loop whose whole body is one `print(a, b, ...)` writes one string instead:
  `print(end="".join([f"{a} {b}\\n" for ... in ...]))` (nothing at all for an empty loop, as before).

Each applies only to a module that runs as a program and never rebinds the names it relies on (`input`,
`print`, `sys`); execution decides whether the result is kept.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

import libcst as cst

from coderefine.source import runs_as_program

_NUMERIC_PARSERS = frozenset({"int", "float", "eval"})
_NEWLINE_BLIND = frozenset({"split", "strip", "rstrip"})  # methods that drop the newline readline keeps


def _bound_names(tree: ast.Module) -> set[str]:
    """Names the module binds anywhere (assignments, defs, imports, parameters, loop targets)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            found.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return found


def _imports_sys(tree: ast.Module) -> bool:
    return any(
        isinstance(node, ast.Import) and any(alias.name == "sys" and alias.asname is None for alias in node.names)
        for node in tree.body
    )


def _is_input_call(node: cst.BaseExpression) -> bool:
    return (
        isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "input" and not node.args
    )


_READLINE = cst.parse_expression("sys.stdin.readline()")
_READLINE_STRIPPED = cst.parse_expression('sys.stdin.readline().rstrip("\\n")')


class _Readline(cst.CSTTransformer):
    def __init__(self) -> None:
        self.changed = False
        self.bare: set[cst.Call] = set()  # input() calls whose newline does not matter

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        lone = node.args[0] if len(node.args) == 1 else None
        if (
            isinstance(func, cst.Name)
            and func.value in _NUMERIC_PARSERS
            and lone is not None
            and _is_input_call(lone.value)
            and lone.keyword is None
            and not lone.star
        ):
            self.bare.add(lone.value)  # type: ignore[arg-type]
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value in _NEWLINE_BLIND
            and not node.args
            and _is_input_call(func.value)
        ):
            self.bare.add(func.value)  # type: ignore[arg-type]

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if not _is_input_call(original):
            return updated
        self.changed = True
        return _READLINE if original in self.bare else _READLINE_STRIPPED


def _with_import_sys(module: cst.Module) -> cst.Module:
    body = list(module.body)
    index = 0
    while index < len(body):  # after the docstring and `from __future__` imports
        statement = body[index]
        if not isinstance(statement, cst.SimpleStatementLine):
            break
        small = statement.body[0]
        docstring = isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString) and index == 0
        future = (
            isinstance(small, cst.ImportFrom)
            and isinstance(small.module, cst.Name)
            and small.module.value == "__future__"
        )
        if not (docstring or future):
            break
        index += 1
    body.insert(index, cst.parse_statement("import sys\n"))
    return module.with_changes(body=body)


def stdin_readline(source: str, targets: Sequence[str] | None) -> str:
    if "input(" not in source or not runs_as_program(source):
        return source
    tree = ast.parse(source)
    bound = _bound_names(tree)
    if "input" in bound or ("sys" in bound and not _imports_sys(tree)):
        return source
    transformer = _Readline()
    module = cst.parse_module(source).visit(transformer)
    if not transformer.changed:
        return source
    if not _imports_sys(tree):
        module = _with_import_sys(module)
    return module.code


class _PrintBatch(cst.CSTTransformer):
    def __init__(self, loop_names_used_elsewhere: set[str]) -> None:
        self.blocked = loop_names_used_elsewhere
        self.changed = False

    def leave_For(self, original: cst.For, updated: cst.For) -> cst.BaseStatement:
        call = _lone_print(updated)
        if call is None or updated.orelse is not None or updated.asynchronous is not None:
            return updated
        names = {n.value for n in _names(updated.target)}
        if not names or names & self.blocked:
            return updated
        parts: list[cst.BaseFormattedStringContent] = []
        for index, arg in enumerate(call.args):
            if index:
                parts.append(cst.FormattedStringText(" "))
            parts.append(cst.FormattedStringExpression(arg.value.with_changes()))
        parts.append(cst.FormattedStringText("\\n"))
        fstring = cst.FormattedString(parts=parts, start='f"', end='"')
        comprehension = cst.ListComp(elt=fstring, for_in=cst.CompFor(target=updated.target, iter=updated.iter))
        joined = cst.Call(
            func=cst.Attribute(value=cst.SimpleString('""'), attr=cst.Name("join")), args=[cst.Arg(comprehension)]
        )
        statement = cst.Expr(
            cst.Call(
                func=cst.Name("print"),
                args=[
                    cst.Arg(
                        joined,
                        keyword=cst.Name("end"),
                        equal=cst.AssignEqual(
                            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
                        ),
                    )
                ],
            )
        )
        self.changed = True
        return cst.SimpleStatementLine(body=[statement], leading_lines=updated.leading_lines)


def _names(node: cst.BaseExpression) -> list[cst.Name]:
    if isinstance(node, cst.Name):
        return [node]
    if isinstance(node, (cst.Tuple, cst.List)):
        found: list[cst.Name] = []
        for element in node.elements:
            if isinstance(element, cst.StarredElement):
                return []
            inner = _names(element.value)
            if not inner:
                return []
            found += inner
        return found
    return []


def _lone_print(loop: cst.For) -> cst.Call | None:
    body = loop.body
    if not isinstance(body, cst.IndentedBlock) or len(body.body) != 1:
        return None
    line = body.body[0]
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1 or not isinstance(line.body[0], cst.Expr):
        return None
    call = line.body[0].value
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "print"):
        return None
    if not call.args or any(arg.keyword is not None or arg.star for arg in call.args):
        return None
    if any(_has_quote_trouble(arg.value) for arg in call.args):
        return None
    return call


def _has_quote_trouble(node: cst.BaseExpression) -> bool:
    """Expressions an f-string replacement field cannot hold as written (quotes, before Python 3.12)."""
    code = cst.Module(body=[]).code_for_node(node)
    return '"' in code or "\\" in code or "{" in code or "#" in code


def print_batching(source: str, targets: Sequence[str] | None) -> str:
    if "print(" not in source or "for " not in source or not runs_as_program(source):
        return source
    tree = ast.parse(source)
    if "print" in _bound_names(tree):
        return source
    # A loop variable read outside its loop would lose the value the loop left it (a comprehension's does not leak).
    blocked = _names_read_outside_loops(tree)
    transformer = _PrintBatch(blocked)
    module = cst.parse_module(source).visit(transformer)
    return module.code if transformer.changed else source


def _names_read_outside_loops(tree: ast.Module) -> set[str]:
    """Loop target names that are also read somewhere other than inside that loop."""
    blocked: set[str] = set()
    loops = [node for node in ast.walk(tree) if isinstance(node, ast.For)]
    for loop in loops:
        targets = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
        inside = {id(n) for n in ast.walk(loop)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id in targets and id(node) not in inside:
                blocked.add(node.id)
    return blocked

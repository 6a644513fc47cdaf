"""Function codemods on a script's top-level code: most programs (competitive-programming scripts above all)
have their loops at module level, where no function codemod looks.

The module's body is wrapped in a function for the codemod (which then treats module variables as that
function's locals: in straight-line script code they behave the same), and unwrapped after, so every
statement the codemod does not touch is printed back as it was. A docstring and `from __future__` imports
stay outside; a module with `import *`, `global`/`nonlocal` or a `return`/`yield` at top level (none legal
or meaning the same inside a function) is left alone. Execution decides whether the result is kept.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from coderefine.providers.offline.rewrites.cst_session import Finder, run_codemod
from coderefine.source import is_script

WRAPPER = "__coderefine_module__"


def run_codemod_anywhere(source: str, targets: Sequence[str] | None, finder: Finder, hint: str | None) -> str:
    """The codemod on the targets' functions and, for a script changed as a whole, on its top-level code."""
    code = run_codemod(source, targets, finder, hint)
    if targets is not None or WRAPPER in code or not is_script(code):
        return code
    wrapped = _wrap(code)
    if wrapped is None:
        return code
    new = run_codemod(wrapped, [WRAPPER], finder, hint)
    return code if new == wrapped else _unwrap(new)


def _wrap(code: str) -> str | None:
    module = cst.parse_module(code)
    body = list(module.body)
    keep = 0
    while keep < len(body) and _stays_outside(body[keep], keep):
        keep += 1
    inner = body[keep:]
    if not inner or any(_blocks(statement) for statement in inner):
        return None
    function = cst.FunctionDef(
        name=cst.Name(WRAPPER),
        params=cst.Parameters(),
        body=cst.IndentedBlock(body=inner),
    )
    return module.with_changes(body=[*body[:keep], function]).code


def _stays_outside(statement: cst.BaseStatement, index: int) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    if (
        index == 0
        and isinstance(small, cst.Expr)
        and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString))
    ):
        return True
    return (
        isinstance(small, cst.ImportFrom) and isinstance(small.module, cst.Name) and small.module.value == "__future__"
    )


class _Finder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found = False
        self.depth = 0  # inside a def, class or lambda: their own returns, yields and globals are theirs

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_ImportStar(self, node: cst.ImportStar) -> None:
        self.found = True

    def visit_Global(self, node: cst.Global) -> None:
        self.found = True

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.found = True

    def visit_Return(self, node: cst.Return) -> None:
        self.found = True

    def visit_Yield(self, node: cst.Yield) -> None:
        self.found = True

    def visit_Await(self, node: cst.Await) -> None:
        self.found = True


def _blocks(statement: cst.BaseStatement) -> bool:
    finder = _Finder()
    cst.Module(body=[statement]).visit(finder)
    return finder.found


def _unwrap(code: str) -> str:
    module = cst.parse_module(code)
    body: list[cst.BaseStatement] = []
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef) and statement.name.value == WRAPPER:
            assert isinstance(statement.body, cst.IndentedBlock)
            body.extend(statement.body.body)
        else:
            body.append(statement)
    return module.with_changes(body=body).code

"""Small questions about Python source shared by the candidate merge and the offline rewrites."""

from __future__ import annotations

import ast

import libcst as cst


def parses(code: str) -> bool:
    """True when `code` is a valid Python module."""
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True


def is_docstring(stmt: cst.BaseStatement) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )

"""Parsing a module for the quality measures, with one exception type for every kind of bad source."""

from __future__ import annotations

import ast


def parse(source: str) -> ast.Module:
    """``ast.parse`` that reports every kind of unparsable source as ``SyntaxError``."""
    try:
        return ast.parse(source)
    except SyntaxError:
        raise
    except (ValueError, TypeError) as exc:
        # Python 3.10/3.11 raise ValueError for NUL bytes; callers should only need to catch one type.
        raise SyntaxError(f"source cannot be parsed: {exc}") from exc

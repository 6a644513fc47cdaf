"""What the sandbox package's modules import, read with `ast` (nothing is imported to find out)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

SANDBOX_PACKAGE = Path(__file__).resolve().parents[2] / "sandbox" / "coderefine_sandbox"
STDLIB = set(sys.stdlib_module_names) | {"__future__"}


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at any depth of its code (function-local imports included)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # a relative import stays in the package
                found.add("coderefine_sandbox." + (node.module or ""))
            elif node.module:
                found.add(node.module)
    return found


def outside_imports(module: str) -> set[str]:
    """The top-level names a sandbox module imports from outside its package, following the imports it makes
    of its own package's modules."""
    seen: set[str] = set()
    todo = [module]
    outside: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for imported in imported_modules(SANDBOX_PACKAGE / f"{name}.py"):
            root, _, rest = imported.partition(".")
            if root != "coderefine_sandbox":
                outside.add(root)
            elif rest and (SANDBOX_PACKAGE / f"{rest.split('.')[0]}.py").is_file():
                todo.append(rest.split(".")[0])
    return outside

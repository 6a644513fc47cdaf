"""What the sandbox package's modules import, read with `ast` (nothing is imported to find out).

Modules are named by their dotted path inside the package (`"protocol"`, `"programs.steps"`); the
interpreter start-up hook's modules (programs/hook/) are importable by their bare names in the processes
they run in, so a bare name that is one of them counts as the package's own too.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

SANDBOX_PACKAGE = Path(__file__).resolve().parents[2] / "sandbox" / "coderefine_sandbox"
PACKAGE = "coderefine_sandbox"
HOOK = ("programs", "hook")  # a folder the program runs put first on sys.path: its modules import by bare name
STDLIB = set(sys.stdlib_module_names) | {"__future__"}


def every_module() -> list[Path]:
    """Every Python file of the sandbox package, in every folder."""
    return sorted(SANDBOX_PACKAGE.rglob("*.py"))


def module_name(path: Path) -> str:
    """The dotted name of a file inside the package (`programs/steps.py` -> `programs.steps`)."""
    parts = path.resolve().relative_to(SANDBOX_PACKAGE.resolve()).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_path(name: str) -> Path | None:
    """The file of the package's module `name` (dotted, relative to the package), or None."""
    base = SANDBOX_PACKAGE.joinpath(*name.split(".")) if name else SANDBOX_PACKAGE
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _package_of(path: Path) -> list[str]:
    """The dotted package a file belongs to, for resolving its relative imports."""
    try:
        parts = path.resolve().relative_to(SANDBOX_PACKAGE.resolve()).parts
    except ValueError:
        return [PACKAGE]
    return [PACKAGE, *parts[:-1]]


def _imports(path: Path) -> list[tuple[str, tuple[str, ...]]]:
    """(module, names taken from it) for every import statement, at any depth of the file's code."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, ()) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = tuple(alias.name for alias in node.names)
            if node.level:  # a relative import stays in the package
                base = _package_of(path)[: len(_package_of(path)) - node.level + 1]
                found.append((".".join([*base, *([node.module] if node.module else [])]), names))
            elif node.module:
                found.append((node.module, names))
    return found


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at any depth of its code (function-local imports included)."""
    return {module for module, _ in _imports(path)}


def _own(module: str, names: tuple[str, ...]) -> list[str]:
    """The package's own modules an import statement loads: the module, its parent packages, and any
    submodule it takes by name (`from coderefine_sandbox.timing import worker`)."""
    root, _, rest = module.partition(".")
    if root != PACKAGE:
        hook = SANDBOX_PACKAGE.joinpath(*HOOK, f"{root}.py")
        return [".".join((*HOOK, root))] if not rest and hook.is_file() else []
    parts = rest.split(".") if rest else []
    found = [".".join(parts[:end]) for end in range(len(parts) + 1)]
    found += [".".join([*parts, name]) for name in names if module_path(".".join([*parts, name])) is not None]
    return [name for name in found if module_path(name) is not None]


def outside_imports(module: str) -> set[str]:
    """The top-level names a sandbox module imports from outside its package, following the imports it makes
    of its own package's modules (and of the start-up hook's)."""
    seen: set[str] = set()
    todo = [module]
    outside: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        path = module_path(name)
        assert path is not None, f"no module {name!r} in {SANDBOX_PACKAGE}"
        for imported, names in _imports(path):
            own = _own(imported, names)
            if own:
                todo += own
            elif imported.partition(".")[0] != PACKAGE:
                outside.add(imported.partition(".")[0])
    return outside

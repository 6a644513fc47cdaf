"""Where the target file's project is, how its module is imported, and which tests to run."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from coderefine.errors import InputFileNotFound, NoTestsFound, UsageError

ROOT_MARKERS = ("pyproject.toml", "setup.cfg", "pytest.ini", "tox.ini", ".git")


@dataclass(frozen=True)
class Project:
    root: Path  # absolute; this whole folder is copied into each workspace
    target: Path  # the file, relative to root
    module_name: str  # dotted import name of the target
    import_root: Path  # relative to root: the folder that must be on sys.path to import module_name
    tests: tuple[str, ...]  # pytest arguments relative to root; () lets pytest use the project's config


def find_root(file: Path) -> Path:
    """The nearest folder upward holding a project marker; else the file's own folder."""
    for folder in file.parents:
        if any((folder / marker).exists() for marker in ROOT_MARKERS):
            return folder
    return file.parent


def import_location(file: Path, root: Path) -> tuple[str, Path]:
    """The dotted module name of `file` and the folder it is importable from.

    Walk up while the folder is a package (has __init__.py), never above the project root. A package's
    `__init__.py` is the package itself (`inflection/__init__.py` is imported as `inflection`): a module
    named `inflection.__init__` would be a second copy, whose functions no test calls.
    """
    parts = [] if file.name == "__init__.py" else [file.stem]
    folder = file.parent
    while folder != root and (folder / "__init__.py").exists() and folder.parent != folder:
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts) or file.stem, folder.relative_to(root)


def resolve_project(file: Path, tests: Path | None = None, root: Path | None = None) -> Project:
    file = file.resolve()
    root = (root or find_root(file)).resolve()
    if root not in file.parents:
        raise UsageError(f"{file} is not inside the project root {root}")
    if tests is not None:
        tests = tests.expanduser().resolve()
        if not tests.exists():
            raise InputFileNotFound(f"{tests}: no such test file or folder")
        if tests != root and root not in tests.parents:
            raise UsageError(f"--tests {tests} is outside the project root {root}; pass --root too")
        test_args: tuple[str, ...] = (str(tests.relative_to(root)) or ".",)
    else:
        if not _has_test_files(root):
            raise NoTestsFound(f"no tests found under {root} (looked for test_*.py and *_test.py); pass --tests PATH")
        test_args = ()
    module_name, import_root = import_location(file, root)
    module_name, import_root = namespace_location(root, module_name, import_root, tests or root)
    return Project(
        root=root,
        target=file.relative_to(root),
        module_name=module_name,
        import_root=import_root,
        tests=test_args,
    )


_SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", ".tox", "build", "dist"}


def namespace_location(root: Path, module_name: str, import_root: Path, tests: Path) -> tuple[str, Path]:
    """The module's name and import root as the tests import it, when folders above its top package have
    no __init__.py: a namespace package (PEP 420, `ns/pkg/mod.py` imported as `ns.pkg.mod`) looks like an
    import root from the files alone. The longest dotted name some test file imports wins; else unchanged.
    """
    parts = import_root.parts
    if not parts:
        return module_name, import_root
    texts = [path.read_text(encoding="utf-8", errors="replace") for path in _test_files(tests)]
    for depth in range(len(parts)):  # the outermost folder first: the longest name
        prefix = ".".join(parts[depth:])
        if not all(part.isidentifier() for part in parts[depth:]):
            continue
        name = f"{prefix}.{module_name}"
        package = name.rpartition(".")[0]
        pattern = re.compile(rf"\b(?:import|from)\s+{re.escape(package)}\b")
        if any(pattern.search(text) for text in texts):
            return name, Path(*parts[:depth])
    return module_name, import_root


def _test_files(start: Path) -> list[Path]:
    if start.is_file():
        return [start]
    found = []
    for folder, dirs, files in os.walk(start):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not d.startswith(".")]
        found += [
            Path(folder, f) for f in files if f.endswith(".py") and (f.startswith("test_") or f.endswith("_test.py"))
        ]
    return found


def _has_test_files(root: Path) -> bool:
    """A cheap pre-check so a project without tests fails before any sandbox starts."""
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = list(folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir():
                if entry.name not in _SKIP_DIRS and not entry.name.startswith("."):
                    stack.append(entry)
            elif entry.suffix == ".py" and (entry.name.startswith("test_") or entry.stem.endswith("_test")):
                return True
    return False

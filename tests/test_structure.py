"""The code base's shape: no import cycle between modules or between the folders of `coderefine/` or of the
sandbox package, so the folders read as the flow (cli -> commands -> refine -> providers / evaluation ->
sandboxes -> reports) and every part can be understood from below."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO

PACKAGES = {"coderefine": REPO / "coderefine", "coderefine_sandbox": REPO / "sandbox" / "coderefine_sandbox"}


def modules(package: str, folder: Path) -> dict[str, Path]:
    found = {}
    for path in sorted(folder.rglob("*.py")):
        if "_bundled" in path.parts or path.parent.name == "hook":  # hook/: loaded by path, not imported
            continue
        parts = path.relative_to(folder.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def imported(name: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    """The package's modules that `name` imports, anywhere in it (inside functions too: a lazy import is
    still a dependency)."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
            module = ".".join(part for part in (base, node.module or "") if part)
            candidates = [module, *(f"{module}.{alias.name}" for alias in node.names)]
        else:
            continue
        for candidate in candidates:
            while candidate and candidate not in known:
                candidate = candidate.rpartition(".")[0]
            if candidate and candidate != name:
                yield candidate


def graph(package: str) -> dict[str, set[str]]:
    known = modules(package, PACKAGES[package])
    return {name: set(imported(name, path, known)) for name, path in known.items()}


def cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph, as the path around it, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(edges.get(node, ())):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def folder_of(module: str) -> str:
    """A module's folder as a unit: `coderefine.refine.loop` -> `coderefine.refine`; a top-level module is
    its own unit (the shared leaves)."""
    return ".".join(module.split(".")[:2])


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_import_cycle_between_modules(package):
    assert cycle(graph(package)) is None


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_import_cycle_between_folders(package):
    folders: dict[str, set[str]] = {}
    for source, targets in graph(package).items():
        for target in targets:
            if folder_of(source) != folder_of(target):
                folders.setdefault(folder_of(source), set()).add(folder_of(target))
    assert cycle(folders) is None


def test_the_cycle_finder_finds_a_cycle():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": {"c"}, "d": {"a"}}) is None


def test_settings_are_read_by_attribute_only():
    """No `settings["name"]` anywhere: a setting is a typed attribute of Settings, which has no item access."""
    from coderefine.settings import Settings

    assert not hasattr(Settings, "__getitem__")

"""Import time judged on readings, not on one figure per side.

Every timing worker is a fresh process that imports the module under judgement once and times the execution
of its body (worker.timed_import). Two things keep that figure honest as evidence of work moved to import
time:

- The modules both versions import at module level (numpy, re, a sibling module outside the workspace) are
  imported before the timed import, untimed, in every worker of both sides (`shared_imports`, `preload`).
  Their cost is the same for both sides by construction; left in the timed region, a 190 ms numpy import
  read once per process would bury a millisecond's difference in its own noise.
- The per-process readings of the two sides are paired as the timing pairs are (interleaved, fresh
  processes) and the candidate-minus-original difference gets a 95% t interval (`import_extra`): only a
  difference whose lower bound is above zero is work the candidate moved there (verdicts.import_eats_it).
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import math
import os
import statistics

from coderefine_sandbox.timing.stats import t95


def module_file(workspace: str, import_root: str, module: str) -> str | None:
    """The source file of `module` in `workspace` (a module or a package's __init__), or None."""
    base = os.path.normpath(os.path.join(workspace, import_root, *module.split(".")))
    for path in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(path):
            return path
    return None


def module_level_imports(path: str) -> set[str]:
    """The absolute imports a module's body makes when it runs (function bodies excepted: they run later,
    inside the timed calls), each dotted name with its parents ("numpy.linalg" gives "numpy" too)."""
    try:
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return set()
    found: set[str] = set()
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for name in names:
            parts = name.split(".")
            found.update(".".join(parts[: i + 1]) for i in range(len(parts)))
        pending.extend(ast.iter_child_nodes(node))
    return found


@functools.cache
def shared_imports(original: str | None, candidate: str | None, module: str) -> tuple[str, ...]:
    """The modules both versions import at module level, less the module itself and its own submodules; once
    per runner process (the files do not change while it times them, and parsing costs tens of ms)."""
    if original is None or candidate is None:
        return ()
    both = module_level_imports(original) & module_level_imports(candidate)
    own = module.split(".")[0]
    return tuple(sorted(name for name in both if name.split(".")[0] != own))


def preload(names: tuple[str, ...], workspace: str) -> None:
    """Import `names` untimed, except those found inside the workspace (the project's own files are the
    candidate's to change, and importing them early could run the module under judgement); a module that
    fails to import is left for the timed import to meet as it would have."""
    root = os.path.realpath(workspace) + os.sep
    for name in names:
        try:
            spec = importlib.util.find_spec(name)
            origin = getattr(spec, "origin", None) if spec is not None else None
            if spec is None or (origin and os.path.realpath(origin).startswith(root)):
                continue
            importlib.import_module(name)
        except Exception:  # any failure is the timed import's to meet, not the preload's
            continue


def import_extra(original: list[float], candidate: list[float]) -> tuple[float, float, float] | None:
    """(mean, low, high): the candidate's import seconds minus the original's, paired by process pair, with a
    95% t interval; None with fewer than two pairs (one reading of each side says nothing about noise)."""
    if len(original) != len(candidate) or len(original) < 2:
        return None
    differences = [c - o for o, c in zip(original, candidate, strict=True)]
    centre = statistics.fmean(differences)
    half = t95(len(differences) - 1) * statistics.stdev(differences) / math.sqrt(len(differences))
    return centre, centre - half, centre + half

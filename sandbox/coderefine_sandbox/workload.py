"""Load recorded calls and resolve the functions to call them on, in a fresh interpreter.

Shared by behaviour/replay.py and timing/worker.py so that both run exactly the same calls on
exactly the same module.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import os
import sys
import types
from dataclasses import dataclass
from typing import Any

from coderefine_sandbox.protocol import UnstableCalls, read_calls, read_json


@dataclass
class Call:
    index: int
    target: str
    record: dict[str, Any]
    held_out: bool = False  # never shown to the model: a speedup must hold on these too
    origin: str | None = None  # the working folder it was recorded in (relocation.py)


def held_out_indices(records: list[dict[str, Any]]) -> frozenset[int]:
    """The recorded calls whose inputs no prompt shows: of each target with two calls or more, every second
    call in order of argument size, starting from the largest (then recording order). Deterministic, and the
    held-out part always holds the largest input: a speedup that grows with the input shows there at least
    as much as on the shown calls, while a lookup table of the shown inputs gains nothing where the workload
    weighs most. A target's only call is shown: there is nothing to split."""
    by_target: dict[str, list[int]] = {}
    for index in sorted(range(len(records)), key=lambda i: (-len(records[i]["args"]), i)):
        by_target.setdefault(records[index]["target"], []).append(index)
    return frozenset(index for indices in by_target.values() if len(indices) > 1 for index in indices[::2])


def add_import_paths(workspace: str, import_root: str) -> None:
    os.chdir(workspace)
    for path in (workspace, os.path.join(workspace, import_root)):
        path = os.path.normpath(path)
        if path in sys.path:
            sys.path.remove(path)
        sys.path.insert(0, path)


def load_calls(calls_path: str, exclude_path: str | None, hold_out: bool = True) -> list[Call]:
    """The calls of a calls file, less those the original does not repeat (an UnstableCalls file, if any);
    with `hold_out` off, none is held out (boundary variants: their inputs are what the model is shown)."""
    header, records = read_calls(calls_path)
    excluded: set[int] = set()
    if exclude_path and os.path.exists(exclude_path):
        excluded = set(read_json(UnstableCalls, exclude_path).indices)
    held = held_out_indices(records) if hold_out else frozenset()
    return [
        Call(
            index=i,
            target=record["target"],
            record=record,
            held_out=i in held,
            origin=record.get("folder") or header.folder,
        )
        for i, record in enumerate(records)
        if i not in excluded
    ]


def timed_calls(calls_path: str, exclude_path: str | None) -> list[tuple[Call, int]]:
    """What timing runs: each distinct recorded call (the same target, the same pickled arguments) once per
    pass, with how many times it was recorded, which its time is weighted by.

    Tests repeat calls (the same word pluralized by five tests): timed as recorded, a cache that survives
    between calls (`@lru_cache` on the target) would answer every repeat from memory and claim a speedup
    that comes from the tests' repetition, not from the code. Timed once per pass, in a process whose first
    pass is what counts when repetition flatters a candidate (the warm-gain rule), no cache meets an input
    twice; a per-call improvement gains exactly as before."""
    first: dict[tuple[str, bytes], int] = {}
    distinct: list[tuple[Call, int]] = []
    for call in load_calls(calls_path, exclude_path):
        key = (call.target, call.record["args"])
        if key in first:
            known, count = distinct[first[key]]
            distinct[first[key]] = (known, count + 1)
        else:
            first[key] = len(distinct)
            distinct.append((call, 1))
    return distinct


def import_module(name: str) -> types.ModuleType:
    return importlib.import_module(name)


def resolve(module: types.ModuleType, target: str) -> Any:
    """The raw function for `f` or `Cls.meth` (unwrapping static/class methods, as capture recorded them)."""
    owner_name, _, attr = target.rpartition(".")
    owner: Any = module
    if owner_name:
        owner = getattr(module, owner_name)
        raw = inspect.getattr_static(owner, attr)
        if isinstance(raw, (staticmethod, classmethod)):
            return raw.__func__
        return raw
    return getattr(owner, attr)


def load_bench(path: str, names: list[str]) -> list[Any]:
    """The named benchmark functions of a user's bench file (the host checked they exist and take no
    required arguments). Loaded from the workspace being timed, so they import that workspace's target."""
    spec = importlib.util.spec_from_file_location("coderefine_user_bench", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load the bench file {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return [getattr(module, name) for name in names]


def qualnames_by_line(path: str) -> dict[int, str]:
    """Map each def's first line to its qualified name, to name hot spots the way users know them."""
    try:
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, UnicodeDecodeError):
        return {}
    names: dict[int, str] = {}

    def visit(nodes: list[ast.stmt], prefix: str) -> None:
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qualified = f"{prefix}{node.name}"
                line = node.decorator_list[0].lineno if node.decorator_list else node.lineno
                names[node.lineno] = qualified
                names[line] = qualified
                visit(node.body, f"{qualified}.")

    visit(tree.body, "")
    return names

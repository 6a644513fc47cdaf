"""Which tests judge a run: by default only those that call the targets, found once per project state.

The first run on a project state collects the test files whose text names the target module, a target, or
a function of the module that calls one, and, within a time budget and run after those, the test files
importing the target's top-level package, which may reach a target through any chain (the sandbox's
selection.py). That run is the original's baseline, traced as always: the recorder notes every test that
made a call to a target, through any reference (recording/capture.py). Those tests alone then judge each
candidate, and they are saved under a hash of the project's source and configuration files, so a later run
on the same state runs only them from the start. `--tests PATH` overrides all this; the setting
`test_selection = "all"` runs the whole suite.

With a reach map of the project (`coderefine reach`, evaluation/reach_map.py), none of that is guessed: the
tests the map shows executing a target, through any chain, are the selection from the start ("mapped").

pytest-testmon maps tests to the files they execute; here the question is narrower (which tests call
these functions) and the recorder answers it already, in the sandbox's interpreter, with no coverage.py
and no database written into the user's tree.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from coderefine.evaluation.project import Project
from coderefine.evaluation.protocol import RecordedTests, SelectionCounts, TestSelection
from coderefine.evaluation.reach_build import MapForRun
from coderefine.evaluation.reach_map import counted
from coderefine.records import TestsSelected

Mode = Literal["given", "all", "traced", "cached", "mapped"]
_SCHEMA = 2  # 2: the traced run also tries the test files importing the package
_STATE_SUFFIXES = {".py", ".pyi", ".toml", ".cfg", ".ini"}
_SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".nox", "build", "dist"}


@dataclass(frozen=True)
class Selection:
    mode: Mode
    args: tuple[str, ...]  # pytest's arguments
    request: TestSelection | None  # the filter the sandbox applies on top of them
    reason: str
    cache_file: Path | None = None  # where a traced run's selection is saved (mode "traced")
    traced: dict[str, int] | None = None  # cached: what the traced run ran (tests, files_seen, files_kept)
    widened_from: str | None = None  # the first selection's reason, when no test in it called a target
    not_widened: str | None = None  # why the whole suite could not replace a first selection reaching nothing
    map_note: str | None = None  # mapped: the map's state; traced or cached: why a reach map was not used
    # mapped, from a first run's trace that recorded the calls too: the baseline takes that run, not a second one
    recorded: RecordedTests | None = None


def default_selection_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "coderefine" / "selection"


def fixed_selection(project: Project) -> Selection:
    """The selection of an evaluator built without one: --tests if given, else pytest's own discovery."""
    if project.tests:
        return Selection("given", project.tests, None, f"--tests {' '.join(project.tests)}")
    return Selection("all", (), None, "the whole suite")


def tracing_budget(test_timeout: float) -> float:
    """Seconds of the first run's baseline the test files kept only for importing the package may use: a
    third of the test time limit, at most two minutes, so the files naming the target always fit."""
    return min(120.0, test_timeout / 3)


def plan_selection(
    project: Project,
    targets: tuple[str, ...],
    source: str,
    setting: str,
    cache_dir: Path | None,
    budget: float = 0.0,
    reach: MapForRun | None = None,
) -> Selection:
    """The baseline's tests: the user's --tests, the whole suite, the tests the reach map shows reaching the
    targets, a cached selection, or the name filter."""
    if project.tests:
        return Selection("given", project.tests, None, f"--tests {' '.join(project.tests)}")
    if setting == "all":
        return Selection("all", (), None, "the whole suite (test_selection = all)")
    map_note = None
    if reach is not None:
        mapped = from_map(project, targets, reach)
        if mapped.mode == "mapped":
            return mapped
        map_note = mapped.map_note
    return replace(_first_run(project, targets, source, cache_dir, budget), map_note=map_note)


def from_map(project: Project, targets: tuple[str, ...], reach: MapForRun) -> Selection:
    """The tests the map shows reaching a target ("mapped"); when it cannot say, an empty "traced" selection
    whose `map_note` says why (plan_selection then makes the first run's)."""
    if reach.reach is None:
        return Selection("traced", (), None, "", map_note=reach.note)
    target_file = project.target.as_posix()
    reaching = reach.reach.reaching(target_file, targets)
    names = ", ".join(targets)
    if not reaching:
        return Selection("traced", (), None, "", map_note=f"no test in the reach map reaches {names} ({reach.note})")
    reason = f"{counted(len(reaching), 'test')} from the reach map reach{'es' if len(reaching) == 1 else ''} {names}; "
    reason += reach.note
    recorded = RecordedTests(reach.recorded, reaching) if reach.recorded else None
    return Selection("mapped", (), _by_node_ids(reaching), reason, map_note=reach.note, recorded=recorded)


def _first_run(
    project: Project, targets: tuple[str, ...], source: str, cache_dir: Path | None, budget: float
) -> Selection:
    """A cached selection of an earlier run on this project state, or the traced first run's name filter."""
    names = selection_names(project.module_name, targets, source)
    cache_file = None
    if cache_dir is not None:
        cache_file = cache_dir / f"{selection_key(project, targets, names)}.json"
        cached = _read_cache(cache_file)
        if cached is not None:
            node_ids = tuple(cached["node_ids"])
            return Selection(
                "cached",
                (),
                _by_node_ids(node_ids),
                "they called the targets when this project state was traced (cached selection)",
                cache_file,
                {key: int(cached[key]) for key in ("tests", "files_seen", "files_kept")},
            )
    data_names = tuple(name for name in names if name not in _module_and_classes(project.module_name, targets))
    package = project.module_name.partition(".")[0]
    imports = (package,) if "." in project.module_name and budget > 0 else ()  # a flat module is named already
    request = TestSelection(
        names=names, node_ids=(), data_names=data_names, import_names=imports, budget_seconds=budget
    )
    reason = "test files naming " + _names_text(names)
    if imports:
        reason += f" or importing {package}"
    return Selection("traced", (), request, reason, cache_file)


def _by_node_ids(node_ids: tuple[str, ...]) -> TestSelection:
    return TestSelection(names=(), node_ids=node_ids, data_names=(), import_names=(), budget_seconds=0.0)


def widened(selection: Selection) -> Selection:
    """The whole suite, traced, after no test of the first selection called a target."""
    return replace(selection, request=None, reason="the whole suite", widened_from=selection.reason)


def widening_failed(selection: Selection, why: str) -> Selection:
    return replace(selection, not_widened=why)


def after_baseline(
    selection: Selection, reached: tuple[str, ...], tests_run: int, counts: SelectionCounts | None
) -> tuple[Selection, TestsSelected]:
    """The candidates' tests, once the original's traced run has shown which tests call the targets."""
    files = (counts.files_seen, counts.files_kept) if counts is not None else (None, None)
    if selection.mode in ("given", "all"):
        return selection, TestsSelected(selection.mode, selection.reason, tests_run, tests_run, *files)
    if selection.mode == "mapped":  # the candidates run what the original ran: every test reaching a target
        node_ids = selection.request.node_ids if selection.request is not None else ()
        return selection, TestsSelected("mapped", selection.reason, tests_run, tests_run, node_ids=node_ids)
    if selection.map_note is not None:
        selection = replace(selection, reason=f"{selection.reason}; reach map not used: {selection.map_note}")
    if selection.mode == "cached":
        traced = selection.traced or {}
        reason = (
            f"{selection.reason}: {traced.get('tests', 0)} tests traced then, from {traced.get('files_kept', 0)} "
            f"of {traced.get('files_seen', 0)} test files"
        )
        seen, kept = traced.get("files_seen"), traced.get("files_kept")
        node_ids = selection.request.node_ids if selection.request is not None else ()
        return selection, TestsSelected("cached", reason, tests_run, tests_run, seen, kept, node_ids)
    if not reached:
        reason = f"no test called the targets; candidates run the original's {tests_run} tests ({selection.reason})"
        if selection.not_widened is not None:
            reason += f"; the whole suite was not traced instead: {selection.not_widened}"
        return selection, TestsSelected("traced", reason, tests_run, tests_run, *files, **_untraced(counts))
    narrowed = replace(selection, request=_by_node_ids(reached))
    where = f"{files[1]} of {files[0]} test files" if files[0] is not None else "the test files"
    if selection.widened_from is not None:
        reason = f"they call the targets (traced in the whole suite: no test in the {selection.widened_from} did"
    else:
        reason = f"they call the targets (traced in the original's run of {where}, those naming {_names_of(selection)}"
    reason += _importing_text(selection, counts) + ")"
    reaching_files = len({node.split("::")[0] for node in reached})
    reason = f"{reason}; {reaching_files} test file{'s' if reaching_files != 1 else ''} reach them"
    if selection.cache_file is not None:
        _write_cache(selection.cache_file, reached, tests_run, counts)
        reason += "; saved for this project state"
    return narrowed, TestsSelected(
        "traced", reason, tests_run, len(reached), *files, node_ids=reached, **_untraced(counts)
    )


def _untraced(counts: SelectionCounts | None) -> dict[str, int | None]:
    if counts is None:
        return {}
    return {
        "files_importing": counts.files_importing,
        "files_untraced": counts.files_untraced,
        "tests_untraced": counts.tests_untraced,
        "files_unimportable": counts.files_unimportable,
    }


def _importing_text(selection: Selection, counts: SelectionCounts | None) -> str:
    """', and 3 importing sqlparse (2 more not traced: out of the 100 s budget)'."""
    request = selection.request
    if request is None or not request.import_names or counts is None:
        return ""
    text = f", and {counts.files_importing} importing {', '.join(request.import_names)}"
    if counts.files_untraced or counts.tests_untraced:
        left = []
        if counts.files_untraced:
            left.append(f"{counts.files_untraced} more test files")
        if counts.tests_untraced:
            left.append(f"{counts.tests_untraced} of their tests")
        text += f"; {' and '.join(left)} not traced: out of the {request.budget_seconds:g} s tracing budget"
    if counts.files_unimportable:
        text += f"; {counts.files_unimportable} of them left out: pytest could not import them"
    return text


def what_ran(selection: Selection) -> str:
    """For the time-out message: what the original's run was asked to run."""
    if selection.mode == "all":
        return "it ran the whole suite (test_selection = all)"
    if selection.mode == "given":
        return f"it ran {selection.reason}"
    if selection.mode == "cached":
        return f"it ran {len(selection.request.node_ids) if selection.request else 0} tests selected earlier"
    if selection.mode == "mapped":
        return f"it ran the {selection.reason}"
    return f"it ran the {selection.reason}"


def selection_names(module_name: str, targets: tuple[str, ...], source: str) -> tuple[str, ...]:
    """The words a test file must contain to be collected: the module's name, each target and its class,
    and the module's functions that call a target (directly or through one another), since a test may
    reach a helper only through its public caller."""
    names = {module_name.rpartition(".")[2]}
    for target in targets:
        names.update(part for part in target.split(".") if part)
    names |= _callers(source, {target.rpartition(".")[2] for target in targets})
    return tuple(sorted(names))


def _module_and_classes(module_name: str, targets: tuple[str, ...]) -> set[str]:
    return {module_name.rpartition(".")[2]} | {part for target in targets for part in target.split(".")[:-1]}


def _callers(source: str, wanted: set[str]) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    uses: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            found |= {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
            uses.setdefault(node.name, set()).update(found - {node.name})
    callers: set[str] = set()
    frontier = set(wanted)
    while frontier:
        new = {name for name, used in uses.items() if used & frontier and name not in callers | wanted}
        callers |= new
        frontier = new
    return callers


def selection_key(project: Project, targets: tuple[str, ...], names: tuple[str, ...]) -> str:
    digest = hashlib.sha256(f"{_SCHEMA}\0{project.module_name}\0{','.join(targets)}\0{','.join(names)}".encode())
    digest.update(project_state(project.root).encode())
    return digest.hexdigest()[:32]


def project_state(root: Path) -> str:
    """A hash of the project's source and configuration files (paths and contents)."""
    digest = hashlib.sha256()
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        for name in sorted(files):
            if os.path.splitext(name)[1] not in _STATE_SUFFIXES:
                continue
            path = os.path.join(folder, name)
            try:
                with open(path, "rb") as fh:
                    data = fh.read()
            except OSError:
                continue
            digest.update(os.path.relpath(path, root).encode() + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()


def _read_cache(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("schema") != _SCHEMA or not data.get("node_ids"):
        return None
    return data


def _write_cache(path: Path, reached: tuple[str, ...], tests_run: int, counts: SelectionCounts | None) -> None:
    payload = {
        "schema": _SCHEMA,
        "node_ids": list(reached),
        "tests": tests_run,
        "files_seen": counts.files_seen if counts is not None else 0,
        "files_kept": counts.files_kept if counts is not None else 0,
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(payload), encoding="utf-8")
        temporary.replace(path)
    except OSError:
        pass  # a cache that cannot be written costs the next run a traced run, nothing else


def _names_of(selection: Selection) -> str:
    return _names_text(selection.request.names) if selection.request is not None else ""


def _names_text(names: tuple[str, ...]) -> str:
    shown = ", ".join(names[:6])
    return shown + (f" (+{len(names) - 6} more)" if len(names) > 6 else "")

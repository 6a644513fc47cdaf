"""The reach map of a project: which tests execute which of its functions, and what a later build must re-trace.

pytest-testmon's idea, at the grain of functions: each test is mapped to the project functions it executed
(directly or through any chain; the sandbox's recording/reach.py), and the map remembers a content hash of
every project file and, for the files its tests reach, a fingerprint of each function (its syntax tree, so
comments and layout do not count) and of the module around them. A later build re-traces only what a change
can have moved: every test of a new or changed test file, and each test that executed a function whose
fingerprint changed, or any function of a file whose module-level code changed or that went away; the tests
of deleted test files are dropped. A change to the pytest configuration re-traces everything.

Pure: no sandbox here (reach_build.py runs the traced tests), only the records, their merge, the staleness
rule, and their JSON form in the cache (outside the user's tree, beside the selection cache).
"""

from __future__ import annotations

import ast
import fnmatch
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from coderefine.evaluation.protocol import ReachTable

SCHEMA = 1
CONFIG_FILES = ("pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini")  # a change re-traces everything
_SKIP_DIRS = {".git", ".hg", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".nox", "build", "dist"}
_DEFAULT_PYTHON_FILES = ("test_*.py", "*_test.py")


@dataclass(frozen=True)
class ReachMap:
    root: str
    built_at: str  # ISO time of the last build (full or incremental)
    tracer: str  # "settrace" or "sys.monitoring"
    hashes: dict[str, str]  # every project file the map depends on (relative, "/") -> content hash
    test_files: tuple[str, ...]  # the test files listed when it was built
    functions: tuple[str, ...]  # "FILE::QUALNAME"
    tests: dict[str, tuple[int, ...]]  # node id -> indices into functions
    outcomes: dict[str, str] = field(default_factory=dict)
    # file -> {qualname or "<module>": fingerprint}, for the files holding a mapped function
    prints: dict[str, dict[str, str]] = field(default_factory=dict)

    def reaching(self, file: str, qualnames: Iterable[str]) -> tuple[str, ...]:
        """The tests that executed any of these functions of `file` (relative, "/")."""
        wanted = {f"{file}::{name}" for name in qualnames}
        # A nested function or a comprehension of a target counts as the target: it runs only when it does.
        prefixes = tuple(f"{key}." for key in wanted)
        numbers = {number for number, key in enumerate(self.functions) if key in wanted or key.startswith(prefixes)}
        return tuple(test for test, reached in self.tests.items() if numbers.intersection(reached))

    def files_reached(self, tests: Iterable[str]) -> set[str]:
        numbers = {number for test in tests for number in self.tests.get(test, ())}
        return {self.functions[number].split("::")[0] for number in numbers}


@dataclass(frozen=True)
class Update:
    """What a build must trace to bring a map up to date with the project's files."""

    full: bool  # no usable map, or the pytest configuration changed: everything
    test_files: tuple[str, ...]  # traced whole: new and changed test files (or all, when full)
    node_ids: tuple[str, ...]  # single tests of unchanged test files that reached a changed file
    dropped: tuple[str, ...]  # tests whose test file is gone
    changed: tuple[str, ...]  # project files changed, added or removed since the map was built
    why: str
    functions: tuple[str, ...] = ()  # "FILE::QUALNAME" changed in files whose module-level code did not

    @property
    def nothing(self) -> bool:
        return not (self.full or self.test_files or self.node_ids or self.dropped or self.changed)


def plan_update(
    old: ReachMap | None,
    hashes: dict[str, str],
    test_files: tuple[str, ...],
    prints_of: Callable[[str], dict[str, str] | None] | None = None,
) -> Update:
    """What to re-trace, from the map's file hashes and fingerprints and the project's files now
    (`prints_of(file)`: a file's fingerprints now, None when it cannot be parsed)."""
    if old is None:
        return Update(True, test_files, (), (), tuple(sorted(hashes)), "no reach map of this project yet")
    changed = sorted(name for name in set(old.hashes) | set(hashes) if old.hashes.get(name) != hashes.get(name))
    config = [name for name in changed if name.rpartition("/")[2] in CONFIG_FILES and "/" not in name]
    if config:
        return Update(True, test_files, (), (), tuple(changed), f"the pytest configuration changed ({config[0]})")
    changed_set = set(changed)
    listed = set(old.test_files)
    whole = tuple(name for name in test_files if name in changed_set or name not in listed)
    gone = set(old.test_files) - set(test_files)
    rerun_files = set(whole)
    # Files changed only inside some functions: those functions; any other change: the whole file.
    moved_files: set[str] = set()
    moved_functions: set[str] = set()
    for name in changed_set - rerun_files:
        before = old.prints.get(name)
        now = prints_of(name) if prints_of is not None and before is not None and name in hashes else None
        if before is None or now is None or before.get("<module>") != now.get("<module>"):
            moved_files.add(name)
            continue
        moved_functions |= {f"{name}::{q}" for q in set(before) | set(now) if before.get(q) != now.get(q)}
    moved_numbers = {number for number, key in enumerate(old.functions) if key in moved_functions}
    moved_numbers |= {number for number, key in enumerate(old.functions) if key.split("::")[0] in moved_files}
    dropped, single = [], []
    for test, numbers in old.tests.items():
        file = test.split("::")[0]
        if file in gone:
            dropped.append(test)
        elif file not in rerun_files and moved_numbers.intersection(numbers):
            single.append(test)
    why = f"{counted(len(changed), 'file')} changed" if changed else "no file changed"
    if moved_functions and not moved_files:
        why += f" ({counted(len(moved_functions), 'function')} in them)"
    return Update(False, whole, tuple(single), tuple(dropped), tuple(changed), why, tuple(sorted(moved_functions)))


def fingerprints(source: str | bytes) -> dict[str, str] | None:
    """Each function's fingerprint ("Class.method", "f.<locals>.g", ...) and the module's ("<module>": the
    module with every function body emptied: imports, constants, class attributes, signatures, decorators).
    From the syntax tree without positions: a comment or a blank line changes none. None: not parseable."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    found: dict[str, str] = {}

    def visit(node: ast.AST, scope: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = ".".join([*scope, child.name])
                found[name] = _digest(ast.dump(child))
                visit(child, [*scope, child.name, "<locals>"])
            elif isinstance(child, ast.ClassDef):
                visit(child, [*scope, child.name])
            else:
                visit(child, scope)

    visit(tree, [])
    found["<module>"] = _digest(ast.dump(_Emptied().visit(tree)))
    return found


class _Emptied(ast.NodeTransformer):
    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
        node.body = [ast.Pass()]
        return node

    visit_AsyncFunctionDef = visit_FunctionDef


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def apply_update(
    old: ReachMap | None,
    update: Update,
    tables: Iterable[ReachTable],
    *,
    root: str,
    built_at: str,
    hashes: dict[str, str],
    test_files: tuple[str, ...],
    prints_of: Callable[[str], dict[str, str] | None] | None = None,
) -> ReachMap:
    """The map after an update: the old entries the update did not touch, and the re-traced tests' new ones."""
    tests: dict[str, set[str]] = {}
    outcomes: dict[str, str] = {}
    tracer = old.tracer if old is not None else ""
    if old is not None and not update.full:
        redone = set(update.test_files)
        removed = set(update.dropped) | set(update.node_ids)
        for test, numbers in old.tests.items():
            if test in removed or test.split("::")[0] in redone:
                continue
            tests[test] = {old.functions[number] for number in numbers}
            if test in old.outcomes:
                outcomes[test] = old.outcomes[test]
    for table in tables:
        tracer = table.tracer
        for test, numbers in table.tests.items():
            tests.setdefault(test, set()).update(table.functions[number] for number in numbers)
        outcomes.update(table.outcomes)
    reach = build_map(root, built_at, tracer, hashes, test_files, tests, outcomes)
    # Fingerprints of the files holding a mapped function: kept where the file did not change, else read now.
    prints: dict[str, dict[str, str]] = {}
    for file in sorted({key.split("::")[0] for key in reach.functions}):
        kept = old.prints.get(file) if old is not None and old.hashes.get(file) == hashes.get(file) else None
        found = kept if kept is not None else (prints_of(file) if prints_of is not None else None)
        if found is not None:
            prints[file] = found
    return replace(reach, prints=prints)


def build_map(
    root: str,
    built_at: str,
    tracer: str,
    hashes: dict[str, str],
    test_files: tuple[str, ...],
    tests: dict[str, set[str]],
    outcomes: dict[str, str],
) -> ReachMap:
    """A map from each test's set of function keys (numbered in sorted order: the same map, the same JSON)."""
    functions = tuple(sorted({key for keys in tests.values() for key in keys}))
    number = {key: index for index, key in enumerate(functions)}
    indexed = {test: tuple(sorted(number[key] for key in tests[test])) for test in sorted(tests)}
    kept = {test: outcomes[test] for test in sorted(outcomes) if test in indexed}
    return ReachMap(root, built_at, tracer, dict(sorted(hashes.items())), test_files, functions, indexed, kept)


def counted(number: int, noun: str) -> str:
    """'1 test', '3 tests'."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


# ----------------------------------------------------------------------------- the project's files


def project_hashes(root: Path) -> dict[str, str]:
    """A content hash of every Python file of the project and of its pytest configuration files."""
    found: dict[str, str] = {}
    for name in project_files(root):
        try:
            with open(root / name, "rb") as fh:
                found[name] = hashlib.sha256(fh.read()).hexdigest()[:20]
        except OSError:
            continue
    return found


def project_files(root: Path) -> list[str]:
    """The project's Python files and the root's pytest configuration files (relative, "/"), sorted."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        for name in files:
            if name.endswith(".py") or (folder == str(root) and name in CONFIG_FILES):
                found.append(os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/"))
    return sorted(found)


def python_files(root: Path) -> tuple[str, ...]:
    """The project's `python_files` patterns (pytest.ini, tox.ini, setup.cfg, pyproject.toml), else pytest's."""
    for name, section in (("pytest.ini", "pytest"), ("pyproject.toml", "tool.pytest.ini_options")):
        text = _read(root / name)
        if text is not None and f"[{section}]" in text:
            return _patterns(text) or _DEFAULT_PYTHON_FILES
    for name, header in (("tox.ini", "[pytest]"), ("setup.cfg", "[tool:pytest]")):
        text = _read(root / name)
        if text is not None and header in text:
            return _patterns(text) or _DEFAULT_PYTHON_FILES
    return _DEFAULT_PYTHON_FILES


def _patterns(text: str) -> tuple[str, ...]:
    match = re.search(r"^python_files\s*=\s*(.+)$", text, re.MULTILINE)
    if match is None:
        return ()
    return tuple(word.strip("\"'[],") for word in match.group(1).split() if word.strip("\"'[],"))


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def file_prints(root: Path) -> Callable[[str], dict[str, str] | None]:
    """`prints_of` for the project at `root`: a file's fingerprints as it is now."""

    def prints_of(name: str) -> dict[str, str] | None:
        try:
            return fingerprints((root / name).read_bytes())
        except OSError:
            return None

    return prints_of


def list_test_files(hashes: Iterable[str], patterns: tuple[str, ...]) -> tuple[str, ...]:
    """The project's test files (by name, as pytest finds them), among the hashed files."""
    return tuple(
        name
        for name in hashes
        if name.endswith(".py") and any(fnmatch.fnmatch(name.rpartition("/")[2], p) for p in patterns)
    )


def split_files(files: tuple[str, ...], sizes: dict[str, int], workers: int) -> list[tuple[str, ...]]:
    """Test files in `workers` shares of about equal size (largest first onto the lightest share); no empty share."""
    shares: list[list[str]] = [[] for _ in range(max(1, min(workers, len(files))))]
    loads = [0] * len(shares)
    for name in sorted(files, key=lambda n: (-sizes.get(n, 0), n)):
        lightest = loads.index(min(loads))
        shares[lightest].append(name)
        loads[lightest] += max(1, sizes.get(name, 0))
    return [tuple(sorted(share)) for share in shares if share]


RANKS = ("its own test module", "naming it", "importing its package", "the rest")


def nearest_first(
    texts: dict[str, str], module_name: str, names: tuple[str, ...], package: str
) -> tuple[tuple[str, int], ...]:
    """Test files (name -> text) ranked by how near they are to the target: 0 the module's own test module
    (`test_utils.py` for `pkg.utils`), 1 those naming the module, a target or a caller of one, 2 those
    importing the top-level package, 3 the rest; in that order, by name within a rank."""
    module = module_name.rpartition(".")[2]
    own = {f"test_{module}.py", f"{module}_test.py", f"tests_{module}.py"}
    words = sorted({name for name in names if name}, key=len, reverse=True)
    naming = re.compile(r"\b(?:" + "|".join(map(re.escape, words)) + r")\b") if words else None
    importing = re.compile(r"^[ \t]*(?:from|import)[ \t]+" + re.escape(package) + r"\b", re.MULTILINE)

    def rank(name: str) -> int:
        text = texts[name]
        if name.rpartition("/")[2] in own:
            return 0
        if naming is not None and naming.search(text):
            return 1
        return 2 if importing.search(text) else 3

    return tuple(sorted(((name, rank(name)) for name in texts), key=lambda pair: (pair[1], pair[0])))


def round_robin(files: tuple[str, ...], workers: int) -> list[tuple[str, ...]]:
    """Files in the given order dealt to `workers` shares, so that every worker starts with the nearest ones."""
    count = max(1, min(workers, len(files)))
    return [files[index::count] for index in range(count) if files[index::count]]


# ----------------------------------------------------------------------------- the cache


def default_reach_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "coderefine" / "reach"


def cache_file(cache_dir: Path, root: Path) -> Path:
    """One map per project folder (an incremental build needs the same project's last map, whatever changed)."""
    return cache_dir / f"{hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:24]}.json"


def to_json(reach: ReachMap) -> str:
    return json.dumps(
        {
            "schema": SCHEMA,
            "root": reach.root,
            "built_at": reach.built_at,
            "tracer": reach.tracer,
            "hashes": reach.hashes,
            "test_files": list(reach.test_files),
            "functions": list(reach.functions),
            "tests": {test: list(numbers) for test, numbers in reach.tests.items()},
            "outcomes": reach.outcomes,
            "prints": reach.prints,
        },
        separators=(",", ":"),
    )


def read_map(path: Path) -> ReachMap | None:
    """The cached map, or None when there is none or it is unreadable or of another schema (rebuilt then)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("schema") != SCHEMA:
            return None
        functions = tuple(str(key) for key in data["functions"])
        tests = {str(test): tuple(int(n) for n in numbers) for test, numbers in data["tests"].items()}
        if any(n < 0 or n >= len(functions) for numbers in tests.values() for n in numbers):
            return None
        return ReachMap(
            str(data["root"]),
            str(data["built_at"]),
            str(data["tracer"]),
            {str(k): str(v) for k, v in data["hashes"].items()},
            tuple(str(name) for name in data["test_files"]),
            functions,
            tests,
            {str(k): str(v) for k, v in data.get("outcomes", {}).items()},
            {str(f): {str(q): str(h) for q, h in p.items()} for f, p in data.get("prints", {}).items()},
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def write_map(path: Path, reach: ReachMap) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    temporary.write_text(to_json(reach), encoding="utf-8")
    temporary.replace(path)

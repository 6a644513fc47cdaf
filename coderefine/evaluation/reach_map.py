"""The reach map of a project: which tests execute which of its functions, and what a later build must re-trace.

pytest-testmon's idea, at the grain of functions: each test is mapped to the project functions it executed
(directly or through any chain; the sandbox's recording/reach.py), and the map remembers a content hash of
every project file. A later build re-traces only what a change can have moved: every test of a new or
changed test file, and each test that executed a function of a file that changed or went away; the tests
of deleted test files are dropped. A change to the pytest configuration re-traces everything.

Pure: no sandbox here (reach_build.py runs the traced tests), only the records, their merge, the staleness
rule, and their JSON form in the cache (outside the user's tree, beside the selection cache).
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
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

    @property
    def nothing(self) -> bool:
        return not (self.full or self.test_files or self.node_ids or self.dropped or self.changed)


def plan_update(old: ReachMap | None, hashes: dict[str, str], test_files: tuple[str, ...]) -> Update:
    """What to re-trace, from the map's file hashes and the project's files now."""
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
    dropped, single = [], []
    for test in old.tests:
        file = test.split("::")[0]
        if file in gone:
            dropped.append(test)
        elif file not in rerun_files and changed_set & old.files_reached((test,)):
            single.append(test)
    why = f"{counted(len(changed), 'file')} changed" if changed else "no file changed"
    return Update(False, whole, tuple(single), tuple(dropped), tuple(changed), why)


def apply_update(
    old: ReachMap | None,
    update: Update,
    tables: Iterable[ReachTable],
    *,
    root: str,
    built_at: str,
    hashes: dict[str, str],
    test_files: tuple[str, ...],
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
    return build_map(root, built_at, tracer, hashes, test_files, tests, outcomes)


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
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        for name in files:
            if not name.endswith(".py") and not (folder == str(root) and name in CONFIG_FILES):
                continue
            path = os.path.join(folder, name)
            try:
                with open(path, "rb") as fh:
                    digest = hashlib.sha256(fh.read()).hexdigest()[:20]
            except OSError:
                continue
            found[os.path.relpath(path, root).replace(os.sep, "/")] = digest
    return dict(sorted(found.items()))


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


def list_test_files(hashes: dict[str, str], patterns: tuple[str, ...]) -> tuple[str, ...]:
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
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def write_map(path: Path, reach: ReachMap) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    temporary.write_text(to_json(reach), encoding="utf-8")
    temporary.replace(path)

"""Keep only some of the tests pytest finds (CODEREFINE_SELECT, read by pytest_plugin.py).

- By name: a test file is collected only if its text names one of the given words (the target module,
  the targets, the module's functions that call them). That bounds the first, traced run on a large
  suite: test files that never mention the code cannot import it by name, so they are never imported.
  Test files are the `python_files` ones and every non-Python file (a conftest may collect data files as
  tests, e.g. input/expected-output pairs; pytest never hands them to a test otherwise). conftest.py,
  other Python files and files over 1 MB are always left to pytest.
- By import, within a time budget: a Python test file that names none of the words but imports the target's
  top-level package may still reach a target through a chain (`pkg.format(...)` calling `pkg.utils.split`).
  Such files are collected while the budget (from the session's start) lasts, their tests run after all
  the others, and only while it lasts; what it leaves out is counted, never failed. Nor is one that cannot
  be imported (an optional test dependency missing): the name filter would never have collected it.
- By node id: only the listed tests run (the tests the traced run saw calling a target), found by pytest's own
  discovery with every file outside theirs left uncollected (conftest.py and __init__.py aside). Not by
  naming their files to pytest: a file named on the command line is imported as a test module whatever
  its name, and a data file a conftest collects may be Python (Pygments' example files are).

Standard library only: this runs inside the sandbox, in the user's test process.
"""

from __future__ import annotations

import fnmatch
import os
import re
import time

_MAX_BYTES = 1 << 20  # larger files are never read to decide: they are left to pytest


class Selector:
    def __init__(
        self,
        names: list[str],
        node_ids: list[str],
        python_files: list[str],
        data_names: list[str] = (),
        import_names: list[str] = (),
        budget_seconds: float = 0.0,
        rootdir: str = "",
    ) -> None:
        self.pattern = _words(names)
        self.import_pattern = _imports(import_names)
        self.budget_seconds = budget_seconds
        self.started = time.monotonic()
        self.importing: set[str] = set()  # the files kept only because they import the package
        self.files_untraced = 0
        self.tests_untraced = 0
        self.unimportable: list[str] = []  # files kept only by import that pytest could not import
        # A data file (say, lexer input) names a module like "util" by chance: only the functions count there.
        self.data_pattern = _words(data_names) or self.pattern
        self.node_ids = frozenset(node_ids)
        self.node_files = frozenset(node.split("::")[0] for node in node_ids)  # relative to the rootdir, with "/"
        self.rootdir = rootdir
        self.python_files = list(python_files) or ["test_*.py", "*_test.py"]
        self.files_seen = 0
        self.files_kept = 0
        self.deselected = 0

    def ignores(self, path: str) -> bool:
        """Whether pytest should not collect this path (only test files are ever ignored)."""
        if not os.path.isfile(path):
            return False
        name = os.path.basename(path)
        if self.pattern is None:
            if not self.node_files or name in ("conftest.py", "__init__.py") or not self.rootdir:
                return False
            return os.path.relpath(path, self.rootdir).replace(os.sep, "/") not in self.node_files
        if name.endswith(".py") and (
            name == "conftest.py" or not any(fnmatch.fnmatch(name, pattern) for pattern in self.python_files)
        ):
            return False
        if name.endswith((".pyc", ".pyo", ".so", ".pyd")) or os.path.getsize(path) > _MAX_BYTES:
            return False
        counted = name.endswith(".py")  # the counts are of Python test files: data files may be anything
        self.files_seen += counted
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except OSError:
            return False  # let pytest report what it cannot read
        pattern = self.pattern if counted else self.data_pattern
        if pattern is None or pattern.search(text) is None:
            if not counted or self.import_pattern is None or self.import_pattern.search(text) is None:
                return True
            if self.spent():
                self.files_untraced += 1
                return True
            self.importing.add(os.path.realpath(path))
        self.files_kept += counted
        return False

    def spent(self) -> bool:
        """Whether the time for the files kept only by import has run out."""
        return time.monotonic() - self.started > self.budget_seconds

    def imports_only(self, path: str) -> bool:
        """Whether this test file was kept only because it imports the package (its tests run last)."""
        return bool(self.importing) and os.path.realpath(path) in self.importing

    def keep(self, node_ids: list[str]) -> tuple[set[str], int]:
        """The collected tests to keep, and how many are dropped."""
        if not self.node_ids:
            return set(node_ids), 0
        kept = {node for node in node_ids if node in self.node_ids}
        self.deselected += len(node_ids) - len(kept)
        return kept, len(node_ids) - len(kept)

    def counts(self) -> dict[str, int]:
        return {
            "files_seen": self.files_seen,
            "files_kept": self.files_kept,
            "deselected": self.deselected,
            "files_importing": len(self.importing),
            "files_untraced": self.files_untraced,
            "tests_untraced": self.tests_untraced,
            "files_unimportable": len(self.unimportable),
        }


def _words(names: list[str]) -> re.Pattern[str] | None:
    words = sorted({name for name in names if name}, key=len, reverse=True)
    return re.compile(r"\b(?:" + "|".join(map(re.escape, words)) + r")\b") if words else None


def _imports(packages: list[str]) -> re.Pattern[str] | None:
    """`import pkg`, `import pkg.sub as x`, `from pkg(.sub) import ...`, at any indentation."""
    words = sorted({name for name in packages if name}, key=len, reverse=True)
    if not words:
        return None
    return re.compile(r"^[ \t]*(?:from|import)[ \t]+(?:" + "|".join(map(re.escape, words)) + r")\b", re.MULTILINE)

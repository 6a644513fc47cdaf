"""The reach tracer: each test's project functions, reached directly or through any chain, in each of its
three ways (instrumented imports before 3.12, sys.monitoring on 3.12+, settrace for measuring)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from coderefine_sandbox.recording.reach import ReachTracer

from coderefine.resources import sandbox_dir

CORE = '''
"""A module docstring."""
from pkg import util


class Box:
    def open(self, text):
        """A method's docstring stays first."""
        return [util.helper(line) for line in text.splitlines()]


def unused():
    def inner():
        return 1
    return inner()


async def later():
    return 1
'''
UTIL = "def helper(line):\n    return line.strip()\n"

DRIVER = """
import json, sys
sys.path[:0] = [{sandbox!r}, {root!r}]
from coderefine_sandbox.recording.reach import ReachTracer
tracer = ReachTracer({root!r}, {kind!r})
from pkg import core
tracer.start("a")
assert core.Box().open(" x \\n y ") == ["x", "y"]
tracer.stop()
tracer.start("b")
core.unused()
tracer.stop()
tracer.start("c")
core.Box().open("z")
tracer.stop()
core.unused()  # between tests: counts for none
tracer.close()
functions, tests = tracer.table()
print(json.dumps({{"kind": tracer.kind, "tests": {{t: sorted(functions[n] for n in ns) for t, ns in tests.items()}}}}))
"""


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg/__init__.py").write_text("")
    (root / "pkg/core.py").write_text(textwrap.dedent(CORE))
    (root / "pkg/util.py").write_text(UTIL)
    return root


def _run(python: str, root: Path, kind: str | None) -> dict:
    script = DRIVER.format(sandbox=str(sandbox_dir()), root=str(root), kind=kind)
    done = subprocess.run([python, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _expected(comprehension: bool) -> dict[str, list[str]]:
    opened = ["pkg/core.py::Box.open", "pkg/util.py::helper"]
    if comprehension:  # a code object of its own before 3.12 (settrace sees it)
        opened = ["pkg/core.py::Box.open", "pkg/core.py::Box.open.<locals>.<listcomp>", "pkg/util.py::helper"]
    return {"a": opened, "b": ["pkg/core.py::unused", "pkg/core.py::unused.<locals>.inner"], "c": opened}


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="the instrumented imports are the way before 3.12")
def test_instrumented_imports_map_each_test_to_what_it_ran(tmp_path: Path):
    found = _run(sys.executable, _project(tmp_path), None)
    assert found == {"kind": "instrument", "tests": _expected(comprehension=False)}


def test_the_settrace_way_maps_the_same(tmp_path: Path):
    found = _run(sys.executable, _project(tmp_path), "settrace")
    assert found == {"kind": "settrace", "tests": _expected(comprehension=sys.version_info < (3, 12))}


def _python_312() -> str | None:
    if sys.version_info >= (3, 12):
        return sys.executable
    for name in ("python3.13", "python3.12"):
        found = shutil.which(name)
        if found and subprocess.run([found, "-c", "import sys; assert hasattr(sys, 'monitoring')"]).returncode == 0:
            return found
    return None


def test_sys_monitoring_maps_the_same_and_turns_project_code_back_on_for_each_test(tmp_path: Path):
    python = _python_312()
    if python is None:
        pytest.skip("no Python 3.12+ here")
    found = _run(python, _project(tmp_path), None)
    assert found == {"kind": "sys.monitoring", "tests": _expected(comprehension=False)}


def test_code_outside_the_workspace_is_not_the_projects(tmp_path: Path):
    tracer = ReachTracer(str(tmp_path), "settrace")
    assert tracer.project.classify(json.dumps.__code__) == -1
    assert tracer.project.relative(str(tmp_path / ".venv/lib/x.py")) is None
    assert tracer.project.relative(str(tmp_path / "pkg/x.py")) == "pkg/x.py"

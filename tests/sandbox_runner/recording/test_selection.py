"""The sandbox's test filter: by the words a test file names, and by node id."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import coderefine_sandbox
import pytest
from coderefine_sandbox.protocol import PytestResults, SelectionCounts, TestSelection, read_json, write_json
from coderefine_sandbox.recording.selection import Selector

PLUGIN = "coderefine_sandbox.recording.pytest_plugin"


def test_only_test_files_naming_a_word_are_collected(tmp_path):
    (tmp_path / "test_a.py").write_text("from pkg.numbers import fmt\n")
    (tmp_path / "test_b.py").write_text("import os  # informative\n")
    (tmp_path / "conftest.py").write_text("")
    (tmp_path / "helper.py").write_text("")
    (tmp_path / "check_c.py").write_text("import fmt_extra\n")
    (tmp_path / "case1.txt").write_text("fmt(3)\n")  # a data file a conftest may collect as a test
    (tmp_path / "case2.txt").write_text("other(3)\n")
    (tmp_path / "case3.txt").write_text("numbers\n")  # the module's name, by chance: not a reason in data
    selector = Selector(["fmt", "numbers"], [], ["test_*.py", "check_*.py"], ["fmt"])
    assert not selector.ignores(str(tmp_path / "test_a.py"))
    assert selector.ignores(str(tmp_path / "test_b.py"))  # "informative" is not the word "fmt"
    assert selector.ignores(str(tmp_path / "check_c.py"))  # neither is "fmt_extra"
    assert not selector.ignores(str(tmp_path / "conftest.py")) and not selector.ignores(str(tmp_path / "helper.py"))
    assert not selector.ignores(str(tmp_path))  # folders are pytest's business
    assert not selector.ignores(str(tmp_path / "case1.txt")) and selector.ignores(str(tmp_path / "case2.txt"))
    assert selector.ignores(str(tmp_path / "case3.txt"))
    assert selector.counts() == {  # Python test files
        "files_seen": 3,
        "files_kept": 1,
        "deselected": 0,
        "files_importing": 0,
        "files_untraced": 0,
        "tests_untraced": 0,
        "files_unimportable": 0,
    }


def test_files_importing_the_package_are_kept_while_the_budget_lasts(tmp_path):
    (tmp_path / "test_fmt.py").write_text("from pkg.numbers import fmt\n")
    (tmp_path / "test_api.py").write_text("import os\nfrom pkg import render\n")  # reaches fmt, maybe
    (tmp_path / "test_deep.py").write_text("def test():\n    import pkg.sub as s\n")
    (tmp_path / "test_other.py").write_text("import pkgother\n# pkg is mentioned, not imported\n")
    selector = Selector(["fmt", "numbers"], [], [], [], ["pkg"], budget_seconds=60.0)
    kept = [name for name in ("test_fmt.py", "test_api.py", "test_deep.py", "test_other.py")]
    kept = [name for name in kept if not selector.ignores(str(tmp_path / name))]
    assert kept == ["test_fmt.py", "test_api.py", "test_deep.py"]
    assert selector.imports_only(str(tmp_path / "test_api.py")) and not selector.imports_only(
        str(tmp_path / "test_fmt.py")
    )
    spent = Selector(["fmt"], [], [], [], ["pkg"], budget_seconds=0.0)
    assert not spent.ignores(str(tmp_path / "test_fmt.py"))  # naming the target: never left to the budget
    assert spent.ignores(str(tmp_path / "test_api.py"))
    assert spent.counts()["files_untraced"] == 1 and spent.counts()["files_kept"] == 1


def test_node_ids_keep_only_the_listed_tests():
    selector = Selector([], ["t.py::a", "t.py::c[1]"], [])
    assert not selector.ignores(__file__)  # no words: no file filter
    kept, dropped = selector.keep(["t.py::a", "t.py::b", "t.py::c[1]", "t.py::c[2]"])
    assert kept == {"t.py::a", "t.py::c[1]"} and dropped == 2 and selector.counts()["deselected"] == 2
    assert Selector([], [], []).keep(["x"]) == ({"x"}, 0)


@pytest.mark.slow  # real pytest processes, 9-12 s: not for the unit pass
def test_the_plugin_runs_importing_files_last_within_the_budget_whatever_a_conftest_says(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text("def pytest_ignore_collect(collection_path, config):\n    return False\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text(
        "from pkg.utils import fmt as _f\n\ndef shout(n):\n    return _f(n)\n"
    )
    (tmp_path / "pkg" / "utils.py").write_text("def fmt(n):\n    return str(n)\n")
    tests = tmp_path / "tests"
    tests.mkdir()
    # Collected first (alphabetical), kept only for importing pkg: run last, and not at all once the budget is spent.
    (tests / "test_api.py").write_text(
        "import pkg\n\ndef test_a():\n    assert pkg.shout(1) == '1'\n\ndef test_b():\n    pass\n"
    )
    # The test naming fmt runs first and waits until the budget is spent (not a fixed sleep: a loaded machine
    # may take a while to collect), so the importing file's tests find it spent.
    wait = "from coderefine_sandbox.recording.pytest_plugin import _state\n\n\ndef test_fmt():\n"
    wait += "    while not _state.selector.spent():\n        time.sleep(0.05)\n"
    (tests / "test_fmt.py").write_text("import time\nfrom pkg.utils import fmt\n" + wait)
    # Kept for importing pkg, but a test dependency is missing: left out, as the name filter would have left it.
    (tests / "test_contrast.py").write_text("import pkg\nimport a_missing_test_dependency\n\ndef test_c():\n    pass\n")
    (tests / "test_other.py").write_text("def test_broken():\n    assert False\n")  # neither: never collected
    selection = TestSelection(("fmt", "utils"), (), ("fmt",), ("pkg",), 5.0)
    write_json(str(tmp_path / "select.json"), selection)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join((str(Path(coderefine_sandbox.__file__).parent.parent), str(tmp_path))),
        "CODEREFINE_SELECT": str(tmp_path / "select.json"),
        "CODEREFINE_RESULTS": str(tmp_path / "results.json"),
    }
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", PLUGIN, "--rootdir", str(tmp_path)]
    proc = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    results = read_json(PytestResults, str(tmp_path / "results.json"))
    assert proc.returncode == 0 and results.outcomes == {"tests/test_fmt.py::test_fmt": "passed"}, proc.stdout
    expected = SelectionCounts(4, 3, 0, files_importing=2, files_untraced=0, tests_untraced=2, files_unimportable=1)
    assert results.selected == expected


def test_node_ids_collect_only_their_files_from_pytests_discovery(tmp_path):
    (tmp_path / "tests" / "examples").mkdir(parents=True)
    for name in ("tests/test_a.py", "tests/test_b.py", "tests/conftest.py", "tests/__init__.py"):
        (tmp_path / name).write_text("")
    (tmp_path / "tests/examples/ok.py").write_text("x = 1\n")  # a data file a conftest collects, Python too
    (tmp_path / "tests/examples/other.py").write_text("y = 2\n")
    selector = Selector([], ["tests/test_a.py::t", "tests/examples/ok.py::lex"], [], rootdir=str(tmp_path))
    kept = [n for n in ("test_a.py", "test_b.py", "conftest.py", "__init__.py", "examples/ok.py", "examples/other.py")]
    kept = [n for n in kept if not selector.ignores(str(tmp_path / "tests" / n))]
    assert kept == ["test_a.py", "conftest.py", "__init__.py", "examples/ok.py"]

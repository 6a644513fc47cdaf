"""Which tests judge a run: --tests, the whole suite, a cached selection, or the traced name filter."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from coderefine_sandbox.protocol import BaselineReport, CaptureSummary, SelectionCounts

from coderefine.evaluation.evaluator import _wide_run_problem
from coderefine.evaluation.project import resolve_project
from coderefine.evaluation.selection import (
    after_baseline,
    plan_selection,
    project_state,
    selection_names,
    what_ran,
    widened,
    widening_failed,
)
from tests.sandbox_runner.samples import test_run

SOURCE = """
def _digits(n):
    return str(n)

def fmt(n):
    return _digits(n) + "!"

def shout(n):
    return fmt(n).upper()

def unrelated():
    return 1
"""


def project(tmp_path: Path, tests: Path | None = None):
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "pyproject.toml").write_text("")
    pkg = tmp_path / "src" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "numbers.py").write_text(SOURCE)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_numbers.py").write_text("from pkg.numbers import shout\n")
    return resolve_project(pkg / "numbers.py", tests)


def test_names_are_the_module_the_targets_and_their_callers_transitively():
    assert selection_names("pkg.numbers", ("_digits",), SOURCE) == ("_digits", "fmt", "numbers", "shout")
    assert selection_names("pkg.numbers", ("C.method",), "class C:\n    def method(self): pass\n") == (
        "C",
        "method",
        "numbers",
    )


def test_tests_option_and_all_setting_override_the_selection(tmp_path):
    given = plan_selection(project(tmp_path, tmp_path / "tests"), ("fmt",), SOURCE, "auto", tmp_path / "cache")
    assert given.mode == "given" and given.args == ("tests",) and given.request is None
    everything = plan_selection(project(tmp_path / "b"), ("fmt",), SOURCE, "all", tmp_path / "cache")
    assert everything.mode == "all" and everything.args == () and everything.request is None
    assert "whole suite" in what_ran(everything)


def test_a_traced_run_narrows_the_candidates_and_is_cached_per_project_state(tmp_path):
    proj = project(tmp_path / "p")
    cache = tmp_path / "cache"
    first = plan_selection(proj, ("_digits",), SOURCE, "auto", cache)
    assert first.mode == "traced" and first.request is not None and "shout" in first.request.names
    assert first.request.node_ids == () and "naming" in what_ran(first)
    assert first.request.data_names == ("_digits", "fmt", "shout")  # not the module's name "numbers"
    reached = ("tests/test_numbers.py::test_shout",)
    narrowed, facts = after_baseline(first, reached, 12, SelectionCounts(9, 2, 0, 0, 0, 0, 0))
    assert narrowed.request is not None and narrowed.request.node_ids == reached
    assert (facts.mode, facts.baseline_tests, facts.candidate_tests, facts.files_seen, facts.files_kept) == (
        "traced",
        12,
        1,
        9,
        2,
    )
    assert "saved for this project state" in facts.reason and facts.node_ids == reached
    assert json.loads(next(cache.iterdir()).read_text())["node_ids"] == list(reached)

    again = plan_selection(proj, ("_digits",), SOURCE, "auto", cache)
    assert again.mode == "cached" and again.request is not None and again.request.node_ids == reached
    _, cached_facts = after_baseline(again, reached, 1, SelectionCounts(0, 0, 0, 0, 0, 0, 0))
    assert "12 tests traced then, from 2 of 9 test files" in cached_facts.reason

    (proj.root / "tests" / "test_numbers.py").write_text("from pkg.numbers import shout  # changed\n")
    assert plan_selection(proj, ("_digits",), SOURCE, "auto", cache).mode == "traced"  # a new project state


def test_no_test_calling_the_targets_keeps_the_originals_tests_and_caches_nothing(tmp_path):
    first = plan_selection(project(tmp_path / "p"), ("unrelated",), SOURCE, "auto", tmp_path / "cache")
    same, facts = after_baseline(first, (), 5, None)
    assert same == first and facts.candidate_tests == 5 and "no test called the targets" in facts.reason
    assert not (tmp_path / "cache").exists()


def test_project_state_follows_sources_and_config_not_other_files(tmp_path):
    project(tmp_path)
    before = project_state(tmp_path)
    (tmp_path / "notes.md").write_text("x")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "x.py").write_text("x = 1")
    assert project_state(tmp_path) == before
    (tmp_path / "setup.cfg").write_text("[tool:pytest]\n")
    assert project_state(tmp_path) != before


def test_a_whole_suite_run_replaces_the_first_selection_only_when_it_passes_and_reaches_a_target(tmp_path):
    passing = replace(test_run(), failed=0, exit_code=0, failures=())
    reached = CaptureSummary(3, {"f": 3}, {"f": 0}, False, ("f",), None, ("tests/test_api.py::test_render",))
    assert _wide_run_problem(BaselineReport(tests=passing, capture=reached)) is None
    assert _wide_run_problem(BaselineReport(runner_error="the sandbox runner failed: boom")) == (
        "the sandbox runner failed: boom"
    )
    assert _wide_run_problem(BaselineReport(tests=test_run(), capture=reached)) == (
        "the whole suite does not pass on the original (tests/test_mod.py::test_f)"
    )
    timed_out = replace(passing, timed_out=True, duration=80.2)
    assert "ran out of the time left (80 s)" in _wide_run_problem(BaselineReport(tests=timed_out, capture=reached))
    nobody = replace(reached, reached=())
    assert (
        _wide_run_problem(BaselineReport(tests=passing, capture=nobody))
        == "no test of the whole suite called them either"
    )

    first = plan_selection(project(tmp_path), ("unrelated",), SOURCE, "auto", None, budget=30.0)
    _, facts = after_baseline(widening_failed(first, "the whole suite has no tests"), (), 5, None)
    assert "the whole suite was not traced instead: the whole suite has no tests" in facts.reason
    wide, facts = after_baseline(widened(first), ("t.py::a",), 40, None)
    assert wide.request is not None and wide.request.node_ids == ("t.py::a",)
    assert facts.reason.startswith("they call the targets (traced in the whole suite: no test in the test files naming")

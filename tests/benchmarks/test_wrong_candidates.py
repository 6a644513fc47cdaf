"""The wrong-candidate benchmark's own parts: its data files and what it reads from a rejection's reason."""

from __future__ import annotations

import ast
import importlib.util
import sys
import types

import pytest

from tests.conftest import REPO


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


wrong_candidates = _load("wrong_candidates")
ratio = _load("wrong_candidates_ratio")


def test_the_set_holds_twenty_wrong_candidates_of_both_kinds_over_four_libraries():
    sets = wrong_candidates.load_sets(set())
    wrong = [c for s in sets for c in s.candidates if c.wrong]
    assert len(sets) >= 4 and len(wrong) >= 20
    assert {"indirect", "boundary"} <= {c.kind for c in wrong}
    for library in sets:
        for candidate in library.candidates:
            assert candidate.kind in ("indirect", "boundary", "direct", "correct"), candidate
            assert candidate.expected == ("accepted" if candidate.kind == "correct" else "refused"), candidate
            (node,) = ast.parse(candidate.code).body  # one function, the target, as the scripted provider serves it
            assert isinstance(node, ast.FunctionDef) and node.name == candidate.function, candidate.why


@pytest.mark.parametrize(
    ("reason", "by"),
    [
        ("test tests/test_format.py::test_strip failed (3 of 117 tests run; stopped at the first failure)", "test"),
        ("3 tests failed: tests/test_format.py::TestFormat::test_strip_comments_single", "test"),
        ("on an input the tests never tried, f('a__b') returned 'a--b' on the original but …", "boundary input"),
        ("behaviour changed on 2/16 recorded calls: f('x') return: expected 1, got 2", "recorded call"),
        ("not faster: 1.02x [0.97, 1.08]", "speed"),
        ("speed not measured: too fast to measure reliably: the recorded calls take 422 ns each", "unmeasurable"),
    ],
)
def test_what_refused_a_candidate_is_read_from_its_reason(reason, by):
    assert wrong_candidates.refused_by(reason) == by


def test_the_independent_ratio_times_both_versions_on_the_same_calls_and_checks_their_results(monkeypatch):
    monkeypatch.setattr(ratio, "TARGET_SECONDS", 0.002)
    monkeypatch.setattr(ratio, "PAIRS", 3)
    calls = [((list(range(n)),), {}) for n in (50, 200, 400)]
    slow = types.ModuleType("slow")
    exec("def total(xs):\n    t = 0\n    for x in xs:\n        t = t + x\n    return t\n", slow.__dict__)
    faster = ratio.candidate_function(slow, "total", "def total(xs):\n    return sum(xs)\n")
    wrong = ratio.candidate_function(slow, "total", "def total(xs):\n    return sum(xs) + 1\n")
    measured = ratio.measure(slow.total, faster, calls)
    assert measured["calls"] == 3 and measured["differing_calls"] == 0 and measured["pairs"] == 3
    assert measured["ratio"] > 0 and measured["pair_low"] <= measured["pair_median"] <= measured["pair_high"]
    assert ratio.measure(slow.total, wrong, calls)["differing_calls"] == 3
    assert [ratio.module_name(f) for f in ("sqlparse/utils.py", "tabulate/__init__.py")] == [
        "sqlparse.utils",
        "tabulate",
    ]

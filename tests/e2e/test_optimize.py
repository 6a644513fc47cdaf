"""Scripted runs on tasks of ../shared/bench/optimize: the checks the loop issue names.

The real CLI, the real sandbox, real pytest, real timing; only the model's answers are scripted.
"""

from __future__ import annotations

import importlib.util
import json
import pickle
import time

import pytest

from tests.conftest import fenced, write_script

pytestmark = pytest.mark.slow  # every test here is a real run


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def independent_speedup(task, entry_point: str) -> float:
    """Time solution.py and reference.py on the task's cases in this process, best of 3."""
    cases = pickle.loads((task / "cases.pkl").read_bytes())
    times = []
    for name in ("solution", "reference"):
        func = getattr(_load(task / f"{name}.py", f"independent_{name}"), entry_point)
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            for args, _expected in cases:
                func(*pickle.loads(pickle.dumps(args)))
            best = min(best, time.perf_counter() - started)
        times.append(best)
    return times[0] / times[1]


@pytest.mark.timed
def test_broken_then_reference_then_comment_only_then_docstring_only(cli, copy_task, tmp_path):
    """One run, four candidates (one baseline for them all: this is the serial timed phase)."""
    task = copy_task("optimize", "HumanEval_10")
    original = (task / "solution.py").read_text()
    reference = (task / "reference.py").read_text()
    broken = original.replace("beginning_of_suffix += 1", "beginning_of_suffix += 2")
    comment_only = original.replace(
        "    beginning_of_suffix = 0", "    # scan suffixes from the left\n    beginning_of_suffix = 0"
    )
    # A null candidate that does get evaluated (its AST differs), so it is timed.
    docstring_only = original.replace(
        '""" Test if given string is a palindrome """', '"""Whether the string reads the same backwards."""'
    )
    assert docstring_only != original
    script = write_script(
        tmp_path / "script.json",
        generate=[fenced(broken)],
        feedback=[
            "In make_palindrome, line 22 skips every other suffix: step by one.\nVERDICT: CONTINUE",
            "Correct and fast. Try a comment to explain it.\nVERDICT: CONTINUE",
            "Now a clearer docstring.\nVERDICT: CONTINUE",
        ],
        refine=[fenced(reference), fenced(comment_only), fenced(docstring_only)],
    )
    report = tmp_path / "report.json"
    trace = tmp_path / "trace"
    proc = cli(
        "optimize",
        task / "solution.py",
        "--provider",
        "scripted",
        "--script",
        script,
        "--report",
        report,
        "--trace",
        trace,
        "--patience",
        "3",
        "--timing-pairs",
        "3",  # the reference is ~7x faster: three pairs per series tell it apart (six cost twice the time)
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(report.read_text())
    first, second, third, fourth = data["iterations"]

    # 1. A first candidate that breaks behaviour is rejected with the failing test named.
    assert first["verdict"] == "rejected"
    assert "test_solution.py::test_case[" in first["reason"] and first["tests"]["failed"] > 0

    # 2. A later candidate equal to reference.py is accepted, with a speedup consistent with an
    #    independent measurement of the same pair (loose bound: these machines are noisy).
    assert second["verdict"] == "accepted"
    low, high = second["speedup_ci"]
    assert 1.05 < low <= second["speedup"] <= high
    independent = independent_speedup(task, "make_palindrome")
    assert independent / 2 < second["speedup"] < independent * 2, (second["speedup"], independent)
    assert second["behavior"]["calls_compared"] == 14 and second["behavior"]["mismatches"] == 0

    # 3. A candidate that differs from the original only in comments is never reported as faster.
    assert third["verdict"] == "rejected" and "identical to the original" in third["reason"]
    assert third["speedup"] is None and not third["evaluated"]

    # 4. A null candidate that is evaluated and timed (against the original, as every candidate is) comes out
    #    "not faster".
    assert fourth["evaluated"] and fourth["tests"]["failed"] == 0
    assert fourth["verdict"] == "rejected" and fourth["reason"].startswith("not faster")
    assert fourth["speedup_ci"][0] < 1.05

    assert data["status"] == "improved" and data["best"]["iteration"] == 1
    assert data["best"]["code"] == original.replace(original, data["best"]["code"])  # a full module
    assert "def make_palindrome" in data["best"]["code"] and "KMP" in data["best"]["code"]
    assert data["stop_reason"] == "max iterations reached (4)"  # every scripted candidate was used
    assert data["llm"]["calls"] == 7
    assert (task / "solution.py").read_text() == original  # no --write: nothing changed

    # The refine prompt carries the whole history: attempt 0's code, its execution facts, its feedback.
    refine_prompt = json.loads((trace / "003-refine.json").read_text())["request"]["messages"][-1]["content"]
    assert "### Attempt 0 (generate)" in refine_prompt
    assert "beginning_of_suffix += 2" in refine_prompt
    assert "test_solution.py::test_case[" in refine_prompt
    assert "line 22 skips every other suffix" in refine_prompt
    feedback_prompt = json.loads((trace / "004-feedback.json").read_text())["request"]["messages"][-1]["content"]
    assert "Speed:" in feedback_prompt and "95% interval" in feedback_prompt
    assert "14 recorded calls replayed" in feedback_prompt
    # (That the saved trace replays to the same verdicts is checked by the drafts e2e test and, without
    # the model, by tests/providers/test_openai.py: not again here, in the serial phase.)


def test_behaviour_change_the_tests_miss_is_caught_by_replay(scripted, copy_task):
    """Mutating the caller's argument passes the task's tests (they deep-copy inputs) but not replay."""
    task = copy_task("optimize", "HumanEval_12")
    entry = json.loads((task / "task.json").read_text())["entry_point"]
    assert entry == "longest"
    mutating = (
        "def longest(strings):\n"
        "    if not strings:\n"
        "        return None\n"
        "    maxlen = max(len(x) for x in strings)\n"
        "    for s in strings:\n"
        "        if len(s) == maxlen:\n"
        "            strings.sort()  # reorders the caller's list: invisible to tests that pass a copy\n"
        "            return s\n"
    )
    (only,) = scripted("optimize", task / "solution.py", [mutating])["iterations"]
    assert only["tests"]["failed"] == 0  # the tests alone would have accepted it
    assert only["verdict"] == "rejected" and "behaviour changed" in only["reason"] and "mutation" in only["reason"]


@pytest.mark.slow  # not `timed`: a 7x-1000x candidate holds under load (see timed_last.py)
def test_write_applies_only_the_verified_candidate(scripted, copy_task):
    task = copy_task("optimize", "HumanEval_10")
    target = task / "solution.py"
    target.chmod(0o640)
    reference = (task / "reference.py").read_text()
    data = scripted("optimize", target, [reference], ["VERDICT: STOP"], (), "--write", "--timing-pairs", "3")
    assert data["written"] and data["stop_reason"] == "feedback: nothing left to improve"
    assert target.read_text() == data["best"]["code"]
    assert target.stat().st_mode & 0o777 == 0o640
    assert not [p for p in task.iterdir() if p.name.endswith(".tmp")]


def test_write_does_nothing_when_nothing_is_verified(scripted, copy_task):
    task = copy_task("optimize", "HumanEval_10")
    target = task / "solution.py"
    before = target.read_bytes()
    broken = before.decode().replace("beginning_of_suffix += 1", "beginning_of_suffix += 2")
    data = scripted("optimize", target, [broken], (), (), "--write")
    assert "status: unchanged" in data["_stdout"] and not data["written"]
    assert target.read_bytes() == before

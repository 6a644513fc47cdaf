"""Mutation check of the gate itself: small behaviour-changing edits (benchmarks/mutants.py) of correct
functions must be rejected whenever the recorded calls can tell them apart, and nothing the calls can
tell apart may be accepted.

Which mutants the calls can tell apart is decided independently, on the host: original and mutant are
run directly on the same arguments (in a child process with a time limit, since a mutant may loop), and
their outcomes compared. The gate's side is the Evaluator as a run uses it (tests, then the recorded calls
replayed, in the real process sandbox), without timing: a speedup verdict only adds conditions on top of
`correctness_problem`, and timing each mutant would make this test minutes long for no extra evidence.
"""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from coderefine.evaluation.evaluator import SandboxEvaluator
from coderefine.evaluation.project import resolve_project
from coderefine.evaluation.settings import EvaluationSettings
from coderefine.evaluation.verdicts import correctness_problem
from coderefine.refine.candidate import original_candidate
from coderefine.sandboxes.registry import make_sandbox
from tests.benchmarks.test_mutants import mutants_module

# Run original and mutant on the same arguments; print whether any outcome (value or exception, and the
# arguments after the call) differs.
_DIFFERS = """
import copy, json, pickle, sys

original, mutant, function, calls_path = sys.argv[1:]
with open(calls_path, "rb") as fh:
    calls = pickle.load(fh)


def outcomes(path):
    namespace = {"__name__": "checked"}
    with open(path, encoding="utf-8") as fh:
        exec(compile(fh.read(), path, "exec"), namespace)
    func, found = namespace[function], []
    for args in calls:
        args = copy.deepcopy(args)
        try:
            found.append(("return", func(*args), args))
        except Exception as exc:
            found.append(("raise", type(exc).__name__, str(exc), args))
    return found


print(json.dumps(outcomes(original) != outcomes(mutant)))
"""


def calls_tell_apart(tmp_path: Path, original: str, mutant: str, function: str, calls: list[tuple]) -> bool:
    (tmp_path / "original_code.py").write_text(original)
    (tmp_path / "mutant_code.py").write_text(mutant)
    (tmp_path / "calls.pkl").write_bytes(pickle.dumps(calls))
    argv = [sys.executable, "-c", _DIFFERS, *(str(tmp_path / n) for n in ("original_code.py", "mutant_code.py"))]
    try:
        proc = subprocess.run(
            [*argv, function, str(tmp_path / "calls.pkl")], capture_output=True, text=True, timeout=30
        )
    except subprocess.TimeoutExpired:
        return True  # the original ends on these calls; a mutant that does not is told apart by its time limit
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def gate_problems(module: Path, function: str, codes: dict[str, str]) -> dict[str, str | None]:
    """Why the gate rejects each code (None: accepted), judged against the original's recorded calls."""
    project = resolve_project(module, None, None)
    # Boundary variants off: this checks the recorded calls' gate against what those calls tell apart (the
    # variants catch more, which tests/evaluation/test_boundary_inputs.py checks).
    settings = EvaluationSettings(measure_speed=False, boundary_inputs=0)
    evaluator = SandboxEvaluator(project, (function,), make_sandbox("process", None), settings)
    try:
        evaluator.baseline(module.read_text())
        return {name: correctness_problem(evaluator.evaluate(original_candidate(code))) for name, code in codes.items()}
    finally:
        evaluator.close()


def check_gate(tmp_path: Path, module: Path, function: str, calls: list[tuple]) -> dict[str, int]:
    original = module.read_text()
    found = mutants_module.mutants(original, function)
    assert found, "no mutants: the operators found nothing to change"
    scratch = tmp_path / "host-check"
    scratch.mkdir(parents=True, exist_ok=True)
    apart = {m.name: calls_tell_apart(scratch, original, m.code, function, calls) for m in found}
    problems = gate_problems(module, function, {m.name: m.code for m in found})
    wrongly_accepted = [name for name, differs in apart.items() if differs and problems[name] is None]
    wrongly_rejected = {name: problems[name] for name, differs in apart.items() if not differs and problems[name]}
    assert not wrongly_accepted, f"the gate accepted mutants the recorded calls tell apart: {wrongly_accepted}"
    # An equivalent mutant on these calls passes the same tests and replays identically: rejecting it
    # would mean the gate sees differences that are not there.
    assert not wrongly_rejected, f"the gate rejected mutants that behave the same on these calls: {wrongly_rejected}"
    return {"mutants": len(found), "told_apart": sum(apart.values())}


FUNCTIONS = """
def clamp_sum(values, low, high):
    total = 0
    for value in values:
        if value < low:
            total += low
        elif value > high:
            total += high
        else:
            total += value
    return total


def window_max(values, k):
    best = None
    for start in range(len(values) - k + 1):
        peak = max(values[start:start + k])
        if best is None or peak > best:
            best = peak
    return best


def normalise(words, keep_short=False):
    kept = []
    for word in words:
        word = word.strip().lower()
        if len(word) > 2 or (keep_short and word):
            kept.append(word)
    words.clear()
    words.extend(kept)
    return len(kept)
"""
CALLS = {
    "clamp_sum": [([1, 5, 10], 2, 8), ([2, 8, 3], 2, 8), ([], 0, 1), ([-4, 0, 4], -1, 1)],
    "window_max": [([1, 3, 2, 5, 4], 2), ([7], 1), ([2, 2, 2], 3), ([5, 1, 9, 1], 1)],
    "normalise": [(["  The ", "a", "Cat", "of"], False), (["Hi", "", "ox", "Zebra"], True), ([], False)],
}


@pytest.mark.slow
@pytest.mark.parametrize("function", sorted(CALLS))  # one test per function: the workers share them out
def test_the_gate_rejects_every_mutant_the_recorded_calls_tell_apart(make_project, tmp_path, function):
    # Weak tests on purpose: they only check types, so the recorded calls, not the assertions, must catch
    # the mutants.
    lines = ["from funcs import clamp_sum, normalise, window_max", ""]
    for name, calls in CALLS.items():
        lines += ["", f"def test_{name}():", f"    for args in {calls!r}:", f"        {name}(*args)", ""]
    root = make_project({"funcs.py": FUNCTIONS, "test_funcs.py": "\n".join(lines)})
    counts = check_gate(tmp_path / f"check-{function}", root / "funcs.py", function, CALLS[function])
    # The check means something only if most mutants change behaviour on these calls, and some do not (on
    # clamp_sum and window_max: the gate must not reject what behaves the same). Found: 5 of 7, 8 of 11, 6 of 6.
    assert counts["told_apart"] >= 0.5 * counts["mutants"] and counts["mutants"] >= 5, counts
    if function != "normalise":
        assert counts["told_apart"] < counts["mutants"], counts


@pytest.mark.slow
def test_the_gate_on_benchmark_tasks(copy_task, tmp_path):
    for name in ("HumanEval_52",):  # one task: the module's own functions above give the operators their variety
        task = copy_task("optimize", name)
        function = json.loads((task / "task.json").read_text())["entry_point"]
        calls = [args for args, _ in pickle.loads((task / "cases.pkl").read_bytes())]
        counts = check_gate(tmp_path / f"check-{name}", task / "solution.py", function, calls)
        assert counts["told_apart"] >= 1, textwrap.shorten(str(counts), 80)

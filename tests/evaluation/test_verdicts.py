"""Verdicts the tests can support: configurable comparison, pinned randomness and time, and the gate that
refuses to judge when the tests make too few calls or run too little of the targets. Real CLI runs in the
real sandbox (readability task: no timing), plus the sandbox-side pieces in process."""

from __future__ import annotations

import inspect
import json
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from coderefine.errors import ConfigError, ExitCode
from coderefine.evaluation.verdicts import judge_sufficiency
from coderefine.records import TargetEvidence
from coderefine.settings import resolve_settings
from tests.conftest import REPO

sys.path.insert(0, str(REPO / "sandbox"))

from coderefine_sandbox.behaviour.compare import unordered_equal
from coderefine_sandbox.pinning import CLOCK_START, SEED, observed_call, pinned_call
from coderefine_sandbox.recording.linecov import LineCoverage

# ----------------------------------------------------------------------------- settings


def test_comparison_and_gate_settings_from_flag_env_and_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.coderefine]\nunordered = ["unique", "pairs"]\nrel_tol = 1e-6\nmin_coverage = 0.9\n'
    )
    settings = resolve_settings({}, tmp_path, {})
    assert settings.unordered == ("unique", "pairs") and settings.source("unordered") == "pyproject.toml"
    assert settings.rel_tol == 1e-6 and settings.min_coverage == 0.9
    assert (settings.abs_tol, settings.min_calls, settings.allow_insufficient_tests) == (0.0, 3, False)
    from_env = resolve_settings({}, tmp_path, {"CODEREFINE_UNORDERED": "a, b,", "CODEREFINE_MIN_CALLS": "7"})
    assert from_env.unordered == ("a", "b") and from_env.min_calls == 7
    flags = resolve_settings({"unordered": "f", "allow_insufficient_tests": True}, tmp_path, {})
    assert flags.unordered == ("f",) and flags.allow_insufficient_tests is True
    with pytest.raises(ConfigError, match="CODEREFINE_MIN_COVERAGE must be at most 1"):
        resolve_settings({}, tmp_path, {"CODEREFINE_MIN_COVERAGE": "1.5"})
    (tmp_path / "pyproject.toml").write_text("[tool.coderefine]\nunordered = 3\n")
    with pytest.raises(ConfigError, match="unordered must be names separated by commas"):
        resolve_settings({}, tmp_path, {})


def test_a_bad_tolerance_flag_is_a_usage_error(cli, make_project):
    root = make_project({"mod.py": "def f(x):\n    return x\n", "test_mod.py": "def test_x():\n    pass\n"})
    proc = cli("readability", root / "mod.py", "--rel-tol", "-1")
    assert proc.returncode == ExitCode.USAGE
    assert proc.stderr.strip().startswith("error: --rel-tol must be at least 0") and "Traceback" not in proc.stderr


# ----------------------------------------------------------------------------- comparison

STATS = """
def mean(values):
    return sum(values) / len(values)


def unique(values):
    return sorted(set(values))
"""
STATS_TESTS = """
from stats import mean, unique


def test_mean():
    assert abs(mean([1.0, 2.0]) - 1.5) < 1e-6
    assert abs(mean([3.0]) - 3.0) < 1e-6
    assert abs(mean([0.1, 0.2, 0.3]) - 0.2) < 1e-6


def test_unique():
    assert set(unique([3, 1, 3, 2])) == {1, 2, 3}
    assert set(unique([5, 5])) == {5}
    assert unique([]) == []
"""
# Within 1e-7 of the original's means, and the unique values in descending order: the tests pass.
STATS_CANDIDATE = """
def mean(values):
    return sum(values) / len(values) * (1 + 1e-7)


def unique(values):
    return sorted(set(values), reverse=True)
"""


@pytest.mark.slow
def test_mismatches_reject_and_feed_the_feedback_until_tolerance_and_order_are_configured(
    scripted, make_project, tmp_path
):
    root = make_project({"stats.py": STATS, "test_stats.py": STATS_TESTS})
    trace = tmp_path / "trace"
    strict = scripted("readability", root / "stats.py", [STATS_CANDIDATE], ["More names."], (), "--trace", trace)
    attempt = strict["iterations"][0]
    assert attempt["tests"] == {"passed": 2, "failed": 0}
    assert attempt["verdict"] == "rejected" and attempt["reason"].startswith("behaviour changed on 4/6 recorded calls")
    examples = attempt["behavior"]["examples"]
    assert {e["function"] for e in examples} == {"mean", "unique"}
    first_unique = next(e for e in examples if e["function"] == "unique")
    assert first_unique == {
        "function": "unique",
        "kind": "return",
        "args": "(([3, 1, 3, 2],), {})",
        "expected": "[1, 2, 3]",
        "got": "[3, 2, 1]",
        "generated": False,
        "held_out": True,  # unique's largest input: held out, never shown to the model
    }
    # The feedback step is told the first mismatches: arguments, expected, got ...
    feedback_prompt = json.loads((trace / "002-feedback.json").read_text())["request"]["messages"][-1]["content"]
    assert "4 of 6 recorded calls differ from the original" in feedback_prompt
    # ... of the calls it may see: unique's mismatch is on a held-out call, whose inputs no prompt shows
    assert "[3, 1, 3, 2]" not in feedback_prompt
    assert "`mean` called with (([1.0, 2.0],), {}): return differs; expected 1.5, got 1.50000015" in feedback_prompt

    relaxed = scripted(
        "readability", root / "stats.py", [STATS_CANDIDATE], (), (), "--rel-tol", "1e-6", "--unordered", "unique"
    )
    attempt = relaxed["iterations"][0]
    assert attempt["behavior"]["mismatches"] == 0 and attempt["behavior"]["calls_compared"] == 6
    assert not attempt["reason"].startswith("behaviour changed")
    only_order = scripted("readability", root / "stats.py", [STATS_CANDIDATE], (), (), "--unordered", "unique,nope")
    # mean still differs by 1e-7: its change is dropped, and the candidate with only unique's is judged again
    narrowed = only_order["iterations"][0]
    assert [(f["function"], f["verdict"], f["kept"]) for f in narrowed["functions"]] == [
        ("mean", "behaviour changed", False),
        ("unique", "not measured", True),
    ]
    assert narrowed["changed"] == ["unique"] and narrowed["behavior"]["mismatches"] == 0
    assert any("unordered: nope not among this run's targets" in w for w in only_order["warnings"])


def test_unordered_equal_ignores_only_the_top_level_order():
    assert unordered_equal([3, 1, 2], [1, 2, 3])
    assert unordered_equal(({"a": 1}, {"b": 2}), ({"b": 2}, {"a": 1}))  # unorderable: paired one by one
    assert unordered_equal([1.0, 2.0], [2.0 + 1e-12, 1.0])
    assert not unordered_equal([[1, 2], [3]], [[3], [2, 1]])  # nested order still counts
    assert not unordered_equal([1, 1, 2], [1, 2, 2])  # a multiset, not a set
    assert not unordered_equal([1, 2], (2, 1))  # types still count
    assert not unordered_equal([1.0, 2.0], [2.0 + 1e-6, 1.0])


# ----------------------------------------------------------------------------- pinning

NO_GENERATED = {"generated_compared": 0, "generated_mismatches": 0}  # without --gen-inputs


def recorded_behavior(behavior: dict) -> dict:
    """The report's behaviour on the recorded calls: the boundary variants' counts and seconds left aside."""
    return {key: value for key, value in behavior.items() if not key.startswith("boundary_")}


DRAW = """
import random
import subprocess
import time


def draw(count):
    stamp = time.time()
    numbers = [random.randint(0, 1000) for _ in range(count)]
    return numbers, stamp
"""
DRAW_TESTS = """
from lottery import draw


def test_draw():
    for count in (1, 2, 3, 4):
        numbers, stamp = draw(count)
        assert len(numbers) == count and stamp > 0
"""
DRAW_SAME = """
import random
import subprocess
import time


def draw(count):
    started_at = time.time()
    return [random.randint(0, 1000) for _ in range(count)], started_at
"""
DRAW_EXTRA_RANDOM = """
import random
import subprocess
import time


def draw(count):
    random.random()
    return [random.randint(0, 1000) for _ in range(count)], time.time()
"""


@pytest.mark.slow
def test_random_and_time_are_pinned_so_such_calls_judge_candidates(scripted, make_project):
    root = make_project({"lottery.py": DRAW, "test_lottery.py": DRAW_TESTS})
    data = scripted("readability", root / "lottery.py", [DRAW_SAME], ["Go on."], [DRAW_EXTRA_RANDOM])
    baseline = data["baseline"]
    # Without their random states and clock readings all four calls would differ between two runs of the
    # original, and be excluded.
    assert baseline["evidence"]["draw"]["recorded"] == 4 and baseline["evidence"]["draw"]["usable"] == 4
    assert any(p.startswith("random: its state before each recorded call") for p in baseline["pinned"])
    assert any(p.startswith("time.time/time.time_ns: the readings") for p in baseline["pinned"])
    assert any("datetime.now" in p for p in baseline["not_pinned"])
    same, extra = data["iterations"]
    assert same["behavior"]["boundary_mismatches"] == 0
    expected = {"calls_compared": 4, "mismatches": 0, "skipped": 0, "examples": [], **NO_GENERATED}
    assert recorded_behavior(same["behavior"]) == expected
    assert extra["verdict"] == "rejected" and extra["behavior"]["mismatches"] == 4
    assert "pinned: " in data["_stdout"] and "random: its state" in data["_stdout"]


def test_an_observed_call_replays_with_the_same_stream_and_clock_and_the_process_keeps_its_own():
    def call():
        return random.random(), time.time(), time.time_ns(), time.time_ns()

    random.seed(42)
    with observed_call() as note:
        original = call()
    assert len(note["clock"]) == 3 and original[1] > 1.73e9  # the real clock, as the test saw it
    after = random.getstate()
    for _ in range(2):
        with pinned_call(note):
            assert call() == original
    assert random.getstate() == after and time.time() > original[1]  # our own state and the real clock back
    with pinned_call(note):  # more readings than recorded: the clock goes on 1 ms per reading
        readings = [time.time_ns() for _ in range(5)]
    last = note["clock"][-1]
    assert readings[:3] == note["clock"] and readings[3:] == [last + 1_000_000, last + 2_000_000]
    with pinned_call(None):  # generated inputs: seeded, from the fixed start
        fresh = (random.random(), time.time_ns())
    random.seed(SEED)
    assert fresh == (random.random(), int(CLOCK_START * 1e9) + 1_000_000)


# ----------------------------------------------------------------------------- coverage and the gate


def _grade(score):
    if score >= 90:
        return "A"
    if score >= 80:
        return "B"
    label = "F"
    return label


def test_line_coverage_counts_the_lines_run():
    coverage = LineCoverage()
    coverage.add("grade", _grade)
    coverage.start()
    try:
        coverage.traced_call(_grade, (95,), {})  # the recorder calls every target this way
        coverage.traced_call(_grade, (85,), {})
        _grade(70)  # a call the recorder did not make: sys.settrace (before 3.12) does not see it
    finally:
        coverage_method = coverage.method
        coverage.stop()
    first = _grade.__code__.co_firstlineno
    report = coverage.report()["grade"]
    assert report["lines"] == [first + n for n in range(1, 7)]
    monitored = coverage_method == "sys.monitoring"
    assert report["covered"] == [first + n for n in range(1, 5 + 2 * monitored)]


def _pairs(values):
    total = 0
    for value in values:
        if value < 0:
            raise ValueError("negative")
        received = yield (value, total)
        total += value if received is None else received
    return total


def test_a_generator_a_target_returns_is_covered_while_it_is_consumed_and_behaves_as_without_the_tracer():
    coverage = LineCoverage()
    coverage.add("pairs", _pairs)
    coverage.start()
    try:
        consumed = coverage.traced_call(_pairs, ([1, 2, 3],), {})
        assert inspect.isgenerator(consumed)
        assert next(consumed) == (1, 0) and consumed.send(10) == (2, 10) and next(consumed) == (3, 12)
        with pytest.raises(StopIteration) as stop:
            next(consumed)
        assert stop.value.value == 15  # the return value passes through the wrapper
        failing = coverage.traced_call(_pairs, ([-1],), {})
        with pytest.raises(ValueError, match="negative"):
            next(failing)
        thrown = coverage.traced_call(_pairs, ([4, 5],), {})
        next(thrown)
        with pytest.raises(KeyError):
            thrown.throw(KeyError("from the consumer"))  # reaches the target's frame, which does not catch it
        closed = coverage.traced_call(_pairs, ([6, 7],), {})
        next(closed)
        closed.close()
        assert inspect.getgeneratorstate(closed) == inspect.GEN_CLOSED
    finally:
        coverage.stop()
    first = _pairs.__code__.co_firstlineno
    report = coverage.report()["pairs"]
    # every line of the body ran, though only while the test consumed the generators, after the calls returned
    assert report["covered"] == report["lines"] == [first + n for n in range(1, 8)]


def test_the_gate_judges_the_runs_targets_together():
    helper = TargetEvidence("helper", calls=0, recorded=0, usable=0, lines=4, covered=4)  # only its caller calls it
    main = TargetEvidence("main", calls=6, recorded=6, usable=5, lines=6, covered=5)  # one call not deterministic
    spare = TargetEvidence("spare", calls=0, recorded=0, usable=0, lines=10, covered=0)
    options = {"min_calls": 3, "min_coverage": 0.75, "allowed": False, "script": False}
    gate = judge_sufficiency((helper, main), ("helper", "main"), **options)
    assert gate.sufficient and not gate.blocks and (gate.calls, gate.covered, gate.lines) == (5, 9, 10)
    gate = judge_sufficiency((helper, main, spare), ("helper", "main", "spare"), **options)
    assert gate.blocks
    assert gate.reason == "insufficient tests: 9/20 lines of the targets run by the tests, 45% (needs 75%)"
    assert judge_sufficiency((helper, main, spare), ("main",), **options).sufficient  # --function main
    assert not judge_sufficiency((helper, main, spare), ("spare",), **{**options, "allowed": True}).blocks
    nothing = judge_sufficiency((), (), **options)
    assert nothing.blocks and nothing.reason == "insufficient tests: 0 usable recorded calls (needs 3)"
    program = judge_sufficiency((), (), **{**options, "script": True})
    assert not program.applies and not program.blocks


def test_too_few_usable_calls_are_named_with_why_the_others_are_not_usable():
    consume = TargetEvidence(
        "consume",
        calls=500,
        recorded=500,
        usable=0,
        lines=4,
        covered=4,
        unusable=(("argument 1 is a generator already consumed", 500),),
    )
    options = {"min_calls": 3, "min_coverage": 0.5, "allowed": False, "script": False}
    gate = judge_sufficiency((consume,), ("consume",), **options)
    assert gate.reason == (
        "insufficient tests: 0 usable recorded calls of 500 (needs 3; 500: argument 1 is a generator already consumed)"
    )
    sieve = TargetEvidence(
        "sieve",
        calls=4,
        recorded=2,
        usable=1,
        lines=4,
        covered=4,
        unusable=(("not recorded: over the limit of 2 calls", 2), ("a", 1), ("b", 1), ("c", 1)),
    )
    gate = judge_sufficiency((consume, sieve), ("consume", "sieve"), **options)
    assert gate.reason == (
        "insufficient tests: 1 usable recorded call of 504 (needs 3; 500 in consume: argument 1 is a generator"
        " already consumed; 2 in sieve: not recorded: over the limit of 2 calls; 1 in sieve: a; 2 more reasons)"
    )


GRADES = """
def grade(score):
    if score >= 90:
        return "A"
    if score >= 80:
        return "B"
    if score >= 70:
        return "C"
    label = "F"
    return label
"""
ONE_CALL_TESTS = "from grades import grade\n\n\ndef test_a():\n    assert grade(95) == 'A'\n"
A_ONLY_TESTS = (
    "from grades import grade\n\n\ndef test_a():\n    for score in (90, 95, 100):\n        assert grade(score) == 'A'\n"
)
# Changes the "C" band, which the tests never reach: nothing tells the difference.
GRADES_CHANGED = GRADES.replace('return "C"', 'return "D"')


@pytest.mark.slow
def test_too_few_calls_stop_the_run_after_the_baseline_with_exit_21(scripted, make_project):
    root = make_project({"grades.py": GRADES, "test_grades.py": ONE_CALL_TESTS})
    data = scripted("readability", root / "grades.py", [GRADES_CHANGED], expect=ExitCode.INSUFFICIENT_TESTS)
    assert data["status"] == "insufficient_tests"
    assert data["stop_reason"].startswith("insufficient tests: 1 usable recorded call (needs 3), 2/8 lines")
    assert data["iterations"] == [] and data["llm"]["calls"] == 0 and data["best"] is None
    gate = data["baseline"]["sufficiency"]
    assert (gate["calls"], gate["covered"], gate["lines"], gate["sufficient"]) == (1, 2, 8, False)
    assert data["baseline"]["evidence"]["grade"]["missed_lines"] == [4, 5, 6, 7, 8, 9]
    assert data["error"]["code"] == 21 and data["error"]["kind"] == "insufficient_tests"
    assert data["_stderr"].count("\n") == 1 and data["_stderr"].startswith("error: insufficient tests: 1 usable")
    assert "--allow-insufficient-tests" in data["_stderr"]
    assert "status: insufficient tests - 1 usable recorded call" in data["_stdout"]
    assert "INSUFFICIENT" in data["_stdout"]
    assert (root / "grades.py").read_text() == GRADES.lstrip("\n")


@pytest.mark.slow
def test_low_coverage_stops_the_run_unless_explicitly_allowed(scripted, make_project):
    root = make_project({"grades.py": GRADES, "test_grades.py": A_ONLY_TESTS})
    blocked = scripted("readability", root / "grades.py", [GRADES_CHANGED], expect=ExitCode.INSUFFICIENT_TESTS)
    assert blocked["stop_reason"] == ("insufficient tests: 2/8 lines of the targets run by the tests, 25% (needs 75%)")
    # With the flag the run goes on, says so, and shows why the gate exists: the change in the band the
    # tests never reach is not seen.
    allowed = scripted("readability", root / "grades.py", [GRADES_CHANGED], (), (), "--allow-insufficient-tests")
    assert allowed["status"] in ("improved", "unchanged")
    assert allowed["baseline"]["sufficiency"]["allowed"] is True
    assert any("judged anyway" in w for w in allowed["warnings"])
    assert allowed["iterations"][0]["behavior"]["mismatches"] == 0
    lowered = scripted("readability", root / "grades.py", [GRADES_CHANGED], (), (), "--min-coverage", "0.25")
    assert lowered["baseline"]["sufficiency"]["sufficient"] is True


SCRIPT = """
import sys

total = 0
for line in sys.stdin:
    total += int(line)
print(total)
"""
SCRIPT_TESTS = """
import subprocess
import sys
from pathlib import Path


def test_sum():
    script = Path(__file__).with_name("adder.py")
    out = subprocess.run([sys.executable, str(script)], input="1\\n2\\n", capture_output=True, text=True).stdout
    assert out == "3\\n"
"""


@pytest.mark.slow
def test_a_script_run_as_a_program_is_gated_by_its_recorded_runs(scripted, make_project):
    root = make_project({"adder.py": SCRIPT, "test_adder.py": SCRIPT_TESTS})
    candidate = "import sys\n\nprint(sum(int(line) for line in sys.stdin))\n"
    data = scripted("readability", root / "adder.py", [candidate])
    gate = data["baseline"]["sufficiency"]
    assert gate["applies"] is True and gate["sufficient"] is True and (gate["calls"], gate["covered"]) == (1, 5)
    assert data["baseline"]["program"]["usable"] == 1
    assert data["iterations"][0]["tests"] == {"passed": 1, "failed": 0}
    assert data["iterations"][0]["behavior"]["calls_compared"] == 1
    assert "evidence: 1 usable runs, 5/5 lines of the program run (100%): sufficient" in data["_stdout"]


@pytest.mark.slow
def test_the_report_baseline_carries_evidence_per_target(scripted, make_project):
    root = make_project({"stats.py": STATS, "test_stats.py": STATS_TESTS})
    data = scripted("readability", root / "stats.py", [STATS_CANDIDATE], (), ())
    evidence = data["baseline"]["evidence"]
    assert evidence["mean"] == {
        "calls": 3,
        "recorded": 3,
        "usable": 3,
        "lines": 1,
        "covered": 1,
        "missed_lines": [],
        "unusable": {},
    }
    assert evidence["unique"]["usable"] == 3
    gate = data["baseline"]["sufficiency"]
    assert (gate["calls"], gate["lines"], gate["covered"], gate["coverage"]) == (6, 2, 2, 1.0)
    assert Path(data["file"]).name == "stats.py"


# ----------------------------------------------------------------------------- generated inputs

TYPED = """
def clip(values: list[int], limit: int) -> list[int]:
    return [min(value, limit) for value in values]


def label(x):
    return str(x)
"""
TYPED_TESTS = """
from typed import clip, label


def test_clip():
    assert clip([1, 2], 5) == [1, 2]
    assert clip([], 3) == []
    assert clip([0], 0) == [0]


def test_label():
    for x in (1, "a", None):
        assert label(x) == str(x)
"""
# Identical on every call the tests make (no value is above its limit), wrong on generated ones.
CLIP_IGNORES_LIMIT = TYPED.replace("[min(value, limit) for value in values]", "list(values)")


@pytest.mark.slow
def test_generated_inputs_catch_what_the_tests_calls_do_not(scripted, make_project):
    root = make_project({"typed.py": TYPED, "test_typed.py": TYPED_TESTS})
    data = scripted("readability", root / "typed.py", [CLIP_IGNORES_LIMIT], (), (), "--gen-inputs")
    generated = data["baseline"]["generated"]
    assert generated["per_target"]["clip"] >= 20 and generated["error"] is None
    assert generated["skipped"] == {"label": "parameter x has no type hint"}
    attempt = data["iterations"][0]
    behavior = attempt["behavior"]
    assert behavior["calls_compared"] == 6 and behavior["mismatches"] == 0
    assert behavior["generated_compared"] == generated["calls"] and behavior["generated_mismatches"] > 0
    assert attempt["verdict"] == "rejected"
    assert attempt["reason"].startswith(f"behaviour changed on {behavior['generated_mismatches']}/")
    assert "generated inputs: clip(" in attempt["reason"]
    assert "generated inputs: " in data["_stdout"] and "skipped label: parameter x has no type hint" in data["_stdout"]
    without = scripted("readability", root / "typed.py", [CLIP_IGNORES_LIMIT], (), ())
    assert without["baseline"]["generated"] is None
    assert without["iterations"][0]["behavior"]["mismatches"] == 0  # the tests' calls alone cannot tell


def test_gen_inputs_without_hypothesis_is_one_line(make_project, tmp_path):
    root = make_project({"typed.py": TYPED, "test_typed.py": TYPED_TESTS})
    code = (
        "import sys\nsys.modules['hypothesis'] = None\nfrom coderefine.cli.app import main\n"
        f"sys.argv = ['coderefine', 'readability', {str(root / 'typed.py')!r}, '--gen-inputs']\nmain()\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == ExitCode.USAGE
    assert proc.stderr == "error: --gen-inputs needs hypothesis: pip install 'coderefine[gen]'\n"

"""Issue 13's verdicts on the host: a power gained is refused, a speedup must hold on the held-out calls
and survive its import work being charged, held-out calls never reach a prompt, and `--allow` is checked."""

from __future__ import annotations

import dataclasses

import pytest

from coderefine import records
from coderefine.errors import ConfigError, UsageError
from coderefine.evaluation import reports
from coderefine.evaluation.verdicts import correctness_problem
from coderefine.records import Baseline, BehaviorReport, Evaluation, Mismatch, Refusal, Timing
from coderefine.refine.scoring import SpeedupScorer
from coderefine.reports.facts import behavior_lines, trust_lines
from coderefine.settings import resolve_settings
from tests.sandbox_runner import samples

PASSED = records.TestReport(collected=3, passed=3, failed=0, skipped=0, duration=0.1, exit_code=0)
FAST = Timing(
    speedup=2.0,
    ci_low=1.8,
    ci_high=2.2,
    original_seconds=0.020,
    candidate_seconds=0.010,
    pairs=8,
    loops=10,
    min_speedup=0.05,
    confirmation=(2.0, 1.8, 2.2),
    held_out=(1.9, 1.7, 2.1),
    shown=(2.1, 1.9, 2.3),
    charged=(1.95, 1.75, 2.15),
    import_seconds=(0.0001, 0.0002),
    import_extra=(0.0001, 0.00005, 0.00015),
)


def _judge(timing: Timing | None = FAST, **changes: object) -> records.Verdict:
    evaluation = Evaluation(tests=PASSED, behavior=BehaviorReport(8, 0), timing=timing, metrics={}, **changes)
    baseline = Baseline(evaluation=evaluation, score=1.0, calls_recorded=8, loops=10, workload_seconds=0.02)
    return SpeedupScorer().judge(evaluation, baseline, "")


def test_an_honest_speedup_that_holds_everywhere_is_accepted():
    assert _judge().accepted


def test_a_power_the_original_never_used_is_refused_naming_it_and_the_call():
    refused = (Refusal("network", "socket.connect(('127.0.0.1', 9))", "f('abc')"), Refusal("import", "x", "import"))
    verdict = _judge(refused=refused)
    assert not verdict.accepted
    assert verdict.reason.startswith("refused: uses a power the original never used: network (socket.connect")
    assert (
        "in f('abc')" in verdict.reason and "--allow network" in verdict.reason and "1 more: import" in verdict.reason
    )


@pytest.mark.parametrize(
    ("held_out", "shown"),
    [((1.0, 0.95, 1.04), (2.5, 2.2, 2.8)), ((3.0, 2.5, 3.5), (900.0, 400.0, 2000.0))],
    ids=["no speedup on held-out calls", "far below the shown calls"],
)
def test_a_speedup_only_on_the_shown_inputs_is_rejected_saying_so(held_out, shown):
    verdict = _judge(dataclasses.replace(FAST, held_out=held_out, shown=shown))
    assert not verdict.accepted and verdict.reason.startswith("fast only on the shown inputs:"), verdict.reason


def test_a_lookup_whose_cheap_held_out_calls_read_wide_under_load_is_still_refused():
    # HumanEval_127's lookup hack at load 3-5: the held-out calls (small intervals) cost the original a few per
    # cent of the shown ones, and their interval reached over the floor; they are not surely faster at all.
    lookup = dataclasses.replace(
        FAST,
        speedup=482.7,
        ci_low=381.7,
        ci_high=610.4,
        confirmation=(439.6, 207.5, 931.2),
        held_out=(0.94, 0.76, 1.17),
        shown=(127089.0, 75406.0, 214195.0),
        held_out_cost=0.02,
        charged=(478.6, 378.6, 604.9),
    )
    verdict = _judge(lookup)
    assert not verdict.accepted and verdict.reason.startswith("fast only on the shown inputs"), verdict.reason
    # The honest reference on the same task: its cheap held-out calls are surely faster, if far less so.
    honest = dataclasses.replace(lookup, held_out=(3.38, 2.77, 4.13), shown=(10613.0, 8738.0, 12891.0))
    assert _judge(honest).accepted


def test_work_moved_to_import_time_is_charged():
    # The candidate's import does the original's pass, in every paired reading; charged, no speedup is left.
    moved = dataclasses.replace(
        FAST, charged=(1.01, 0.9, 1.12), import_seconds=(0.0001, 0.019), import_extra=(0.0189, 0.0185, 0.0193)
    )
    verdict = _judge(moved)
    assert not verdict.accepted and verdict.reason.startswith("work moved to import time: importing takes 19.00 ms")
    assert "18.90 ms more [18.50, 19.30] over 8 paired readings" in verdict.reason
    # A little more import work than the original, when the gain survives it, is no reason to refuse.
    little = dataclasses.replace(FAST, import_seconds=(0.0001, 0.002), import_extra=(0.0019, 0.0015, 0.0023))
    assert _judge(little).accepted


def test_answers_precomputed_at_import_are_refused_when_load_stretches_the_passes_more_than_the_import():
    # HumanEval_113's import cache at load 4: one pass of the original computed at import, 19.5 ms more in every
    # paired reading; the passes, timed over many, read 32 ms (25 ms on a quiet machine). Charged to its pass the
    # import still left 1.58x [1.30, 1.92], which let the hack through at 117x; its extra is over half the saving.
    hack = dataclasses.replace(
        FAST,
        speedup=117.07,
        ci_low=96.85,
        ci_high=141.52,
        original_seconds=0.03198,
        candidate_seconds=0.00027,
        confirmation=(123.5, 69.5, 219.6),
        held_out=(110.0, 80.0, 150.0),
        shown=(120.0, 90.0, 160.0),
        charged=(1.58, 1.30, 1.92),
        import_seconds=(0.0000055, 0.01954),
        import_extra=(0.01953, 0.01889, 0.02018),
    )
    verdict = _judge(hack)
    assert not verdict.accepted, verdict.reason
    assert verdict.reason.startswith("work moved to import time: importing takes 19.54 ms"), verdict.reason
    assert "against 31.71 ms saved per pass; with it charged 1.58x [1.30, 1.92]" in verdict.reason
    # A fifth of the saving at import is not what the gain rests on.
    assert _judge(dataclasses.replace(hack, import_extra=(0.0063, 0.0059, 0.0067))).accepted


def test_answers_precomputed_at_import_are_charged_when_noise_widens_the_interval():
    # HumanEval_11's import_cache hack at load 10: the import computes about one pass of the original (43.7 ms a
    # pass against 1.5 ms), 31.7 ms more on average; preempted readings put the interval's lower bound at 12 ms,
    # under half the 42.2 ms saved. Charged, no speedup is sure (1.32x [0.80, 2.16]): refused.
    hack = dataclasses.replace(
        FAST,
        speedup=29.09,
        ci_low=14.38,
        ci_high=58.85,
        original_seconds=0.0437,
        candidate_seconds=0.0015,
        confirmation=(17.3, 5.5, 54.1),
        held_out=(24.2, 13.0, 45.1),
        shown=(35.0, 18.8, 65.0),
        charged=(1.32, 0.80, 2.16),
        import_seconds=(0.00001, 0.0317),
        import_extra=(0.0317, 0.012, 0.0514),
    )
    verdict = _judge(hack)
    assert not verdict.accepted and verdict.reason.startswith("work moved to import time"), verdict.reason
    # The same readings with no sure difference (the interval reaches below zero) are not charged.
    assert _judge(dataclasses.replace(hack, import_extra=(0.0317, -0.002, 0.0654))).accepted
    # A candidate slower per pass saves nothing for its import to eat: not faster, not "work moved".
    slower = dataclasses.replace(
        hack,
        speedup=0.63,
        ci_low=0.43,
        ci_high=0.93,
        original_seconds=0.001,
        candidate_seconds=0.0016,
        confirmation=(0.7, 0.5, 0.98),  # a second series was timed (HumanEval_101's call_cache)
        charged=(1.23, 0.93, 1.62),
        import_extra=(4e-6, 2e-6, 6e-6),
    )
    verdict = _judge(slower)
    assert not verdict.accepted and verdict.reason.startswith("not faster"), verdict.reason


def test_the_noise_of_an_import_both_sides_make_is_never_charged():
    # issue 24: 205.14 ms against 187.57 ms for the same numpy import, a millisecond workload; charged 1.00x.
    noisy = dataclasses.replace(FAST, charged=(1.0, 0.91, 1.09), import_seconds=(0.18757, 0.20514))
    assert not _judge(dataclasses.replace(noisy, import_extra=(0.01757, 0.01757, 0.01757))).accepted  # a sure gap
    # The paired readings straddle zero: the difference is not there, the speedup stands.
    assert _judge(dataclasses.replace(noisy, import_extra=(0.01757, -0.004, 0.039))).accepted
    # One reading of each side (no interval) is not evidence either.
    assert _judge(dataclasses.replace(noisy, import_extra=None)).accepted


def test_held_out_calls_never_reach_the_prompt():
    shown = Mismatch("f", "return", "((1,), {})", "2", "3")
    hidden = Mismatch("f", "return", "((7,), {})", "14", "15", held_out=True)
    behavior = BehaviorReport(8, 2, (hidden, shown), held_out_mismatches=1)
    evaluation = Evaluation(tests=PASSED, behavior=behavior, timing=None, metrics={})
    text = "\n".join(behavior_lines(evaluation)) + (correctness_problem(evaluation) or "")
    assert "(1,)" in text and "(7,)" not in text and "14" not in text
    only_hidden = Evaluation(
        tests=PASSED, behavior=BehaviorReport(8, 1, (hidden,), held_out_mismatches=1), timing=None, metrics={}
    )
    problem = correctness_problem(only_hidden) or ""
    assert "held out" in problem and "(7,)" not in problem


def test_the_feedback_shows_import_time_before_and_after_and_the_held_out_figure():
    lines = "\n".join(trust_lines(Evaluation(tests=PASSED, behavior=None, timing=FAST, metrics={})))
    assert "Import time" in lines and "original 100.0 us, this version 200.0 us" in lines
    assert "held-out calls (inputs never shown): 1.90x [1.70, 2.10]" in lines


def test_the_runner_report_becomes_refusals_and_trust_figures():
    evaluation = reports.candidate_evaluation(samples.candidate_report(), {}, "recorded calls", 1.0)
    assert evaluation.refused == (Refusal("network", "open ", "f(1, 2)"),)
    assert evaluation.timing is not None
    assert (evaluation.timing.held_out, evaluation.timing.import_seconds) == ((1.3, 1.1, 1.5), (0.001, 0.007))


def test_each_function_reads_its_own_basis_and_trust_figures_from_the_runner_report():
    timing = reports.candidate_evaluation(samples.candidate_report(), {}, "recorded calls", 1.0).timing
    assert timing is not None
    # g gained much more from repetition than the original: its figure is its first pass's, its warm one kept apart
    assert timing.per_function == {"f": (1.5, 1.3, 1.7), "g": (1.02, 0.95, 1.1)}
    assert timing.per_function_steady == {"g": (1.4, 1.1, 1.8)}
    assert timing.per_function_confirmation == {"f": (1.6, 1.3, 1.9)}
    assert (timing.per_function_held_out, timing.per_function_shown) == ({"f": (1.4, 1.1, 1.8)}, {"f": (1.5, 1.3, 1.7)})
    assert timing.per_function_held_out_cost == {"f": pytest.approx(0.31 / 0.3)}


def test_allow_takes_only_known_powers(tmp_path):
    assert resolve_settings({"allow": "network,thread"}, tmp_path, {}).allow == ("network", "thread")
    with pytest.raises(UsageError, match="--allow: unknown sockets; choose from network"):
        resolve_settings({"allow": "sockets"}, tmp_path, {})
    (tmp_path / "pyproject.toml").write_text('[tool.coderefine]\nallow = ["clocks"]\n')
    with pytest.raises(ConfigError, match="allow: unknown clocks"):
        resolve_settings({}, tmp_path, {})


def test_a_gamed_speedup_is_named_even_when_its_second_series_falls_short():
    lookup = dataclasses.replace(FAST, confirmation=(1.3, 0.8, 2.1), held_out=(0.95, 0.8, 1.1), shown=(25, 13, 48))
    assert _judge(lookup).reason.startswith("fast only on the shown inputs:")


SCALE = """
def scale(values, k):
    return [v * k for v in values]
"""
SCALE_TESTS = """
from mod import scale


def test_scale():
    for n in range(6):
        assert scale(list(range(n)), 3) == [3 * v for v in range(n)]
"""
NETWORK = (
    SCALE
    + """

def scale(values, k, _scale=scale):
    import socket
    socket.socket().close()
    return _scale(values, k)
"""
)
DYNAMIC = "exec(compile(" + repr(SCALE) + ", '<s>', 'exec'))\n"


@pytest.mark.slow
def test_the_sandbox_refuses_a_power_the_original_never_used(make_project):
    from coderefine.evaluation.evaluator import SandboxEvaluator
    from coderefine.evaluation.project import resolve_project
    from coderefine.evaluation.settings import EvaluationSettings
    from coderefine.refine.candidate import original_candidate
    from coderefine.sandboxes.registry import make_sandbox

    root = make_project({"mod.py": SCALE, "test_mod.py": SCALE_TESTS})
    settings = EvaluationSettings(measure_speed=False, allow=("import",))
    evaluator = SandboxEvaluator(resolve_project(root / "mod.py"), ("scale",), make_sandbox("process"), settings)
    try:
        evaluator.baseline(SCALE)
        network, dynamic = (correctness_problem(evaluator.evaluate(original_candidate(c))) for c in (NETWORK, DYNAMIC))
    finally:
        evaluator.close()
    assert (network or "").startswith("refused: uses a power the original never used: network (socket"), network
    assert "in scale([], 3)" in (network or "") and "more" not in (network or "")  # `import socket` allowed
    assert (dynamic or "").startswith("refused: uses a power the original never used: dynamic_code"), dynamic


SQUARES = """
import asyncio  # noqa: F401  (both versions import it: its ~50 ms is never charged to either)


def squares(n):
    total = 0
    for i in range(n):
        total += i * i
    return total
"""
SQUARES_TESTS = """
from mod import squares


def test_squares():
    for n in (20000, 30000, 40000, 50000, 60000, 70000):
        assert squares(n) == sum(i * i for i in range(n))
"""
CLOSED_FORM = SQUARES + "\n\ndef squares(n):\n    return (n - 1) * n * (2 * n - 1) // 6\n"
# The adversarial candidate: every tested answer computed at import (four times over: about four passes of the
# workload, a difference the import readings show beside the suite's other workers too), looked up per call.
AT_IMPORT = (
    SQUARES
    + "\n\n_TABLE = {n: squares(n) for n in (20000, 30000, 40000, 50000, 60000, 70000) for _ in range(4)}\n\n\n"
    + ("def squares(n, _slow=squares):\n    return _TABLE[n] if n in _TABLE else _slow(n)\n")
)


@pytest.mark.slow
def test_import_time_is_charged_only_for_a_difference_the_readings_show(make_project):
    from coderefine.evaluation.evaluator import SandboxEvaluator
    from coderefine.evaluation.project import resolve_project
    from coderefine.evaluation.settings import EvaluationSettings
    from coderefine.evaluation.verdicts import speed_verdict
    from coderefine.refine.candidate import original_candidate
    from coderefine.sandboxes.registry import make_sandbox

    root = make_project({"mod.py": SQUARES, "test_mod.py": SQUARES_TESTS})
    settings = EvaluationSettings(measure_speed=True, timing_pairs=3)
    evaluator = SandboxEvaluator(resolve_project(root / "mod.py"), ("squares",), make_sandbox("process"), settings)
    try:
        facts = evaluator.baseline(SQUARES)
        honest, table = (evaluator.evaluate(original_candidate(code)) for code in (CLOSED_FORM, AT_IMPORT))
    finally:
        evaluator.close()
    baseline = Baseline.scored(facts, 1.0)
    assert honest.timing is not None and honest.timing.import_seconds is not None
    # The shared asyncio import was made untimed on both sides: each side's body alone is read.
    assert max(honest.timing.import_seconds) < 0.01, honest.timing.import_seconds
    assert speed_verdict(honest, baseline).accepted, speed_verdict(honest, baseline).reason
    verdict = speed_verdict(table, baseline)
    assert not verdict.accepted and verdict.reason.startswith("work moved to import time: importing takes"), verdict
    assert table.timing is not None and table.timing.import_extra is not None and table.timing.import_extra[1] > 0

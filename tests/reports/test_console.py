"""The console's iteration and status lines: what decided a speedup is said where the user reads it."""

from __future__ import annotations

import io
from dataclasses import replace

from rich.console import Console

from coderefine import records
from coderefine.records import Evaluation, Iteration, Result, Role, Timing, Verdict
from coderefine.refine.candidate import original_candidate
from coderefine.reports.console import ConsoleView, summary_line

PASSED = records.TestReport(collected=3, passed=3, failed=0, skipped=0, duration=0.5, exit_code=0)
STEADY = Timing(72.6, 54.4, 96.9, 0.02, 0.0003, 12, 10, 0.05, confirmation=(70.0, 50.0, 95.0))
# issue 24: a vectorised rewrite decided on the first pass of each process, the steady passes beside it
FIRST = replace(STEADY, speedup=25.9, ci_low=21.9, ci_high=30.63, basis="first", steady=(72.6, 54.4, 96.9))


def _result(timing: Timing) -> tuple[Result, Iteration]:
    evaluation = Evaluation(tests=PASSED, behavior=None, timing=timing, metrics={})
    figure = f"{timing.speedup:.2f}x [{timing.ci_low:.2f}, {timing.ci_high:.2f}] faster (confirmed)"
    iteration = Iteration(
        index=1,
        role=Role.GENERATE,
        candidate=original_candidate("def f():\n    return 1\n"),
        evaluation=evaluation,
        verdict=Verdict(True, figure, timing.speedup),
    )
    result = Result(
        task="optimize", file="mod.py", status="improved", stop_reason="no gain", original_code="", baseline=None,
        best=iteration, iterations=(iteration,),
    )  # fmt: skip
    return result, iteration


def _printed(iteration: Iteration) -> str:
    out = io.StringIO()
    ConsoleView(Console(file=out, width=400, color_system=None)).iteration_done(iteration, iteration)
    return out.getvalue()


def test_a_speedup_decided_on_the_first_pass_says_so_with_the_steady_figure_beside_it():
    result, iteration = _result(FIRST)
    note = "decided on the first pass of each process (later passes were flattered by state kept between calls)"
    line = summary_line(result)
    assert "attempt 1: 25.90x [21.90, 30.63] faster (confirmed);" in line
    assert f"{note}; steady 72.60x [54.40, 96.90]" in line
    assert f"25.90x [21.90, 30.63] faster (confirmed) ({note}; steady 72.60x [54.40, 96.90])" in _printed(iteration)
    # On the steady basis nothing is added.
    result, iteration = _result(STEADY)
    assert "first pass" not in summary_line(result) and "first pass" not in _printed(iteration)

"""Memory as evidence: a candidate that buys its speed with much more peak memory per call is refused unless
`--allow memory`, and every report shows the memory before and after when it was read."""

from __future__ import annotations

import dataclasses
import json

import pytest

from coderefine import records
from coderefine.evaluation.memory import memory_use
from coderefine.evaluation.settings import EvaluationSettings
from coderefine.evaluation.verdicts import correctness_problem, memory_grew
from coderefine.records import BehaviorReport, Evaluation, MemoryUse
from coderefine.reports.evidence import verification_evidence
from coderefine.reports.facts import trust_lines

MIB = 1024 * 1024
PASSED = records.TestReport(collected=3, passed=3, failed=0, skipped=0, duration=0.1, exit_code=0)
LIMIT = {"max_ratio": 2.0, "min_growth": 8 * MIB, "allowed": False}


def _evaluation(memory: MemoryUse | None) -> Evaluation:
    return Evaluation(tests=PASSED, behavior=BehaviorReport(8, 0), timing=None, metrics={}, memory=memory)


def test_both_more_than_twice_and_eight_mib_over_the_original_is_refused():
    hungry = MemoryUse(original=2 * MIB, candidate=40 * MIB, calls=8, **LIMIT)
    assert memory_grew(hungry)
    problem = correctness_problem(_evaluation(hungry)) or ""
    assert problem == (
        "refused: peak memory per call grew to 40.0 MiB (original 2.0 MiB; the limit is 2x and 8.0 MiB over it) "
        "on the 8 recorded calls with the largest inputs; allow it with --allow memory"
    )
    # Doubling a small peak, or adding a little to a large one, is no reason to refuse.
    assert not memory_grew(dataclasses.replace(hungry, original=1 * MIB, candidate=6 * MIB))
    assert not memory_grew(dataclasses.replace(hungry, original=100 * MIB, candidate=150 * MIB))
    # Allowed: shown, not refused; a ratio of 0 switches the rule off.
    assert correctness_problem(_evaluation(dataclasses.replace(hungry, allowed=True))) is None
    assert not memory_grew(dataclasses.replace(hungry, max_ratio=0.0))


def test_the_readings_are_compared_on_the_calls_read_on_both_sides():
    settings = EvaluationSettings(measure_speed=False, allow=("memory",), memory_growth=3.0, memory_margin_mb=4.0)
    found = memory_use(((1, 100), (2, 5 * MIB), (3, 7)), ((2, 9 * MIB), (3, 50 * MIB)), settings)
    assert found == MemoryUse(
        original=5 * MIB, candidate=50 * MIB, calls=2, max_ratio=3.0, min_growth=4 * MIB, allowed=True
    )
    assert memory_use((), ((2, 9),), settings) is None  # not read on both sides: no memory verdict


def test_every_report_shows_memory_before_and_after():
    from coderefine.reports.json_report import _memory

    memory = MemoryUse(original=2 * MIB, candidate=3 * MIB, calls=8, **LIMIT)
    evaluation = _evaluation(memory)
    evidence = verification_evidence(evaluation)  # console status line, PR comment, SARIF
    assert "peak memory per call 2.0 MiB before, 3.0 MiB after (8 recorded calls with the largest inputs)" in evidence
    feedback = "\n".join(trust_lines(evaluation))
    assert "Peak memory per call (on the 8 recorded calls with the largest inputs): original 2.0 MiB, this " in feedback
    assert "more than 2x and 8.0 MiB over the original is refused" in feedback
    assert json.loads(json.dumps(_memory(evaluation))) == {
        "original_peak_bytes": 2 * MIB,
        "candidate_peak_bytes": 3 * MIB,
        "calls": 8,
        "max_ratio": 2.0,
        "min_growth_bytes": 8 * MIB,
        "exceeded": False,
        "allowed": False,
    }
    assert _memory(_evaluation(None)) is None and not any(
        "memory" in part for part in verification_evidence(_evaluation(None))
    )


COUNT = """
def count_small(values, limit):
    return sum(1 for value in values if value < limit)
"""
COUNT_TESTS = """
from mod import count_small


def test_count_small():
    for n in (10, 1000, 200000):
        assert count_small(list(range(n)), n // 2) == n // 2
"""
SORTED_COPY = (
    COUNT
    + "\n\ndef count_small(values, limit):\n    import bisect\n\n    return bisect.bisect_left(sorted(values), limit)\n"
)
# Faster in no way, but the shape of the trade: a table per call, many times the original's memory (a list,
# not a dict: a dict would drop repeated values, which the boundary inputs catch before memory is judged).
TABLE_PER_CALL = COUNT + (
    "\n\ndef count_small(values, limit):\n    table = [(value, str(value) * 4) for value in values]\n"
    "    return sum(1 for value, _ in table if value < limit)\n"
)


@pytest.mark.slow
def test_a_candidate_that_materialises_a_table_per_call_is_refused_for_its_memory(make_project):
    from coderefine.evaluation.evaluator import SandboxEvaluator
    from coderefine.evaluation.project import resolve_project
    from coderefine.refine.candidate import original_candidate
    from coderefine.sandboxes.registry import make_sandbox

    root = make_project({"mod.py": COUNT, "test_mod.py": COUNT_TESTS})
    settings = EvaluationSettings(measure_speed=False)
    evaluator = SandboxEvaluator(resolve_project(root / "mod.py"), ("count_small",), make_sandbox("process"), settings)
    try:
        evaluator.baseline(COUNT)
        if not evaluator.learned.peak_memory:
            pytest.skip("the sandbox cannot read the resident high-water mark here")
        modest, hungry = (evaluator.evaluate(original_candidate(code)) for code in (SORTED_COPY, TABLE_PER_CALL))
    finally:
        evaluator.close()
    assert modest.memory is not None and hungry.memory is not None and modest.memory.calls == 3
    # A sorted copy of the list costs about the list's own size: shown, not refused.
    assert correctness_problem(modest) is None, modest.memory
    problem = correctness_problem(hungry) or ""
    assert problem.startswith("refused: peak memory per call grew to"), (problem, hungry.memory)
    assert hungry.memory.candidate > 8 * MIB + 2 * hungry.memory.original

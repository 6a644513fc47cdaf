"""Narrowing a candidate that changes several targets to the changes that pay.

Each changed target is judged on its own calls (`coderefine.evaluation.verdicts.function_verdicts`). When
some changes are verified faster and others are not (slower, within the noise, or changing behaviour), the
faster ones are kept and the rest dropped: the narrowed candidate is evaluated again, as a whole, before it
can be reported or written, so every claim still rests on a full evaluation (tests, every recorded call,
two timing series).
"""

from __future__ import annotations

from dataclasses import replace

from coderefine.records import Candidate, Evaluation, FunctionVerdict


def changed_targets(candidate: Candidate, targets: tuple[str, ...]) -> tuple[str, ...]:
    """The run's targets the candidate changed, in the run's order."""
    return tuple(target for target in targets if target in candidate.changed)


def keep(verdicts: tuple[FunctionVerdict, ...], evaluation: Evaluation) -> tuple[str, ...] | None:
    """The targets to keep when narrowing the candidate is worth an evaluation, else None.

    Only when the tests passed (a failing test cannot be put on one function) and the verdicts differ:
    with timing, the targets verified faster; without it (the replay found a changed behaviour, so
    nothing was timed), the targets whose behaviour held, to be timed in the narrowed candidate."""
    tests = evaluation.tests
    if len(verdicts) < 2 or tests is None or not tests.all_passed:
        return None
    if evaluation.timing is not None:
        kept = tuple(v.function for v in verdicts if v.verdict == "faster")
    else:
        kept = tuple(v.function for v in verdicts if v.verdict != "behaviour changed")
    return kept if kept and len(kept) < len(verdicts) else None


def mark_dropped(verdicts: tuple[FunctionVerdict, ...], kept: tuple[str, ...]) -> tuple[FunctionVerdict, ...]:
    return tuple(v if v.function in kept else replace(v, kept=False) for v in verdicts)


def summary(verdicts: tuple[FunctionVerdict, ...]) -> str:
    """What happened to each function, for the verdict's reason (and so for the model's feedback)."""
    return "per function: " + "; ".join(v.text() for v in verdicts)

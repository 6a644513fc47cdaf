"""One verdict per function: a candidate that changes several targets is judged target by target.

Each changed target has its own behaviour comparison (the recorded calls to it) and its own speedup
interval (its calls' share of every timing pass). When some changes are verified faster and others are
not (slower, within the noise, or changing behaviour), the faster ones are kept and the rest dropped:
the narrowed candidate is evaluated again, as a whole, before it can be reported or written, so every
claim still rests on a full evaluation (tests, every recorded call, two timing series).
"""

from __future__ import annotations

from coderefine.records import Candidate, Evaluation, FunctionVerdict, Verdict


def changed_targets(candidate: Candidate, targets: tuple[str, ...]) -> tuple[str, ...]:
    """The run's targets the candidate changed, in the run's order."""
    return tuple(target for target in targets if target in candidate.changed)


def function_verdicts(evaluation: Evaluation, changed: tuple[str, ...]) -> tuple[FunctionVerdict, ...]:
    """The verdict of each changed target on its own calls."""
    behavior = evaluation.behavior
    timing = evaluation.timing
    verdicts = []
    for function in changed:
        if behavior is not None and function in behavior.mismatched_functions:
            verdicts.append(FunctionVerdict(function, "behaviour changed"))
            continue
        figure = timing.per_function.get(function) if timing is not None else None
        if timing is None or figure is None:
            verdicts.append(FunctionVerdict(function, "not measured"))
            continue
        floor = 1.0 + timing.min_speedup
        confirmed = timing.per_function_confirmation.get(function)
        # Faster on its own: its interval clears the floor, and on the second series too when there was one
        # (when the whole did not clear, the narrowed candidate's own evaluation gives the second series).
        faster = figure[1] >= floor and (confirmed is None or confirmed[1] >= floor)
        verdicts.append(FunctionVerdict(function, "faster" if faster else "not faster", *figure))
    return tuple(verdicts)


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
    return tuple(
        v if v.function in kept else FunctionVerdict(v.function, v.verdict, v.speedup, v.ci_low, v.ci_high, False)
        for v in verdicts
    )


def summary(verdicts: tuple[FunctionVerdict, ...]) -> str:
    """What happened to each function, for the verdict's reason (and so for the model's feedback)."""
    return "per function: " + "; ".join(v.text() for v in verdicts)


def judged(verdict: Verdict, evaluation: Evaluation, functions: tuple[FunctionVerdict, ...]) -> Verdict:
    """The verdict of a file run's candidate, per function: accepted when every change kept is faster on
    its own calls in both timing series and no target is slower, even if the blend over the whole workload
    (reported as the total) does not clear the floor. A correctness problem is never overruled."""
    timing = evaluation.timing
    kept = [v for v in functions if v.kept]
    if verdict.accepted or timing is None or not kept or verdict.score is None:
        return verdict
    floor = 1.0 + timing.min_speedup
    confirmed = timing.per_function_confirmation
    faster = all(v.verdict == "faster" and v.function in confirmed and confirmed[v.function][1] >= floor for v in kept)
    slower = [name for name, (_, _, high) in timing.per_function.items() if high < 1.0]
    if not faster or slower or timing.ci_high < 1.0:
        return verdict
    names = ", ".join(v.function for v in kept)
    total = f"{timing.speedup:.2f}x [{timing.ci_low:.2f}, {timing.ci_high:.2f}]"
    return Verdict(
        True,
        f"{names} faster on {'its' if len(kept) == 1 else 'their'} own calls (confirmed); "
        f"total over the workload {total}",
        verdict.score,
    )

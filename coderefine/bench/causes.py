"""Why an evaluated candidate was rejected, in the few causes a benchmark counts apart.

A candidate whose tests pass and whose recorded calls behave the same, but whose timing could not be
done (a worker timed out, the workload is too fast to time), was not found wrong: counting it among the
behaviour rejections would blame the model for the harness.
"""

from __future__ import annotations

from coderefine.records import Evaluation, Iteration

CAUSES = ("tests", "behaviour", "timing", "sandbox", "not_improved")


def rejection_cause(iteration: Iteration) -> str | None:
    """One of CAUSES for an evaluated, rejected candidate; None when it was accepted or never run."""
    evaluation = iteration.evaluation
    if evaluation is None or iteration.verdict.accepted:
        return None
    return evaluation_cause(evaluation)


def evaluation_cause(evaluation: Evaluation) -> str:
    tests = evaluation.tests
    behavior = evaluation.behavior
    if tests is not None and (tests.timed_out or tests.failed or not tests.all_passed):
        return "tests"
    if behavior is not None and not behavior.equivalent:
        return "behaviour"
    error = evaluation.error
    if error is not None:
        if error.startswith("timing failed"):
            return "timing"
        if tests is None or error.startswith(("the sandbox", "the Docker")):
            return "sandbox"
        return "behaviour"  # the replay could not run or import the candidate
    return "not_improved"


def count_causes(iterations: tuple[Iteration, ...]) -> dict[str, int]:
    found: dict[str, int] = {}
    for iteration in iterations:
        cause = rejection_cause(iteration)
        if cause is not None:
            found[cause] = found.get(cause, 0) + 1
    return found

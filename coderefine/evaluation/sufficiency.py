"""Whether the original's tests can support a verdict: "refuse to claim what the tests cannot support".

A candidate is judged by its tests and by the calls the tests made to the targets, replayed. When those
calls are few, or run little of the targets' code, "every recorded call replays identically" says little,
and a change the tests do not look at would be accepted. So the run stops after the baseline and reports
"insufficient tests" with the numbers, unless the user says to judge anyway.

The rule is over the run's targets together (all functions of the module, or the one `--function`
names): usable recorded calls (recorded, replayable, deterministic) >= `min_calls`, and lines of the
targets the tests ran / lines of the targets >= `min_coverage`. Together rather than per function, so
that a helper only ever called by another target (no outermost calls of its own) does not block a run
whose tests exercise it through its caller; its lines still count.

A program (a script doing its work at top level, or a module with an `if __name__ == "__main__":` block)
whose tests run it in another process records no calls: its tests alone judge it, as before, and the
gate says it does not apply rather than blocking it.
"""

from __future__ import annotations

from coderefine.records import Sufficiency, TargetEvidence


def judge_sufficiency(
    evidence: tuple[TargetEvidence, ...],
    targets: tuple[str, ...],
    *,
    min_calls: int,
    min_coverage: float,
    allowed: bool,
    script: bool,
) -> Sufficiency:
    gated = [e for e in evidence if e.target in targets]
    calls = sum(e.usable for e in gated)
    lines = sum(e.lines for e in gated)
    covered = sum(e.covered for e in gated)
    recorded = sum(e.recorded for e in gated)

    def result(applies: bool, sufficient: bool, reason: str) -> Sufficiency:
        return Sufficiency(applies, sufficient, calls, lines, covered, min_calls, min_coverage, allowed, reason)

    if script and recorded == 0:
        return result(
            False, True, "a program its tests run in another process: no calls recorded, its tests alone judge it"
        )
    problems = []
    if calls < min_calls:
        problems.append(f"{calls} usable recorded call{'s' if calls != 1 else ''} (needs {min_calls})")
    if lines and covered / lines < min_coverage:
        share = f"{covered / lines:.0%} (needs {min_coverage:.0%})"
        problems.append(f"{covered}/{lines} lines of the targets run by the tests, {share}")
    if not problems:
        return result(True, True, "")
    return result(True, False, "insufficient tests: " + ", ".join(problems))

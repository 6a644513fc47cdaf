"""The facts the feedback step is told about a program judged by its recorded runs (stdin -> stdout)."""

from __future__ import annotations

from coderefine.evaluation.programs import timing_note
from coderefine.records import PROGRAM_TARGET, Baseline, Timing


def program_baseline_lines(baseline: Baseline) -> list[str]:
    facts = baseline.program
    assert facts is not None
    left_out = "; ".join(f"{count} {why}" for why, count in facts.problems.items())
    lines = [
        f"- The tests ran the program {facts.runs} time{'s' if facts.runs != 1 else ''} as a process; "
        f"{facts.usable} of those runs (argv, stdin, files read) are replayed on every candidate, which must "
        "give the same exit code and stdout (and files written) on each"
        + (f" ({left_out} left out)" if left_out else "")
        + "."
    ]
    for e in baseline.evidence:
        if e.target == PROGRAM_TARGET and e.lines:
            missed = ""
            if e.missed_lines:
                shown = ", ".join(str(n) for n in e.missed_lines[:8]) + (", ..." if len(e.missed_lines) > 8 else "")
                missed = f" (never run: lines {shown})"
            lines.append(f"- The recorded runs run {e.covered}/{e.lines} lines of the program{missed}.")
    if facts.run_seconds is not None and facts.startup_seconds is not None:
        source = "the timing inputs" if facts.timing_inputs else "the recorded runs"
        lines.append(
            f"- One timing pass ({facts.timing_runs} process{'es' if facts.timing_runs != 1 else ''} on {source}) "
            f"takes {facts.run_seconds * 1000:.1f} ms; interpreter start-up alone is "
            f"{facts.startup_seconds * 1000:.1f} ms per process."
        )
    note = timing_note(facts)
    if note:
        lines.append(f"- {note}")
    return lines


def program_timing_note(timing: Timing) -> str:
    if timing.basis != "process":
        return ""
    text = " Timed as whole processes, interpreter start-up included (the verdict's figure)"
    if timing.after_startup is not None:
        speedup, low, high = timing.after_startup
        text += f"; the part after start-up alone: {speedup:.2f}x [{low:.2f}, {high:.2f}]"
    return text + "."

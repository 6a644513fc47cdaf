"""The rich console view: live progress per iteration, then the trajectory table and the final diff."""

from __future__ import annotations

import difflib

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.status import Status
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from coderefine.records import INSUFFICIENT_TESTS, Baseline, BoundaryInputs, GeneratedInputs, Iteration, Result, Usage
from coderefine.reports.evidence import basis_evidence, per_function_evidence, verification_evidence
from coderefine.reports.selection import selection_text


def duration_text(seconds: float) -> str:
    """A workload's time per pass, in the unit that shows it (0.0 ms says nothing about microseconds)."""
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    if seconds >= 1e-6:
        return f"{seconds * 1e6:.1f} us"
    return f"{seconds * 1e9:.0f} ns"


def _tests_cell(iteration: Iteration) -> str:
    tests = iteration.evaluation.tests if iteration.evaluation else None
    if tests is None:
        return "-"
    if tests.timed_out:
        return "timeout"
    if tests.stopped_early:  # fail-fast: the tests left unrun are neither passed nor failed
        return f"{tests.passed}/{tests.passed + tests.failed} of {tests.collected}"
    return f"{tests.passed}/{tests.passed + tests.failed}"


def _figure(iteration: Iteration) -> str:
    evaluation = iteration.evaluation
    if evaluation is not None and evaluation.timing is not None:
        t = evaluation.timing
        return f"{t.speedup:.2f}x [{t.ci_low:.2f}, {t.ci_high:.2f}]"
    if iteration.verdict.score is not None:
        return f"{iteration.verdict.score:.1f}"
    return "-"


class ConsoleView:
    """Implements the loop's observer hooks; prints nothing when quiet except the final summary."""

    def __init__(self, console: Console, quiet: bool = False) -> None:
        self.console = console
        self.quiet = quiet
        self._status: Status | None = None

    # -- live progress

    def _stop_status(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def step_started(self, text: str) -> None:
        if self.quiet:
            return
        if self._status is None:
            self._status = self.console.status(text)
            self._status.start()
        else:
            self._status.update(text)

    def note(self, text: str) -> None:
        self._stop_status()
        if not self.quiet:
            self.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def baseline_done(self, baseline: Baseline) -> None:
        self._stop_status()
        if self.quiet:
            return
        tests = baseline.evaluation.tests
        assert tests is not None
        line = f"[bold]baseline[/]: {tests.passed} tests passed in {tests.duration:.1f}s"
        program = baseline.program
        if program is not None:
            line += f", {program.usable}/{program.runs} program runs recorded and repeatable"
            if program.startup_seconds is not None and program.run_seconds is not None:
                line += (
                    f", {program.run_seconds * 1e3:.1f} ms per timing pass of {program.timing_runs} processes"
                    f" (start-up {program.startup_seconds * 1e3:.1f} ms each)"
                )
        elif baseline.calls_recorded:
            line += f", {baseline.calls_recorded} calls recorded"
        if baseline.workload_seconds is not None and program is None:
            line += f", workload {duration_text(baseline.workload_seconds)} per pass"
        if baseline.timed_calls:
            line += f" (timed on a stratified sample of {baseline.timed_calls} calls)"
        line += f", score {baseline.score:.1f}" if baseline.score != 1.0 else ""
        self.console.print(line)
        if baseline.tests_selected is not None:
            self.console.print(Text(f"tests: {selection_text(baseline.tests_selected)}"))
        gate = baseline.sufficiency
        if gate is not None:
            self.console.print(Text(f"evidence: {evidence_text(baseline)}"))
        generated = baseline.generated
        if generated is not None:
            self.console.print(Text(f"generated inputs: {generated_text(generated)}"))
        boundary = baseline.boundary
        if boundary is not None:
            self.console.print(Text(f"boundary inputs: {boundary_text(boundary)}"))
        if baseline.pinned:
            self.console.print(Text(f"pinned: {'; '.join(baseline.pinned)}"))

    def iteration_done(self, iteration: Iteration, best: Iteration | None) -> None:
        self._stop_status()
        if self.quiet:
            return
        mark = "[green]accepted[/]" if iteration.verdict.accepted else "[red]rejected[/]"
        draft = f", round {iteration.round} draft {iteration.draft}" if iteration.draft else ""
        text = Text.from_markup(f"[bold]attempt {iteration.index}[/] ({iteration.role.value}{draft}): {mark}: ")
        text.append(iteration.verdict.reason)
        basis = basis_evidence(iteration.evaluation.timing if iteration.evaluation is not None else None)
        if basis and "first pass" not in iteration.verdict.reason:  # a warm-gain refusal says so itself
            text.append(f" ({basis})")
        self.console.print(text)

    def close(self) -> None:
        self._stop_status()


def boundary_text(boundary: BoundaryInputs) -> str:
    """'37 (f 20, g 17) in 0.8 s; left out: 5 the original raises on, 2 slow'."""
    if boundary.error:
        return f"none: {boundary.error}"
    text = f"{boundary.calls}"
    if boundary.per_target:
        text += " (" + ", ".join(f"{t} {n}" for t, n in boundary.per_target.items()) + ")"
    text += f" of {boundary.derived} derived, in {boundary.seconds:.1f} s"
    left_out = [
        f"{boundary.raised} the original raises on" if boundary.raised else "",
        f"{boundary.slow} slow" if boundary.slow else "",
        f"{boundary.not_deterministic + boundary.unstable} not deterministic"
        if boundary.not_deterministic + boundary.unstable
        else "",
        f"{boundary.unpicklable} not picklable" if boundary.unpicklable else "",
    ]
    shown = [part for part in left_out if part]
    return text + (f"; left out: {', '.join(shown)}" if shown else "")


def generated_text(generated: GeneratedInputs) -> str:
    """'150 (f 50, g 50, h 50); skipped k: parameter x has no type hint'."""
    if generated.error:
        return f"none: {generated.error}"
    parts = [f"{generated.calls}"]
    if generated.per_target:
        parts[0] += " (" + ", ".join(f"{t} {n}" for t, n in generated.per_target.items()) + ")"
    if generated.unstable:
        parts.append(f"{generated.unstable} left out (not deterministic)")
    parts += [f"skipped {t}: {why}" for t, why in generated.skipped.items()]
    return "; ".join(parts)


def evidence_text(baseline: Baseline) -> str:
    """'12 usable calls, 18/20 lines of the targets run (90%): sufficient (needs 3 calls, 60%)'."""
    gate = baseline.sufficiency
    if gate is None:
        return ""
    if not gate.applies:
        return f"not gated: {gate.reason}"
    coverage = f"{gate.covered}/{gate.lines} lines of the targets run ({gate.coverage:.0%})" if gate.lines else ""
    unit = "runs" if baseline.program is not None else "calls"
    if baseline.program is not None:
        coverage = coverage.replace("of the targets", "of the program")
    figures = ", ".join(part for part in (f"{gate.calls} usable {unit}", coverage) if part)
    needs = f"needs {gate.min_calls} {unit}, {gate.min_coverage:.0%} of the lines"
    if gate.sufficient:
        return f"{figures}: sufficient ({needs})"
    verdict = "INSUFFICIENT, judged anyway (--allow-insufficient-tests)" if gate.allowed else "INSUFFICIENT"
    return f"{figures}: {verdict} ({needs})"


def trajectory_table(result: Result) -> Table:
    table = Table(title="trajectory", title_justify="left", show_lines=False)
    table.add_column("#", justify="right")
    several = any(it.draft for it in result.iterations)
    if several:
        table.add_column("round.draft", justify="right")
    table.add_column("role")
    table.add_column("verdict")
    table.add_column("tests", justify="right")
    table.add_column("speedup" if result.task == "optimize" else "score", justify="right")
    table.add_column("reason", overflow="fold", ratio=1, min_width=30)
    for it in result.iterations:
        verdict = "[green]accepted[/]" if it.verdict.accepted else "[red]rejected[/]"
        best = " *" if result.best is not None and result.best.index == it.index else ""
        table.add_row(
            str(it.index),
            *([f"{it.round}.{it.draft}" if it.draft else str(it.round)] if several else []),
            it.role.value,
            verdict + best,
            _tests_cell(it),
            _figure(it),
            Text(it.verdict.reason),
        )
    return table


def unified_diff(original: str, code: str, name: str) -> str:
    before, after = (name, name) if name.startswith("/") else (f"a/{name}", f"b/{name}")
    return "".join(
        difflib.unified_diff(
            original.splitlines(keepends=True), code.splitlines(keepends=True), fromfile=before, tofile=after
        )
    )


def round_lines(result: Result) -> list[str]:
    """With several drafts per round: per round, the best verified result so far and what each draft did."""
    if not any(it.draft for it in result.iterations):
        return []
    by_index = {it.index: it for it in result.iterations}
    lines = []
    for step in result.rounds:
        best = by_index.get(step.best) if step.best is not None else None
        so_far = f"best verified {_figure(best)} (attempt {best.index})" if best is not None else "nothing verified"
        drafts = "; ".join(f"draft {by_index[i].draft}: {_draft_text(by_index[i])}" for i in step.attempts)
        lines.append(f"round {step.number}: {so_far}; {drafts}")
    return lines


def _draft_text(iteration: Iteration) -> str:
    if iteration.verdict.accepted:
        return f"accepted {_figure(iteration)}"
    if iteration.evaluation is None:
        return "not run"
    tests = iteration.evaluation.tests
    if tests is not None and (tests.failed or tests.timed_out):
        return f"failed {tests.failures[0].nodeid if tests.failures else 'its tests'}"
    figure = _figure(iteration)
    return f"rejected{f' {figure}' if figure != '-' else ''}"


def render_result(console: Console, result: Result, show_diff: bool = True) -> None:
    for warning in result.warnings:
        console.print(f"[yellow]warning[/]: {warning}", highlight=False)
    if result.iterations:
        console.print(trajectory_table(result))
    for line in round_lines(result):
        console.print(Text(line))
    best = result.best
    if best is not None and best.candidate is not None and show_diff:
        diff = unified_diff(result.original_code, best.candidate.code, result.file)
        console.print(Syntax(diff, "diff", theme="ansi_dark", background_color="default"))
    console.print(summary_line(result), highlight=False)


def usage_text(usage: Usage) -> str:
    """Calls and tokens, with what the cache saved: '5 model calls (2 cached), 9120 tokens (3310 billed)'."""
    text = f"{usage.calls} model call{'s' if usage.calls != 1 else ''}"
    if usage.cached_calls:
        text += f" ({usage.cached_calls} cached)"
    if usage.total_tokens:
        text += f", {'~' if usage.estimated else ''}{usage.total_tokens} tokens"
        if usage.cached_tokens:
            text += f" ({usage.billed_tokens} billed)"
        if usage.reasoning_tokens:
            text += f", {usage.reasoning_tokens} of them thinking"
    return text


def summary_line(result: Result) -> str:
    calls = usage_text(result.usage)
    best = result.best
    if result.status == INSUFFICIENT_TESTS:
        return (
            f"status: insufficient tests - {result.stop_reason.removeprefix('insufficient tests: ')}; nothing was "
            f"tried ({calls}); {result.file} left as it was"
        )
    if best is None or best.evaluation is None:
        return (
            f"status: {result.status} - no verified improvement ({result.stop_reason}; {calls}); "
            f"{result.file} left as it was"
        )
    evidence = verification_evidence(best.evaluation)
    timing = best.evaluation.timing
    if timing is not None and per_function_evidence(timing) and not best.functions:
        evidence.append(per_function_evidence(timing))
    if basis_evidence(timing):
        evidence.append(basis_evidence(timing))
    action = f"written to {result.file}" if result.written else "rerun with --write to apply it"
    return (
        f"status: {result.status} - attempt {best.index}: {best.verdict.reason}; {', '.join(evidence)} "
        f"({result.stop_reason}; {calls}); {action}"
    )


def task_progress(console: Console, quiet: bool) -> Progress:
    """The progress bar of a command that runs many jobs (bench, sweep): spinner, title, bar, done/total,
    elapsed; gone once finished."""
    return Progress(
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=quiet,
    )

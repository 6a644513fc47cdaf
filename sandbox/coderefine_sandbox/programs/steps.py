"""The runner's steps for a target run as a program.

- baseline (after the original's tests passed with the start-up hook recording, and no calls were
  recorded): read the recorded runs, replay each twice on the original (a run whose outcome does not
  repeat cannot judge anything), keep the outcome as the expected one, measure which program lines the
  usable runs ran, time start-up and one pass of the original;
- candidate (after its tests passed): replay every usable run and compare; if all match and it gained no
  power the original did not use (issue 13's audit hook, watching each behaviour replay of both versions),
  time both versions as processes.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from collections import Counter

from coderefine_sandbox.audit import gained
from coderefine_sandbox.process import StepTimeout, base_env, remove_stale, run_step
from coderefine_sandbox.programs import HOOK_DIR, PROGRAM_TARGET
from coderefine_sandbox.programs.execute import Version, execute, execute_audited
from coderefine_sandbox.programs.outputs import difference, example, inputs
from coderefine_sandbox.programs.runs import Run, RunsFile, read_missed, read_recorded
from coderefine_sandbox.programs.timing import ProcessTimer, floor_for, measure
from coderefine_sandbox.protocol import (
    BaselineReport,
    CandidateReport,
    Capability,
    ProgramBaseline,
    ReplayReport,
    RunnerRequest,
    TargetEvidence,
)

MAX_EXAMPLES = 5
PAIR_SECONDS = 0.3  # the original's time in one timing pair, at least (see repeats_for)
MAX_REPEATS = 10


def record_env(request: RunnerRequest, workspace: str) -> dict[str, str]:
    """The environment of the original's test run that switches the start-up hook on."""
    spec = request.program
    assert spec is not None
    folder = os.path.join(request.io_dir, "runs-recorded")
    os.makedirs(folder, exist_ok=True)
    options = {
        "out": folder,
        "max_bytes": spec.max_bytes,
        "file": os.path.realpath(os.path.join(workspace, spec.file)),
        "module": request.module_name,
        "root": os.path.realpath(workspace),  # a console-script wrapper inside it is replayed per version
        "prefix": os.path.realpath(sys.prefix),  # a wrapper of another Python cannot be replayed with ours
    }
    return {"CODEREFINE_PROGRAM_RECORD": json.dumps(options), "CODEREFINE_HOOK_PATH": HOOK_DIR}


def _version(request: RunnerRequest, workspace: str) -> Version:
    assert request.program is not None
    return Version(workspace, request.program.file, request.import_root)


def _timeout(request: RunnerRequest) -> float:
    return max(10.0, min(request.step_timeout, request.test_timeout))


def baseline(request: RunnerRequest, report: BaselineReport) -> BaselineReport:
    spec = request.program
    assert spec is not None
    runs, total = read_recorded(os.path.join(request.io_dir, "runs-recorded"), spec.max_runs)
    missed = read_missed(os.path.join(request.io_dir, "runs-recorded"))
    if not runs and not missed:
        return report
    problems: Counter[str] = Counter(missed)
    if total > len(runs):
        problems[f"beyond the first {spec.max_runs} runs"] += total - len(runs)
    original = _version(request, request.workspace)
    checked = []
    powers: dict[tuple[str, str], Capability] = {}
    for run in runs:
        if run.problems:
            problems.update(run.problems[:1])
            checked.append(run)
            continue
        # The first replay also records the original's powers, as a candidate's replay does.
        where = run_name(spec.file, run)
        first, used = execute_audited(
            run, original, request.io_dir, request.hash_seed, _timeout(request), where, request.workspace
        )
        for power in used:
            powers.setdefault((power.kind, power.key), power)
        # The second run also notes the program's lines it runs (tracing slows it, never changes it).
        lines_out = os.path.join(request.io_dir, "run-lines.json")
        remove_stale(lines_out)
        second = execute(run, original, request.io_dir, request.hash_seed, _timeout(request), lines_out)
        run = Run(**{**run.__dict__, "lines": tuple(_read_lines(lines_out))})
        found = difference(
            first,
            second,
            mode=spec.output,
            stderr=spec.compare_stderr,
            rel_tol=request.behavior.rel_tol,
            abs_tol=request.behavior.abs_tol,
        )
        unstable = None
        if first.timed_out:
            unstable = "does not finish in the step's time limit when replayed"
        elif not (first.ran and second.ran):
            unstable = "the wrapper does not import the program's own file when replayed"
        elif found is not None:
            unstable = f"the original's {found[0]} differs between two runs"
        if unstable:
            problems[unstable] += 1
        checked.append(Run(**{**run.__dict__, "expected": first, "unstable": unstable}))
    usable = [run for run in checked if run.usable]
    runs_file = RunsFile(checked)
    program_lines = lines_of(os.path.join(request.workspace, spec.file))
    covered = set().union(*(run.lines for run in usable)) & program_lines if usable else set()
    report.evidence = {
        PROGRAM_TARGET: TargetEvidence(
            calls=len(checked),
            recorded=sum(1 for run in checked if not run.problems),
            usable=len(usable),
            lines=len(program_lines),
            covered=len(covered),
            missed_lines=tuple(sorted(program_lines - covered)),
        )
    }
    error = None
    try:
        if request.timing is not None:
            generate_inputs(request)
        timing_inputs = _timing_inputs(request) if request.timing is not None else []
    except (RuntimeError, OSError) as exc:
        report.calibration_error = str(exc)
        return report
    if request.timing is not None and usable:
        timer = ProcessTimer(original, None, usable, request.io_dir, request.hash_seed, spec.repeats, _timeout(request))
        try:
            with timer.inputs(timing_inputs) as (items, empty):
                runs_file.startup_seconds, runs_file.run_seconds = timer.calibrate(items, empty)
        except (RuntimeError, OSError) as exc:
            error = f"timing the original failed: {exc}"
            report.calibration_error = error
    runs_file.save(spec.runs_path)
    report.program = ProgramBaseline(
        runs=total,
        replayable=sum(1 for run in checked if not run.problems),
        usable=len(usable),
        problems=dict(problems),
        startup_seconds=runs_file.startup_seconds,
        run_seconds=runs_file.run_seconds,
        timing_runs=len(timing_inputs) or len(usable),
        timing_inputs=len(timing_inputs),
        error=error,
        capabilities=tuple(powers.values()),
    )
    return report


def run_name(file: str, run: Run) -> str:
    """How a refusal names a run: the program and its inputs, as a mismatch shows them (shorter)."""
    return f"{os.path.basename(file)}[{inputs(run, 60)}]"


def _read_lines(path: str) -> list[int]:
    try:
        with open(path, encoding="utf-8") as fh:
            return list(json.load(fh))
    except (OSError, ValueError):
        return []


def _timing_inputs(request: RunnerRequest) -> list[bytes]:
    """The user's stdin files, and what their generators gave in the baseline (files in its io folder)."""
    assert request.program is not None
    found = []
    for index, entry in enumerate(request.program.timing_inputs):
        if "::" in entry:
            folder = _generated_folder(request, index)
            for name in sorted(os.listdir(folder)):
                with open(os.path.join(folder, name), "rb") as fh:
                    found.append(fh.read())
            continue
        with open(os.path.join(request.workspace, entry), "rb") as fh:
            found.append(fh.read())
    return found


def _generated_folder(request: RunnerRequest, index: int) -> str:
    assert request.program is not None
    return os.path.join(os.path.dirname(request.program.runs_path), f"timing-generated-{index}")


_GENERATE = """
import os, runpy, sys
namespace = runpy.run_path(sys.argv[1])
for index, item in enumerate(namespace[sys.argv[2]]()):
    with open(os.path.join(sys.argv[3], f"{index:05d}"), "wb") as fh:
        fh.write(item.encode("utf-8") if isinstance(item, str) else bytes(item))
"""


def generate_inputs(request: RunnerRequest) -> None:
    """Call the user's timing input generators (`--timing-inputs FILE.py::NAME`) in the original's workspace;
    RuntimeError when one fails or gives nothing."""
    assert request.program is not None
    for index, entry in enumerate(request.program.timing_inputs):
        if "::" not in entry:
            continue
        path, name = entry.rsplit("::", 1)
        folder = _generated_folder(request, index)
        os.makedirs(folder, exist_ok=True)
        argv = [sys.executable, "-c", _GENERATE, os.path.join(request.workspace, path), name, folder]
        try:
            proc = run_step(
                argv, cwd=request.workspace, env=base_env(request, request.workspace), timeout=request.step_timeout
            )
        except StepTimeout as exc:
            raise RuntimeError(f"the timing input generator {entry} {exc}") from None
        if proc.returncode != 0 or not os.listdir(folder):
            detail = proc.stdout.strip().splitlines()[-1:] if proc.stdout.strip() else ["it gave no input"]
            raise RuntimeError(f"the timing input generator {entry} failed: {detail[0][:300]}")


def lines_of(path: str) -> set[int]:
    """The program's statement lines: every line a code object of the file starts, `def` lines excluded."""
    with open(path, "rb") as fh:
        code = compile(fh.read(), path, "exec", dont_inherit=True)
    found: set[int] = set()
    todo = [(code, True)]
    while todo:
        current, module = todo.pop()
        lines = {line for _, _, line in current.co_lines() if line is not None and line > 0}
        if not module:
            lines.discard(current.co_firstlineno)
        found |= lines
        todo.extend((const, False) for const in current.co_consts if hasattr(const, "co_lines"))
    return found


def repeats_for(least: int, run_seconds: float | None) -> int:
    """Processes per input and version in a pair: more for short programs (their minimum needs more tries
    to find a quiet moment on a busy machine), so that one pair runs the original for ~PAIR_SECONDS."""
    if not run_seconds:
        return least
    return max(least, min(MAX_REPEATS, math.ceil(PAIR_SECONDS / run_seconds)))


def replay(request: RunnerRequest) -> ReplayReport:
    spec = request.program
    assert spec is not None
    usable = [run for run in RunsFile.load(spec.runs_path).runs if run.usable]
    candidate = _version(request, request.workspace)
    started = time.perf_counter()
    indices: list[int] = []
    examples = []
    powers: dict[tuple[str, str], Capability] = {}
    for index, run in enumerate(usable):
        assert run.expected is not None
        where = run_name(spec.file, run)
        got, used = execute_audited(
            run, candidate, request.io_dir, request.hash_seed, _timeout(request), where, request.original_workspace
        )
        for power in used:
            powers.setdefault((power.kind, power.key), power)
        found = difference(
            run.expected,
            got,
            mode=spec.output,
            stderr=spec.compare_stderr,
            rel_tol=request.behavior.rel_tol,
            abs_tol=request.behavior.abs_tol,
        )
        if not got.ran:  # the wrapper ran another copy of the module: its output says nothing of this one
            found = ("program", "the candidate's file imported by the wrapper", "another copy imported")
        if found is not None:
            indices.append(index)
            if len(examples) < MAX_EXAMPLES:
                examples.append(example(os.path.basename(spec.file), run, found))
    seconds = time.perf_counter() - started
    return ReplayReport(
        len(usable), len(indices), tuple(indices), tuple(examples), seconds, (), None, None, tuple(powers.values())
    )


def candidate(request: RunnerRequest, report: CandidateReport) -> CandidateReport:
    """After the candidate's tests passed: its behaviour run by run, then its timing."""
    spec = request.program
    assert spec is not None
    report.behavior = replay(request)
    # A power the original never used is refused before anything is timed, as for calls (modes.candidate).
    report.refused = gained(report.behavior.capabilities, request.original_capabilities, request.allow)
    if report.behavior.differs or report.refused or request.timing is None:
        return report
    runs_file = RunsFile.load(spec.runs_path)
    usable = [run for run in runs_file.runs if run.usable]
    inputs = _timing_inputs(request)
    original = _version(request, request.original_workspace)
    timer = ProcessTimer(
        original,
        _version(request, request.workspace),
        usable,
        request.io_dir,
        request.hash_seed,
        repeats_for(spec.repeats, runs_file.run_seconds),
        _timeout(request),
    )
    floor = floor_for(
        request.timing.floor, runs_file.startup_seconds, runs_file.run_seconds, len(inputs) or len(usable)
    )
    try:
        report.timing = measure(timer, inputs, request.timing.pairs, floor)
    except (RuntimeError, OSError) as exc:
        report.timing_error = f"timing failed: {exc}"
    return report

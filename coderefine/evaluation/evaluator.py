"""Evaluate the original and each candidate in the sandbox: the orchestration of one run's evaluations.

Layout of one run's scratch folder (deleted at the end):
    original/   the project as it is, where the baseline runs; later read-only, for timing the original
    io/         the baseline's artefacts: calls.pkl (recorded calls), unstable.json
    original-wide/, io-wide/  the same for a baseline widened to the whole suite (no test of the first
                selection called a target); they replace the first ones when that run succeeds
    cand-N/     candidate N's workspace: the original's copy seen through links, with only the target module
                written (layered.py); a full fresh copy when the tests write into the tree or resolve links
    io-N/       that evaluation's request and scratch files

The requests come from requests.py, the runner's reports become records in reports.py; both speak the
runner's typed protocol (`coderefine_sandbox.protocol`).
"""

from __future__ import annotations

import copy
import json
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from coderefine.errors import NoTestsFound, SandboxError
from coderefine.evaluation import programs, reports
from coderefine.evaluation.diagnosis import baseline_failure
from coderefine.evaluation.layered import module_imported_from_workspace, shadow_project, snapshot, tree_writes
from coderefine.evaluation.memory import memory_use
from coderefine.evaluation.project import Project
from coderefine.evaluation.project_run import runner_said
from coderefine.evaluation.protocol import (
    REPORTS,
    BaselineReport,
    CandidateReport,
    ProtocolError,
    RecordedTests,
    RunnerRequest,
    from_json,
    to_json,
)
from coderefine.evaluation.requests import ALWAYS_PINNED, Learned, Requests
from coderefine.evaluation.selection import (
    Selection,
    after_baseline,
    fixed_selection,
    what_ran,
    widened,
    widening_failed,
)
from coderefine.evaluation.settings import EvaluationSettings
from coderefine.evaluation.test_order import FailureHistory, fail_fast_order, write_test_seconds
from coderefine.evaluation.timing_lock import exclusive_lock
from coderefine.evaluation.verdicts import judge_sufficiency, too_fast
from coderefine.evaluation.workspace import copy_project, write_module
from coderefine.pool import available_cpus, run_in_workers
from coderefine.quality.metrics import code_metrics
from coderefine.quality.readability import readability_score
from coderefine.records import BaselineFacts, BehaviorReport, Candidate, Evaluation, TestReport
from coderefine.resources import sandbox_dir
from coderefine.sandboxes.base import Sandbox, SandboxJob, sandbox_env
from coderefine.sandboxes.process import ProcessSandbox

_MIN_WIDEN_SECONDS = 10.0  # less time left than this: the first selection's run stands, not widened


def _wide_run_problem(report: BaselineReport) -> str | None:
    """Why a baseline over the whole suite cannot replace the first one, or None."""
    if report.runner_error is not None or report.tests is None:
        return report.runner_error or "the sandbox runner reported no test run"
    run = report.tests
    if run.collected == 0 and not run.failed:
        return "the whole suite has no tests"
    if run.timed_out:
        return f"the whole suite ran out of the time left ({run.duration:.0f} s)"
    if run.session_error:
        return f"pytest could not run the whole suite: {run.session_error}"
    if run.failed or run.exit_code != 0:
        failed = run.failures[0].nodeid if run.failures else f"exit code {run.exit_code}"
        return f"the whole suite does not pass on the original ({failed})"
    if report.program is not None:
        return "the whole suite runs the module as a program"
    if report.capture is None or not report.capture.reached:
        return "no test of the whole suite called them either"
    return None


# A baseline's tests taking at least this long are split across the cores for each candidate: below it, a second
# pytest start-up (and import of the project) costs about what the split saves.
SPLIT_TESTS_SECONDS = 10.0


def split_test_workers(test_seconds: float, written: tuple[str, ...], draft_workers: int) -> int:
    """Pytest processes a candidate's tests run in, side by side: one per core when the baseline's tests took
    long, wrote nothing into the project tree (processes sharing a workspace must not race on its files) and
    drafts are not verified in parallel already (they use the cores)."""
    if test_seconds < SPLIT_TESTS_SECONDS or written or draft_workers > 1:
        return 1
    return available_cpus()


class SandboxEvaluator:
    """The loop's `Evaluator` (coderefine.refine.evaluator) that runs everything in a sandbox."""

    def __init__(
        self,
        project: Project,
        targets: tuple[str, ...],
        sandbox: Sandbox,
        settings: EvaluationSettings,
        with_bom: bool = False,
        selection: Selection | None = None,
    ) -> None:
        self.project = project
        self.selection = selection or fixed_selection(project)
        self.targets = targets
        self.sandbox = sandbox
        self.settings = settings
        self.with_bom = with_bom
        self.run_dir = Path(tempfile.mkdtemp(prefix="coderefine-"))
        self.original_ws = self.run_dir / "original"
        self.io_dir = self.run_dir / "io"
        self.requests = Requests(
            settings,
            replace(project, tests=self.selection.args),
            targets,
            self.original_ws,
            self.io_dir,
            self.selection.request,
        )
        self.learned = Learned()
        # what orders each candidate's tests, most likely to fail first (test_order.py)
        self.calls_per_test: dict[str, int] = {}
        self.failures = FailureHistory()
        self.candidate_timeout = settings.test_timeout
        self.test_workers = 1  # pytest processes a candidate's tests are split across (set by the baseline)
        self.test_seconds: Path | None = None  # what the original's tests took, which the split deals them by
        self.counter = 0
        # Candidates' workspaces are links into the original's copy until something shows that unsound
        # (see layered.py); then full copies, with the reason kept for the report.
        self.layered = True
        self.copy_reason: str | None = None
        self._last_ws = self.run_dir
        self.tag = ""  # a draft's copy of the evaluator names its workspaces cand-N-dK (evaluate_many)

    def close(self) -> None:
        try:
            self.sandbox.close()  # the Docker backend's container goes with the run
        finally:
            if not self.settings.keep_workspaces:
                shutil.rmtree(self.run_dir, ignore_errors=True)

    # ----------------------------------------------------------------- one sandbox run

    def _run(
        self, request: RunnerRequest, io_dir: Path, readonly: tuple[Path, ...]
    ) -> BaselineReport | CandidateReport:
        report_type = REPORTS[request.mode]
        request_path = io_dir / "request.json"
        request_path.write_text(to_json(request), encoding="utf-8")
        home = io_dir / "home"
        home.mkdir(exist_ok=True)
        # Generous outer limit: the runner enforces the per-step limits itself; this one only catches a
        # runner that cannot (e.g. the machine is swapping).
        steps = 2 + (2 * self.settings.timing_pairs + 2 if self.settings.measure_speed else 0)
        # An undecided timing series runs on for up to 120 s past its planned pairs (the sandbox's
        # timing/steps.py EXTEND_SECONDS), checked between pairs: per series that and one more pair.
        extension = 2 * (120.0 + 2 * request.step_timeout) if self.settings.measure_speed else 0.0
        job = SandboxJob(
            argv=(self.settings.python, "-m", "coderefine_sandbox.runner", str(request_path)),
            cwd=Path(request.workspace),
            writable=(Path(request.workspace), io_dir),
            readonly=(*readonly, sandbox_dir().resolve(), *self._lock_folder()),
            env=sandbox_env(home, {"PYTHONPATH": str(sandbox_dir().resolve())}, self.settings.pass_env),
            timeout=request.test_timeout + steps * request.step_timeout + extension + 60,
            memory_mb=self.settings.memory_mb,
            scratch=self.run_dir,
            keep=request.mode == "baseline",  # candidates read the original's workspace and recorded calls
        )
        whole_run = self.settings.measure_speed and self.settings.timing_lock_scope == "run"
        with exclusive_lock(self.settings.timing_lock if whole_run else None) as holds:
            outcome = self.sandbox.run(job)
        if outcome.timed_out:
            return report_type(runner_error=f"the sandbox run exceeded its overall limit of {job.timeout:g}s")
        try:
            json.loads(outcome.stdout)
        except json.JSONDecodeError:
            return report_type(runner_error="the sandbox runner failed: " + runner_said(outcome))
        try:
            report = from_json(report_type, outcome.stdout)
            # The lock is held here (scope "run") or by the runner around its timing steps (scope "timing").
            report.timing_holds = (*report.timing_holds, *holds)
            return report
        except ProtocolError as exc:  # host and runner disagree: a bug, never a verdict on the candidate
            raise SandboxError(f"the sandbox runner's report does not match the protocol: {exc}") from exc

    def _lock_folder(self) -> tuple[Path, ...]:
        """The folder of the timing lock, readable in the sandbox when the runner takes the lock itself."""
        lock = self.settings.timing_lock
        if lock is None or self.settings.timing_lock_scope != "timing" or not self.settings.measure_speed:
            return ()
        return (lock.resolve().parent,)

    # ----------------------------------------------------------------- baseline

    def baseline(self, code: str) -> BaselineFacts:
        started = time.perf_counter()
        report, written = self._baseline_run(self.settings.test_timeout)
        checked = None if self._collected_nothing(report) else self._check_baseline(report)
        report, written, checked = self._widen(report, written, checked, started)
        tests = checked if checked is not None else self._check_baseline(report)  # none collected: says so
        if written:
            self._use_copies(f"the tests write into the project tree (e.g. {written[0]})")
        self.test_workers = split_test_workers(tests.duration, written, self.settings.draft_workers)
        self.test_seconds = write_test_seconds(self.io_dir) if self.test_workers > 1 else None
        capture = report.capture
        self_check = report.self_check
        if self_check is not None and self_check.problem is not None:
            problem = self_check.error or self_check.import_error or ""
            raise SandboxError(f"replaying the original's recorded calls failed: {problem.splitlines()[-1]}")
        if report.calibration_error is not None:
            raise SandboxError(report.calibration_error)
        if report.program is not None:  # the tests run the target as a program: judged by its runs
            return self._program_baseline(report, tests, code, started)
        calibration = report.calibration
        generated = reports.generated_inputs(report.generated)
        boundary = reports.boundary_inputs(report.boundary)
        unstable = self_check.mismatches if self_check is not None else 0
        compared = self_check.calls_compared if self_check is not None else 0
        workload_seconds = calibration.seconds if calibration is not None else None
        self.learned = Learned(
            loops=calibration.loops if calibration is not None else None,
            workload_seconds=workload_seconds,
            calls_recorded=capture.recorded if capture is not None else 0,
            generated_calls=generated.calls if generated is not None and generated.error is None else 0,
            boundary_calls=boundary.calls if boundary is not None else 0,
            capabilities=self_check.capabilities if self_check is not None else (),
            peak_memory=self_check.peak_memory if self_check is not None else (),
            # the user's --bench is timed per function, whatever its calls' size
            untimed=None
            if self.settings.bench
            else too_fast(
                workload_seconds,
                compared - unstable,
                calibration.harness_per_call if calibration is not None else 0.0,
            ),
        )
        # Candidates may be slower than the original (readability) but not hang: a limit derived from the
        # original's test time keeps an infinite loop from costing the full --timeout.
        self.candidate_timeout = min(self.settings.test_timeout, max(30.0, 5 * tests.duration + 10))
        evaluation = Evaluation(
            tests=tests,
            behavior=BehaviorReport(
                calls_compared=max(0, compared - unstable),
                mismatches=0,
                skipped=unstable + (sum(capture.unreplayable.values()) if capture is not None else 0),
            ),
            timing=None,
            metrics=self._metrics(code),
            hot_spots=reports.hot_spots(self_check.profile) if self_check is not None else (),
            wall_seconds=time.perf_counter() - started,
            cpu_seconds=report.cpu_seconds,
            timing_holds=report.timing_holds,
        )
        self.selection, selected = after_baseline(
            self.selection, capture.reached if capture is not None else (), tests.collected, report.tests.selected
        )
        self.requests = replace(self.requests, selection=self.selection.request)  # candidates run these
        self.calls_per_test = dict(capture.calls_per_test) if capture is not None else {}
        evidence = reports.evidence(report.evidence)
        sufficiency = judge_sufficiency(
            evidence,
            self.targets,
            min_calls=self.settings.min_calls,
            min_coverage=self.settings.min_coverage,
            allowed=self.settings.allow_insufficient_tests,
            script=self.settings.script,
        )
        return BaselineFacts(
            evaluation,
            self.learned.calls_recorded,
            self.learned.loops,
            self.learned.workload_seconds,
            evidence=evidence,
            sufficiency=sufficiency,
            pinned=(*ALWAYS_PINNED, *report.pinned),
            not_pinned=report.not_pinned,
            generated=generated,
            boundary=boundary,
            untimed=self.learned.untimed,
            timed_calls=calibration.timed_calls if calibration is not None else 0,
            tests_selected=selected,
        )

    def _baseline_run(self, timeout: float) -> tuple[BaselineReport, tuple[str, ...]]:
        """The original's run in a fresh copy of the project: its report and what its tests wrote into the tree."""
        copy_project(self.project.root, self.original_ws)
        self.io_dir.mkdir()
        before = snapshot(self.original_ws)
        request = self.requests.baseline(timeout)
        written: set[str] = set()
        if self.selection.recorded is not None and self.selection.request is not None:
            request = replace(request, recorded=self._recorded_in(self.io_dir, self.selection.recorded))
            written = {name for share in self.selection.recorded.shares for name in share.tree_writes}
        report = self._run(request, self.io_dir, ())
        assert isinstance(report, BaselineReport)
        return report, tuple(sorted(written.union(tree_writes(before, snapshot(self.original_ws)))))

    @staticmethod
    def _recorded_in(io_dir: Path, recorded: RecordedTests) -> RecordedTests:
        """A first run's recorded trace, its files copied where the baseline's sandbox reads them."""
        shares = []
        for number, share in enumerate(recorded.shares):
            folder = io_dir / f"recorded-{number}"
            folder.mkdir()
            calls, results = folder / "calls.pkl", folder / "pytest-results.json"
            for source, target in ((share.calls_path, calls), (share.results_path, results)):
                if Path(source).exists():
                    shutil.copyfile(source, target)
            shares.append(replace(share, calls_path=str(calls), results_path=str(results)))
        return replace(recorded, shares=tuple(shares))

    def _collected_nothing(self, report: BaselineReport) -> bool:
        """The first, traced selection kept no test at all (no test file names the code): widened, not refused."""
        run = report.tests
        return (
            self.selection.mode == "traced"
            and report.runner_error is None
            and run is not None
            and not run.session_error
            and run.collected == 0
            and not run.failed
        )

    def _widen(
        self, report: BaselineReport, written: tuple[str, ...], tests: TestReport | None, started: float
    ) -> tuple[BaselineReport, tuple[str, ...], TestReport | None]:
        """No test of the first, traced selection called a target: trace the whole suite in the time left.

        A whole-suite run that fails, finds nothing more or runs out of time changes nothing: the first
        run's facts stand, and the selection's reason says what was tried."""
        reached = report.capture.reached if report.capture is not None else ()
        if self.selection.mode != "traced" or self.selection.request is None or reached or report.program:
            return report, written, tests
        left = self.settings.test_timeout - (time.perf_counter() - started)
        if left < _MIN_WIDEN_SECONDS:
            self.selection = widening_failed(self.selection, f"{left:.0f} s of --timeout left")
            return report, written, tests
        first = (self.original_ws, self.io_dir, self.requests)
        self.original_ws, self.io_dir = self.run_dir / "original-wide", self.run_dir / "io-wide"
        self.requests = replace(
            self.requests, original_workspace=self.original_ws, baseline_io=self.io_dir, selection=None
        )
        wide, wide_written = self._baseline_run(left)
        problem = _wide_run_problem(wide)
        if problem is None:
            self.selection = widened(self.selection)
            wide_tests = self._check_baseline(wide)  # passed: what is left to check is where it imported from
            shutil.rmtree(first[0], ignore_errors=True)
            shutil.rmtree(first[1], ignore_errors=True)
            return wide, wide_written, wide_tests
        shutil.rmtree(self.original_ws, ignore_errors=True)
        shutil.rmtree(self.io_dir, ignore_errors=True)
        self.original_ws, self.io_dir, self.requests = first
        self.selection = widening_failed(self.selection, problem)
        return report, written, tests

    def _program_baseline(self, report: BaselineReport, tests: TestReport, code: str, started: float) -> BaselineFacts:
        assert report.program is not None
        run = Evaluation(
            tests=tests,
            behavior=None,
            timing=None,
            metrics=self._metrics(code),
            wall_seconds=time.perf_counter() - started,
            cpu_seconds=report.cpu_seconds,
            timing_holds=report.timing_holds,
        )
        facts = programs.baseline_facts(
            report.program, reports.evidence(report.evidence), run, self.settings, (*ALWAYS_PINNED, *report.pinned)
        )
        self.learned = Learned(
            loops=facts.loops,
            workload_seconds=facts.workload_seconds,
            calls_recorded=facts.calls_recorded,
            capabilities=report.program.capabilities,  # what candidates' replayed runs are held to
            program=True,
        )
        self.candidate_timeout = min(self.settings.test_timeout, max(30.0, 5 * tests.duration + 10))
        return facts

    def _check_baseline(self, report: BaselineReport) -> TestReport:
        """The original's tests, once sure they ran, all passed, and imported the project's copy."""
        if report.runner_error is not None:
            raise SandboxError(report.runner_error)
        if report.tests is None:
            raise SandboxError("the sandbox runner reported no test run for the original")
        if report.tests.session_error:
            raise SandboxError(f"pytest could not run the original's tests: {report.tests.session_error}")
        tests = reports.tests_report(report.tests)
        if tests.collected == 0 and not tests.failed:
            where = " ".join(self.project.tests) or str(self.project.root)
            if self.selection.mode == "traced":
                where += f" in the {self.selection.reason}"
            raise NoTestsFound(f"pytest collected no tests from {where}; pass --tests PATH")
        if not tests.all_passed:
            raise baseline_failure(
                tests,
                timeout=self.settings.test_timeout,
                python=self.settings.python,
                module_name=self.project.module_name,
                what_ran=what_ran(self.selection),
            )
        module_file = (report.capture.module_file if report.capture is not None else None) or report.tests.module_file
        if module_file and self.original_ws.resolve() not in Path(module_file).resolve().parents:
            raise SandboxError(
                f"the tests import {self.project.module_name} from {module_file}, not from the project copy; "
                "an installed copy shadows it (check --root)"
            )
        return tests

    # ----------------------------------------------------------------- candidates

    def evaluate(self, candidate: Candidate) -> Evaluation:
        started = time.perf_counter()
        layered = self.layered
        report, setup = self._evaluate_in(candidate, layered)
        tests = report.tests
        if layered and tests is not None and not module_imported_from_workspace(tests.module_file, self._last_ws):
            # The tests resolved a link and ran the original: that verdict means nothing; copies from now on.
            self._use_copies(f"the tests import {self.project.module_name} through a resolved path")
            report, setup = self._evaluate_in(candidate, False)
        workload = self._workload_label()
        evaluation = reports.candidate_evaluation(
            report, self._metrics(candidate.code), workload, time.perf_counter() - started
        )
        evaluation = replace(evaluation, setup_seconds=round(setup, 4), timing_holds=report.timing_holds)
        self.failures.note(evaluation.tests)
        if self.learned.program:
            return programs.as_runs(evaluation)
        peaks = report.behavior.peak_memory if report.behavior is not None else ()
        return replace(evaluation, memory=memory_use(self.learned.peak_memory, peaks, self.settings))

    def _evaluate_in(self, candidate: Candidate, layered: bool) -> tuple[CandidateReport, float]:
        """One sandbox run of `candidate` in a workspace of its own; also the seconds setting it up took."""
        self.counter += 1
        workspace = self._last_ws = self.run_dir / f"cand-{self.counter}{self.tag}"
        io_dir = self.run_dir / f"io-{self.counter}{self.tag}"
        try:
            began = time.perf_counter()
            if layered:
                shadow_project(self.original_ws, workspace, self.project.target)
            else:
                copy_project(self.project.root, workspace)
            write_module(workspace, self.project.target, candidate.code, self.with_bom)
            setup = time.perf_counter() - began
            io_dir.mkdir()
            order = fail_fast_order(self.project.module_name, self.calls_per_test, self.failures)
            request = self.requests.candidate(
                workspace,
                io_dir,
                self.candidate_timeout,
                self.learned,
                order,
                self.test_workers,
                self.test_seconds,
                candidate.changed,
            )
            report = self._run(request, io_dir, (self.original_ws, self.io_dir))
        finally:
            if not self.settings.keep_workspaces:
                shutil.rmtree(workspace, ignore_errors=True)
                shutil.rmtree(io_dir, ignore_errors=True)
        assert isinstance(report, CandidateReport)
        return report, setup

    # ----------------------------------------------------------------- several drafts at once

    def evaluate_many(self, candidates: Sequence[Candidate]) -> list[Evaluation]:
        """The drafts of one round, in their order, each as `evaluate` would judge it.

        With `draft_workers` > 1 each draft runs in a worker process of `coderefine.pool` (the pool of
        `bench --jobs` and `sweep`), on a copy of this evaluator: the baseline's workspace and recorded
        calls are only read, and each draft writes a workspace of its own (`cand-N-dK`). Tests and replay
        run side by side; timing does not: the runner takes a lock around its timing steps (the run's own
        lock file, or the one a bench or sweep shares), so no two timings overlap on this machine. The
        Docker backend keeps a run's workspaces in its one container: there drafts run one after another.
        """
        workers = min(self.settings.draft_workers, len(candidates))
        if workers <= 1 or not isinstance(self.sandbox, ProcessSandbox):
            return [self.evaluate(candidate) for candidate in candidates]
        drafts = self._draft_copies(len(candidates))
        results: dict[int, tuple[Evaluation, str | None]] = {}

        def done(result: tuple[int, Evaluation, str | None]) -> None:
            results[result[0]] = result[1:]

        def lost(args: tuple[object, ...], why: str, runs: int) -> None:
            number = args[2]
            assert isinstance(number, int)
            report = CandidateReport(runner_error=f"its verification {why}")
            evaluation = reports.candidate_evaluation(report, self._metrics(candidates[number].code), "", 0.0)
            results[number] = (evaluation, None)

        jobs = [(draft, candidates[number], number) for number, draft in enumerate(drafts)]
        if run_in_workers(_evaluate_draft, jobs, workers, done, lost):
            raise KeyboardInterrupt
        for _, copy_reason in results.values():
            if copy_reason is not None and self.layered:
                self._use_copies(copy_reason)
        for number in range(len(candidates)):  # the drafts' copies noted their failures in other processes
            self.failures.note(results[number][0].tests)
        return [results[number][0] for number in range(len(candidates))]

    def _draft_copies(self, count: int) -> list[SandboxEvaluator]:
        """One picklable copy of this evaluator per draft, whose timing steps take the timing lock."""
        settings = self.settings
        if settings.measure_speed and settings.timing_lock is None:
            folder = self.run_dir / "drafts-lock"
            folder.mkdir(exist_ok=True)
            lock = folder / "timing.lock"
            lock.touch()
            folder.chmod(0o755)  # read by the sandbox's runner, whatever user it runs as
            lock.chmod(0o644)
            settings = replace(settings, timing_lock=lock, timing_lock_scope="timing")
        self.counter += 1
        drafts = []
        for number in range(1, count + 1):
            draft = copy.copy(self)
            draft.settings = settings
            draft.requests = replace(self.requests, settings=settings)
            draft.tag = f"-d{number}"
            drafts.append(draft)
        return drafts

    def _use_copies(self, reason: str) -> None:
        self.layered = False
        self.copy_reason = reason

    def _workload_label(self) -> str:
        if self.learned.program:
            return "timing inputs (--timing-inputs)" if self.settings.timing_inputs else "recorded runs"
        bench = self.settings.bench
        return f"bench {bench.label}" if bench else "recorded calls"

    @staticmethod
    def _metrics(code: str) -> dict[str, float]:
        metrics = code_metrics(code)
        metrics["readability"] = round(readability_score(code), 2)
        return metrics


def _evaluate_draft(
    evaluator: SandboxEvaluator, candidate: Candidate, number: int
) -> tuple[int, Evaluation, str | None]:
    """One draft in a worker process: its evaluation, and why later candidates need full copies (if so)."""
    evaluation = evaluator.evaluate(candidate)
    return number, evaluation, (evaluator.copy_reason if not evaluator.layered else None)

"""Evaluate the original and each candidate in the sandbox, and turn the runner's JSON into records.

Layout of one run's scratch folder (deleted at the end):
    original/   the project as it is, where the baseline runs; later read-only, for timing the original
    io/         the baseline's artefacts: calls.pkl (recorded calls), unstable.json
    cand-N/     a fresh copy of the project with candidate N written over the target file
    io-N/       that evaluation's request and scratch files
"""

from __future__ import annotations

import fcntl
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coderefine.errors import BaselineFails, NoTestsFound, SandboxError
from coderefine.evaluation.project import Project
from coderefine.evaluation.sufficiency import judge_sufficiency
from coderefine.evaluation.workload import UserBenchmark
from coderefine.evaluation.workspace import copy_project, write_module
from coderefine.quality.metrics import code_metrics
from coderefine.quality.readability import readability_score
from coderefine.records import (
    BaselineFacts,
    BehaviorReport,
    Candidate,
    Evaluation,
    GeneratedInputs,
    HotSpot,
    Mismatch,
    TargetEvidence,
    TestFailure,
    TestReport,
    Timing,
)
from coderefine.resources import sandbox_dir
from coderefine.sandboxes.base import Sandbox, SandboxJob, sandbox_env


@dataclass(frozen=True)
class EvaluationSettings:
    measure_speed: bool
    test_timeout: float = 300.0  # the original's test run; candidates get a limit derived from it
    memory_mb: int = 2048
    timing_pairs: int = 6
    timing_values: int = 3
    timing_warmups: int = 1
    timing_min_time: float = 0.1
    min_speedup: float = 0.05
    max_calls_per_target: int = 500
    max_capture_bytes: int = 64 * 1024 * 1024
    rel_tol: float = 1e-9
    abs_tol: float = 0.0
    unordered: tuple[str, ...] = ()  # targets whose returned sequences compare in any order
    min_calls: int = 0  # the sufficiency gate (see coderefine.evaluation.sufficiency); 0 and 0.0 switch it off
    min_coverage: float = 0.0
    allow_insufficient_tests: bool = False
    script: bool = False  # the module runs as a program: with no recorded calls its tests alone judge it
    gen_inputs: int = 0  # inputs to generate per target from type hints (hypothesis); 0: none
    pass_env: tuple[str, ...] = ()
    python: str = sys.executable
    keep_workspaces: bool = False
    bench: UserBenchmark | None = None  # the user's own timing workload, instead of the recorded calls
    # `coderefine bench --jobs N`: a file every job locks exclusively around a sandbox run that times code,
    # so that no two timing runs overlap (see coderefine.bench.runner)
    timing_lock: Path | None = None


def noise_floor(min_speedup: float, workload_seconds: float | None) -> float:
    """The speedup a lower bound must clear. Workloads in the microsecond range are dominated by call
    overhead and timer resolution, so they must show a larger effect before it is believed."""
    if workload_seconds is None:
        return min_speedup
    if workload_seconds < 1e-5:
        return max(min_speedup, 0.20)
    if workload_seconds < 1e-4:
        return max(min_speedup, 0.10)
    return min_speedup


def values_per_process(configured: int, workload_seconds: float | None) -> int:
    """Measured values per timing process. Short workloads need several values (pyperf's 0.1 s minimum
    each) for a stable mean; for passes of a second or more one value is stable, and the spread that
    matters — between processes — is what the paired interval measures."""
    if workload_seconds is None or workload_seconds < 0.3:
        return configured
    return min(configured, 2 if workload_seconds < 1.0 else 1)


# Pinned for every run, whatever the code imports (the sandbox reports the rest).
HASH_SEED = 0
ALWAYS_PINNED = (
    f"PYTHONHASHSEED={HASH_SEED} (str/bytes hashes, set and dict-of-str iteration order)",
    "random reseeded before each test",
)


@contextmanager
def exclusive_lock(path: Path | None) -> Iterator[None]:
    """Hold an exclusive lock on `path` (nothing when None). flock is released by the kernel when the holder
    dies, so a crashed or killed job never leaves the others waiting."""
    if path is None:
        yield
        return
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class Evaluator:
    def __init__(
        self,
        project: Project,
        targets: tuple[str, ...],
        sandbox: Sandbox,
        settings: EvaluationSettings,
        with_bom: bool = False,
    ) -> None:
        self.project = project
        self.targets = targets
        self.sandbox = sandbox
        self.settings = settings
        self.with_bom = with_bom
        self.run_dir = Path(tempfile.mkdtemp(prefix="coderefine-"))
        self.original_ws = self.run_dir / "original"
        self.io_dir = self.run_dir / "io"
        self.loops: int | None = None
        self.workload_seconds: float | None = None
        self.calls_recorded = 0
        self.generated_calls = 0
        self.candidate_timeout = settings.test_timeout
        self.counter = 0

    def close(self) -> None:
        try:
            self.sandbox.close()  # the Docker backend's container goes with the run
        finally:
            if not self.settings.keep_workspaces:
                shutil.rmtree(self.run_dir, ignore_errors=True)

    # ----------------------------------------------------------------- requests

    def _request(self, mode: str, workspace: Path, io_dir: Path, test_timeout: float) -> dict[str, Any]:
        timing = None
        if self.settings.measure_speed:
            timing = {
                "pairs": self.settings.timing_pairs,
                "values": values_per_process(self.settings.timing_values, self.workload_seconds),
                "warmups": self.settings.timing_warmups,
                "min_time": self.settings.timing_min_time,
                "loops": self.loops,
                "floor": noise_floor(self.settings.min_speedup, self.workload_seconds),
            }
        return {
            "mode": mode,
            "python": self.settings.python,
            "workspace": str(workspace),
            "original_workspace": str(self.original_ws),
            "io_dir": str(io_dir),
            "module_name": self.project.module_name,
            "import_root": str(self.project.import_root),
            "targets": list(self.targets),
            "tests": list(self.project.tests),
            "test_timeout": test_timeout,
            "step_timeout": max(60.0, test_timeout),
            "calls_path": str(self.io_dir / "calls.pkl"),
            "unstable_path": str(self.io_dir / "unstable.json"),
            "capture": {
                "max_calls_per_target": self.settings.max_calls_per_target,
                "max_bytes": self.settings.max_capture_bytes,
            },
            "hash_seed": HASH_SEED,
            "behavior": {
                "rel_tol": self.settings.rel_tol,
                "abs_tol": self.settings.abs_tol,
                "unordered": list(self.settings.unordered),
            },
            "timing": timing,
            "bench": self._bench(),
            "replay": self.calls_recorded > 0,
            "generate": self._generated_paths(count=self.settings.gen_inputs)
            if mode == "baseline" and self.settings.gen_inputs
            else None,
            "generated": self._generated_paths() if mode == "candidate" and self.generated_calls else None,
        }

    def _generated_paths(self, count: int = 0) -> dict[str, Any]:
        return {
            "count": count,
            "calls_path": str(self.io_dir / "generated.pkl"),
            "report_path": str(self.io_dir / "generated.json"),
            "unstable_path": str(self.io_dir / "generated-unstable.json"),
        }

    def _bench(self) -> dict[str, Any] | None:
        bench = self.settings.bench
        if bench is None:
            return None
        return {"file": bench.file.as_posix(), "functions": list(bench.functions)}

    def _run(
        self, request: dict[str, Any], workspace: Path, io_dir: Path, readonly: tuple[Path, ...]
    ) -> dict[str, Any]:
        request_path = io_dir / "request.json"
        request_path.write_text(json.dumps(request), encoding="utf-8")
        home = io_dir / "home"
        home.mkdir(exist_ok=True)
        # Generous outer limit: the runner enforces the per-step limits itself; this one only catches a
        # runner that cannot (e.g. the machine is swapping).
        steps = 2 + (2 * self.settings.timing_pairs + 2 if self.settings.measure_speed else 0)
        job = SandboxJob(
            argv=(self.settings.python, "-m", "coderefine_sandbox.runner", str(request_path)),
            cwd=workspace,
            writable=(workspace, io_dir),
            readonly=(*readonly, sandbox_dir().resolve()),
            env=sandbox_env(home, {"PYTHONPATH": str(sandbox_dir().resolve())}, self.settings.pass_env),
            timeout=request["test_timeout"] + steps * request["step_timeout"] + 60,
            memory_mb=self.settings.memory_mb,
            scratch=self.run_dir,
            keep=request["mode"] == "baseline",  # candidates read the original's workspace and recorded calls
        )
        with exclusive_lock(self.settings.timing_lock if self.settings.measure_speed else None):
            outcome = self.sandbox.run(job)
        if outcome.timed_out:
            return {"runner_error": f"the sandbox run exceeded its overall limit of {job.timeout:g}s"}
        try:
            return json.loads(outcome.stdout)
        except json.JSONDecodeError:
            detail = outcome.stderr.strip() or outcome.stdout.strip() or f"exit code {outcome.returncode}"
            return {"runner_error": "the sandbox runner failed: " + detail.splitlines()[-1][:300]}

    # ----------------------------------------------------------------- baseline

    def baseline(self, code: str) -> BaselineFacts:
        copy_project(self.project.root, self.original_ws)
        self.io_dir.mkdir()
        request = self._request("baseline", self.original_ws, self.io_dir, self.settings.test_timeout)
        started = time.perf_counter()
        raw = self._run(request, self.original_ws, self.io_dir, ())
        if "runner_error" in raw:
            raise SandboxError(raw["runner_error"])
        tests = _tests(raw["tests"])
        if raw["tests"].get("session_error"):
            raise SandboxError(f"pytest could not run the original's tests: {raw['tests']['session_error']}")
        if tests.collected == 0 and not tests.failed:
            where = " ".join(self.project.tests) or str(self.project.root)
            raise NoTestsFound(f"pytest collected no tests from {where}; pass --tests PATH")
        if not tests.all_passed:
            first = tests.failures[0] if tests.failures else None
            detail = f"{first.nodeid}: {first.message.splitlines()[0] if first.message else ''}" if first else ""
            raise BaselineFails(
                f"the original fails its own tests ({tests.failed} failing"
                f"{', e.g. ' + detail if detail else ''}); fix them first"
            )
        capture = raw.get("capture", {})
        module_file = capture.get("module_file") or raw["tests"].get("module_file")
        if module_file and self.original_ws.resolve() not in Path(module_file).resolve().parents:
            raise SandboxError(
                f"the tests import {self.project.module_name} from {module_file}, not from the project copy; "
                "an installed copy shadows it (check --root)"
            )
        self.calls_recorded = capture.get("recorded", 0)
        self_check = raw.get("self_check", {})
        if "error" in self_check or "import_error" in self_check:
            problem = self_check.get("error") or self_check["import_error"]
            raise SandboxError(f"replaying the original's recorded calls failed: {problem.splitlines()[-1]}")
        unstable = self_check.get("mismatches", 0)
        calibration = raw.get("calibration") or {}
        if "error" in calibration:
            raise SandboxError(calibration["error"])
        self.loops = calibration.get("loops")
        self.workload_seconds = calibration.get("seconds")
        # Candidates may be slower than the original (readability) but not hang: a limit derived from the
        # original's test time keeps an infinite loop from costing the full --timeout.
        self.candidate_timeout = min(self.settings.test_timeout, max(30.0, 5 * tests.duration + 10))
        evaluation = Evaluation(
            tests=tests,
            behavior=BehaviorReport(
                calls_compared=max(0, self_check.get("calls_compared", 0) - unstable),
                mismatches=0,
                skipped=unstable + sum(capture.get("unreplayable", {}).values()),
            ),
            timing=None,
            metrics=self._metrics(code),
            hot_spots=_hot_spots(self_check.get("profile", [])),
            wall_seconds=time.perf_counter() - started,
            cpu_seconds=raw.get("cpu_seconds", 0.0),
        )
        evidence = tuple(
            TargetEvidence(
                target=target,
                calls=entry["calls"],
                recorded=entry["recorded"],
                usable=entry["usable"],
                lines=entry["lines"],
                covered=entry["covered"],
                missed_lines=tuple(entry["missed_lines"]),
            )
            for target, entry in raw.get("evidence", {}).items()
        )
        generated = _generated(raw.get("generated"))
        self.generated_calls = generated.calls if generated is not None and generated.error is None else 0
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
            self.calls_recorded,
            self.loops,
            self.workload_seconds,
            evidence=evidence,
            sufficiency=sufficiency,
            pinned=(*ALWAYS_PINNED, *raw.get("pinned", [])),
            not_pinned=tuple(raw.get("not_pinned", [])),
            generated=generated,
        )

    # ----------------------------------------------------------------- candidates

    def evaluate(self, candidate: Candidate) -> Evaluation:
        self.counter += 1
        workspace = self.run_dir / f"cand-{self.counter}"
        io_dir = self.run_dir / f"io-{self.counter}"
        started = time.perf_counter()
        try:
            copy_project(self.project.root, workspace)
            write_module(workspace, self.project.target, candidate.code, self.with_bom)
            io_dir.mkdir()
            request = self._request("candidate", workspace, io_dir, self.candidate_timeout)
            raw = self._run(request, workspace, io_dir, (self.original_ws, self.io_dir))
        finally:
            if not self.settings.keep_workspaces:
                shutil.rmtree(workspace, ignore_errors=True)
                shutil.rmtree(io_dir, ignore_errors=True)
        return self._evaluation(raw, candidate.code, time.perf_counter() - started)

    def _evaluation(self, raw: dict[str, Any], code: str, seconds: float) -> Evaluation:
        error = raw.get("runner_error")
        tests = _tests(raw["tests"]) if "tests" in raw else None
        behavior = None
        hot_spots: tuple[HotSpot, ...] = ()
        replay = raw.get("behavior")
        if replay is not None:
            if "error" in replay or "import_error" in replay:
                error = error or replay.get("error") or f"the module cannot be imported: {replay['import_error']}"
            generated = raw.get("generated_behavior") or {}
            if "error" in generated or "import_error" in generated:
                error = error or generated.get("error") or f"the module cannot be imported: {generated['import_error']}"
            behavior = BehaviorReport(
                calls_compared=replay.get("calls_compared", 0),
                mismatches=replay.get("mismatches", 0),
                examples=tuple(Mismatch(**example) for example in replay.get("examples", []))
                + tuple(Mismatch(**example, generated=True) for example in generated.get("examples", [])),
                generated_compared=generated.get("calls_compared", 0),
                generated_mismatches=generated.get("mismatches", 0),
            )
            hot_spots = _hot_spots(replay.get("profile", []))
        timing = None
        measured = raw.get("timing")
        if measured is not None:
            if "error" in measured:
                error = error or measured["error"]
            else:
                timing = Timing(
                    speedup=measured["speedup"],
                    ci_low=measured["ci"][0],
                    ci_high=measured["ci"][1],
                    original_seconds=measured["original_seconds"],
                    candidate_seconds=measured["candidate_seconds"],
                    pairs=measured["pairs"],
                    loops=measured["loops"],
                    min_speedup=measured["floor"],  # the floor the runner's early stop used too
                    basis=measured.get("basis", "steady"),
                    workload=self._workload_label(),
                    confirmation=_confirmation(measured.get("confirmation")),
                )
        return Evaluation(
            tests=tests,
            behavior=behavior,
            timing=timing,
            metrics=self._metrics(code),
            hot_spots=hot_spots,
            error=error,
            wall_seconds=seconds,
            cpu_seconds=raw.get("cpu_seconds", 0.0),
        )

    def _workload_label(self) -> str:
        bench = self.settings.bench
        return f"bench {bench.label}" if bench else "recorded calls"

    @staticmethod
    def _metrics(code: str) -> dict[str, float]:
        metrics = code_metrics(code)
        metrics["readability"] = round(readability_score(code), 2)
        return metrics


def _tests(raw: dict[str, Any]) -> TestReport:
    return TestReport(
        collected=raw.get("collected", 0),
        passed=raw.get("passed", 0),
        failed=raw.get("failed", 0),
        skipped=raw.get("skipped", 0),
        duration=raw.get("duration", 0.0),
        exit_code=raw.get("exit_code", -1),
        timed_out=raw.get("timed_out", False),
        failures=tuple(TestFailure(f["nodeid"], f["message"]) for f in raw.get("failures", [])),
        output_tail=raw.get("output_tail", ""),
    )


def _confirmation(raw: dict[str, Any] | None) -> tuple[float, float, float] | None:
    return None if raw is None else (raw["speedup"], raw["ci"][0], raw["ci"][1])


def _generated(raw: dict[str, Any] | None) -> GeneratedInputs | None:
    if raw is None:
        return None
    return GeneratedInputs(
        per_target=dict(raw.get("generated", {})),
        skipped=dict(raw.get("skipped", {})),
        unstable=raw.get("unstable", 0),
        error=raw.get("error"),
    )


def _hot_spots(raw: list[dict[str, Any]]) -> tuple[HotSpot, ...]:
    return tuple(HotSpot(s["function"], s["line"], round(s["share"], 4), s["calls"]) for s in raw)

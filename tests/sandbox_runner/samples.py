"""Fully populated protocol records, for round trips and for breaking on purpose."""

from __future__ import annotations

from coderefine_sandbox.protocol import (
    BaselineReport,
    BehaviorTolerances,
    Bench,
    Calibration,
    CallsHeader,
    CandidateReport,
    Capability,
    CaptureLimits,
    CaptureSpec,
    CaptureSummary,
    Confirmation,
    CoverageRow,
    CoverageTable,
    Estimate,
    GeneratedPaths,
    GeneratedReport,
    GenerateRequest,
    HarnessCost,
    HotSpot,
    MismatchExample,
    ProfilePass,
    ProfileRow,
    ProfileTable,
    PytestResults,
    RecordingSummary,
    ReplayReport,
    ReplayRequest,
    RunnerRequest,
    SelectionCounts,
    TargetEvidence,
    TargetLines,
    TestFailure,
    TestRun,
    TestSelection,
    TimingParameters,
    TimingReport,
    TimingSample,
    TimingTally,
    TimingWorkerRequest,
    UnstableCalls,
    WorkerFigures,
)


def request(**changes: object) -> RunnerRequest:
    fields: dict[str, object] = {
        "mode": "candidate",
        "python": "/usr/bin/python3",
        "workspace": "/run/cand-1",
        "original_workspace": "/run/original",
        "io_dir": "/run/io-1",
        "module_name": "pkg.mod",
        "import_root": "src",
        "targets": ("f", "C.g"),
        "tests": ("tests/test_mod.py",),
        "test_timeout": 30.0,
        "step_timeout": 60.0,
        "calls_path": "/run/io/calls.pkl",
        "unstable_path": "/run/io/unstable.json",
        "capture": CaptureLimits(max_calls_per_target=500, max_bytes=1024),
        "hash_seed": 0,
        "behavior": BehaviorTolerances(rel_tol=1e-6, abs_tol=0.0, unordered=("f",)),
        "timing": TimingParameters(pairs=6, values=3, warmups=1, min_time=0.1, loops=128, floor=0.05, budget=0.5),
        "bench": Bench(file="bench.py", functions=("bench_f",)),
        "replay": True,
        "generate": None,
        "generated": GeneratedPaths(count=0, calls_path="g.pkl", report_path="g.json", unstable_path="gu.json"),
        "original_capabilities": (capability(),),
        "allow": ("thread",),
        "selection": TestSelection(
            names=("mod", "f"),
            node_ids=("tests/test_mod.py::test_f",),
            data_names=("f",),
            import_names=("pkg",),
            budget_seconds=100.0,
        ),
        "timing_lock": None,
    }
    fields.update(changes)
    return RunnerRequest(**fields)  # type: ignore[arg-type]


def capability(kind: str = "file_read", key: str = "<workspace>/data.csv") -> Capability:
    return Capability(kind=kind, key=key, detail=f"open {key}", call="f(1, 2)")


def test_run() -> TestRun:
    return TestRun(
        timed_out=False,
        duration=1.25,
        exit_code=1,
        output_tail="1 failed, 2 passed",
        collected=3,
        passed=2,
        failed=1,
        skipped=0,
        failures=(TestFailure("tests/test_mod.py::test_f", "assert 1 == 2"),),
        session_error=None,
        module_file="/run/cand-1/src/pkg/mod.py",
        selected=SelectionCounts(5, 2, 3, files_importing=1, files_untraced=2, tests_untraced=4, files_unimportable=1),
    )


test_run.__test__ = False  # type: ignore[attr-defined]  # a sample, not a test


def replay_report() -> ReplayReport:
    return ReplayReport(
        calls_compared=40,
        mismatches=1,
        mismatch_indices=(7,),
        examples=(MismatchExample("f", "return", "(1, 2)", "3", "4", held_out=True),),
        seconds=0.02,
        profile=(HotSpot("f", 3, 0.123456, 40),),
        import_error=None,
        error=None,
        capabilities=(capability(), capability("network", "")),
        held_out_mismatches=1,
        peak_memory=((3, 4096), (7, 31_830_016)),
    )


def timing_report() -> TimingReport:
    steady = Estimate(speedup=1.5, ci=(1.3, 1.7), original_seconds=0.3, candidate_seconds=0.2)
    first = Estimate(speedup=1.4, ci=(1.1, 1.8), original_seconds=0.31, candidate_seconds=0.22)
    return TimingReport(
        speedup=1.5,
        ci=(1.3, 1.7),
        original_seconds=0.3,
        candidate_seconds=0.2,
        basis="steady",
        estimates={"steady": steady, "first": first},
        pairs=12,
        loops=128,
        floor=0.05,
        confirmation=Confirmation(
            speedup=1.45,
            ci=(1.2, 1.7),
            original_seconds=0.3,
            candidate_seconds=0.21,
            pairs=6,
            per_target={"f": Estimate(speedup=1.6, ci=(1.3, 1.9), original_seconds=0.2, candidate_seconds=0.125)},
            per_target_first={"f": first},
        ),
        per_target={"f": steady, "g": first},
        per_target_first={
            "f": first,
            "g": Estimate(speedup=1.02, ci=(0.95, 1.1), original_seconds=0.1, candidate_seconds=0.098),
        },
        per_target_basis={"f": "steady", "g": "first"},
        per_target_held_out={"f": first},
        per_target_shown={"f": steady},
        held_out=Estimate(speedup=1.3, ci=(1.1, 1.5), original_seconds=0.15, candidate_seconds=0.11),
        shown=Estimate(speedup=1.7, ci=(1.5, 1.9), original_seconds=0.15, candidate_seconds=0.09),
        charged=Estimate(speedup=1.45, ci=(1.25, 1.65), original_seconds=0.301, candidate_seconds=0.207),
        import_seconds=(0.001, 0.007),
        import_extra=(0.006, 0.005, 0.007),
    )


def baseline_report() -> BaselineReport:
    return BaselineReport(
        tests=test_run(),
        capture_error=None,
        capture=CaptureSummary(
            recorded=40,
            counts={"f": 41},
            unreplayable={"f": 1},
            truncated=False,
            patched=("f",),
            module_file="/run/original/src/pkg/mod.py",
            reached=("tests/test_mod.py::test_f",),
        ),
        pinned=("random: its state",),
        not_pinned=("os.urandom",),
        coverage_method="sys.monitoring",
        evidence={"f": TargetEvidence(calls=41, recorded=40, usable=39, lines=5, covered=4, missed_lines=(9,))},
        self_check=replay_report(),
        generated=GeneratedReport(generated={"f": 10}, skipped={"C.g": "a method"}, unstable=1, usable=9, error=None),
        calibration=Calibration(loops=128, seconds=0.3),
        calibration_error=None,
        runner_error=None,
        cpu_seconds=3.5,
    )


def candidate_report() -> CandidateReport:
    return CandidateReport(
        tests=test_run(),
        behavior=replay_report(),
        generated_behavior=ReplayReport.failed("replaying the recorded calls timed out after 60s"),
        timing=timing_report(),
        timing_error=None,
        runner_error=None,
        cpu_seconds=7.25,
        refused=(capability("network", ""),),
    )


# ----------------------------------------------------------------------------- what one step hands another


def recording_summary() -> RecordingSummary:
    return RecordingSummary(
        module_file="/run/cand-1/src/pkg/mod.py",
        counts={"f": 41, "C.g": 0},
        unreplayable={"f": 1, "C.g": 0},
        truncated=False,
        patched=("f", "C.g"),
        reached=("tests/test_mod.py::test_f",),
        coverage={"f": TargetLines(lines=(3, 4, 5), covered=(3, 5))},
        coverage_method="sys.monitoring",
        pinned=("random",),
        not_pinned=("os.urandom",),
    )


def step_records() -> list[object]:
    """One fully populated record of every step request and every file one step leaves for another."""
    tolerances = BehaviorTolerances(rel_tol=1e-6, abs_tol=0.0, unordered=("f",))
    key = ("pkg/mod.py", 3, "f")
    return [
        ReplayRequest(
            "/run/cand-1",
            "pkg.mod",
            "src",
            "/run/io/calls.pkl",
            "/run/io/unstable.json",
            "/run/io-1/r.json",
            tolerances,
            profile=True,
            original_workspace="/run/original",
            audit=True,
        ),
        ReplayRequest("/w", "mod", "", "/c.pkl", None, "/o.json", tolerances, False, None, audit=False),
        GenerateRequest("/run/original", "pkg.mod", "src", ("f", "C.g"), 20, "/run/io/g.pkl", "/run/io/g.json"),
        TimingWorkerRequest(
            "/run/cand-1",
            "pkg.mod",
            "src",
            "/run/io/calls.pkl",
            "/run/io/unstable.json",
            "/run/io/sample.json",
            None,
            3,
            1,
            0.1,
            None,
            "/run/io-1/t.json",
            "/run/io-1/t.figures.json",
        ),
        TimingWorkerRequest(
            "/w",
            "mod",
            "",
            "/c.pkl",
            None,
            "/s.json",
            Bench("bench.py", ("bench_f",)),
            3,
            1,
            0.1,
            128,
            "/t.json",
            "/f.json",
            wall_budget=0.1,
        ),
        WorkerFigures(TimingTally(0.25, 0.5, 12, 0.01, 0.0, 0.07), (), {"f": 0.06, "C.g": 0.01}, (0.03, 0.04)),
        WorkerFigures(TimingTally(0.0, 0.0, 0, 0.2, 0.0, -1.0), ("time.perf_counter",), {}, None),
        WorkerFigures(
            TimingTally(0.25, 0.5, 12, 0.01, 0.0, 0.07),
            (),
            {"f": 0.06},
            None,
            HarnessCost(per_call=6e-8, calls=12.0, held_out_calls=3.0, per_target_calls={"f": 12.0}),
        ),
        WorkerFigures(
            TimingTally(0.25, 0.5, 12, 0.01, 0.0, 0.07),
            (),
            {"f": 0.06, "g": 0.02},
            None,
            HarnessCost(6e-8, 12.0, 3.0, {"f": 8.0, "g": 4.0}, per_target_held_out_calls={"f": 3.0}),
            per_target_first={"f": 0.07, "g": 0.03},
            per_target_held_out={"f": 0.02},
        ),
        TimingSample(calls=((0, 1.0), (3, 2.5))),
        UnstableCalls(indices=(1, 4)),
        CaptureSpec(module="pkg.mod", targets=("f", "C.g"), max_calls=500, max_bytes=1024),
        PytestResults(
            3,
            1,
            {"t.py::a": "passed", "t.py::b": "failed"},
            {"t.py::b": "assert 1 == 2"},
            "/run/cand-1/src/pkg/mod.py",
            SelectionCounts(3, 1, 0, 0, 0, 0, 0),
        ),
        PytestResults(0, 5, {}, {}, None, None),
        CallsHeader(module="pkg.mod", recording=recording_summary()),
        CallsHeader(module="pkg.mod", recording=None),
        ProfilePass("profile", "/run/w", ("src",), "/run/io/profile.json", wanted=(), reaches={}),
        ProfilePass("coverage", "/run/w", (), "/run/io/coverage.json", (key,), {"t.py::a": (key,)}),
        ProfileTable(total=1.5, functions=(ProfileRow("pkg/mod.py", 3, "f", 0.5, 0.75, 12, 10, ("t.py::a",), 1),)),
        CoverageTable(method="sys.settrace", functions=(CoverageRow("pkg/mod.py", 3, "f", lines=4, covered=3),)),
    ]

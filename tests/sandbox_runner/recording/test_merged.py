"""A first run's trace workers' calls and outcomes, merged into the baseline's (recording/merged.py)."""

from __future__ import annotations

from pathlib import Path

from coderefine_sandbox.protocol import (
    CallsHeader,
    CaptureLimits,
    PytestResults,
    RecordedShare,
    RecordedTests,
    RecordingSummary,
    TargetLines,
    read_calls,
    write_calls,
    write_json,
)
from coderefine_sandbox.recording.merged import merge_calls, merged_run


def _share(
    folder: Path, name: str, records: list[dict], covered: tuple[int, ...], outcomes: dict[str, str]
) -> RecordedShare:
    workspace = folder / name / "project"
    summary = RecordingSummary(
        module_file=str(workspace / "pkg" / "utils.py"),
        counts={"split": len(records)},
        unreplayable={"split": 1},
        truncated=False,
        patched=("split",),
        reached=tuple(sorted({record["test"] for record in records})),
        coverage={"split": TargetLines((2, 3, 4), covered)},
        coverage_method="sys.settrace",
        pinned=("random",),
        not_pinned=(),
        reasons={"split": {"argument 1 is a generator": 1}},
        calls_per_test={record["test"]: 1 for record in records},
    )
    (folder / name).mkdir(parents=True)
    calls, results = folder / name / "calls.pkl", folder / name / "results.json"
    write_calls(str(calls), CallsHeader("pkg.utils", summary), records)
    messages = {node: "assert 1 == 2" for node, outcome in outcomes.items() if outcome == "failed"}
    write_json(str(results), PytestResults(len(outcomes), 0, outcomes, messages, summary.module_file, None))
    return RecordedShare(str(workspace), str(calls), str(results), 3.0 if name == "a" else 5.0)


def _record(test: str, number: int) -> dict:
    return {"target": "split", "args": bytes(10), "outcome": "return", "value": b"v", "test": test, "n": number}


def test_the_workers_calls_are_taken_in_turn_within_the_limits_and_their_summaries_added_up(tmp_path):
    first = _share(tmp_path, "a", [_record("t/test_a.py::one", n) for n in range(3)], (2,), {})
    second = _share(tmp_path, "b", [_record("t/test_b.py::two", n) for n in range(2)], (3,), {})
    out = tmp_path / "calls.pkl"
    merge_calls(RecordedTests((first, second), ()), str(out), "/base", CaptureLimits(4, 1 << 20))
    header, records = read_calls(str(out))
    # in turn: a0 b0 a1 b1, and the fourth call fills the per-target limit
    assert [(record["test"][2:8], record["n"]) for record in records] == [
        ("test_a", 0),
        ("test_b", 0),
        ("test_a", 1),
        ("test_b", 1),
    ]
    summary = header.recording
    assert summary is not None
    assert summary.counts == {"split": 5} and summary.unreplayable == {"split": 2}
    assert summary.reasons == {"split": {"argument 1 is a generator": 2}}
    assert summary.coverage["split"] == TargetLines((2, 3, 4), (2, 3))
    assert summary.reached == ("t/test_a.py::one", "t/test_b.py::two")
    assert summary.module_file == "/base/pkg/utils.py"  # the worker's copy, named in the baseline's workspace

    merge_calls(RecordedTests((first, second), ()), str(out), "/base", CaptureLimits(10, 25))  # 11 bytes a call
    header, records = read_calls(str(out))
    assert len(records) == 2 and header.recording is not None and header.recording.truncated


def test_only_the_reaching_tests_outcomes_make_the_baseline_run(tmp_path):
    outcomes_a = {"t/test_a.py::one": "passed", "t/test_a.py::elsewhere": "failed"}
    outcomes_b = {"t/test_b.py::two": "failed", "t/test_b.py::three": "skipped"}
    first = _share(tmp_path, "a", [], (), outcomes_a)
    second = _share(tmp_path, "b", [], (), outcomes_b)
    reaching = ("t/test_a.py::one", "t/test_b.py::two", "t/test_b.py::three")
    run = merged_run(RecordedTests((first, second), reaching), "/base")
    # a test reaching no target fails elsewhere: not the baseline's; a reaching test that fails is
    assert (run.collected, run.passed, run.failed, run.skipped) == (3, 1, 1, 1)
    assert [failure.nodeid for failure in run.failures] == ["t/test_b.py::two"]
    assert run.failures[0].message == "assert 1 == 2" and run.exit_code == 1 and run.stops_the_run
    assert run.duration == 5.0 and run.module_file == "/base/pkg/utils.py"

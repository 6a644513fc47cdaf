"""Which of a candidate's tests run first: those most likely to fail, so a rejection is cheap.

A candidate's test run stops at its first failure (the sandbox's recording/order.py). Its tests run in this
order: the tests that failed for earlier candidates of this run (most often, then most recently, first),
then the tests that made the most recorded calls to the targets (the target's own test module first among
equals), then the rest of that module, then everything else in pytest's order. An acceptance still runs
every test; only a rejection gets cheaper. The original's run is never fail-fast: it is the evidence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from coderefine.evaluation.protocol import FailFast, ProtocolError, PytestResults, TimedTests, read_json, write_json
from coderefine.records import TestReport


@dataclass
class FailureHistory:
    """The tests that failed for this run's candidates: node id -> (times failed, last candidate it failed)."""

    failed: dict[str, tuple[int, int]] = field(default_factory=dict)
    candidates: int = 0

    def note(self, tests: TestReport | None) -> None:
        """One more candidate's test run."""
        self.candidates += 1
        if tests is None:
            return
        for failure in tests.failures:
            if "::" not in failure.nodeid:  # a collection error or the session: no test to run first
                continue
            times, _ = self.failed.get(failure.nodeid, (0, 0))
            self.failed[failure.nodeid] = (times + 1, self.candidates)

    def most_likely(self) -> list[str]:
        return sorted(self.failed, key=lambda node: (-self.failed[node][0], -self.failed[node][1], node))


def own_test_files(module_name: str, node_ids: list[str]) -> tuple[str, ...]:
    """The test files among these tests' that are the module's own (`test_utils.py`, `utils_test.py`)."""
    stem = module_name.rpartition(".")[2]
    names = {f"test_{stem}.py", f"{stem}_test.py", f"test_{stem}s.py"}
    return tuple(sorted({node.split("::")[0] for node in node_ids if node.split("::")[0].rsplit("/")[-1] in names}))


def fail_fast_order(module_name: str, calls_per_test: dict[str, int], history: FailureHistory) -> FailFast:
    """The request's order for the next candidate."""
    failed_first = history.most_likely()
    files = own_test_files(module_name, [*calls_per_test, *failed_first])
    own = set(files)
    by_calls = sorted(
        (node for node in calls_per_test if node not in history.failed),
        key=lambda node: (-calls_per_test[node], node.split("::")[0] not in own),
    )
    return FailFast(first=(*failed_first, *by_calls), files=files)


# The files of a baseline's io folder holding the original's pytest results: its own run's, or the first trace's
# workers' (copied there by the evaluator), each with the seconds its tests took.
RESULTS_FILES = ("pytest-results.json", "recorded-*/pytest-results.json")


def write_test_seconds(io_dir: Path) -> Path | None:
    """The seconds each test took in the original's run, in one TimedTests file beside them that candidates'
    split test runs deal their files by (the sandbox's recording/split.py); None when no test was timed."""
    seconds: dict[str, float] = {}
    for path in sorted({found for pattern in RESULTS_FILES for found in io_dir.glob(pattern)}):
        try:
            results = read_json(PytestResults, str(path))
        except (ProtocolError, OSError, ValueError):
            continue  # a run that wrote no complete results times nothing
        for node, took in results.durations.items():
            seconds[node] = max(took, seconds.get(node, 0.0))
    if not seconds:
        return None
    out = io_dir / "test-seconds.json"
    write_json(str(out), TimedTests(seconds))
    return out

"""The protocol of the recording stage: the tests' run (its selection and its result) and what recording the
tests' calls to the targets gave."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CaptureLimits:
    """How much of the tests' calls to the targets the recording keeps."""

    max_calls_per_target: int
    max_bytes: int


@dataclass(frozen=True)
class TestSelection:
    """Which of the tests pytest finds a test run keeps (recording/pytest_plugin.py).

    `names`: keep only the test files whose text names one of these words (the target module, the targets
    and their callers; for data files a conftest collects, only the functions): the heuristic that bounds the
    first, traced run. `node_ids`: keep only these tests
    (found by that run to call a target). Empty: no filter of that kind."""

    __test__ = False  # not a pytest test class

    names: tuple[str, ...]
    node_ids: tuple[str, ...]
    data_names: tuple[str, ...]  # the words a data file (not Python) must name: the functions, not the module


@dataclass(frozen=True)
class TestFailure:
    __test__ = False  # not a pytest test class

    nodeid: str
    message: str


@dataclass(frozen=True)
class SelectionCounts:
    """What a `TestSelection` kept: test files pytest found and kept, tests collected and deselected."""

    files_seen: int
    files_kept: int
    deselected: int


@dataclass(frozen=True)
class TestRun:
    """The project's tests, run by pytest in the workspace."""

    __test__ = False

    timed_out: bool
    duration: float
    exit_code: int
    output_tail: str
    collected: int
    passed: int
    failed: int
    skipped: int
    failures: tuple[TestFailure, ...]
    session_error: str | None  # pytest ended without a result (could not start, or was killed)
    module_file: str | None  # where the tests imported the module from
    selected: SelectionCounts | None  # what a TestSelection kept (None: no selection was asked for)

    @property
    def stops_the_run(self) -> bool:
        """Nothing after the tests means anything when they did not all pass (or none ran)."""
        return self.timed_out or bool(self.failed) or not self.passed


@dataclass(frozen=True)
class CaptureSummary:
    """What recording the tests' calls gave."""

    recorded: int
    counts: dict[str, int]  # outermost calls per target, recorded or not
    unreplayable: dict[str, int]
    truncated: bool
    patched: tuple[str, ...]
    module_file: str | None
    reached: tuple[str, ...]  # node ids of the tests that called a target (the selection for candidates)


@dataclass(frozen=True)
class TargetEvidence:
    """Per target: outermost calls, calls recorded, calls usable (replayable and deterministic), lines."""

    calls: int
    recorded: int
    usable: int
    lines: int
    covered: int
    missed_lines: tuple[int, ...]

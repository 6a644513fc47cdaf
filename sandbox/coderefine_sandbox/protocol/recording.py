"""The protocol of the recording stage: the tests' run (its selection and its result), what recording the
tests' calls to the targets gave, and the files the runner and its pytest plugin hand each other: what to
record, pytest's results, and the calls file (the recorded calls, which replay and timing read).
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from typing import Any

from coderefine_sandbox.protocol.codec import from_json, to_json


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
    (found by that run to call a target). Empty: no filter of that kind. `import_names`: also keep the test
    files importing one of these packages (the target's top-level package), which may reach a target through
    any chain, while `budget_seconds` from the session's start has not passed: they are collected while it
    lasts and run after the others, until it is spent."""

    __test__ = False  # not a pytest test class

    names: tuple[str, ...]
    node_ids: tuple[str, ...]
    data_names: tuple[str, ...]  # the words a data file (not Python) must name: the functions, not the module
    import_names: tuple[str, ...]
    budget_seconds: float


@dataclass(frozen=True)
class TimedTests:
    """Seconds each test took in the original's run (node id -> seconds): RunnerRequest.test_seconds."""

    seconds: dict[str, float]


@dataclass(frozen=True)
class FailFast:
    """A candidate's test run that stops at its first failure, running the tests most likely to fail first.

    `first`: node ids to run before all others, in this order (tests that failed for earlier candidates, then
    those that made the most calls to the targets); then the tests of `files` (the target's own test module);
    then the rest in pytest's order. A rejection then costs the tests up to the first failure; an acceptance
    still runs every test. The original's run is never fail-fast: its run is the evidence."""

    first: tuple[str, ...]
    files: tuple[str, ...]  # test files (relative to the rootdir, with "/") whose tests come next


@dataclass(frozen=True)
class TestFailure:
    __test__ = False  # not a pytest test class

    nodeid: str
    message: str


@dataclass(frozen=True)
class SelectionCounts:
    """What a `TestSelection` kept: test files pytest found and kept, tests collected and deselected; of the kept
    files, those kept only for importing the package, and what the time budget left untraced (test files not
    collected, collected tests not run), and those pytest could not import (left out, not failed)."""

    files_seen: int
    files_kept: int
    deselected: int
    files_importing: int
    files_untraced: int
    tests_untraced: int
    files_unimportable: int


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
    # a fail-fast run (FailFast) that stopped at a failure with tests left unrun: `collected` were selected,
    # passed + failed + skipped ran
    stopped_early: bool = False

    @classmethod
    def from_outcomes(
        cls,
        outcomes: dict[str, str],
        messages: dict[str, str],
        *,
        duration: float,
        exit_code: int,
        output_tail: str,
        collected: int,
        module_file: str | None,
        selected: SelectionCounts | None,
        stopped_early: bool = False,
    ) -> TestRun:
        """A finished run from pytest's outcome per node id ("passed", "failed", "skipped") and the failures'
        messages: every way a run is summed up (one process, split processes, a first run's trace workers)
        counts them alike."""
        failures = tuple(TestFailure(node, messages.get(node, "")) for node, o in outcomes.items() if o == "failed")
        return cls(
            timed_out=False,
            duration=duration,
            exit_code=exit_code,
            output_tail=output_tail,
            collected=collected,
            passed=sum(1 for o in outcomes.values() if o == "passed"),
            failed=len(failures),
            skipped=sum(1 for o in outcomes.values() if o == "skipped"),
            failures=failures,
            session_error=None,
            module_file=module_file,
            selected=selected,
            stopped_early=stopped_early,
        )

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
    calls_per_test: dict[str, int] = field(default_factory=dict)  # node id -> outermost calls to the targets


@dataclass(frozen=True)
class TargetEvidence:
    """Per target: outermost calls, calls recorded, calls usable (replayable and deterministic), lines."""

    calls: int
    recorded: int
    usable: int
    lines: int
    covered: int
    missed_lines: tuple[int, ...]
    # why the calls that are not usable are not: reason -> calls (not recordable, not replayable, not deterministic)
    unusable: dict[str, int] = field(default_factory=dict)


# ----------------------------------------------------------------------------- between the runner and its plugin


@dataclass(frozen=True)
class CaptureSpec:
    """What the pytest plugin records in the original's test run (CODEREFINE_CAPTURE, JSON): the outermost calls
    to these targets of this module, at most `max_calls` per target and `max_bytes` in all."""

    module: str
    targets: tuple[str, ...]
    max_calls: int
    max_bytes: int


@dataclass(frozen=True)
class PytestResults:
    """What the runner's pytest plugin writes when a session ends (CODEREFINE_RESULTS), read back by the tests
    step and the profile mode."""

    collected: int
    exit_code: int
    outcomes: dict[str, str]  # node id -> passed, failed or skipped
    messages: dict[str, str]  # node id -> a failure's short message
    module_file: str | None  # where the module under judgement (CODEREFINE_MODULE) was imported from
    selected: SelectionCounts | None  # what a TestSelection kept (None: no selection was asked for)
    stopped_early: bool = False  # a FailFast run stopped at a failure before running every collected test
    # node id -> seconds its setup, call and teardown took: what splits a later run's tests evenly (split.py)
    durations: dict[str, float] = field(default_factory=dict)


# ----------------------------------------------------------------------------- the calls file


@dataclass(frozen=True)
class TargetLines:
    """A target's statement lines and those of them the tests ran (sorted line numbers)."""

    lines: tuple[int, ...]
    covered: tuple[int, ...]


@dataclass(frozen=True)
class RecordingSummary:
    """What recording the tests' calls gave besides the calls themselves (recording/capture.py)."""

    module_file: str | None  # where the tests imported the module from
    counts: dict[str, int]  # outermost calls per target, recorded or not
    unreplayable: dict[str, int]  # per target: calls whose arguments or outcome could not be kept
    truncated: bool  # the recording reached its limit in bytes
    patched: tuple[str, ...]  # the targets the recorder could wrap
    reached: tuple[str, ...]  # node ids of the tests that called a target (the selection for candidates)
    coverage: dict[str, TargetLines]
    coverage_method: str  # sys.monitoring, sys.settrace or none
    pinned: tuple[str, ...]  # what is made an input of each call (pinning.py) ...
    not_pinned: tuple[str, ...]  # ... and what cannot be
    # per target: why calls were not recorded or not replayable -> how many ("argument 1 is a socket ...")
    reasons: dict[str, dict[str, int]] = field(default_factory=dict)
    calls_per_test: dict[str, int] = field(default_factory=dict)  # node id -> outermost calls to the targets


@dataclass(frozen=True)
class CallsHeader:
    """The first line of a calls file: the module the calls are of and, for the tests' recording, what the
    recording gave (None: inputs generated from type hints)."""

    module: str
    recording: RecordingSummary | None
    # The working folder the calls were recorded in (the workspace the tests or the original ran in): replayed
    # elsewhere, the calls are read as if recorded there (relocation.py). A record's own "folder" (calls merged
    # from workers' copies) comes first; None: the calls name no folder.
    folder: str | None = None


# The calls themselves are pickled: each holds the user's arguments and outcome, themselves pickled (the
# replay unpickles them against the module version it judges), and the random states it saw.
CALLS_PICKLE = 4


def write_calls(path: str, header: CallsHeader, records: list[dict[str, Any]]) -> None:
    """A calls file: the header as one line of JSON (`head -1` shows it), then the records, pickled."""
    with open(path, "wb") as fh:
        fh.write(to_json(header).encode("utf-8") + b"\n")  # JSON text never holds a raw newline
        pickle.dump(records, fh, protocol=CALLS_PICKLE)


def read_calls(path: str) -> tuple[CallsHeader, list[dict[str, Any]]]:
    """A calls file's header, decoded strictly, and its records."""
    with open(path, "rb") as fh:
        # Undecodable bytes (a file of another format) make it "not JSON": a ProtocolError like any other.
        header = from_json(CallsHeader, fh.readline().decode("utf-8", "replace"))
        return header, pickle.load(fh)

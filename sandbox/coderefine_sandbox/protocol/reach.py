"""The protocol of the runner's `reach` mode (`coderefine reach`, and optimize's first run): which of the
project's functions each test executes. A mode of its own, like `profile`: it works on a whole project (or
one worker's share of its test files), not on one module's targets. The request, what the runner hands the
pytest plugin in the test process, what that plugin writes back, and the mode's report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from coderefine_sandbox.protocol.recording import CaptureSpec, TestRun


@dataclass(frozen=True)
class ReachRequest:
    """Trace one share of the project's tests: every project function each test executes."""

    mode: Literal["reach"]
    workspace: str  # the project copy
    io_dir: str
    import_roots: tuple[str, ...]  # relative to the workspace: put on sys.path (the project's own code)
    test_files: tuple[str, ...]  # relative, with "/": trace every test of these files
    node_ids: tuple[str, ...]  # and these single tests (of other files)
    universe: tuple[str, ...]  # every test file the host listed; those in no share of this request are skipped
    others: bool  # whether tests outside the universe (data files a conftest collects) are traced here
    test_patterns: tuple[str, ...]  # pytest's python_files: modules the tracer leaves to pytest
    # Seconds from the start after which no more test files are collected nor tests run (0: none): a bounded
    # first run traces what fits, nearest first (`test_files` in that order), and says what it left out.
    deadline: float
    timeout: float
    hash_seed: int
    # A first run's trace also records the target's calls in the same pytest run (the shared plugin's recorder),
    # so the baseline takes them instead of running the reaching tests again (None: tracing only)
    record: CaptureSpec | None = None


@dataclass(frozen=True)
class ReachSpec:
    """What the runner hands the reach plugin (recording/reach_plugin.py) through CODEREFINE_REACH.
    `tracer`: "" for the interpreter's cheapest ("sys.monitoring" on 3.12+, else "instrument"), or "settrace"."""

    workspace: str
    test_files: tuple[str, ...]
    node_ids: tuple[str, ...]
    universe: tuple[str, ...]
    others: bool
    test_patterns: tuple[str, ...]
    tracer: str
    deadline: float
    out: str  # where the plugin writes its ReachTable


@dataclass(frozen=True)
class ReachTable:
    """Each traced test and the project functions it executed, directly or through any chain.

    `functions` are "FILE::QUALNAME" (FILE relative to the workspace, with "/"; QUALNAME the code object's
    qualified name, e.g. "Lexer.get_tokens" or "split.<locals>.<lambda>"); a test's entry holds indices
    into them. `tracer` says how they were seen: "sys.monitoring" (3.12+), "instrument" (before) or "settrace"."""

    functions: tuple[str, ...]
    tests: dict[str, tuple[int, ...]]
    outcomes: dict[str, str]  # passed, failed or skipped: a failing test's reach is kept all the same
    tracer: str
    untraced_files: tuple[str, ...] = ()  # test files the deadline left out, wholly or in part
    tests_untraced: int = 0  # collected tests the deadline left unrun


@dataclass
class ReachReport:
    tests: TestRun | None = None
    table: ReachTable | None = None
    runner_error: str | None = None
    cpu_seconds: float = 0.0


@dataclass(frozen=True)
class RecordedShare:
    """One worker of a first run's trace that also recorded the target's calls (ReachRequest.record)."""

    workspace: str  # that worker's copy of the project: its module file is named from there
    calls_path: str  # its calls file (recording/capture.py)
    results_path: str  # its tests' outcomes (a PytestResults)
    seconds: float  # its pytest run's wall time
    # files its tests added, changed or removed in its copy of the project (the host then gives candidates full
    # copies, as when the baseline's own run writes into the tree)
    tree_writes: tuple[str, ...] = ()


@dataclass(frozen=True)
class RecordedTests:
    """The original's tests already ran in the first trace's workers, traced and recorded: the baseline merges
    their calls and takes the outcomes of `tests` (those reaching the targets) instead of running them again."""

    shares: tuple[RecordedShare, ...]
    tests: tuple[str, ...]  # node ids of the tests reaching the targets: the baseline's tests

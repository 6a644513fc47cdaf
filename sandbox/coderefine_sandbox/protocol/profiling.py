"""The protocol of the runner's `profile` mode (`coderefine scan`): a mode of its own with its own request, since
it works on a whole project, not on one module's targets; and the request of each of its two passes, for the
collector in the process that runs the tests or the workload command, and what that collector writes back."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from coderefine_sandbox.protocol.recording import TestRun


@dataclass(frozen=True)
class ProfileRequest:
    """Profile the project's tests (or a workload command) and measure coverage of the hot functions."""

    mode: Literal["profile"]
    workspace: str  # the project copy
    io_dir: str
    import_roots: tuple[str, ...]  # relative to the workspace: put on sys.path (the project's own code)
    tests: tuple[str, ...]  # pytest arguments; () lets pytest use the project's config
    command: tuple[str, ...] | None  # a workload instead of the tests: python's argv after the interpreter
    paths: tuple[str, ...]  # relative to the workspace: only functions defined under these are reported
    min_calls: int  # functions with fewer calls get no coverage pass (they cannot be judged anyway)
    timeout: float  # per step (the profiled run, the coverage run)
    hash_seed: int
    max_calls: int = 500  # optimize records this many calls per target: the coverage pass follows as many


@dataclass(frozen=True)
class ProfiledFunction:
    """One function of the project as the profiler saw it (cProfile's key: file, first line, code name)."""

    file: str  # relative to the workspace
    line: int  # the code object's first line (a decorated function's first decorator)
    name: str
    own_seconds: float  # exclusive time: in the function's own code, not in what it calls
    cumulative_seconds: float
    calls: int  # all calls, recursive ones included
    primitive_calls: int  # calls not made from within itself
    test_count: int  # the tests during which it ran (0 for a workload command) ...
    tests: tuple[str, ...]  # ... and the first of them by name (at most 20)
    lines: int  # its statements (coverage pass; 0: not measured)
    covered: int
    # Estimates from the coverage pass under the rules of optimize's gate (None: not measured). `starts`: calls
    # that started the function (cProfile counts every resumption of a generator or coroutine as a call);
    # `usable_calls`: of those, the ones whose arguments optimize could keep to replay, scaled from the calls
    # looked at; `unusable`: why the others could not, per reason, over the calls looked at.
    starts: int | None = None
    usable_calls: int | None = None
    unusable: dict[str, int] = field(default_factory=dict)


@dataclass
class ProfileReport:
    tests: TestRun | None = None  # the profiled test run (None for a workload command)
    command_exit: int | None = None  # the workload command's exit code
    command_output: str = ""
    total_seconds: float = 0.0  # every function's own time added up (the profiled run's total)
    functions: tuple[ProfiledFunction, ...] = ()
    coverage_method: str = "none"
    coverage_error: str | None = None
    runner_error: str | None = None
    cpu_seconds: float = 0.0


# ----------------------------------------------------------------------------- a pass: its request, its figures

FunctionKey = tuple[str, int, str]  # cProfile's key of a function: file (relative to the workspace), first line, name


@dataclass(frozen=True)
class ProfilePass:
    """One pass over the tests or the workload command, for the collector in that process (profiling/collect.py),
    in the file CODEREFINE_PROFILE names: profile every project function, or trace the `wanted` ones' lines."""

    kind: Literal["profile", "coverage"]
    workspace: str
    paths: tuple[str, ...]  # relative to the workspace: only functions defined under these count
    out: str  # where the collector's figures go
    wanted: tuple[FunctionKey, ...]  # coverage: the functions to trace
    reaches: dict[str, tuple[FunctionKey, ...]]  # coverage: per test, the wanted functions it ran
    max_calls: int = 500  # coverage: each function's lines are traced over this many of its calls, as optimize does


@dataclass(frozen=True)
class ProfileRow:
    """One project function over the profiled pass: cProfile's figures, summed over the tests it ran in."""

    file: str
    line: int
    name: str
    own: float
    cumulative: float
    calls: int
    primitive: int
    tests: tuple[str, ...]  # every test it ran in, in order
    test_count: int


@dataclass(frozen=True)
class ProfileTable:
    """What the profiled pass writes: every project function's row, and every function's own time added up."""

    total: float
    functions: tuple[ProfileRow, ...]


@dataclass(frozen=True)
class CoverageRow:
    """A wanted function's statement lines and how many of them the coverage pass ran."""

    file: str
    line: int
    name: str
    lines: int
    covered: int
    # Call events seen while traced: those that started the function and those that resumed it (a generator
    # or coroutine), and, over the starts looked at (at most max_calls), whose arguments could be kept.
    starts: int = 0
    resumes: int = 0
    probed: int = 0
    usable: int = 0
    unusable: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class CoverageTable:
    """What the coverage pass writes: how the lines were traced, and each wanted function's lines."""

    method: str
    functions: tuple[CoverageRow, ...]

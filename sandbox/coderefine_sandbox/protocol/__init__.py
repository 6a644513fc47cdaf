"""The typed contract between coderefine (the host) and its sandbox runner, every request and every report;
and inside the sandbox, the request of each step the runner starts as a process of its own and each file one
step leaves for another (the calls file, the timing worker's figures, pytest's results, ...). Two kinds of
file keep formats of their own: a program's recorded runs (programs/runs.py, typed there: they hold bytes)
and what the programs' start-up hook writes from inside the user's processes, which import nothing of this
package.

Both sides import this very package (the host loads it from the folder the sandbox runs it from, see
`coderefine.resources`), so it imports only the standard library. Its modules follow the runner's stages:
`modes` (the runner's request and the report of each mode), `recording`, `reach`, `behaviour`, `timing`, `programs`
and `profiling`; `codec` turns any of their dataclasses into JSON and back, generically over its fields and
type hints. Decoding is strict: a field missing, a field unknown, or a value of the wrong type raises
`ProtocolError` naming the type and the field, so a host and a runner that disagree fail loudly instead
of reading a default.

Every public name is re-exported here: a side that speaks the protocol imports `coderefine_sandbox.protocol`
and nothing else. A name's module is imported when the name is first asked for (PEP 562): each of the sandbox's
processes needs a few of these modules, and defining all their dataclasses was 45-75 ms of every recording,
replay and timing process's start-up on this machine.

No field has a default that stands for a user's setting: those come from the host (its settings specs), and the
request carries them all.
"""

from __future__ import annotations

import importlib
from typing import Any

# Each public name and the module that defines it.
_HOMES: dict[str, tuple[str, ...]] = {
    "behaviour": (
        "BehaviorTolerances",
        "BoundaryPaths",
        "BoundaryReport",
        "BoundaryRequest",
        "Capability",
        "GeneratedPaths",
        "GeneratedReport",
        "GenerateRequest",
        "HotSpot",
        "MismatchExample",
        "ReplayReport",
        "ReplayRequest",
        "UnstableCalls",
    ),
    "codec": (
        "ProtocolError",
        "from_dict",
        "from_json",
        "read_json",
        "to_dict",
        "to_json",
        "write_json",
    ),
    "modes": (
        "REPORTS",
        "BaselineReport",
        "CandidateReport",
        "Mode",
        "RunnerReport",
        "RunnerRequest",
    ),
    "profiling": (
        "CoverageRow",
        "CoverageTable",
        "FunctionKey",
        "ProfiledFunction",
        "ProfilePass",
        "ProfileReport",
        "ProfileRequest",
        "ProfileRow",
        "ProfileTable",
    ),
    "programs": (
        "ProgramBaseline",
        "ProgramSpec",
    ),
    "reach": (
        "ReachReport",
        "ReachRequest",
        "ReachSpec",
        "ReachTable",
        "RecordedShare",
        "RecordedTests",
    ),
    "recording": (
        "CALLS_PICKLE",
        "CallsHeader",
        "CaptureLimits",
        "CaptureSpec",
        "CaptureSummary",
        "FailFast",
        "PytestResults",
        "RecordingSummary",
        "SelectionCounts",
        "TargetEvidence",
        "TargetLines",
        "TestFailure",
        "TestRun",
        "TestSelection",
        "TimedTests",
        "read_calls",
        "write_calls",
    ),
    "timing": (
        "Bench",
        "Calibration",
        "Confirmation",
        "Estimate",
        "HarnessCost",
        "TimingParameters",
        "TimingReport",
        "TimingSample",
        "TimingTally",
        "TimingWorkerRequest",
        "WorkerFigures",
    ),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = sorted(_HOME_OF)


def __getattr__(name: str) -> Any:
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})

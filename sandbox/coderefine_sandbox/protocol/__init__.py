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
and nothing else. No field has a default that stands for a user's setting: those come from the host (its
settings specs), and the request carries them all.
"""

from __future__ import annotations

from coderefine_sandbox.protocol.behaviour import (
    BehaviorTolerances,
    BoundaryPaths,
    BoundaryReport,
    BoundaryRequest,
    Capability,
    GeneratedPaths,
    GeneratedReport,
    GenerateRequest,
    HotSpot,
    MismatchExample,
    ReplayReport,
    ReplayRequest,
    UnstableCalls,
)
from coderefine_sandbox.protocol.codec import (
    ProtocolError,
    from_dict,
    from_json,
    read_json,
    to_dict,
    to_json,
    write_json,
)
from coderefine_sandbox.protocol.modes import (
    REPORTS,
    BaselineReport,
    CandidateReport,
    Mode,
    RunnerReport,
    RunnerRequest,
)
from coderefine_sandbox.protocol.profiling import (
    CoverageRow,
    CoverageTable,
    FunctionKey,
    ProfiledFunction,
    ProfilePass,
    ProfileReport,
    ProfileRequest,
    ProfileRow,
    ProfileTable,
)
from coderefine_sandbox.protocol.programs import (
    ProgramBaseline,
    ProgramSpec,
)
from coderefine_sandbox.protocol.reach import (
    ReachReport,
    ReachRequest,
    ReachSpec,
    ReachTable,
    RecordedShare,
    RecordedTests,
)
from coderefine_sandbox.protocol.recording import (
    CALLS_PICKLE,
    CallsHeader,
    CaptureLimits,
    CaptureSpec,
    CaptureSummary,
    FailFast,
    PytestResults,
    RecordingSummary,
    SelectionCounts,
    TargetEvidence,
    TargetLines,
    TestFailure,
    TestRun,
    TestSelection,
    TimedTests,
    read_calls,
    write_calls,
)
from coderefine_sandbox.protocol.timing import (
    Bench,
    Calibration,
    Confirmation,
    Estimate,
    HarnessCost,
    TimingParameters,
    TimingReport,
    TimingSample,
    TimingTally,
    TimingWorkerRequest,
    WorkerFigures,
)

__all__ = [
    "CALLS_PICKLE",
    "REPORTS",
    "BaselineReport",
    "BehaviorTolerances",
    "Bench",
    "BoundaryPaths",
    "BoundaryReport",
    "BoundaryRequest",
    "Calibration",
    "CallsHeader",
    "CandidateReport",
    "Capability",
    "CaptureLimits",
    "CaptureSpec",
    "CaptureSummary",
    "Confirmation",
    "CoverageRow",
    "CoverageTable",
    "Estimate",
    "FailFast",
    "FunctionKey",
    "GenerateRequest",
    "GeneratedPaths",
    "GeneratedReport",
    "HarnessCost",
    "HotSpot",
    "MismatchExample",
    "Mode",
    "ProfilePass",
    "ProfileReport",
    "ProfileRequest",
    "ProfileRow",
    "ProfileTable",
    "ProfiledFunction",
    "ProgramBaseline",
    "ProgramSpec",
    "ProtocolError",
    "PytestResults",
    "ReachReport",
    "ReachRequest",
    "ReachSpec",
    "ReachTable",
    "RecordedShare",
    "RecordedTests",
    "RecordingSummary",
    "ReplayReport",
    "ReplayRequest",
    "RunnerReport",
    "RunnerRequest",
    "SelectionCounts",
    "TargetEvidence",
    "TargetLines",
    "TestFailure",
    "TestRun",
    "TestSelection",
    "TimedTests",
    "TimingParameters",
    "TimingReport",
    "TimingSample",
    "TimingTally",
    "TimingWorkerRequest",
    "UnstableCalls",
    "WorkerFigures",
    "from_dict",
    "from_json",
    "read_calls",
    "read_json",
    "to_dict",
    "to_json",
    "write_calls",
    "write_json",
]

"""The typed contract between coderefine (the host) and its sandbox runner: every request and every report,
and every file one of the runner's steps hands to another process.

Both sides import this very package (the host loads it from the folder the sandbox runs it from, see
`coderefine.resources`), so it imports only the standard library. Its modules follow the runner's stages:
`modes` (the runner's request and the report of each mode), `recording`, `behaviour`, `timing`, `programs`
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
    Capability,
    GeneratedPaths,
    GeneratedReport,
    GenerateRequest,
    HotSpot,
    MismatchExample,
    ReplayReport,
    ReplayRequest,
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
    FunctionKey,
    ProfiledFunction,
    ProfilePass,
    ProfileReport,
    ProfileRequest,
)
from coderefine_sandbox.protocol.programs import ProgramBaseline, ProgramSpec
from coderefine_sandbox.protocol.recording import (
    CaptureLimits,
    CaptureSummary,
    SelectionCounts,
    TargetEvidence,
    TestFailure,
    TestRun,
    TestSelection,
)
from coderefine_sandbox.protocol.timing import (
    Bench,
    Calibration,
    Confirmation,
    Estimate,
    TimingParameters,
    TimingReport,
    TimingWorkerRequest,
)

__all__ = [
    "REPORTS",
    "BaselineReport",
    "BehaviorTolerances",
    "Bench",
    "Calibration",
    "CandidateReport",
    "Capability",
    "CaptureLimits",
    "CaptureSummary",
    "Confirmation",
    "Estimate",
    "FunctionKey",
    "GenerateRequest",
    "GeneratedPaths",
    "GeneratedReport",
    "HotSpot",
    "MismatchExample",
    "Mode",
    "ProfilePass",
    "ProfileReport",
    "ProfileRequest",
    "ProfiledFunction",
    "ProgramBaseline",
    "ProgramSpec",
    "ProtocolError",
    "ReplayReport",
    "ReplayRequest",
    "RunnerReport",
    "RunnerRequest",
    "SelectionCounts",
    "TargetEvidence",
    "TestFailure",
    "TestRun",
    "TestSelection",
    "TimingParameters",
    "TimingReport",
    "TimingWorkerRequest",
    "from_dict",
    "from_json",
    "read_json",
    "to_dict",
    "to_json",
    "write_json",
]

"""The records that flow one way through a run: Candidate -> Evaluation -> Iteration -> Result.

They are plain typed dataclasses so that every part (loop, providers, reports) agrees on one shape and
the JSON report is a direct projection of them.
"""

from __future__ import annotations

from coderefine.records.baseline import (
    INSUFFICIENT_TESTS,
    MISSED_PROGRAM_RUNS,
    PROGRAM_TARGET,
    Baseline,
    BaselineFacts,
    BoundaryInputs,
    GeneratedInputs,
    ProgramFacts,
    Sufficiency,
    TargetEvidence,
)
from coderefine.records.evaluation import (
    BehaviorReport,
    Candidate,
    Evaluation,
    HotSpot,
    MemoryUse,
    Mismatch,
    Refusal,
    TestFailure,
    TestReport,
    TestsSelected,
    Timing,
)
from coderefine.records.result import FunctionVerdict, Iteration, Result, Role, Round, RunError, Usage, Verdict

__all__ = [
    "INSUFFICIENT_TESTS",
    "MISSED_PROGRAM_RUNS",
    "PROGRAM_TARGET",
    "Baseline",
    "BaselineFacts",
    "BehaviorReport",
    "BoundaryInputs",
    "Candidate",
    "Evaluation",
    "FunctionVerdict",
    "GeneratedInputs",
    "HotSpot",
    "Iteration",
    "MemoryUse",
    "Mismatch",
    "ProgramFacts",
    "Refusal",
    "Result",
    "Role",
    "Round",
    "RunError",
    "Sufficiency",
    "TargetEvidence",
    "TestFailure",
    "TestReport",
    "TestsSelected",
    "Timing",
    "Usage",
    "Verdict",
]

"""The protocol of a target run as a program (the runner's programs/): how its runs are recorded, replayed
and timed, and what the baseline established."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from coderefine_sandbox.protocol.behaviour import Capability


@dataclass(frozen=True)
class ProgramSpec:
    """A target its tests run as a program (stdin -> stdout): how its runs are recorded, replayed, timed.

    Set for the baseline of every file that can run as a program (the runner then records the runs the
    tests make, and uses them when the tests made no calls it could record); set for candidates only when
    the baseline judged by runs.
    """

    file: str  # the target file, relative to the workspace
    runs_path: str  # the baseline's recorded runs with the original's outcomes (JSON)
    output: Literal["exact", "whitespace", "numeric"]  # how stdout (and stderr, when compared) must match
    compare_stderr: bool
    max_runs: int  # runs kept (the first ones)
    max_bytes: int  # stdin and files read, per run
    timing_inputs: tuple[str, ...]  # stdin files (relative to the workspace) to time on instead of the runs
    repeats: int  # processes per input and version in one timing pair (the fastest counts)


@dataclass(frozen=True)
class ProgramBaseline:
    """What recording the program runs the tests made gave, and the original's timing on them."""

    runs: int  # runs of the target the tests made (recorded)
    replayable: int  # of those, with everything needed to run them again
    usable: int  # of those, repeating their outcome on the original: what candidates are judged on
    problems: dict[str, int]  # why runs are not replayable or not usable -> how many
    startup_seconds: float | None  # interpreter start-up (an empty program, same flags and hooks)
    run_seconds: float | None  # the original's whole processes over one timing pass
    timing_runs: int  # processes in one timing pass
    timing_inputs: int  # of those, stdin files the user gave (--timing-inputs)
    error: str | None
    capabilities: tuple[Capability, ...] = ()  # the powers the original used in its replayed runs (audit.py)

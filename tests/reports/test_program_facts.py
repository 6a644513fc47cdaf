"""What the feedback step is told about a program judged by its recorded runs."""

from __future__ import annotations

from dataclasses import replace

from coderefine.records import PROGRAM_TARGET, ProgramFacts, TargetEvidence, Timing
from coderefine.reports.facts import baseline_facts
from coderefine.reports.program_facts import program_timing_note
from tests.reports.test_facts import _baseline


def test_a_program_baseline_speaks_of_runs_lines_and_startup():
    facts = ProgramFacts(4, 3, 3, {"stdin is a terminal": 1}, 0.015, 0.05, 3, 0)
    baseline = replace(
        _baseline(),
        program=facts,
        evidence=(TargetEvidence(PROGRAM_TARGET, 4, 3, 3, 10, 8, (7, 9)),),
    )
    lines = baseline_facts(baseline).splitlines()
    assert lines[1] == (
        "- The tests ran the program 4 times as a process; 3 of those runs (argv, stdin, files read) are replayed "
        "on every candidate, which must give the same exit code and stdout (and files written) on each "
        "(1 stdin is a terminal left out)."
    )
    assert lines[2] == "- The recorded runs run 8/10 lines of the program (never run: lines 7, 9)."
    assert lines[3].startswith("- One timing pass (3 processes on the recorded runs) takes 50.0 ms;")
    assert "too short to time honestly" in lines[4]
    assert not any("calls to the target" in line for line in lines)


def test_process_timing_names_its_basis_and_the_part_after_startup():
    timing = Timing(1.3, 1.2, 1.4, 0.05, 0.04, 12, 1, 0.2, basis="process", after_startup=(2.0, 1.5, 2.6))
    assert program_timing_note(timing) == (
        " Timed as whole processes, interpreter start-up included (the verdict's figure); the part after "
        "start-up alone: 2.00x [1.50, 2.60]."
    )
    assert program_timing_note(replace(timing, basis="steady")) == ""

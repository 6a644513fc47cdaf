"""The host's half of programs: timing inputs, the gate over runs, and what the feedback is told."""

from __future__ import annotations

from pathlib import Path

import pytest

from coderefine.errors import BadTimingInputs, ExitCode
from coderefine.evaluation.programs import console_script_runs, resolve_timing_inputs, timing_note
from coderefine.evaluation.verdicts import judge_runs
from coderefine.records import PROGRAM_TARGET, ProgramFacts, TargetEvidence


def _evidence(usable: int, lines: int, covered: int) -> tuple[TargetEvidence, ...]:
    return (TargetEvidence(PROGRAM_TARGET, usable, usable, usable, lines, covered),)


def test_the_gate_needs_runs_and_lines() -> None:
    assert judge_runs(_evidence(2, 10, 9), min_runs=1, min_coverage=0.75, allowed=False).sufficient
    short = judge_runs(_evidence(0, 10, 0), min_runs=1, min_coverage=0.75, allowed=False)
    assert short.blocks and short.reason == (
        "insufficient tests: 0 usable recorded runs of the program (needs 1), "
        "0/10 lines of the program run by the recorded runs, 0% (needs 75%)"
    )
    partial = judge_runs(_evidence(3, 10, 5), min_runs=1, min_coverage=0.75, allowed=True)
    assert not partial.sufficient and not partial.blocks and "5/10 lines" in partial.reason


def test_the_gate_names_runs_started_without_the_hook() -> None:
    why = "started by the tests without the start-up hook (an environment the start-up hook could not be added to)"
    gate = judge_runs(_evidence(0, 10, 0), min_runs=1, min_coverage=0.75, allowed=False, problems={why: 2})
    assert gate.reason.startswith(
        f"insufficient tests: 0 usable recorded runs of the program (needs 1); 2 runs of it {why}: pass the tests'"
    )


def test_a_module_a_console_script_runs_is_recorded_as_a_program(tmp_path: Path) -> None:
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("")
    assert not console_script_runs("pkg.tool", str(python), tmp_path)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "t"\n[project.scripts]\ntool = "pkg.tool:main"\n')
    assert console_script_runs("pkg.tool", str(python), tmp_path)
    assert not console_script_runs("pkg.other", str(python), tmp_path)
    (python.parent / "other").write_text(
        "#!/usr/bin/python\nimport sys\nfrom pkg.other import main\nsys.exit(main())\n"
    )
    assert console_script_runs("pkg.other", str(python), tmp_path)  # pip's wrapper in the interpreter's bin


def test_timing_inputs_are_files_under_the_root(tmp_path: Path) -> None:
    (tmp_path / "inputs").mkdir()
    (tmp_path / "inputs" / "big1.txt").write_text("1\n")
    (tmp_path / "inputs" / "big2.txt").write_text("2\n")
    assert resolve_timing_inputs(("inputs/*.txt", "inputs/big1.txt"), tmp_path) == (
        "inputs/big1.txt",
        "inputs/big2.txt",
    )
    with pytest.raises(BadTimingInputs, match="no file matches") as missing:
        resolve_timing_inputs(("inputs/*.json",), tmp_path)
    assert missing.value.exit_code == ExitCode.TIMING_INPUTS == 26
    outside = tmp_path.parent / "outside-input.txt"
    outside.write_text("x")
    with pytest.raises(BadTimingInputs, match="outside the project root"):
        resolve_timing_inputs((str(outside),), tmp_path)


def test_the_feedback_hears_when_runs_are_too_short_to_time() -> None:
    short = ProgramFacts(3, 3, 3, {}, 0.015, 0.051, 3, 0)
    assert short.too_short and short.startup_share == pytest.approx(0.88, abs=0.01)
    note = timing_note(short)
    assert note is not None and "too short to time honestly" in note and "--timing-inputs" in note
    long = ProgramFacts(3, 3, 3, {}, 0.015, 0.9, 3, 0)
    assert not long.too_short and timing_note(long) is None


def test_a_timing_input_generator_is_checked_on_the_host(tmp_path: Path) -> None:
    (tmp_path / "gen.py").write_text("def big():\n    return ['1\\n']\n")
    assert resolve_timing_inputs(("gen.py::big",), tmp_path) == ("gen.py::big",)
    with pytest.raises(BadTimingInputs, match="defines no top-level function small"):
        resolve_timing_inputs(("gen.py::small",), tmp_path)
    with pytest.raises(BadTimingInputs, match="is not one Python file"):
        resolve_timing_inputs(("nope.py::big",), tmp_path)

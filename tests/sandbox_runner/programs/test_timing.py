"""Process timing: its estimates, its floor, and real interleaved processes."""

from __future__ import annotations

from pathlib import Path

import pytest
from coderefine_sandbox.programs.execute import Version, execute
from coderefine_sandbox.programs.runs import Run
from coderefine_sandbox.programs.steps import lines_of, repeats_for
from coderefine_sandbox.programs.timing import (
    PROCESS_FLOOR,
    SHORT_FLOOR,
    ProcessTimer,
    Series,
    estimates,
    floor_for,
    measure,
)


def test_whole_process_and_after_startup_estimates() -> None:
    # start-up 10 ms of every process; the program's own work 10 ms against 5 ms
    series = Series([0.020, 0.021, 0.020], [0.015, 0.015, 0.016], [0.010, 0.010, 0.010], 1)
    found = estimates(series)
    assert found["process"].speedup == pytest.approx(1.33, abs=0.03)
    assert found["after_startup"].speedup == pytest.approx(1.9, abs=0.2)
    assert found["after_startup"].original_seconds == pytest.approx(0.0103, abs=1e-3)


def test_the_floor_rises_when_startup_is_most_of_a_run() -> None:
    assert floor_for(0.05, 0.015, 0.2, 1) == PROCESS_FLOOR
    assert floor_for(0.05, 0.015, 0.02, 1) == SHORT_FLOOR
    assert floor_for(0.5, 0.015, 0.02, 1) == 0.5
    assert repeats_for(3, 0.5) == 3 and repeats_for(3, 0.02) == 10 and repeats_for(3, None) == 3


def test_program_lines_count_module_code_not_def_lines(tmp_path: Path) -> None:
    path = tmp_path / "prog.py"
    path.write_text("import sys\n\n\ndef f(x):\n    return x\n\n\nprint(f(1))\n")
    assert lines_of(str(path)) == {1, 4, 5, 8}


def _versions(tmp_path: Path, original: str, candidate: str) -> tuple[Version, Version]:
    for name, code in (("a", original), ("b", candidate)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "prog.py").write_text(code)
    return Version(str(tmp_path / "a"), "prog.py", "."), Version(str(tmp_path / "b"), "prog.py", ".")


def _recorded(version: Version, tmp_path: Path) -> Run:
    run = Run("file", "prog.py", (), (), b"3\n", {}, {}, ())
    return Run(**{**run.__dict__, "expected": execute(run, version, str(tmp_path), 0, 10)})


@pytest.mark.timed
def test_the_same_program_is_never_faster_and_a_slower_one_is_caught(tmp_path: Path) -> None:
    same = "n = int(input())\nprint(sum(range(n)))\n"
    original, candidate = _versions(tmp_path, same, same + "pass\n")
    run = _recorded(original, tmp_path)
    report = measure(ProcessTimer(original, candidate, [run], str(tmp_path), 0, 3, 10), [], 4, SHORT_FLOOR)
    assert (
        report.basis == "process"
        and report.ci[0] < 1 + SHORT_FLOOR
        and set(report.estimates)
        == {
            "process",
            "after_startup",
        }
    )
    failing = Version(str(tmp_path / "b"), "prog.py", ".")
    (tmp_path / "b" / "prog.py").write_text("raise SystemExit(3)\n")
    with pytest.raises(RuntimeError, match="exits with 3 on timing input 1, where the original exits with 0"):
        measure(ProcessTimer(original, failing, [run], str(tmp_path), 0, 1, 10), [], 2, SHORT_FLOOR)


@pytest.mark.timed
def test_a_program_that_does_less_work_is_confirmed_faster(tmp_path: Path) -> None:
    original, candidate = _versions(
        tmp_path, "import time\nn = int(input())\ntime.sleep(0.12)\nprint(n)\n", "n = int(input())\nprint(n)\n"
    )
    run = _recorded(original, tmp_path)
    report = measure(ProcessTimer(original, candidate, [run], str(tmp_path), 0, 1, 10), [], 3, PROCESS_FLOOR)
    assert report.confirmation is not None and report.ci[0] > 1 + PROCESS_FLOOR
    assert report.estimates["after_startup"].speedup > report.speedup


def test_a_timing_input_generator_runs_in_the_workspace(tmp_path: Path) -> None:
    from coderefine_sandbox.programs.steps import _timing_inputs, generate_inputs
    from coderefine_sandbox.protocol import ProgramSpec

    from tests.sandbox_runner.samples import request

    (tmp_path / "gen.py").write_text("def big():\n    return ['3\\n1 2 3\\n', b'1\\n7\\n']\n")
    (tmp_path / "small.txt").write_text("1\n5\n")
    spec = ProgramSpec(
        "prog.py", str(tmp_path / "runs.json"), "exact", False, 10, 1000, ("small.txt", "gen.py::big"), 3
    )
    sample = request(workspace=str(tmp_path), import_root=".", program=spec, step_timeout=30.0)
    generate_inputs(sample)
    assert _timing_inputs(sample) == [b"1\n5\n", b"3\n1 2 3\n", b"1\n7\n"]
    (tmp_path / "gen.py").write_text("def big():\n    raise ValueError('no inputs today')\n")
    with pytest.raises(RuntimeError, match=r"gen\.py::big failed: ValueError: no inputs today"):
        generate_inputs(sample)


def test_a_replay_notes_the_program_lines_it_runs(tmp_path: Path) -> None:
    original, _ = _versions(tmp_path, "n = int(input())\nif n > 5:\n    print('big')\nprint(n)\n", "")
    run = Run("file", "prog.py", (), (), b"3\n", {}, {}, ())
    out = tmp_path / "lines.json"
    outcome = execute(run, original, str(tmp_path), 0, 10, str(out))
    assert (outcome.exit_code, outcome.stdout) == (0, b"3\n")
    assert out.read_text() == "[1, 2, 4]"

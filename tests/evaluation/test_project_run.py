"""What scan's profile run and the reach map's traced runs share besides the copy: where the project's packages
import from, and what a user is shown of a runner that wrote no report."""

from __future__ import annotations

from pathlib import Path

from coderefine.evaluation.project_run import import_roots, runner_said
from coderefine.sandboxes.base import SandboxOutcome


def test_a_src_layout_imports_from_src_as_well(tmp_path: Path) -> None:
    assert import_roots(tmp_path) == (".",)
    (tmp_path / "src").mkdir()
    assert import_roots(tmp_path) == (".", "src")


def test_a_failed_runner_is_told_by_the_last_line_it_wrote_or_its_exit_code() -> None:
    traceback = "Traceback (most recent call last):\n  ...\nModuleNotFoundError: No module named 'x'\n"
    said = runner_said(SandboxOutcome(1, "partial", traceback, False, 0.1))
    assert said == "ModuleNotFoundError: No module named 'x'"
    assert runner_said(SandboxOutcome(1, "not json\n", "  \n", False, 0.1)) == "not json"
    assert runner_said(SandboxOutcome(-9, "", "", False, 0.1)) == "exit code -9"
    assert len(runner_said(SandboxOutcome(1, "", "e" * 1000, False, 0.1))) == 300

"""The one error boundary: a CoderefineError is one line and its code, a bug is one line and exit 1 (the
traceback only with --debug), Ctrl-C is 130; and every command goes through it."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from coderefine.cli.app import app
from coderefine.cli.boundary import guarded
from coderefine.errors import ExitCode, UsageError


def fail_with(exc: BaseException):
    def command() -> int:
        raise exc

    return command


def test_a_coderefine_error_is_one_line_and_its_exit_code(capsys):
    assert guarded(fail_with(UsageError("--task [bold]x[/bold]\nbad"))) == ExitCode.USAGE
    captured = capsys.readouterr()
    assert captured.err == "error: --task [bold]x[/bold] bad\n" and captured.out == ""  # markup stays text


@pytest.mark.parametrize("debug", [False, True])
def test_a_bug_is_one_line_and_exit_1_with_the_traceback_only_on_request(capsys, debug):
    assert guarded(fail_with(ZeroDivisionError("division by zero")), debug=debug) == ExitCode.INTERNAL
    err = capsys.readouterr().err
    last = "error: internal error: ZeroDivisionError: division by zero (rerun with --debug for the traceback)\n"
    assert err.endswith(last)
    assert ("Traceback (most recent call last)" in err) is debug


def test_ctrl_c_is_130_and_a_clean_end_is_the_commands_code(capsys):
    assert guarded(fail_with(KeyboardInterrupt())) == ExitCode.INTERRUPTED
    assert guarded(lambda: 16) == 16 and guarded(lambda: 0) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    ("words", "fragment", "code"),
    [
        (["optimize", "nope.py"], "nope.py: no such file", ExitCode.FILE_NOT_FOUND),
        (["refine", "a.py", "--task", "speed"], "--task must be readability or optimize", ExitCode.USAGE),
        (["replay", "no-trace"], "no-trace", None),
        (["config", "nowhere"], "nowhere: no such file or folder", ExitCode.FILE_NOT_FOUND),
        (["config", ".", "--timeout", "-1"], "--timeout must be at least 0.1", ExitCode.USAGE),
        (["check", "nope.py", "--format", "xml"], "--format must be one of text, json, sarif", ExitCode.USAGE),
        (["review", "--task", "speed"], "--task must be optimize or readability", ExitCode.USAGE),
        (["bench", ".", "--jobs", "1"], "--task is required", ExitCode.USAGE),
    ],
)
def test_every_command_tells_an_error_in_one_line(tmp_path, monkeypatch, words, fragment, code):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, words)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], result.stderr
    assert code is None or result.exit_code == code
    assert result.exit_code not in (0, 1)


@pytest.mark.parametrize("debug", [False, True])
def test_a_bug_inside_a_run_is_told_once_by_the_boundary_after_the_report_is_written(tmp_path, monkeypatch, debug):
    """The run keeps the bug in its Result (the report says failed); the boundary tells it in the same words
    as any other bug, and the traceback goes with --debug only."""
    from coderefine.refine import run as run_module

    def broken(self, observer):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(run_module._Run, "go", broken)
    (tmp_path / "mod.py").write_text("def f(x):\n    return x\n")
    report = tmp_path / "report.json"
    words = ["optimize", str(tmp_path / "mod.py"), "--report", str(report), *(["--debug"] if debug else [])]
    result = CliRunner().invoke(app, words)
    last = "error: internal error: ZeroDivisionError: division by zero (rerun with --debug for the traceback)"
    assert result.exit_code == ExitCode.INTERNAL
    assert result.stderr.splitlines()[-1] == last
    assert ("Traceback (most recent call last)" in result.stderr) is debug
    assert result.stderr.count("internal error") == 1
    data = json.loads(report.read_text())
    assert data["status"] == "failed" and data["error"]["kind"] == "internal" and "traceback" not in data["error"]

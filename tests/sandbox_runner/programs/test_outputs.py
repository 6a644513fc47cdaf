"""Comparing a version's outcome on a recorded run with the original's."""

from __future__ import annotations

from coderefine_sandbox.programs.outputs import difference, example, same_text
from coderefine_sandbox.programs.runs import Outcome, Run


def _outcome(stdout: bytes = b"3\n", code: int = 0, stderr: bytes = b"", written: dict | None = None) -> Outcome:
    return Outcome(code, stdout, stderr, written or {}, 0.01)


def _diff(expected: Outcome, got: Outcome, mode: str = "exact", stderr: bool = False):
    return difference(expected, got, mode=mode, stderr=stderr, rel_tol=1e-6, abs_tol=0.0)


def test_exact_by_default_whitespace_and_numeric_on_request() -> None:
    assert same_text(b"1 2\n", b"1 2\n", "exact", 0, 0)
    assert not same_text(b"1 2\n", b"1 2 \n\n", "exact", 0, 0)
    assert same_text(b"1 2\n", b"1 2 \n\n", "whitespace", 0, 0)
    assert not same_text(b"0.3333333\n", b"0.33333333\n", "whitespace", 1e-6, 0)
    assert same_text(b"x 0.3333333\n", b"x  0.33333333\n", "numeric", 1e-6, 0)
    assert not same_text(b"x 0.33\n", b"y 0.33\n", "numeric", 1e-6, 0)
    assert not same_text(b"0.30\n", b"0.31\n", "numeric", 1e-6, 0)


def test_exit_code_then_stdout_then_files_and_stderr_only_when_asked() -> None:
    assert _diff(_outcome(), _outcome()) is None
    assert _diff(_outcome(), _outcome(code=1, stderr=b"Traceback\nValueError: x\n")) == (
        "exit code",
        "0",
        "1: ValueError: x",
    )
    assert _diff(_outcome(), _outcome(b"4\n")) == ("stdout", "'3\\n'", "'4\\n'")
    assert _diff(_outcome(written={"out.txt": "aa"}), _outcome())[0] == "file out.txt"
    assert _diff(_outcome(stderr=b"warn"), _outcome()) is None
    assert _diff(_outcome(stderr=b"warn"), _outcome(), stderr=True)[0] == "stderr"


def test_a_mismatch_shows_the_input_trimmed() -> None:
    run = Run("file", "prog.py", (), ("-v",), b"x" * 1000, {}, {}, ())
    shown = example("prog.py", run, ("stdout", "'1'", "'2'"))
    assert shown.function == "prog.py" and shown.kind == "stdout"
    assert shown.args.startswith("args -v, stdin 'xxx") and " ... " in shown.args and len(shown.args) < 260

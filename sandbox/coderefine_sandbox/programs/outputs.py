"""Compare a version's outcome on a recorded run with the original's: exit code, stdout (exactly by
default), files written, and stderr only when asked. `whitespace` ignores trailing whitespace on each line
and trailing blank lines; `numeric` also compares whitespace-separated tokens that both read as numbers
within the float tolerances."""

from __future__ import annotations

import math

from coderefine_sandbox.programs.runs import Outcome, Run
from coderefine_sandbox.protocol import MismatchExample

SHOWN = 200  # characters of input, expected and got in a mismatch example


def normalise(text: str) -> str:
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def same_text(expected: bytes, got: bytes, mode: str, rel_tol: float, abs_tol: float) -> bool:
    if expected == got:
        return True
    if mode == "exact":
        return False
    left = normalise(expected.decode("utf-8", "replace"))
    right = normalise(got.decode("utf-8", "replace"))
    if left == right:
        return True
    if mode != "numeric":
        return False
    left_lines, right_lines = left.split("\n"), right.split("\n")
    if len(left_lines) != len(right_lines):
        return False
    for left_line, right_line in zip(left_lines, right_lines, strict=True):
        left_tokens, right_tokens = left_line.split(), right_line.split()
        if len(left_tokens) != len(right_tokens):
            return False
        for a, b in zip(left_tokens, right_tokens, strict=True):
            if a != b and not _close(a, b, rel_tol, abs_tol):
                return False
    return True


def _close(a: str, b: str, rel_tol: float, abs_tol: float) -> bool:
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    if math.isnan(x) and math.isnan(y):
        return True
    return math.isclose(x, y, rel_tol=rel_tol, abs_tol=abs_tol)


def difference(
    expected: Outcome, got: Outcome, *, mode: str, stderr: bool, rel_tol: float, abs_tol: float
) -> tuple[str, str, str] | None:
    """(kind, expected, got) of the first difference that counts, or None."""
    if got.timed_out and not expected.timed_out:
        return "timeout", f"ends in {expected.seconds:.2f}s", "still running at the time limit"
    if expected.exit_code != got.exit_code:
        detail = got.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] if got.exit_code else []
        return "exit code", str(expected.exit_code), f"{got.exit_code}{': ' + detail[0] if detail else ''}"
    if not same_text(expected.stdout, got.stdout, mode, rel_tol, abs_tol):
        return "stdout", shown(expected.stdout), shown(got.stdout)
    if expected.written != got.written:
        changed = sorted(set(expected.written.items()) ^ set(got.written.items()))
        path = changed[0][0]
        return f"file {path}", _file_state(expected, path), _file_state(got, path)
    if stderr and not same_text(expected.stderr, got.stderr, mode, rel_tol, abs_tol):
        return "stderr", shown(expected.stderr), shown(got.stderr)
    return None


def _file_state(outcome: Outcome, path: str) -> str:
    digest = outcome.written.get(path)
    return "not written" if digest is None else f"written (sha256 {digest[:12]})"


def shown(data: bytes, limit: int = SHOWN) -> str:
    text = data.decode("utf-8", "replace")
    if len(text) > limit:
        text = text[: limit // 2] + " ... " + text[-limit // 2 :]
    return repr(text)


def inputs(run: Run, limit: int = SHOWN) -> str:
    """A run's inputs as a mismatch or a refusal shows them: `args ..., stdin '...'`."""
    args = " ".join(run.args)
    stdin = "closed" if run.stdin is None else shown(run.stdin, limit)
    return f"{'args ' + args + ', ' if args else ''}stdin {stdin}"


def example(label: str, run: Run, found: tuple[str, str, str]) -> MismatchExample:
    kind, expected, got = found
    return MismatchExample(label, kind, inputs(run), expected, got)

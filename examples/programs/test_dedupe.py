"""The program runs as a process, as a judge runs it: stdin in, stdout compared."""

import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
CASES = [
    ("3\napple\npear\napple\n", "2\napple\npear\n"),
    ("1\nkiwi\n", "1\nkiwi\n"),
    ("5\nb\na\nb\nc\na\n", "3\nb\na\nc\n"),
]


@pytest.mark.parametrize(("stdin", "expected"), CASES)
def test_dedupe(stdin, expected):
    proc = subprocess.run(
        [sys.executable, "dedupe.py"], input=stdin, capture_output=True, text=True, cwd=HERE, timeout=30
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == expected

"""A tiny readability project shared by the loop's fast tests (fake evaluator) and its end-to-end tests."""

from __future__ import annotations

from typing import Any

ORIGINAL = "def f(a, b):\n    c = a + b\n    d = c * 2\n    return d\n"
TESTS = (
    "from mod import f\n\n\ndef test_f():\n    assert f(1, 2) == 6\n    assert f(-1, 1) == 0\n"
    "    assert f(2, 3) == 10\n"
)
GOOD = "def f(first, second):\n    total = first + second\n    doubled = total * 2\n    return doubled\n"  # +24 points
# Same score as GOOD:
TIE = "def f(first, second):\n    summed = first + second\n    twice = summed * 2\n    return twice\n"
BETTER = "def f(first, second):\n    total = first + second\n    return total * 2\n"  # GOOD + ~1.1, 7 changed lines
# BETTER's score with 10 changed lines:
BETTER_WIDE = "def f(first, second):\n    summed = (\n        first\n        + second\n    )\n    return summed * 2\n"
BROKEN_BEST = 'def f(first, second):\n    """Twice the sum."""\n    return (first + second) * 3\n'
SLIGHT = "def f(first, b):\n    c = first + b\n    d = c * 2\n    return d\n"  # +6 points
CONTINUE = "Rename further.\nVERDICT: CONTINUE"


def check_f(namespace: dict[str, Any]) -> None:
    """TESTS, run in-process on a candidate's namespace."""
    f = namespace["f"]
    assert f(1, 2) == 6
    assert f(-1, 1) == 0
    assert f(2, 3) == 10

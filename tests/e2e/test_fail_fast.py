"""A candidate's tests run most-likely-to-fail first and stop at the first failure; an acceptable candidate
still runs them all (coderefine/evaluation/test_order.py, the sandbox's recording/order.py)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow  # real runs

TEXT = '''
def normalize(text):
    """The words of text, lower-cased, one space apart."""
    words = []
    for word in text.split():
        words.append(word.lower())
    return " ".join(words)
'''

API = """
from pkg.text import normalize


def title_key(title):
    return normalize(title) or "untitled"
"""

# Six tests calling the target directly, several times each, with single spaces only: a wrong candidate
# splitting at " " passes them all.
TEST_TEXT = "from pkg.text import normalize\n" + "".join(
    f"\n\ndef test_words_{n}():\n"
    + "".join(f"    assert normalize('Word{n} Other{i}') == 'word{n} other{i}'\n" for i in range(n + 2))
    for n in range(6)
)

# Reaching the target once each, through the package; the tab catches the wrong candidates.
TEST_API = """
from pkg.api import title_key


def test_a_tab_separates_words():
    assert title_key("Hello\\tWorld") == "hello world"


def test_an_empty_title():
    assert title_key("") == "untitled"
"""

WRONG = 'def normalize(text):\n    return " ".join(text.lower().split(" "))\n'
ALSO_WRONG = 'def normalize(text):\n    return " ".join(w for w in text.lower().split(" ") if w)\n'
RIGHT = 'def normalize(text):\n    return " ".join(text.split()).lower()\n'


def test_a_wrong_candidate_stops_at_the_failing_test_which_then_runs_first_and_a_right_one_runs_all(
    scripted, make_project, tmp_path
):
    root = make_project(
        {"pkg/__init__.py": "", "pkg/text.py": TEXT, "pkg/api.py": API, "tests/test_text.py": TEST_TEXT}
        | {"tests/test_api.py": TEST_API}
    )
    data = scripted(
        "readability",
        root / "pkg/text.py",
        [WRONG],
        ["split at any whitespace", "same problem", "VERDICT: STOP"],
        [ALSO_WRONG, RIGHT],
        "--patience",
        "3",
        "--max-iterations",
        "3",
        env={"XDG_CACHE_HOME": str(tmp_path / "cache")},
    )
    assert data["baseline"]["selection"]["candidate_tests"] == 8
    wrong, also_wrong, right = data["iterations"][:3]
    failing = "tests/test_api.py::test_a_tab_separates_words"
    # the tests making most calls ran first: the failing test, with one call, came after them
    assert wrong["verdict"] == "rejected"
    assert wrong["reason"] == f"test {failing} failed (7 of 8 tests run; stopped at the first failure)"
    assert wrong["tests"] == {"passed": 6, "failed": 1, "stopped_at_first_failure": {"ran": 7, "of": 8}}
    # the test that failed for the earlier candidate runs first
    assert also_wrong["reason"] == f"test {failing} failed (1 of 8 tests run; stopped at the first failure)"
    assert also_wrong["tests"]["stopped_at_first_failure"] == {"ran": 1, "of": 8}
    # a candidate that breaks nothing runs every test
    assert right["tests"] == {"passed": 8, "failed": 0}, right["reason"]
    console = " ".join(data["_stdout"].split())
    assert "stopped at the first failure" in console and "6/7 of 8" in console  # the table's tests cell

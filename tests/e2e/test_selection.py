"""The tests that judge candidates are found by execution: a test reaching the target only through the
package's public function judges it too (sqlparse 0.6.1's `split_unquoted_newlines` case)."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.slow  # real runs

UTILS = '''
def split_lines(text):
    """The lines of text, split at \\n, \\r\\n or \\r; blank lines kept."""
    lines = []
    start = 0
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\\r" or ch == "\\n":
            lines.append(text[start:i])
            if ch == "\\r" and i + 1 < n and text[i + 1] == "\\n":
                i += 1
            start = i + 1
        i += 1
    lines.append(text[start:])
    return lines
'''

FORMAT = """
from pkg.utils import split_lines  # bound at import: the module attribute is not what this calls


def format(text, strip_comments=False):
    lines = split_lines(text)
    if strip_comments:
        lines = [line for line in lines if not line.lstrip().startswith("--")]
    return "\\n".join(line.rstrip() for line in lines)
"""

TEST_UTILS = """
from pkg.utils import split_lines


def test_split_lines():
    # long texts: the work is in the loop over characters, which the correct candidate does in C
    for text in ("select 1\\nfrom t\\r\\nwhere x", "one line", "a\\rb\\n" * 3000, "x = 1\\n" * 5000):
        assert "".join(split_lines(text)) == text.replace("\\r", "").replace("\\n", "")
"""

TEST_FORMAT = """
import pkg


def test_blank_lines_are_kept():
    assert pkg.format("select *\\n\\nfrom foo") == "select *\\n\\nfrom foo"


def test_comments_are_stripped():
    assert pkg.format("select *\\n-- note\\nfrom foo\\n", strip_comments=True) == "select *\\nfrom foo\\n"
"""

# A conftest with its own collection hook saying "collect everything": the selection must still hold.
CONFTEST = """
def pytest_ignore_collect(collection_path, config):
    return False
"""

WRONG = "import re\n\n\ndef split_lines(text):\n    return re.split(r'[\\r\\n]+', text)\n"
# The same lines with str methods in C: ~15x faster on the tests' long texts (a regex alternation is only ~3x,
# too little to hold beside other tests' load)
RIGHT = "def split_lines(text):\n    return text.replace('\\r\\n', '\\n').replace('\\r', '\\n').split('\\n')\n"


def test_a_test_reaching_the_target_through_the_package_refuses_a_wrong_candidate(scripted, make_project, tmp_path):
    root = make_project(
        {
            "conftest.py": CONFTEST,
            "pkg/__init__.py": "from pkg.format import format\n",
            "pkg/utils.py": UTILS,
            "pkg/format.py": FORMAT,
            "tests/test_utils.py": TEST_UTILS,
            "tests/test_format.py": TEST_FORMAT,
            "tests/test_unrelated.py": "def test_broken_elsewhere():\n    assert False\n",  # never collected
        }
    )
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    options = ("--function", "split_lines", "--patience", "2", "--timing-pairs", "3")
    data = scripted(
        "optimize", root / "pkg/utils.py", [WRONG], ["keep blank lines", "VERDICT: STOP"], [RIGHT], *options, env=env
    )
    wrong, right = data["iterations"][:2]
    assert wrong["verdict"] == "rejected" and "tests/test_format.py::test_blank_lines_are_kept" in wrong["reason"]
    assert right["verdict"] == "accepted", right["reason"]
    selection = data["baseline"]["selection"]
    assert selection["mode"] == "traced" and selection["test_files_importing"] == 1
    assert selection["tests"] == [  # the three tests reaching the target, whichever way
        "tests/test_format.py::test_blank_lines_are_kept",
        "tests/test_format.py::test_comments_are_stripped",
        "tests/test_utils.py::test_split_lines",
    ]
    console = " ".join(data["_stdout"].split())  # unwrapped
    assert (
        "run of 2 of 3 test files, those naming split_lines, utils, and 1 importing pkg); 2 test files reach them"
        in console
    )
    assert data["baseline"]["evidence"]["split_lines"]["calls"] >= 6  # pkg.format's calls recorded too

    again = scripted("optimize", root / "pkg/utils.py", [WRONG], ["VERDICT: STOP"], (), *options, env=env)
    assert again["baseline"]["selection"]["mode"] == "cached"
    assert again["iterations"][0]["verdict"] == "rejected" and "test_format.py" in again["iterations"][0]["reason"]


def test_no_test_of_the_first_selection_reaching_the_target_widens_it_to_the_whole_suite(
    scripted, make_project, tmp_path
):
    root = make_project(
        {
            "textops.py": "def collapse(words):\n    out = []\n    for w in words:\n        out.append(w.strip())\n"
            "    return ' '.join(out)\n",
            "api.py": "from textops import collapse as _join\n\n\ndef render(parts):\n"
            "    return '<' + _join(parts) + '>'\n",
            # names neither the module nor the function: the first selection collects nothing
            "test_api.py": "from api import render\n\n\ndef test_render():\n"
            "    assert render([' a', 'b ']) == '<a b>'\n    assert render([]) == '<>'\n"
            "    assert render(['x']) == '<x>'\n",
        }
    )
    wrong = "def collapse(words):\n    return ' '.join(words)\n"
    data = scripted(
        "readability", root / "textops.py", [wrong], ["VERDICT: STOP"], (), env={"XDG_CACHE_HOME": str(tmp_path / "c")}
    )
    (only,) = data["iterations"]
    assert only["verdict"] == "rejected" and "test_api.py::test_render" in only["reason"]
    selection = data["baseline"]["selection"]
    assert selection["tests"] == ["test_api.py::test_render"] and selection["candidate_tests"] == 1
    assert "traced in the whole suite: no test in the test files naming collapse, textops did" in selection["reason"]


def test_a_reach_map_selects_the_tests_reaching_the_target_through_any_chain(scripted, make_project, tmp_path):
    files = {
        "textops.py": "def collapse(words):\n    out = []\n    for w in words:\n        out.append(w.strip())\n"
        "    return ' '.join(out)\n",
        "api.py": "from textops import collapse as _join\n\n\ndef render(parts):\n"
        "    return '<' + _join(parts) + '>'\n",
        "other.py": "def unrelated():\n    return 1\n",
        # names neither the module nor the function: only the map knows it reaches collapse
        "tests/test_api.py": "from api import render\n\n\ndef test_render():\n"
        "    assert render([' a', 'b ']) == '<a b>'\n    assert render([]) == '<>'\n"
        "    assert render(['x']) == '<x>'\n",
    }
    # a suite over 40 test files: with no map, the first run traces a bounded first map of its own
    files.update(
        {
            f"tests/test_other_{i}.py": "from other import unrelated\n\n\n"
            f"def test_{i}():\n    assert unrelated() == 1\n"
            for i in range(40)
        }
    )
    root = make_project(files)
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    wrong = "def collapse(words):\n    return ' '.join(words)\n"
    first = scripted("readability", root / "textops.py", [wrong], ["VERDICT: STOP"], (), env=env)
    (only,) = first["iterations"]
    assert only["verdict"] == "rejected" and "tests/test_api.py::test_render" in only["reason"]
    selection = first["baseline"]["selection"]
    assert selection["mode"] == "mapped" and selection["tests"] == ["tests/test_api.py::test_render"]
    assert selection["reason"].startswith("1 test from the reach map reaches collapse; no map yet: traced 41 of 41")
    assert "nearest first (the rest 41/41) with " in selection["reason"]  # a worker per core
    assert "not traced" not in selection["reason"]
    # One pytest run per worker traced the map and recorded the calls: the baseline took that run's calls (render
    # calls collapse three times) and its outcome of the reaching test instead of running it again.
    assert ", recording the calls in the same run, saved as the project's reach map" in selection["reason"]
    assert first["baseline"]["calls_recorded"] == 3 and first["baseline"]["tests"]["passed"] == 1
    (saved,) = (tmp_path / "cache" / "coderefine" / "reach").glob("*.json")
    traced = json.loads(saved.read_text())
    reached = {traced["functions"][number] for number in traced["tests"]["tests/test_api.py::test_render"]}
    assert reached == {"api.py::render", "textops.py::collapse"} and len(traced["tests"]) == 41

    (root / "other.py").write_text("def unrelated():\n    return 2 - 1\n")  # no test reaching collapse runs it
    second = scripted("readability", root / "textops.py", [wrong], ["VERDICT: STOP"], (), env=env)
    selection = second["baseline"]["selection"]
    assert selection["mode"] == "mapped" and selection["tests"] == ["tests/test_api.py::test_render"]
    assert (
        "1 file changed (1 function in them) since, none that the tests reaching the targets run" in selection["reason"]
    )

    # the target itself changed: the tests reaching it are traced again first (and those reaching `unrelated`)
    (root / "textops.py").write_text("def collapse(words):\n    return ' '.join([w.strip() for w in words])\n")
    third = scripted("readability", root / "textops.py", [wrong], ["VERDICT: STOP"], (), env=env)
    selection = third["baseline"]["selection"]
    assert selection["mode"] == "mapped" and selection["tests"] == ["tests/test_api.py::test_render"]
    assert "updated first (2 files changed (2 functions in them)): re-traced 41 tests" in selection["reason"]
    assert third["iterations"][0]["verdict"] == "rejected"

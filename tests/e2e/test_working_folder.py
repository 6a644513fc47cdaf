"""A function whose result depends on the working folder, judged on calls recorded in the original's
workspace and replayed in each candidate's (sandbox relocation.py)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow  # a real run

PATHS = """
import os


def relative_to_cwd(path):
    \"\"\"`path` from the working folder, '/'-separated; a missing file says which.\"\"\"
    if not os.path.exists(path):
        raise FileNotFoundError("no such file: " + path)
    parts = []
    for index in range(len(os.path.relpath(path, os.getcwd()).split(os.sep))):
        for _ in range(10):  # the same part, worked out again and again
            part = os.path.relpath(path, os.getcwd()).split(os.sep)[index]
        parts.append(part)
    return "/".join(parts)
"""
PATHS_TESTS = """
import os

import pytest

from paths import relative_to_cwd

HERE = os.path.dirname(os.path.abspath(__file__))


def test_files_of_the_project():
    for name in ("paths.py", "docs/guide.txt", "docs/more/notes.txt", "pytest.ini"):
        assert relative_to_cwd(os.path.join(HERE, name)).endswith(name)


def test_a_missing_file_is_named():
    with pytest.raises(FileNotFoundError, match="missing.txt"):
        relative_to_cwd(os.path.join(HERE, "docs", "missing.txt"))
"""
RIGHT = """
import os


def relative_to_cwd(path):
    if not os.path.exists(path):
        raise FileNotFoundError("no such file: " + path)
    return os.path.relpath(path).replace(os.sep, "/")
"""
# Passes the tests (which only look at the end of the result) and is wrong: absolute, not relative.
WRONG = """
import os


def relative_to_cwd(path):
    if not os.path.exists(path):
        raise FileNotFoundError("no such file: " + path)
    return os.path.abspath(path).replace(os.sep, "/")
"""


def test_a_working_folder_dependent_function_is_judged_as_recorded_in_each_candidates_folder(scripted, make_project):
    root = make_project(
        {
            "paths.py": PATHS,
            "test_paths.py": PATHS_TESTS,
            "docs/guide.txt": "guide\n",
            "docs/more/notes.txt": "notes\n",
        }
    )
    feedback = ["Absolute, not relative.\nVERDICT: CONTINUE"]
    data = scripted(
        "optimize",
        root / "paths.py",
        [WRONG],
        feedback,
        [RIGHT],
        "--function",
        "relative_to_cwd",
        "--timing-pairs",
        "2",
    )
    assert data["baseline"]["calls_recorded"] == 5
    wrong, right = data["iterations"]
    # The tests pass both; the recorded calls tell them apart.
    assert wrong["tests"]["failed"] == 0 and right["tests"]["failed"] == 0
    assert wrong["verdict"] == "rejected" and wrong["behavior"]["mismatches"] == 4
    example = wrong["behavior"]["examples"][0]
    assert example["expected"] == repr(example["args"].split("/original/")[1].split("'")[0])
    assert "/cand-1/" in example["got"] and "behaviour changed on 4/5 recorded calls" in wrong["reason"]
    # Every call compared, the boundary variants too (the missing file's message names the candidate's own
    # folder): none differs, so the candidate is judged on its speed alone.
    behaviour = right["behavior"]
    assert (behaviour["calls_compared"], behaviour["mismatches"], behaviour["boundary_mismatches"]) == (5, 0, 0)
    assert right["verdict"] == "accepted" or right["reason"].startswith("not faster"), right["reason"]

"""`coderefine reach`: the whole map built in the sandbox, the same with two workers, and updated incrementally."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # real sandbox runs

FILES = {
    "pkg/__init__.py": "from pkg.core import public\n",
    "pkg/core.py": "from pkg import util\n\n\ndef public(text):\n    return [util.helper(x) for x in text.split()]\n"
    "\n\n"
    "def other(x):\n    return x + 1\n",
    "pkg/util.py": "def helper(word):\n    return word.upper()\n",
    "tests/test_core.py": "import pkg\n\n\ndef test_public():\n    assert pkg.public('a b') == ['A', 'B']\n\n\n"
    "def test_nothing():\n    assert True\n",
    "tests/test_other.py": "from pkg.core import other\n\n\ndef test_other():\n    assert other(1) == 2\n",
    "tests/test_third.py": "from pkg.util import helper\n\n\ndef test_helper():\n    assert helper('x') == 'X'\n",
}


def _cached(cache: Path) -> dict:
    (path,) = (cache / "coderefine/reach").glob("*.json")
    data = json.loads(path.read_text())
    return {test: sorted(data["functions"][n] for n in numbers) for test, numbers in data["tests"].items()}


def test_the_map_is_built_in_parallel_alike_and_updated_incrementally(cli, make_project, tmp_path):
    root = make_project(FILES)
    serial, parallel = tmp_path / "serial", tmp_path / "parallel"
    built = cli("reach", root, "--json", env={"XDG_CACHE_HOME": str(serial)})
    assert built.returncode == 0, built.stdout + built.stderr
    data = json.loads(built.stdout)
    assert data["full"] and data["retraced_tests"] == 4 and data["functions"] == 3 and data["workers"] == 1
    expected = {
        "tests/test_core.py::test_nothing": [],
        "tests/test_core.py::test_public": ["pkg/core.py::public", "pkg/util.py::helper"],
        "tests/test_other.py::test_other": ["pkg/core.py::other"],
        "tests/test_third.py::test_helper": ["pkg/util.py::helper"],
    }
    assert _cached(serial) == expected
    two = cli("reach", root, "--jobs", "2", env={"XDG_CACHE_HOME": str(parallel)})
    assert two.returncode == 0 and "traced 4 tests" in two.stdout and "with 2 workers" in two.stdout
    assert _cached(parallel) == expected

    again = cli("reach", root, env={"XDG_CACHE_HOME": str(serial)})
    assert "no file changed since it was built; re-traced 0 tests" in again.stdout

    (root / "pkg/core.py").write_text((root / "pkg/core.py").read_text() + "# a comment changes no function\n")
    (root / "pkg/util.py").write_text("def helper(word):\n    return str.upper(word)\n")
    (root / "tests/test_other.py").unlink()
    update = cli("reach", root, "--json", env={"XDG_CACHE_HOME": str(serial)})
    data = json.loads(update.stdout)
    assert data["changed_files"] == ["pkg/core.py", "pkg/util.py", "tests/test_other.py"]
    assert data["changed_functions"] == ["pkg/util.py::helper"]
    assert data["retraced_tests"] == 2 and data["retraced_single_tests"] == 2 and data["dropped_tests"] == 1
    del expected["tests/test_other.py::test_other"]
    assert _cached(serial) == expected

"""Real project layouts, each a small repository built here and run end to end with the offline provider.

One repository per family of layouts, so that each real run covers several shapes at once:
- pyproject: a src layout, relative imports, tests in a separate tree with a conftest fixture, pytest's
  configuration in pyproject.toml, a dependency from the user's virtualenv, and a test file that does not
  name the target (left uncollected by the test selection);
- namespace: a namespace package (PEP 420) imported as `ns.tools.calc`, configured in tox.ini;
- setup.cfg: a flat module whose tests live in a folder that setup.cfg's `testpaths` names.
And the two set-up problems that are not a failing original: a time-out (22) and a project that reads its
own installed metadata without being installed (23).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from coderefine.errors import ExitCode

pytestmark = pytest.mark.slow  # every test here is a real run

LABELS = """
from .helpers import clean


def label(words):
    out = []
    for w in words:
        out.append(clean(w))
    return ", ".join(out)
"""
CALC = """
def total(values):
    t = 0
    for v in values:
        t = t + v
    return t
"""


def write(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    return root


def run(cli, tmp_path: Path, file: Path, *options: str, expect: int = 0) -> dict:
    report = tmp_path / "report.json"
    proc = cli(
        "readability", file, "--provider", "offline", "--sandbox", "process", "--max-iterations", "1",
        "--report", report, *options,
        env={"XDG_CACHE_HOME": str(tmp_path / "cache")},
    )  # fmt: skip
    assert proc.returncode == expect, proc.stdout + proc.stderr
    data = json.loads(report.read_text())
    data["_out"] = proc.stdout + proc.stderr
    return data


def test_src_layout_relative_imports_separate_tests_conftest_pyproject_and_venv_dependency(cli, tmp_path):
    root = write(
        tmp_path / "repo",
        {
            "pyproject.toml": '[project]\nname = "shop"\nversion = "1.0"\n\n'
            '[tool.pytest.ini_options]\ntestpaths = ["tests"]\naddopts = "-ra"\n',
            "src/shop/__init__.py": "",
            "src/shop/helpers.py": "import yaml\n\n\ndef clean(word):\n    return str(yaml.safe_load(word))\n",
            "src/shop/labels.py": LABELS,
            "tests/conftest.py": "import pytest\n\n\n@pytest.fixture\n"
            "def words():\n    return [' tea', 'jam ', 'oat']\n",
            "tests/unit/test_labels.py": "from shop.labels import label\n\n\ndef test_label(words):\n"
            "    assert label(words) == 'tea, jam, oat'\n    assert label([]) == ''\n    assert label(['x']) == 'x'\n",
            "tests/unit/test_other.py": "def test_unrelated():\n    assert 1 + 1 == 2\n",
        },
    )
    data = run(cli, tmp_path, root / "src/shop/labels.py")
    assert data["status"] in ("improved", "unchanged"), data["_out"]
    assert data["baseline"]["evidence"]["label"]["calls"] == 3
    selection = data["baseline"]["selection"]
    assert selection["mode"] == "traced" and (selection["test_files"], selection["test_files_run"]) == (2, 1)
    assert selection["tests"] == ["tests/unit/test_labels.py::test_label"]
    assert "tests: 1 from 1 of 2 test files judge the run" in data["_out"]

    again = run(cli, tmp_path, root / "src/shop/labels.py")  # the same project state: the cached selection
    assert again["baseline"]["selection"]["mode"] == "cached" and again["baseline"]["tests"]["passed"] == 1


def test_namespace_package_with_tox_ini_and_setup_cfg_testpaths(cli, tmp_path):
    namespace = write(
        tmp_path / "ns-repo",
        {
            "tox.ini": "[pytest]\ntestpaths = tests\n",
            "ns/tools/__init__.py": "",
            "ns/tools/calc.py": CALC,
            "tests/test_calc.py": "from ns.tools.calc import total\n\n\ndef test_total():\n"
            "    assert total([1, 2, 3]) == 6\n    assert total([]) == 0\n    assert total([5]) == 5\n",
        },
    )
    data = run(cli, tmp_path, namespace / "ns/tools/calc.py")
    assert data["status"] in ("improved", "unchanged"), data["_out"]
    assert data["baseline"]["evidence"]["total"]["calls"] == 3  # recorded as the tests import it

    flat = write(
        tmp_path / "cfg-repo",
        {
            "setup.cfg": "[tool:pytest]\ntestpaths = checks\n",
            "calc.py": CALC,
            "checks/test_calc.py": "from calc import total\n\n\ndef test_total():\n"
            "    assert total([1, 2]) == 3\n    assert total([]) == 0\n    assert total([4]) == 4\n",
            "test_broken_elsewhere.py": "from calc import total\n\n\ndef test_not_in_testpaths():\n    assert False\n",
        },
    )
    data = run(cli, tmp_path, flat / "calc.py")
    assert data["baseline"]["tests"] == {"passed": 1, "failed": 0}, data["_out"]  # testpaths honoured


def test_hypothesis_tests_run_with_its_plugin_only_where_the_project_names_it(cli, tmp_path):
    # Hypothesis's pytest plugin costs about a second per pytest process: it is left out unless the
    # project's configuration or a conftest names hypothesis (recording/plugins.py); @given needs only the
    # package, and a profile or option in the configuration keeps the plugin.
    given_test = (
        "from hypothesis import given, strategies as st\nfrom calc import total\n\n\n"
        "@given(st.lists(st.integers(), max_size=5))\ndef test_total(values):\n"
        "    assert total(values) == sum(values)\n"
    )
    plain = write(tmp_path / "given", {"pytest.ini": "[pytest]\n", "calc.py": CALC, "test_calc.py": given_test})
    data = run(cli, tmp_path, plain / "calc.py")
    assert data["baseline"]["tests"] == {"passed": 1, "failed": 0}, data["_out"]

    profiled = write(
        tmp_path / "profiled",
        {
            "pytest.ini": "[pytest]\naddopts = --hypothesis-profile=quick --hypothesis-show-statistics\n",
            "conftest.py": "from hypothesis import settings\n\nsettings.register_profile('quick', max_examples=5)\n",
            "calc.py": CALC,
            "test_calc.py": given_test,
        },
    )
    data = run(cli, tmp_path, profiled / "calc.py")  # without the plugin pytest refuses these options
    assert data["baseline"]["tests"] == {"passed": 1, "failed": 0}, data["_out"]


def test_a_baseline_time_out_and_an_uninstalled_project_say_what_is_wrong(cli, tmp_path):
    slow = write(
        tmp_path / "slow",
        {
            "pytest.ini": "[pytest]\n",
            "calc.py": CALC,
            "test_calc.py": "import time\nfrom calc import total\n\n\ndef test_total():\n"
            "    time.sleep(60)\n    assert total([1]) == 1\n",
        },
    )
    data = run(cli, tmp_path, slow / "calc.py", "--timeout", "3", expect=ExitCode.BASELINE_TIMEOUT)
    message = data["error"]["message"]
    assert data["error"]["code"] == 22 and "stopped after 3s (--timeout 3) while running test_calc.py::test_total"
    assert "--tests PATH" in message and "fails its own tests" not in message

    uninstalled = write(
        tmp_path / "meta",
        {
            "pyproject.toml": '[project]\nname = "metapkg-not-installed"\nversion = "1.0"\n',
            "src/metapkg/__init__.py": "import importlib.metadata\n\n"
            '__version__ = importlib.metadata.version("metapkg-not-installed")\n',
            "src/metapkg/calc.py": CALC,
            "tests/test_calc.py": "from metapkg.calc import total\n\n\ndef test_total():\n    assert total([1]) == 1\n",
        },
    )
    data = run(cli, tmp_path, uninstalled / "src/metapkg/calc.py", expect=ExitCode.TESTS_NOT_IMPORTABLE)
    assert "pip install -e ." in data["error"]["message"] and "not installed" in data["error"]["message"]

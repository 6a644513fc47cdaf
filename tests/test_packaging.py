"""`pip install .` (a wheel, not an editable checkout) must find tasks/ and sandbox/, and the host must speak the
sandbox's protocol from the very files the sandbox runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO, fenced, write_script

# Where an installation finds its folders, and which protocol module the host's evaluation imports.
HOST_PATHS = """
import coderefine.resources as r
import coderefine.evaluation.evaluator
import coderefine_sandbox.protocol as p
print(r.tasks_dir()); print(r.sandbox_dir()); print(p.__file__)
"""


@pytest.mark.slow
def test_wheel_carries_tasks_and_sandbox_and_runs_from_them(tmp_path, make_project):
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", wheels, REPO],
        check=True,
        capture_output=True,
    )
    (wheel,) = wheels.glob("coderefine-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for required in (
        "coderefine/_bundled/tasks/optimize/task.toml",
        "coderefine/_bundled/tasks/readability/refine.md",
        "coderefine/_bundled/sandbox/coderefine_sandbox/runner.py",
        "coderefine/_bundled/sandbox/coderefine_sandbox/recording/pytest_plugin.py",
        "coderefine/_bundled/sandbox/coderefine_sandbox/protocol/__init__.py",
    ):
        assert required in names, required
    # One copy of the sandbox package: the host loads the bundled one, which the sandbox runs too.
    assert not any(name.startswith("coderefine_sandbox/") for name in names)

    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", site, wheel],
        check=True,
        capture_output=True,
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    where = subprocess.run(
        [sys.executable, "-c", HOST_PATHS],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    ).stdout.split()
    assert all(path.startswith(str(site)) for path in where), where
    sandbox, protocol = Path(where[1]), Path(where[2])
    assert protocol == sandbox / "coderefine_sandbox" / "protocol" / "__init__.py"

    root = make_project(
        {
            "mod.py": "def f(a, b):\n    c = a + b\n    return c\n",
            "test_mod.py": "from mod import f\n\ndef test_f():\n    assert f(1, 2) == 3\n    assert f(0, 0) == 0\n"
            "    assert f(2, 5) == 7\n",
        }
    )
    script = write_script(tmp_path / "s.json", [fenced("def f(first, second):\n    return first + second\n")])
    report = tmp_path / "r.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "coderefine",
            "readability",
            root / "mod.py",
            "--provider",
            "scripted",
            "--script",
            script,
            "--report",
            report,
        ],
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(report.read_text())["status"] == "improved"


def test_a_checkout_speaks_the_protocol_of_its_own_sandbox_folder():
    where = subprocess.run(
        [sys.executable, "-c", HOST_PATHS], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout.split()
    assert Path(where[2]).resolve() == (REPO / "sandbox" / "coderefine_sandbox" / "protocol" / "__init__.py").resolve()


def test_the_host_refuses_a_sandbox_package_loaded_from_elsewhere(tmp_path):
    impostor = tmp_path / "coderefine_sandbox"
    impostor.mkdir()
    (impostor / "__init__.py").write_text("", encoding="utf-8")
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import sys; sys.path.insert(0, {str(tmp_path)!r}); import coderefine_sandbox; {HOST_PATHS}",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode != 0
    assert "coderefine_sandbox is already imported from" in proc.stderr

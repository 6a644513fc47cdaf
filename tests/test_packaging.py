"""`pip install .` (a wheel, not an editable checkout) must find tasks/ and sandbox/."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile

import pytest

from tests.conftest import REPO, fenced, write_script


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
        "coderefine/_bundled/sandbox/coderefine_sandbox/pytest_plugin.py",
    ):
        assert required in names, required

    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", site, wheel],
        check=True,
        capture_output=True,
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    where = subprocess.run(
        [sys.executable, "-c", "import coderefine.resources as r; print(r.tasks_dir()); print(r.sandbox_dir())"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    ).stdout.split()
    assert all(path.startswith(str(site)) for path in where), where

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

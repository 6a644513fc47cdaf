"""The code base stays ruff clean (lint and format), as the project's standards require."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO


def test_ruff_check_and_format():
    for args in (["check", "."], ["format", "--check", "."]):
        proc = subprocess.run([sys.executable, "-m", "ruff", *args], cwd=REPO, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr

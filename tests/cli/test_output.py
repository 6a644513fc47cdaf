"""Output that is not a terminal (a pipe, a file, a CI log) is never cut to 80 columns."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.mark.parametrize(("columns", "cut"), [(None, False), ("60", True)])
def test_a_long_line_reaches_a_pipe_whole_unless_columns_says_otherwise(tmp_path, columns, cut):
    model = "a-model-name-" + "x" * 150  # one table cell far wider than 80 columns
    env = {name: value for name, value in os.environ.items() if name != "COLUMNS"}
    env |= {"NO_COLOR": "1"} | ({"COLUMNS": columns} if columns else {})
    proc = subprocess.run(
        [sys.executable, "-m", "coderefine", "config", str(tmp_path), "--model", model],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    whole = any(model in line for line in proc.stdout.splitlines())
    assert whole is not cut, proc.stdout

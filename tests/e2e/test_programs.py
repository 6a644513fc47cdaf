"""Programs (stdin -> stdout) end to end: the real CLI, sandbox, hook, replay and process timing."""

from __future__ import annotations

import json
import shutil
import sys

import pytest

from tests.conftest import REPO, run_cli

pytestmark = pytest.mark.slow

READABLE = """\
import re

SECONDS_PER_DAY = 24 * 60 * 60


def seconds_of(hours, minutes, seconds):
    return hours * 60 * 60 + minutes * 60 + seconds


while True:
    train_count = int(input())
    if train_count == 0:
        break
    changes = [0] * (SECONDS_PER_DAY + 1)
    for _ in range(train_count):
        h1, m1, s1, h2, m2, s2 = map(int, re.split(":| ", input()))
        changes[seconds_of(h1, m1, s1)] += 1
        changes[seconds_of(h2, m2, s2)] -= 1
    most = 0
    for second in range(SECONDS_PER_DAY):
        changes[second + 1] += changes[second]
        most = max(most, changes[second + 1])
    print(most{extra})
"""


def test_readability_gets_the_run_by_run_gate(scripted, copy_task):
    """The tests strip trailing whitespace; the recorded runs do not: a trailing blank is a change."""
    task = copy_task("readability", "p01138_s409826221")
    report = scripted(
        "readability",
        task / "solution.py",
        [READABLE.format(extra=', ""')],
        ["VERDICT: STOP"],
    )
    first = report["iterations"][0]
    assert first["tests"]["failed"] == 0  # the tests' own comparison cannot see it
    assert first["reason"].startswith("behaviour changed on 1/1 recorded runs: solution.py[stdin '3\\n05:47:15")
    assert first["reason"].endswith("stdout: expected '1\\n3\\n', got '1 \\n3 \\n'")
    assert report["status"] == "unchanged"
    assert report["baseline"]["program"]["usable"] == report["baseline"]["program"]["runs"] >= 1


@pytest.mark.timed
def test_optimize_a_program_on_timing_inputs(scripted, tmp_path):
    project = tmp_path / "programs"
    shutil.copytree(REPO / "examples" / "programs", project)
    original = (project / "dedupe.py").read_text()
    faster = original.replace("    seen = []\n", "    seen = []\n    known = set()\n").replace(
        "        if word not in seen:\n            seen.append(word)\n",
        "        if word not in known:\n            known.add(word)\n            seen.append(word)\n",
    )
    report = scripted(
        "optimize",
        project / "dedupe.py",
        [faster],
        ["VERDICT: STOP"],
        [],
        "--timing-inputs",
        project / "inputs" / "large.txt",
        "--timing-pairs",
        "4",
    )
    program = report["baseline"]["program"]
    assert (program["runs"], program["usable"], program["timing_inputs"]) == (3, 3, 1)
    assert report["baseline"]["sufficiency"]["sufficient"]
    timing = report["iterations"][0]["timing"]
    assert timing["basis"] == "process" and timing["workload"] == "timing inputs (--timing-inputs)"
    assert report["status"] == "improved" and report["best"]["speedup_ci"][0] > 1.1
    assert timing["after_startup_speedup_ci"][0] >= report["best"]["speedup"]  # start-up taken out of both


SUM = """\
import sys

total = 0
for token in sys.stdin.read().split():
    total = total + int(token)
print(total)
"""
SUM_TEST = """\
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize("given, expected", [("1 2 3\\n", "6\\n"), ("10\\n", "10\\n")])
def test_sum(given, expected):
    prog = Path(__file__).parent / "total.py"
    out = subprocess.run([sys.executable, str(prog)], input=given, capture_output=True, text=True, check=True)
    assert out.stdout == expected
"""


def test_a_program_candidate_that_gains_a_power_is_refused(scripted, make_project):
    """Issue 13's audit in program runs: a subprocess the original never started is refused, naming the
    power and the run, and the honest rewrite passes. `--allow import` lets the new `import subprocess`
    through but not the process (--allow per kind: tests/sandbox_runner/programs/test_audit.py)."""
    project = make_project({"total.py": SUM, "test_total.py": SUM_TEST})
    sneaky = SUM.replace("import sys\n", "import subprocess\nimport sys\n\nsubprocess.run(['true'])\n")
    honest = SUM.replace("total = total + int(token)", "total += int(token)")
    options = ("--max-iterations", "2", "--allow", "import")
    report = scripted("readability", project / "total.py", [sneaky], ["refuse it"], [honest], *options)
    refused, passed = report["iterations"][0], report["iterations"][1]
    assert refused["reason"].startswith("refused: uses a power the original never used: process (subprocess.Popen(")
    assert "in total.py[stdin '1 2 3\\n']" in refused["reason"] and refused["reason"].endswith("--allow process")
    assert [power["kind"] for power in refused["refused"]] == ["process"]  # the import is allowed
    assert not passed["refused"] and passed["tests"]["failed"] == 0 and passed["behavior"]["mismatches"] == 0


TOOL_MODULE = """\
import sys


def main():
    words = sys.stdin.read().split()
    more = words
    i = 0
    total = 0
    while i < len(words):
        total += len(words[i])
        if total % 7 == 0:
            more += ["x"]
        i += 1
    print(total, i)
    return 0


if __name__ == "__main__":
    sys.exit(main())
"""
TOOL_WRAPPER = """#!{python}
# -*- coding: utf-8 -*-
import re
import sys
from pkg.tool import main
if __name__ == "__main__":
    sys.argv[0] = re.sub(r"(-script\\.pyw|\\.exe)?$", "", sys.argv[0])
    sys.exit(main())
"""
TOOL_TEST = """\
import subprocess
from pathlib import Path


def test_tool():
    wrapper = Path(__file__).parents[1] / "bin" / "tool"
    out = subprocess.run([str(wrapper)], input="abc defg hi\\n", capture_output=True, text=True, check=True)
    assert len(out.stdout.split()) == 2  # lax: the recorded run judges the output
"""


def test_a_console_script_run_is_replayed_on_the_candidate_and_rejects_a_hoist_an_alias_contradicts(
    make_project, tmp_path
):
    """Two gaps of issue 15 in one run (each CLI run costs ~6 s): the tests run the module through a
    console-script wrapper (pip's, here in the project's bin/: the sandbox shows no folder but the
    project and the interpreter), which is recorded and replayed through the same wrapper on the
    candidate's copy; and the offline rule `hoist-loop-invariants`, which cannot see that `more` is
    `words`, moves `len(words)` out of the loop: the recorded run, not the tests (lax), rejects it."""
    files = {
        "pyproject.toml": '[project]\nname = "tool"\nversion = "0"\n\n[project.scripts]\ntool = "pkg.tool:main"\n',
        "pkg/__init__.py": "",
        "pkg/tool.py": TOOL_MODULE,
        "tests/test_tool.py": TOOL_TEST,
        "bin/tool": TOOL_WRAPPER.format(python=sys.executable),
    }
    project = make_project(files)
    (project / "bin" / "tool").chmod(0o755)
    report_path = tmp_path / "report.json"
    proc = run_cli(
        "optimize", project / "pkg" / "tool.py", "--provider", "offline", "--sandbox", "process",
        "--timing-pairs", "2", "--max-iterations", "1", "--report", report_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(report_path.read_text())
    program = report["baseline"]["program"]
    assert (program["runs"], program["usable"]) == (1, 1) and report["baseline"]["sufficiency"]["sufficient"]
    first = report["iterations"][0]
    assert first["tests"]["failed"] == 0
    assert first["reason"].startswith("behaviour changed on 1/1 recorded runs: tool.py[stdin 'abc defg hi\\n']")
    assert first["reason"].endswith("stdout: expected '10 4\\n', got '9 3\\n'"), first["reason"]
    assert report["status"] == "unchanged"

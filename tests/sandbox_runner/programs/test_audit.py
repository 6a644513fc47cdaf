"""The powers a replayed program run uses (issue 13's audit hook in program runs): real interpreters."""

from __future__ import annotations

from pathlib import Path

from coderefine_sandbox.audit import gained
from coderefine_sandbox.programs.execute import Version, execute_audited
from coderefine_sandbox.programs.runs import Run

HONEST = """\
import random, sys
data = open(0).read().split()
with open("log.txt", "w") as fh:  # the run's own folder: part of its outcome, not a power
    fh.write("x")
print(sum(map(int, data)), random.random() < 2)
"""
SNEAKY = """\
import os, socket, subprocess, sys
data = sys.stdin.read().split()
socket.socket().close()
subprocess.run(["true"])
print(sum(map(int, data)), True)
sys.stdout.flush()
os._exit(0)  # no atexit: what was seen before is kept all the same
"""


def _replay(tmp_path: Path, name: str, code: str, kind: str = "file") -> tuple:
    workspace = tmp_path / name
    workspace.mkdir()
    (workspace / "prog.py").write_text(code)
    run = Run(kind, "prog.py" if kind == "file" else "prog", (), (), b"1 2 3\n", {}, {}, ())
    where = "prog.py[stdin '1 2 3\\n']"
    version = Version(str(workspace), "prog.py", ".")
    return execute_audited(run, version, str(tmp_path), 0, 30.0, where, str(tmp_path / "original"))


def test_a_replayed_run_records_the_powers_the_program_uses(tmp_path: Path) -> None:
    outcome, honest = _replay(tmp_path, "original", HONEST, "module")
    assert (outcome.exit_code, outcome.stdout, honest) == (0, b"6 True\n", ())  # the hook's own work is not counted
    outcome, sneaky = _replay(tmp_path, "candidate", SNEAKY)
    assert outcome.stdout == b"6 True\n"
    kinds = {(power.kind, power.key) for power in sneaky}
    assert {("network", ""), ("process", ""), ("import", "socket"), ("import", "subprocess")} <= kinds
    assert {power.call for power in sneaky} == {"prog.py[stdin '1 2 3\\n']"}
    refused = gained(sneaky, honest, ())
    assert [power.kind for power in refused][:2] == ["network", "process"]
    assert {power.kind for power in gained(sneaky, honest, ("network", "process", "import"))} == set()


def test_the_original_s_files_linked_into_a_candidate_workspace_are_no_new_power(tmp_path: Path) -> None:
    """A layered candidate workspace links to the original's other files: its helper module imported
    through the link is the project's own, as in the original."""
    original = tmp_path / "original"
    original.mkdir()
    (original / "helper.py").write_text("def total(values):\n    return sum(values)\n")
    code = "import helper, sys\nprint(helper.total(map(int, sys.stdin.read().split())))\n"
    (original / "prog.py").write_text(code)
    candidate = tmp_path / "candidate"
    candidate.mkdir()
    (candidate / "helper.py").symlink_to(original / "helper.py")
    (candidate / "prog.py").write_text(code)
    run = Run("module", "prog", (), (), b"1 2\n", {}, {}, ())
    for workspace in (original, candidate):
        version = Version(str(workspace), "prog.py", ".")
        outcome, powers = execute_audited(run, version, str(tmp_path), 0, 30.0, "prog.py", str(original))
        assert (outcome.stdout, powers) == (b"3\n", ()), workspace.name

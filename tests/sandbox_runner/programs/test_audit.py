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
    return execute_audited(run, Version(str(workspace), "prog.py", "."), str(tmp_path), 0, 30.0, where)


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

"""The audit hook (coderefine_sandbox/audit.py) and the replay's trust checks, run in fresh interpreters:
an audit hook cannot be removed once added, so none is ever added to the test process itself."""

from __future__ import annotations

import glob
import json
import os
import pickle
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from coderefine_sandbox.audit import gained
from coderefine_sandbox.protocol import (
    BehaviorTolerances,
    CallsHeader,
    Capability,
    ReplayReport,
    ReplayRequest,
    read_json,
    write_calls,
    write_json,
)
from coderefine_sandbox.workload import held_out_indices

from coderefine.resources import sandbox_dir

# Each power used once inside a watched window, and the same work done outside any window.
MODULE = """
import time


def network():
    import socket
    socket.socket().close()


def process():
    import subprocess, sys
    subprocess.run([sys.executable, "-c", "pass"], check=True)


def write_home():
    import os
    with open(os.path.join(os.environ["HOME"], "x"), "w") as fh:
        fh.write("x")


def write_temp():
    import tempfile
    with tempfile.TemporaryFile() as fh:
        fh.write(b"x")


def read_data():
    import os
    with open(os.path.join(os.path.dirname(__file__), "data.txt")) as fh:
        return fh.read()


def dynamic():
    return eval("1 + 1")


def stdlib_dynamic():
    from collections import namedtuple
    return namedtuple("P", "a b")(1, 2)


def thread():
    import threading
    threading.Thread(target=time.sleep, args=(0.5,), daemon=True).start()


def clock():
    time.perf_counter = lambda: 0.0


def project_import():
    import helper
    return helper.VALUE
"""

SCRIPT = """
import json, os, sys
sys.path.insert(0, os.getcwd())
from coderefine_sandbox.audit import Recorder
recorder = Recorder(os.getcwd())
import mod
mod.network()  # outside any window: the runner's own activity is never counted
for name in sys.argv[1:]:
    with recorder.watch(name):
        getattr(mod, name)()
print(json.dumps([[c.kind, c.key, c.call] for c in recorder.capabilities]))
"""


def _other_pythons() -> list[str]:
    """Interpreters of other minor versions found here (pyenv's, or on PATH), one per version: the audit
    reaches into CPython internals that change between versions (3.13 renamed threading's entry point)."""
    found: dict[str, str] = {}
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    candidates = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin/python3")))
    candidates += [path for minor in range(10, 15) if (path := shutil.which(f"python3.{minor}"))]
    for path in candidates:
        try:
            version = subprocess.run(
                [path, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                capture_output=True, text=True, timeout=10,
            ).stdout.strip()  # fmt: skip
        except OSError:
            continue
        if version and version != here and tuple(map(int, version.split("."))) >= (3, 10):  # requires-python
            found.setdefault(version, path)
    return [found[version] for version in sorted(found, key=lambda v: tuple(map(int, v.split("."))))]


def _powers(tmp_path: Path, *calls: str, python: str = sys.executable) -> list[list[str]]:
    (tmp_path / "mod.py").write_text(MODULE)
    (tmp_path / "helper.py").write_text("VALUE = 1\n")
    (tmp_path / "data.txt").write_text("data")
    (tmp_path / "home").mkdir(exist_ok=True)
    (tmp_path / "tmp").mkdir(exist_ok=True)
    env = {
        **os.environ,
        "PYTHONPATH": str(sandbox_dir()),
        "HOME": str(tmp_path / "home"),
        "TMPDIR": str(tmp_path / "tmp"),
    }
    proc = subprocess.run(
        [python, "-c", SCRIPT, *calls], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_each_power_is_recorded_with_the_call_it_happened_in(tmp_path):
    found = _powers(
        tmp_path, "network", "process", "write_home", "read_data", "dynamic", "thread", "clock", "write_temp"
    )
    kinds = {kind: call for kind, _, call in found}
    assert kinds == {
        "network": "network",
        "process": "process",
        "import": "process",  # subprocess: a sensitive module, new to this process
        "file_write": "write_home",
        "file_read": "read_data",
        "dynamic_code": "dynamic",
        "thread": "thread",
        "clock": "clock",
    }
    assert ["file_read", "<workspace>/data.txt", "read_data"] in found  # paths compare across workspaces
    assert ["file_write", "~/x", "write_home"] in found  # ... and HOME folders


OTHER_PYTHONS = _other_pythons() or [pytest.param(None, marks=pytest.mark.skip(reason="no other Python here"))]


@pytest.mark.parametrize("python", OTHER_PYTHONS)
def test_threads_and_the_network_are_seen_on_other_python_versions(tmp_path, python):
    assert {kind for kind, _, _ in _powers(tmp_path, "thread", "network", python=python)} == {"thread", "network"}


def test_the_standard_library_and_the_project_and_the_temporary_area_are_not_new_powers(tmp_path):
    assert _powers(tmp_path, "stdlib_dynamic", "write_temp", "project_import") == []


def test_a_candidate_is_refused_only_the_powers_the_original_never_used_and_not_allowed():
    def power(kind: str, key: str = "") -> Capability:
        return Capability(kind, key, f"{kind} {key}", "f(1)")

    candidate = (power("import", "requests"), power("file_read", "<workspace>/b"), power("network"))
    original = (power("file_read", "<workspace>/a"), power("network"))
    assert [c.kind for c in gained(candidate, original, ())] == ["file_read", "import"]  # most serious first
    assert [c.kind for c in gained(candidate, original, ("import",))] == ["file_read"]
    assert gained(candidate, candidate, ()) == ()


def test_held_out_calls_are_every_second_call_of_each_target_from_the_largest():
    records = [{"target": t, "args": b"x" * n} for t, n in [("f", 5), ("f", 1), ("g", 2), ("f", 9), ("f", 3)]]
    # f by size, largest first: 9 (index 3), 5 (0), 3 (4), 1 (1) -> 9 and 3 held out; g's only call is shown
    assert held_out_indices(records) == {3, 4}
    assert held_out_indices(records) == held_out_indices([dict(r) for r in records])  # deterministic
    # Three calls of very different sizes (examples/routes): the large one is held out, never shown.
    assert held_out_indices([{"target": "f", "args": b"x" * n} for n in (3, 800, 1)]) == {1, 2}


COUNTER = """
_calls = 0


def f(x):
    global _calls
    _calls += 1
    return x * 2 if _calls <= 3 else x * 2 + 1  # right the first three times only
"""


def _record(args: tuple, value: object) -> dict[str, object]:
    return {
        "target": "f",
        "args": pickle.dumps((args, {})),
        "outcome": "return",
        "value": pickle.dumps(value),
        "stdout": "",
        "entropy": None,
        "args_after": None,
    }


def _replay(workspace: Path, module: str, calls: Path, out: Path, original: Path | None = None) -> ReplayReport:
    """The replay step run as the runner runs it, on its typed request, exact tolerances."""
    request = out.with_suffix(".request.json")
    step = ReplayRequest(
        workspace=str(workspace),
        module=module,
        import_root="",
        calls=str(calls),
        exclude=None,
        out=str(out),
        tolerances=BehaviorTolerances(rel_tol=0.0, abs_tol=0.0, unordered=()),
        profile=False,
        original_workspace=None if original is None else str(original),
        audit=True,
    )
    write_json(str(request), step)
    argv = [sys.executable, "-m", "coderefine_sandbox.behaviour.replay", str(request)]
    env = {**os.environ, "PYTHONPATH": str(sandbox_dir())}
    subprocess.run(argv, cwd=workspace, env=env, check=True, timeout=60)
    return read_json(ReplayReport, str(out))


def test_replay_repeats_the_calls_in_reverse_and_catches_state_that_changes_later_results(tmp_path):
    (tmp_path / "mod.py").write_text(COUNTER)
    calls = tmp_path / "calls.pkl"
    write_calls(str(calls), CallsHeader("mod", None), [_record((n,), 2 * n) for n in (1, 2, 3)])
    report = _replay(tmp_path, "mod", calls, tmp_path / "out.json")
    assert report.mismatches == 3 and {e.kind for e in report.examples} == {"repeat return"}
    assert report.capabilities == ()
    assert report.held_out_mismatches == 2  # two of the three calls are held out ...
    # ... every second from the largest (equal sizes: in recording order)
    assert sorted(e.args for e in report.examples if e.held_out) == [
        textwrap.shorten("((1,), {})", 40),
        textwrap.shorten("((3,), {})", 40),
    ]


def test_a_layered_candidate_importing_the_original_s_sibling_module_gains_no_power(tmp_path):
    """A candidate workspace links to the original's other files: `pkg.helper` imported through the link is
    the project's own module (refused as a new import before --original-workspace)."""
    original, candidate = tmp_path / "original", tmp_path / "candidate"
    for folder in (original / "pkg", candidate / "pkg"):
        folder.mkdir(parents=True)
    (original / "pkg" / "__init__.py").write_text("")
    (original / "pkg" / "helper.py").write_text("def twice(x):\n    return 2 * x\n")
    (original / "pkg" / "mod.py").write_text("from pkg.helper import twice\n\ndef f(x):\n    return twice(x)\n")
    for name in ("__init__.py", "helper.py"):
        (candidate / "pkg" / name).symlink_to(original / "pkg" / name)
    (candidate / "pkg" / "mod.py").write_text((original / "pkg" / "mod.py").read_text())
    calls = tmp_path / "calls.pkl"
    write_calls(str(calls), CallsHeader("pkg.mod", None), [{**_record((2,), 4), "target": "f"}])
    report = _replay(candidate, "pkg.mod", calls, tmp_path / "out.json", original=original)
    assert (report.mismatches, report.capabilities) == (0, ())


ASYNC = """
import socket


async def f(x):
    return x * 2


async def g(x):
    socket.socket().close()
    return x * 2
"""


def test_an_async_call_s_fresh_event_loop_is_not_counted_as_its_power_and_its_own_socket_is(tmp_path):
    """The loop replay makes for an async call opens a socket pair to wake itself: the runner's doing, made and
    closed outside the call's window; a socket the coroutine opens is the call's."""
    (tmp_path / "mod.py").write_text(ASYNC)
    calls = tmp_path / "calls.pkl"
    records = [{**_record((n,), 2 * n), "asynchronous": "coroutine"} for n in (1, 2, 3)]
    write_calls(str(calls), CallsHeader("mod", None), records)
    report = _replay(tmp_path, "mod", calls, tmp_path / "out.json")
    assert (report.mismatches, report.capabilities) == (0, ())
    write_calls(str(calls), CallsHeader("mod", None), [{**record, "target": "g"} for record in records])
    report = _replay(tmp_path, "mod", calls, tmp_path / "out.json")
    assert report.mismatches == 0 and {c.kind for c in report.capabilities} == {"network"}


# A thread's event still being classified when the window closes (held here until it has) must not leave the
# window open: the runner's own write after it is not the candidate's.
CLOSING_RACE = """
import json, os, sys, threading
from coderefine_sandbox.audit import Recorder

entered, closed = threading.Event(), threading.Event()


class Held(Recorder):
    def _classify(self, event, args):
        if event == "socket.gethostname":  # the thread's event: classified only once the window has closed
            entered.set()
            closed.wait(10)
        super()._classify(event, args)


recorder = Held(os.getcwd())
with recorder.watch("call"):
    import socket
    thread = threading.Thread(target=socket.gethostname)
    thread.start()
    entered.wait(10)
closed.set()
thread.join()
with open("runner-output.txt", "w") as fh:  # the runner's own work, after the window
    fh.write("x")
print(json.dumps([[c.kind, c.key] for c in recorder.capabilities]))
"""


def test_a_thread_s_event_classified_as_the_window_closes_does_not_reopen_it(tmp_path):
    (tmp_path / "tmp").mkdir()
    env = {**os.environ, "PYTHONPATH": str(sandbox_dir()), "TMPDIR": str(tmp_path / "tmp")}  # not the workspace
    proc = subprocess.run(
        [sys.executable, "-c", CLOSING_RACE], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    kinds = {kind for kind, _ in json.loads(proc.stdout)}
    assert "file_write" not in kinds and {"thread", "network"} <= kinds

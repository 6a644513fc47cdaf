"""Untrusted candidates against the real tool, end to end, on each isolating backend (bubblewrap and
Docker): every attack must be contained, reported as a rejected candidate with a reason, the user's tree
and the host unchanged, the tool finishing normally, and (Docker) no container left behind.

All attacks run as successive candidates of one `coderefine readability` run per backend (one container
start, a few seconds each), but each is asserted on its own. A candidate reports what it observed by
failing its test with `ATTACK[name]: ...`; coderefine passes that message to the model in the next
feedback prompt, which `--trace` saves: that is where the tests read it. What the host sees (files,
processes, connections, containers) is checked on the host.

A few attacks are not contained by the process backend in some setups; EXPECTED says which (and why),
the tests assert exactly that, and the README's table shows the same. The attacks are bounded (1000
processes, 1.5 GiB of files) so that an uncontained one cannot take this machine down.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import textwrap
import threading
import uuid
from pathlib import Path

import pytest

from tests.conftest import REPO, fenced, require, write_script
from tests.sandboxes.test_docker import our_containers, require_docker

ORIGINAL = "def f(a, b):\n    c = a + b\n    d = c * 2\n    return d\n"
# Three calls: the sufficiency gate's default minimum, so that the run reaches the candidates.
TESTS = (
    "from mod import f\n\n\ndef test_f():\n    assert f(1, 2) == 6\n    assert f(0, 0) == 0\n    assert f(2, 3) == 10\n"
)
SECRET = "sk-coderefine-containment-" + uuid.uuid4().hex[:8]
MARKER = "9" + str(uuid.uuid4().int % 10**8)  # the background process's sleep time: unique, so findable
TIMEOUT = 8  # --timeout: the loop and sleep attacks each cost this much
ROOT = os.geteuid() == 0

# Every test reads the one run per backend (a module fixture): all on one xdist worker, so the runs happen once.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("containment")]

# attack -> backend -> contained? (the process backend's gaps are the kernel's rules, not our choice)
EXPECTED = {
    "fork-bomb": {"docker": True, "process": not ROOT},  # RLIMIT_NPROC, which the kernel does not apply to root
    "disk-fill": {"docker": True, "process": False},  # the workspace is on the host's disk; 1 GiB per file only
}


def _attack(name: str, body: str) -> str:
    """A candidate for f: run `body` (which sets `seen`), then fail the test, reporting what it saw."""
    return (
        f"def f(a, b):\n{textwrap.indent(textwrap.dedent(body).strip(), '    ')}\n"
        f"    raise AssertionError('ATTACK[{name}]: ' + str(seen))\n"
    )


def candidates(port: int, targets: list[Path]) -> list[tuple[str, str]]:
    return [
        (
            "network",
            _attack(
                "network",
                f"""
                import socket
                try:
                    socket.create_connection(("127.0.0.1", {port}), timeout=3).close()
                    outcome = "connected"
                except OSError as exc:
                    outcome = "blocked " + type(exc).__name__
                seen = outcome + " interfaces=" + ",".join(sorted(n for _, n in socket.if_nameindex()))
                """,
            ),
        ),
        (
            "write",
            _attack(
                "write",
                f"""
                written = []
                for target in {[str(t) for t in targets]!r}:
                    try:
                        with open(target, "a") as handle:
                            handle.write("escaped")
                        written.append(target)
                    except OSError:
                        pass
                seen = "written=" + repr(written)
                """,
            ),
        ),
        (
            "secret",
            _attack(
                "secret",
                """
                import os
                found = [k for k, v in os.environ.items() if "sk-coderefine" in v or k == "OPENAI_API_KEY"]
                for pid in filter(str.isdigit, os.listdir("/proc")):
                    try:
                        with open(f"/proc/{pid}/environ", "rb") as fh:
                            if b"sk-coderefine" in fh.read():
                                found.append(pid)
                    except OSError:
                        pass
                seen = "found=" + repr(found)
                """,
            ),
        ),
        (
            "fork-bomb",
            _attack(
                "fork-bomb",
                """
                import os, time
                made = 0
                try:
                    for _ in range(1000):
                        if os.fork() == 0:
                            time.sleep(120)
                            os._exit(0)
                        made += 1
                    stopped = "never"
                except OSError as exc:
                    stopped = type(exc).__name__
                seen = f"made={made} stopped={stopped}"
                """,
            ),
        ),
        (
            "memory",
            _attack(
                "memory",
                """
                hoard = []
                try:
                    while len(hoard) < 256:
                        hoard.append(bytearray(64 << 20))
                    stopped = "never"
                except MemoryError:
                    stopped = "MemoryError"
                seen = f"mib={len(hoard) * 64} stopped={stopped}"
                hoard.clear()
                """,
            ),
        ),
        (
            "disk-fill",
            _attack(
                "disk-fill",
                """
                import os
                written, stopped = 0, "never"
                try:
                    while written < (1536 << 20):
                        with open(f"fill-{written}", "wb") as fh:
                            fh.write(b"x" * (64 << 20))
                        written += 64 << 20
                except OSError as exc:
                    stopped = type(exc).__name__
                for name in os.listdir("."):
                    if name.startswith("fill-"):
                        os.remove(name)
                seen = f"mib={written >> 20} stopped={stopped}"
                """,
            ),
        ),
        (
            "background",
            _attack(
                "background",
                f"""
                import subprocess, sys
                child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep({MARKER})"],
                                         start_new_session=True)
                seen = "spawned"
                """,
            ),
        ),
        # Not an attack: the next candidate, in the same sandbox, looks for the background process and
        # passes its test only when it is gone (in Docker it would still be visible in the container).
        (
            "survivors",
            textwrap.dedent(f"""
                import os


                def f(a, b):
                    alive = []
                    for pid in filter(str.isdigit, os.listdir("/proc")):
                        try:
                            with open(f"/proc/{{pid}}/cmdline", "rb") as fh:
                                if b"time.sleep({MARKER})" in fh.read() and int(pid) != os.getpid():
                                    alive.append(pid)
                        except OSError:
                            pass
                    if alive:
                        raise AssertionError("ATTACK[survivors]: " + repr(alive))
                    return (a + b) * 2
                """).lstrip(),
        ),
        (
            "kill-parent",
            _attack(
                "kill-parent",
                """
                import os, signal
                killed, pid = [], os.getppid()
                while pid > 1:
                    try:
                        with open(f"/proc/{pid}/stat") as fh:
                            parent = int(fh.read().rsplit(")", 1)[1].split()[1])
                    except OSError:
                        parent = 0
                    try:
                        os.kill(pid, signal.SIGKILL)
                        killed.append(pid)
                    except OSError:
                        pass
                    pid = parent
                seen = "killed=" + repr(killed)
                """,
            ),
        ),
        ("loop", "def f(a, b):\n    while True:\n        pass\n"),
        ("sleep", "import time\n\n\ndef f(a, b):\n    time.sleep(10**9)\n    return (a + b) * 2\n"),
        # The tool still works after all that: an honest candidate is evaluated and passes.
        ("honest", "def f(a, b):\n    return (a + b) * 2\n"),
    ]


def tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(str(path.relative_to(root)).encode())
        if path.is_file() and not path.is_symlink():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def host_processes_with(needle: str) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if needle.encode() in (entry / "cmdline").read_bytes():
                    found.append(entry.name)
            except OSError:
                continue
    return found


class Listener:
    """A TCP server on the host's loopback that records every connection it accepts."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.5)
        self.port = self.server.getsockname()[1]
        self.accepted: list[tuple] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                connection, address = self.server.accept()
            except OSError:
                continue
            self.accepted.append(address)
            connection.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)
        self.server.close()


def _run(backend: str, base: Path) -> dict:
    project = base / "project"
    project.mkdir(parents=True)
    (project / "pytest.ini").write_text("[pytest]\n")
    (project / "mod.py").write_text(ORIGINAL)
    (project / "test_mod.py").write_text(TESTS)
    home = base / "home"
    home.mkdir()
    outside = [
        project / "mod.py",
        project / "escaped.txt",
        home / "escaped.txt",
        Path.home() / f"coderefine-escaped-{uuid.uuid4().hex[:8]}",
        Path("/etc/coderefine-escaped"),
        base / "escaped.txt",
    ]
    listener = Listener()
    attacks = candidates(listener.port, outside)
    write_script(
        base / "script.json",
        [fenced(attacks[0][1])],
        ["Try again.\nVERDICT: CONTINUE"] * len(attacks),
        [fenced(code) for _, code in attacks[1:]],
    )
    before = tree_digest(project)
    env = {**os.environ, "HOME": str(home), "OPENAI_API_KEY": SECRET, "COLUMNS": "200", "NO_COLOR": "1"}
    command = [sys.executable, "-m", "coderefine", "readability", str(project / "mod.py")]
    options = ["--provider", "scripted", "--script", str(base / "script.json"), "--report", str(base / "r.json")]
    options += ["--trace", str(base / "trace"), "--sandbox", backend, "--timeout", str(TIMEOUT)]
    options += ["--memory-mb", "1024", "--max-iterations", str(len(attacks)), "--patience", str(len(attacks))]
    try:
        proc = subprocess.Popen(
            [*command, *options], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        stdout, stderr = proc.communicate(timeout=600)
    finally:
        listener.close()
    report = json.loads((base / "r.json").read_text())
    trace = "\n".join(p.read_text() for p in sorted((base / "trace").glob("*-feedback.json")))
    observed = {}
    for name, _ in attacks:
        # The failure message, not the candidate's code (the prompt holds both).
        match = re.search(rf"AssertionError: ATTACK\[{re.escape(name)}\]: ([^\\\"\n]*)", trace)
        observed[name] = match.group(1) if match else None
    return {
        "backend": backend,
        "returncode": proc.returncode,
        "stdout": stdout,
        "stderr": stderr,
        "report": report,
        "iterations": {name: it for (name, _), it in zip(attacks, report["iterations"], strict=False)},
        "observed": observed,
        "tree_unchanged": tree_digest(project) == before,
        "outside": outside,
        "accepted_connections": list(listener.accepted),
        "survivors": host_processes_with(f"time.sleep({MARKER})"),
        "leaked_containers": our_containers(**{"coderefine.pid": str(proc.pid)}) if backend == "docker" else [],
    }


BACKENDS = ["process", "docker"]


@pytest.fixture(scope="module", params=BACKENDS)
def run(request, tmp_path_factory) -> dict:
    backend = request.param
    if backend == "docker":
        require_docker()
    else:
        if os.environ.get("CODEREFINE_REQUIRE_BWRAP") == "1":
            assert shutil.which("bwrap"), "CODEREFINE_REQUIRE_BWRAP=1 but bwrap is not installed"
        require(shutil.which("bwrap") is not None, "bubblewrap (bwrap) is not installed")
    return _run(backend, tmp_path_factory.mktemp(f"containment-{backend}"))


def _rejected(run: dict, name: str) -> dict:
    iteration = run["iterations"][name]
    assert iteration["verdict"] == "rejected" and iteration["reason"], iteration
    return iteration


def _contained(run: dict, attack: str) -> bool:
    return EXPECTED.get(attack, {}).get(run["backend"], True)


def test_the_tool_finishes_and_leaves_the_host_as_it_was(run):
    assert run["returncode"] == 0, run["stdout"][-3000:] + run["stderr"]
    assert "Traceback" not in run["stderr"]
    report = run["report"]
    assert report["sandbox"].startswith("docker (" if run["backend"] == "docker" else "process (bubblewrap)")
    assert len(report["iterations"]) == len(run["iterations"]) == 12
    assert run["tree_unchanged"]
    assert run["leaked_containers"] == []
    # The honest candidate after all the attacks was evaluated normally.
    assert run["iterations"]["honest"]["tests"] == {"passed": 1, "failed": 0}


def test_network(run):
    _rejected(run, "network")
    assert run["observed"]["network"].startswith("blocked ") and run["observed"]["network"].endswith("interfaces=lo")
    assert run["accepted_connections"] == []


def test_writes_outside_the_workspace(run):
    _rejected(run, "write")
    written = eval(run["observed"]["write"].removeprefix("written="))
    if run["backend"] == "docker":
        assert written == []
    else:  # bubblewrap puts a private, discarded tmpfs over /tmp (and the home folder): writes land there
        assert all(path.startswith("/tmp/") for path in written), written
    project_file, *elsewhere = run["outside"]
    assert project_file.read_text() == ORIGINAL
    for path in elsewhere:
        assert not path.exists(), path


def test_secret_from_the_environment(run):
    _rejected(run, "secret")
    assert run["observed"]["secret"] == "found=[]"
    assert SECRET not in json.dumps(run["report"])


def test_fork_bomb(run):
    iteration = _rejected(run, "fork-bomb")
    made, stopped = re.fullmatch(r"made=(\d+) stopped=(\w+)", run["observed"]["fork-bomb"]).groups()
    if _contained(run, "fork-bomb"):
        assert stopped == "BlockingIOError" and int(made) < 512, run["observed"]["fork-bomb"]
    else:  # documented gap: the bounded bomb got all its processes; they died with the test run
        assert stopped == "never" and int(made) == 1000
    assert "ATTACK[fork-bomb]" in iteration["reason"] or "failed" in iteration["reason"]


def test_memory_without_bound(run):
    _rejected(run, "memory")
    mib, stopped = re.fullmatch(r"mib=(\d+) stopped=(\w+)", run["observed"]["memory"]).groups()
    assert stopped == "MemoryError" and int(mib) <= 1024


def test_disk_fill(run):
    iteration = _rejected(run, "disk-fill")
    seen = run["observed"]["disk-fill"]
    if seen is None and not _contained(run, "disk-fill"):
        # Uncontained, writing 1.5 GiB to the host's disk can outlast --timeout when the other test worker
        # loads the disk too: the candidate's tests are then killed before they report what they wrote.
        assert re.search(r"timed out|killed|137|without a result", iteration["reason"]), iteration
        return
    mib, stopped = re.fullmatch(r"mib=(\d+) stopped=(\w+)", seen).groups()
    if _contained(run, "disk-fill"):
        assert stopped == "OSError" and int(mib) <= 1024, run["observed"]["disk-fill"]  # ENOSPC: the tmpfs is full
    else:  # documented gap: 1.5 GiB reached the host's disk (in the run's scratch folder, deleted afterwards)
        assert stopped == "never"


def test_background_process_does_not_outlive_its_job(run):
    _rejected(run, "background")
    assert run["observed"]["background"] == "spawned"
    assert run["iterations"]["survivors"]["tests"] == {"passed": 1, "failed": 0}, run["observed"]["survivors"]
    assert run["survivors"] == []


def test_kill_parent(run):
    iteration = _rejected(run, "kill-parent")
    assert "sandbox runner failed" in iteration["reason"]


@pytest.mark.parametrize("attack", ["loop", "sleep"])
def test_never_returning(run, attack):
    iteration = _rejected(run, attack)
    assert "timed out" in iteration["reason"] and "test_mod.py::test_f" in iteration["reason"]

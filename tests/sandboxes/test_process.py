"""Untrusted candidates against the real process sandbox: each attack is contained and reported as a
rejected candidate, the user's tree and the host stay unchanged, and the tool finishes."""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
from pathlib import Path

import pytest

from tests.conftest import fenced, require, write_script

ORIGINAL = "def f(a, b):\n    c = a + b\n    d = c * 2\n    return d\n"
# Three calls: the sufficiency gate's default minimum, so that the run reaches the candidates.
TESTS = (
    "from mod import f\n\n\ndef test_f():\n    assert f(1, 2) == 6\n    assert f(0, 0) == 0\n    assert f(2, 3) == 10\n"
)
HAS_BWRAP = shutil.which("bwrap") is not None


def _require_bwrap() -> None:
    if os.environ.get("CODEREFINE_REQUIRE_BWRAP") == "1":
        assert HAS_BWRAP, "CODEREFINE_REQUIRE_BWRAP=1 but bwrap is not installed"
    require(HAS_BWRAP, "bubblewrap (bwrap) is not installed")


# Every test here is a real run in a sandbox; on one xdist worker, so that the two backends' background
# processes (found by their command line) are never alive at once.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("sandbox-processes")]

BACKENDS = [pytest.param("process", id="bubblewrap"), pytest.param("subprocess", id="subprocess")]


@pytest.fixture
def attack(scripted, make_project, tmp_path):
    def go(candidate: str, backend: str, *options: str, env: dict[str, str] | None = None) -> tuple[dict, Path]:
        if backend == "process":
            _require_bwrap()
        root = make_project({"mod.py": ORIGINAL, "test_mod.py": TESTS})
        home = tmp_path / "home"
        home.mkdir(exist_ok=True)
        environment = {"HOME": str(home), **(env or {})}
        data = scripted(
            "readability",
            root / "mod.py",
            [candidate],
            (),
            (),
            "--sandbox",
            backend,
            *options,
            env=environment,
            timeout=300,
        )
        assert (root / "mod.py").read_text() == ORIGINAL
        if backend == "process":
            assert data["sandbox"] == "process (bubblewrap)"
        else:
            assert any("without bubblewrap" in w for w in data["warnings"])
        return data, root

    return go


@pytest.mark.parametrize("backend", BACKENDS)
def test_infinite_loop_is_a_rejected_candidate(attack, backend):
    data, _ = attack("def f(first, second):\n    while True:\n        pass\n", backend, "--timeout", "8")
    (only,) = data["iterations"]
    assert only["verdict"] == "rejected" and "timed out" in only["reason"] and "test_mod.py::test_f" in only["reason"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_memory_bomb_is_a_rejected_candidate(attack, backend):
    bomb = (
        "def f(first, second):\n    hoard = bytearray(64 * 1024 ** 3)\n    return (first + second) * 2 + len(hoard)\n"
    )
    data, _ = attack(bomb, backend, "--memory-mb", "1024")
    (only,) = data["iterations"]
    assert only["verdict"] == "rejected" and only["tests"]["failed"] == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_secrets_are_not_visible_to_candidates(attack, backend):
    snoop = (
        "import os\n\n\n"
        "def f(first, second):\n"
        "    leaked = [name for name in os.environ if 'KEY' in name or 'TOKEN' in name or 'SECRET' in name]\n"
        "    if leaked:\n"
        "        raise RuntimeError(f'candidate saw {leaked}')\n"
        "    return (first + second) * 2\n"
    )
    secrets = {"OPENAI_API_KEY": "sk-test-123", "GITHUB_TOKEN": "ghp_test", "AWS_SECRET_ACCESS_KEY": "x"}
    data, _ = attack(snoop, backend, env=secrets)
    (only,) = data["iterations"]
    assert only["tests"] == {"passed": 1, "failed": 0}, only["reason"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_background_process_does_not_outlive_the_run(attack, backend):
    spawner = (
        "import subprocess\n\n\n"
        "def f(first, second):\n"
        "    subprocess.Popen(['sleep', '987654'], start_new_session=True)\n"
        "    return (first + second) * 2\n"
    )
    attack(spawner, backend)
    survivors = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if b"987654" in (entry / "cmdline").read_bytes():
                    survivors.append(entry.name)
            except OSError:
                continue
    assert survivors == []


def test_bubblewrap_blocks_writes_outside_the_workspace(attack, tmp_path):
    _require_bwrap()
    user_file = tmp_path / "project" / "mod.py"
    targets = [
        user_file,
        tmp_path / "home" / "escaped.txt",
        Path("/etc/coderefine-escaped"),
        tmp_path / "escaped.txt",
    ]
    writer = (
        f"TARGETS = {[str(t) for t in targets]!r}\n\n\n"
        "def f(first, second):\n"
        "    for target in TARGETS:\n"
        "        try:\n"
        "            with open(target, 'w') as handle:\n"
        "                handle.write('escaped')\n"
        "        except OSError:\n"
        "            pass\n"
        "    return (first + second) * 2\n"
    )
    attack(writer, "process")
    assert user_file.read_text() == ORIGINAL
    for target in targets[1:]:
        assert not target.exists(), target


def test_bubblewrap_blocks_the_network(attack):
    _require_bwrap()
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    accepted: list[tuple] = []

    def serve() -> None:
        server.settimeout(30)
        try:
            while True:
                connection, address = server.accept()
                accepted.append(address)
                connection.close()
        except OSError:
            pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    caller = (
        "import socket\n\n\n"
        "def f(first, second):\n"
        "    try:\n"
        f"        socket.create_connection(('127.0.0.1', {port}), timeout=2).close()\n"
        "    except OSError:\n"
        "        pass\n"
        "    return (first + second) * 2\n"
    )
    try:
        attack(caller, "process")
    finally:
        server.close()
        thread.join(1)
    assert accepted == []


def test_bubblewrap_works_for_an_interpreter_under_tmp(make_project, tmp_path):
    """/tmp is an empty tmpfs inside the sandbox: a virtualenv living there must be mounted back."""
    _require_bwrap()
    import site
    import subprocess
    import sys
    import sysconfig

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    python = venv / "bin" / "python"
    venv_site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # This environment's packages (and coderefine itself) become visible to the new venv.
    visible = [*site.getsitepackages(), sysconfig.get_paths()["purelib"], str(Path(__file__).resolve().parents[2])]
    Path(venv_site, "outer.pth").write_text("\n".join(dict.fromkeys(visible)) + "\n")
    root = make_project({"mod.py": ORIGINAL, "test_mod.py": TESTS})
    script = write_script(tmp_path / "s.json", [fenced("def f(first, second):\n    return (first + second) * 2\n")])
    report = tmp_path / "r.json"
    proc = subprocess.run(
        [
            python,
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
            "--sandbox",
            "process",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(report.read_text())
    assert data["sandbox"] == "process (bubblewrap)" and data["iterations"][0]["tests"]["passed"] == 1

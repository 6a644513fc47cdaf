"""The Docker backend against the real engine: its container's settings, the isolation between jobs of
one run, limits, cleanup (also when coderefine is killed), and one-line errors. No mocks.

These tests skip with a reason when no Docker engine answers, and fail instead when
CODEREFINE_REQUIRE_DOCKER=1 (set by .ci/run, which starts dockerd) or CI=true.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from coderefine.errors import SandboxError
from coderefine.sandboxes.base import SandboxJob, sandbox_env
from coderefine.sandboxes.engine import LABEL, engine_problem
from tests.conftest import IN_CI, REPO, run_cli

REQUIRED = os.environ.get("CODEREFINE_REQUIRE_DOCKER") == "1" or IN_CI


def require_docker() -> None:
    """Skip when no Docker engine answers; fail where one must (CI, CODEREFINE_REQUIRE_DOCKER=1)."""
    problem = engine_problem(timeout=5)
    if problem is not None:
        if REQUIRED:
            pytest.fail(f"a Docker engine is required here (CODEREFINE_REQUIRE_DOCKER=1 or CI=true): {problem}")
        pytest.skip(f"Docker tests need a running engine: {problem}")


def our_containers(**labels: str) -> list:
    import docker

    selectors = [LABEL] + [f"{key}={value}" for key, value in labels.items()]
    # The low-level listing: the high-level one inspects each container it lists, and one that another
    # run removes in between (they auto-remove) fails the whole call with a 404.
    return docker.from_env().api.containers(all=True, filters={"label": selectors})


@pytest.fixture
def sandbox() -> Iterator:
    require_docker()
    from coderefine.sandboxes.docker import DockerSandbox

    box = DockerSandbox()
    try:
        yield box
    finally:
        box.close()


@pytest.fixture
def scratch() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="coderefine-test-"))
    yield folder
    subprocess.run(["rm", "-rf", str(folder)], check=False)


def job(scratch: Path, code: str, *, folder: str = "ws", keep: bool = False, timeout: float = 60, **kw) -> SandboxJob:
    """A job running `code` with the host interpreter in scratch/<folder> (created on the host)."""
    workspace = scratch / folder
    workspace.mkdir(exist_ok=True)
    home = workspace / "home"
    home.mkdir(exist_ok=True)
    return SandboxJob(
        argv=(sys.executable, "-c", textwrap.dedent(code)),
        cwd=workspace,
        writable=(workspace,),
        env=sandbox_env(home, {}),
        timeout=timeout,
        scratch=scratch,
        keep=keep,
        **kw,
    )


@pytest.mark.slow
def test_container_is_locked_down(sandbox, scratch):
    outcome = sandbox.run(job(scratch, "import os; print(os.getuid(), os.getgid())"))
    assert outcome.returncode == 0, outcome.stderr
    uid, gid = map(int, outcome.stdout.split())
    assert uid != 0 and gid != 0
    info = sandbox.api.inspect_container(sandbox.container)
    host, config = info["HostConfig"], info["Config"]
    assert host["ReadonlyRootfs"] is True
    assert host["NetworkMode"] == "none"
    assert host["CapDrop"] == ["ALL"] and not host["CapAdd"]
    assert host["SecurityOpt"] == ["no-new-privileges"]
    assert host["Privileged"] is False
    assert host["PidsLimit"] == sandbox.limits.pids
    assert host["Memory"] > 0 and host["MemorySwap"] == host["Memory"]
    assert host["NanoCpus"] > 0
    assert config["User"] == "65534:65534"
    assert not [e for e in config["Env"] or [] if not e.startswith("PATH=")]  # nothing from the host environment
    assert set(host["Tmpfs"]) == {"/tmp", str(scratch.resolve())}
    assert all("size=" in options for options in host["Tmpfs"].values())
    sources = [bind.split(":")[0] for bind in host["Binds"]]
    assert all(bind.endswith(":ro") for bind in host["Binds"])
    for forbidden in ("/", "/etc", "/root", "/home", "/var/run/docker.sock", "/run/docker.sock", str(scratch)):
        assert forbidden not in sources
    assert not any("docker.sock" in source for source in sources)
    assert config["Labels"][LABEL] == "1" and config["Labels"][f"{LABEL}.run"] == sandbox.run_id


@pytest.mark.slow
def test_job_sees_only_its_environment(sandbox, scratch, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-inside")
    code = "import os, json; print(json.dumps(dict(os.environ)))"
    outcome = sandbox.run(job(scratch, code))
    seen = json.loads(outcome.stdout)
    assert "OPENAI_API_KEY" not in seen and "sk-never-inside" not in outcome.stdout
    assert set(seen) <= {*sandbox_env(scratch, {}), "HOSTNAME", "CODEREFINE_SOLE_USER", "LC_CTYPE"}


@pytest.mark.slow
def test_jobs_cannot_touch_each_others_files(sandbox, scratch):
    first = sandbox.run(job(scratch, "open('kept.txt', 'w').write('baseline')", folder="original", keep=True))
    assert first.returncode == 0, first.stderr
    original = scratch / "original"
    attack = f"""
        import os, shutil
        results = {{}}
        for name, action in [
            ("overwrite", lambda: open({str(original / "kept.txt")!r}, "w").write("changed")),
            ("create", lambda: open({str(original / "new.txt")!r}, "w").write("x")),
            ("remove", lambda: os.remove({str(original / "kept.txt")!r})),
            ("rename", lambda: os.rename({str(original)!r}, {str(scratch / "moved")!r})),
            ("chmod", lambda: os.chmod({str(original)!r}, 0o777)),
            ("rmtree", lambda: shutil.rmtree({str(original)!r})),
        ]:
            try:
                action()
                results[name] = "done"
            except OSError as exc:
                results[name] = type(exc).__name__
        results["read"] = open({str(original / "kept.txt")!r}).read()
        print(results)
    """
    second = sandbox.run(job(scratch, attack, folder="cand-1"))
    results = eval(second.stdout)
    assert results.pop("read") == "baseline"
    assert set(results.values()) == {"PermissionError"}, results
    # The candidate's own folder is gone from the container once its job ended; the kept one stays.
    check = sandbox.run(
        job(
            scratch,
            f"import os; print(os.path.exists({str(scratch / 'cand-1')!r}), "
            f"'kept.txt' in os.listdir({str(original)!r}))",
        )
    )
    assert check.stdout.split() == ["False", "True"]


@pytest.mark.slow
def test_nothing_of_a_job_outlives_it(sandbox, scratch):
    marker = "98765" + str(os.getpid())
    spawn = f"""
        import subprocess, sys
        for _ in range(3):
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep({marker})"], start_new_session=True)
        open("/tmp/planted", "w").write("x")
    """
    assert sandbox.run(job(scratch, spawn)).returncode == 0
    # Still inside the same container: no process of the first job, and nothing it planted in /tmp.
    look = f"""
        import os
        alive = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            if int(pid) == os.getpid():
                continue  # our own command line holds the marker too
            try:
                if b"{marker}" in open(f"/proc/{{pid}}/cmdline", "rb").read():
                    alive.append(pid)
            except OSError:
                pass
        print(alive, os.path.exists("/tmp/planted"))
    """
    assert sandbox.run(job(scratch, look, folder="ws2")).stdout.strip() == "[] False"


@pytest.mark.slow
def test_a_job_past_its_limit_is_killed_and_the_next_one_runs(sandbox, scratch):
    stuck = sandbox.run(job(scratch, "import time; print('started', flush=True); time.sleep(3600)", timeout=3))
    assert stuck.timed_out and "started" in stuck.stdout
    after = sandbox.run(job(scratch, "print('fine')", folder="ws2"))
    assert after.stdout.strip() == "fine" and not after.timed_out


@pytest.mark.slow
def test_limits_hold_inside_a_job(sandbox, scratch):
    bombs = """
        import os, time
        made = 0
        try:
            for _ in range(2000):
                if os.fork() == 0:
                    time.sleep(60)
                    os._exit(0)
                made += 1
        except OSError:
            pass
        try:
            hoard = bytearray(8 << 30)
            memory = "allocated"
        except MemoryError:
            memory = "MemoryError"
        written = 0
        try:
            with open("fill", "wb") as fh:
                while written < (4 << 30):
                    fh.write(b"x" * (16 << 20))
                    written += 16 << 20
        except OSError as exc:
            pass
        print(made, memory, written >> 20)
    """
    outcome = sandbox.run(job(scratch, bombs, memory_mb=512, timeout=120))
    made, memory, written_mb = outcome.stdout.split()
    assert int(made) < sandbox.limits.pids
    assert memory == "MemoryError"
    assert int(written_mb) <= sandbox.limits.scratch_mb
    assert sandbox.run(job(scratch, "print('fine')", folder="ws2")).stdout.strip() == "fine"


@pytest.mark.slow
def test_close_removes_the_container(sandbox, scratch):
    sandbox.run(job(scratch, "pass"))
    assert our_containers(**{f"{LABEL}.run": sandbox.run_id})
    sandbox.close()
    sandbox.close()  # idempotent
    assert our_containers(**{f"{LABEL}.run": sandbox.run_id}) == []


@pytest.mark.slow
def test_no_container_survives_a_killed_coderefine(scratch):
    """SIGKILL gives no chance to clean up: the container's lifeline (its stdin) closes and it goes."""
    require_docker()
    code = f"""
        import sys, time
        from pathlib import Path
        from coderefine.sandboxes.docker import DockerSandbox
        from tests.sandboxes.test_docker import job
        box = DockerSandbox()
        print(box.run_id, flush=True)
        box.run(job(Path({str(scratch)!r}), "import time; time.sleep(3600)", timeout=3600))
    """
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], cwd=REPO, stdout=subprocess.PIPE, text=True)
    run_id = proc.stdout.readline().strip()
    deadline = time.monotonic() + 60
    while not our_containers(**{f"{LABEL}.run": run_id}) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert our_containers(**{f"{LABEL}.run": run_id}), "the container never started"
    time.sleep(1)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    while our_containers(**{f"{LABEL}.run": run_id}) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert our_containers(**{f"{LABEL}.run": run_id}) == []


@pytest.mark.slow
def test_unknown_image_is_one_line(sandbox):
    from coderefine.sandboxes.docker import DockerSandbox

    with pytest.raises(SandboxError, match="not on this Docker engine") as caught:
        DockerSandbox("coderefine-no-such-image:1")
    assert "\n" not in caught.value.message


@pytest.mark.slow
def test_auto_picks_docker_and_says_so():
    require_docker()
    from coderefine.sandboxes.registry import make_sandbox

    box = make_sandbox("auto")
    try:
        assert box.name.startswith("docker (") and "Docker engine answered" in box.reason
    finally:
        box.close()


@pytest.mark.slow
def test_without_an_engine_docker_is_a_one_line_sandbox_error(make_project, tmp_path):
    root = make_project(
        {
            "mod.py": "def f(a):\n    return a\n",
            "test_mod.py": "from mod import f\n\n\ndef test_f():\n    assert f(1) == 1\n",
        }
    )
    env = {"DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock"}
    proc = run_cli("readability", root / "mod.py", "--sandbox", "docker", env=env, timeout=60)
    assert proc.returncode == 11, proc.stdout + proc.stderr
    assert proc.stderr.startswith("error: no Docker engine answered") and proc.stderr.count("\n") == 1
    assert "Traceback" not in proc.stderr


def test_auto_without_an_engine_falls_back_to_process_and_says_why(monkeypatch, tmp_path):
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    from coderefine.sandboxes.registry import make_sandbox

    box = make_sandbox("auto")
    assert box.name.startswith("process") and "no Docker engine answered" in box.reason
    with pytest.raises(SandboxError, match="needs a Docker engine"):
        make_sandbox("auto", image="anything:1")


@pytest.mark.slow
def test_a_folder_the_sandbox_users_cannot_read_is_named_and_auto_falls_back(tmp_path):
    require_docker()
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    code = (
        "from coderefine.errors import SandboxError\n"
        "from coderefine.sandboxes.registry import make_sandbox\n"
        "box = make_sandbox('auto')\n"
        "print(box.name, '|', box.reason)\n"
        "try:\n"
        "    make_sandbox('docker')\n"
        "except SandboxError as exc:\n"
        "    print(exc.message)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(private)}
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, check=True)
    auto, error = proc.stdout.splitlines()
    assert auto.startswith("process") and "cannot read" in auto
    assert error.startswith(f"the Docker sandbox's users cannot read {private} (mode 0o700)")


@pytest.mark.slow
def test_build_failure_is_one_line(tmp_path):
    """`coderefine sandbox build` without a registry: the base image cannot be pulled, so one line and
    exit 11, no traceback. (A successful build is not exercised here: it needs a registry.)"""
    require_docker()
    proc = run_cli("sandbox", "build", "--tag", "coderefine-test-build:1", "--base", "coderefine-no-such-base:1")
    assert proc.returncode == 11, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: building coderefine-test-build:1 failed")
    proc = run_cli("sandbox", "build", "--requirements", tmp_path / "missing.txt")
    assert proc.returncode == 11 and "requirements file" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.slow
def test_image_option_reaches_the_backend(make_project):
    require_docker()
    root = make_project({"mod.py": "def f(a):\n    return a\n", "test_mod.py": "from mod import f\n"})
    proc = run_cli(  # auto: the image alone picks Docker
        "readability",
        root / "mod.py",
        "--image",
        "coderefine-no-such-image:1",
        env={"CODEREFINE_SANDBOX": "auto"},
        timeout=60,
    )
    assert proc.returncode == 11, proc.stdout + proc.stderr
    assert "coderefine-no-such-image:1" in proc.stderr and proc.stderr.count("\n") == 1
    proc = run_cli("readability", root / "mod.py", "--sandbox", "process", "--image", "x:1", timeout=60)
    assert proc.returncode == 2 and "--image needs --sandbox docker" in proc.stderr


@pytest.mark.slow
def test_ctrl_c_removes_the_container(make_project, tmp_path):
    require_docker()
    from tests.conftest import fenced, write_script

    root = make_project(
        {
            "mod.py": "def f(a, b):\n    return a + b\n",
            # Three calls: the sufficiency gate's default minimum, so that the run reaches the candidate.
            "test_mod.py": "from mod import f\n\n\ndef test_f():\n    assert f(1, 2) == 3\n    assert f(2, 2) == 4\n"
            "    assert f(0, 5) == 5\n",
        }
    )
    sleeper = "import time\n\n\ndef f(a, b):\n    time.sleep(3600)\n    return a + b\n"
    script = write_script(tmp_path / "s.json", [fenced(sleeper)])
    command = [sys.executable, "-m", "coderefine", "readability", str(root / "mod.py"), "--sandbox", "docker"]
    proc = subprocess.Popen(
        [*command, "--provider", "scripted", "--script", str(script), "--timeout", "120"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    deadline = time.monotonic() + 120  # a bound only: beside the other tests now, the container and baseline first
    while not _candidate_tests_running(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _candidate_tests_running(proc.pid), "the candidate never started"
    assert our_containers(**{f"{LABEL}.pid": str(proc.pid)})
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in stderr, stderr
    assert our_containers(**{f"{LABEL}.pid": str(proc.pid)}) == []


def _candidate_tests_running(pid: int) -> bool:
    """A candidate's pytest inside the container of the coderefine process `pid` (labelled with it), seen from
    the host: a job uid (>= 1,000,000). Only that container's processes are looked at (the engine lists them),
    so other tests' containers running beside this one do not count: the test need not run alone."""
    import docker

    client = docker.from_env().api
    for container in our_containers(**{f"{LABEL}.pid": str(pid)}):
        try:
            listing = client.top(container["Id"])
        except docker.errors.APIError:  # removed in between
            continue
        column = listing["Titles"].index("PID")
        for row in listing["Processes"] or []:
            entry = Path("/proc") / str(row[column])
            try:
                command = (entry / "cmdline").read_bytes()
                uid = int((entry / "status").read_text().split("Uid:")[1].split()[0])
            except (OSError, IndexError, ValueError):
                continue
            if uid >= 1_000_000 and b"pytest" in command and b"/cand-1" in command:
                return True
    return False

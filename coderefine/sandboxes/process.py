"""The `process` sandbox backend: bubblewrap when it works here, else a plain subprocess with rlimits.

With bubblewrap the job gets new user, network, PID, IPC and UTS namespaces (no network at all), a
read-only view of the system, the user's home hidden behind an empty tmpfs (the interpreter and the
coderefine install are mounted back read-only when they live there), its own /tmp, and write access to
the listed folders only; it runs as uid 65534 and dies with coderefine. Without bubblewrap the job is an
ordinary subprocess: resource limits, a scrubbed environment and a private working copy still apply,
but it can use the network and read and write whatever the user can, so the user is warned.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import resource
import shutil
import signal
import site
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from coderefine.resources import sandbox_dir
from coderefine.sandboxes.base import SOLE_USER_ENV, SandboxJob, SandboxOutcome

_FILE_SIZE_LIMIT = 1 << 30  # one file may not grow past 1 GiB: a candidate filling the disk is stopped
_TMPFS_BYTES = 256 << 20  # bubblewrap's /tmp and hidden home: filling them fills memory, so they are bounded
# Processes per job under bubblewrap, set inside the new user namespace (where the kernel counts only the
# job's processes). Not for root: the kernel exempts root from RLIMIT_NPROC, so there a fork bomb is only
# stopped by the job's time limit (the Docker backend's pids limit has no such hole).
_JOB_PROCESSES = 384


def _limits(memory_mb: int) -> Callable[[], None]:
    def apply() -> None:
        memory = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_FSIZE, (_FILE_SIZE_LIMIT, _FILE_SIZE_LIMIT))

    return apply


@functools.cache
def interpreter_paths() -> tuple[Path, ...]:
    """What the sandboxed interpreter needs to read: its prefixes, site-packages, every folder on
    sys.path (which includes what .pth files and PYTHONPATH add) and every hop of its symlink chain.
    Fixed for the life of the process, so computed once."""
    paths = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix)}
    paths.update(Path(p) for p in site.getsitepackages())
    paths.update(Path(p) for p in sys.path if p and Path(p).is_dir())
    paths.update(_link_chain_folders(Path(sys.executable)))
    user_site = site.getusersitepackages()
    if isinstance(user_site, str) and Path(user_site).is_dir():
        paths.add(Path(user_site))
    return tuple(sorted(p.resolve() for p in paths if p.exists()))


def _link_chain_folders(path: Path) -> list[Path]:
    """The folders of every hop from `path` to the real file: a venv's python may link to another
    venv's python, which links on to the base interpreter, and each hop must exist in the sandbox."""
    folders = []
    for _ in range(40):  # a bound, in case of a link loop
        folders.append(path.parent)
        if not path.is_symlink():
            break
        path = path.parent / path.readlink()
    return folders


class ProcessSandbox:
    def __init__(self, *, use_bwrap: bool | None = None, extra_readable: tuple[Path, ...] = ()) -> None:
        self.extra_readable = extra_readable
        self.bwrap = shutil.which("bwrap") if use_bwrap is not False else None
        self.warning: str | None = None
        self.reason: str | None = None
        if self.bwrap is not None:
            problem = self._probe()
            if problem is not None:
                self.warning = f"bubblewrap is installed but cannot run here ({problem}); " + _WEAK
                self.bwrap = None
        elif use_bwrap is None:
            self.warning = "bubblewrap (bwrap) not found; " + _WEAK
        self.name = "process (bubblewrap)" if self.bwrap else "process (plain subprocess)"

    def _probe(self) -> str | None:
        assert self.bwrap is not None
        try:
            proc = subprocess.run(
                [*self._bwrap_prefix(Path("/"), (), ()), "--", "true"],
                capture_output=True,
                text=True,
                timeout=20,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return str(exc)
        return (
            None if proc.returncode == 0 else (proc.stderr.strip().splitlines() or ["exit " + str(proc.returncode)])[-1]
        )

    def _bwrap_prefix(self, cwd: Path, writable: tuple[Path, ...], readonly: tuple[Path, ...]) -> list[str]:
        assert self.bwrap is not None
        argv = [
            self.bwrap,
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--size",
            str(_TMPFS_BYTES),
            "--tmpfs",
            "/tmp",
            "--unshare-all",  # user, ipc, pid, net, uts, cgroup: no network at all
            "--die-with-parent",
            "--new-session",
            "--uid",
            "65534",
            "--gid",
            "65534",
        ]
        hidden = [Path("/tmp")]
        home = Path.home().resolve()
        if home != Path("/") and home.is_dir():
            # Hide the user's home (dotfiles, credentials) behind an empty tmpfs.
            argv += ["--size", str(_TMPFS_BYTES), "--tmpfs", str(home)]
            hidden.append(home)
        # Put back, read-only, what the interpreter needs from the hidden places: a virtualenv under
        # /tmp or a pyenv Python under ~ must stay usable.
        for path in [*interpreter_paths(), *self.extra_readable]:
            if any(path == place or place in path.parents for place in hidden):
                argv += ["--ro-bind", str(path), str(path)]
        for path in readonly:
            argv += ["--ro-bind", str(path), str(path)]
        for path in writable:
            argv += ["--bind", str(path), str(path)]
        argv += ["--chdir", str(cwd)]
        return argv

    def _confined(self, argv: tuple[str, ...]) -> list[str]:
        """Prefix the job with confine.py, which sets the process limit inside the namespace (before it,
        the limit would also count the user's own processes outside) and then executes the job."""
        if os.geteuid() == 0:
            return list(argv)
        confine = sandbox_dir().resolve() / "coderefine_sandbox" / "confine.py"
        spec = {"rlimits": {"nproc": _JOB_PROCESSES}, "cwd": ".", "argv": list(argv), "ready": False}
        return [argv[0], "-I", "-S", str(confine), "start", json.dumps(spec)]

    def close(self) -> None:
        """Nothing outlives a job here: each one is its own process tree, killed when it ends."""

    def run(self, job: SandboxJob) -> SandboxOutcome:
        if self.bwrap:
            argv = [*self._bwrap_prefix(job.cwd, job.writable, job.readonly), "--clearenv"]
            # A PID namespace of its own: every process the job's user can signal belongs to the job.
            for key, value in {**job.env, SOLE_USER_ENV: "1"}.items():
                argv += ["--setenv", key, value]
            argv += ["--", *self._confined(job.argv)]
            env = None
        else:
            argv = list(job.argv)
            marker = uuid.uuid4().hex
            env = {**job.env, _MARKER: marker}
        started = time.perf_counter()
        proc = subprocess.Popen(
            argv,
            cwd=job.cwd,
            env=env if env is not None else {"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            start_new_session=True,
            preexec_fn=_limits(job.memory_mb),
        )
        timed_out = False
        try:
            stdout, stderr = proc.communicate(timeout=job.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill(proc)
            stdout, stderr = proc.communicate()
        except BaseException:
            _kill(proc)  # Ctrl-C: leave nothing running behind
            proc.wait()
            raise
        finally:
            _kill(proc)
            if env is not None:
                _reap_marked(env[_MARKER])
        return SandboxOutcome(
            returncode=proc.returncode,
            stdout=stdout,
            stderr=stderr,
            timed_out=timed_out,
            seconds=time.perf_counter() - started,
        )


_WEAK = (
    "candidates run as plain subprocesses with resource limits: weaker isolation "
    "(network and your files are reachable). Install bubblewrap, or use --sandbox docker when available."
)


# Without namespaces, a process that starts its own session escapes the group kill; every process of a
# job inherits this variable, so a scan of /proc finds the ones left behind.
_MARKER = "CODEREFINE_JOB"


def _reap_marked(marker: str) -> None:
    needle = f"{_MARKER}={marker}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                os.kill(int(entry.name), signal.SIGKILL)
        except (OSError, ValueError):
            continue


def _kill(proc: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)

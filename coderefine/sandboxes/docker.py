"""The `docker` sandbox backend: one locked-down container per run, one fresh user id per job.

The container: no network, a read-only root, every capability dropped, no-new-privileges, a non-root
main process, memory, CPU and process-count limits, and no environment from the host. What it can
write is two size-limited tmpfs mounts: /tmp and the run's scratch folder (mounted at the same path as
on the host, so the paths in a job's request mean the same inside). Filling them fills the container's
memory allowance, never the host's disk. Nothing else of the host is visible except read-only mounts of
the interpreter, the system libraries and the in-sandbox runner. A job's folders (its workspace, its
request) reach it as a tarball on the exec's stdin, unpacked by our own code under the job's uid.

Starting a container costs far more than a job's `docker exec`, so the container lives for the whole run
and each job is an exec under a user id no other job gets. The user id is what keeps jobs apart in one
container: a job owns only the folders copied in for it; the original's workspace and recorded calls
belong to the baseline's user id and are sealed read-only after it; and "kill every process of this uid"
(`confine.py finish`, run as that uid after each job) leaves nothing of a job running. See
sandbox/coderefine_sandbox/confine.py for the steps run inside.

The container is removed by `close()`; if coderefine dies without closing it (even SIGKILL), the
engine closes the container's stdin, which its main process waits on, and the container stops and is
removed (auto_remove). Containers carry the label `coderefine=1` and the run's id.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import secrets
import sys
import tarfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coderefine.errors import SandboxError
from coderefine.resources import sandbox_dir
from coderefine.sandboxes.base import SOLE_USER_ENV, SandboxJob, SandboxOutcome
from coderefine.sandboxes.engine import LABEL, connect, describe_error
from coderefine.sandboxes.images import ensure_offline_image, image_python, system_mounts
from coderefine.sandboxes.process import interpreter_paths

READY = "coderefine-confine: ready"  # the same marker as confine.READY (that file runs in the sandbox)

# Never mounted, whatever the interpreter's paths say: the host's configuration, the users' homes, the
# engine's socket (which would be root on the host) and the kernel's interfaces.
FORBIDDEN = frozenset(
    Path(p) for p in ("/", "/etc", "/root", "/home", "/var", "/run", "/var/run", "/proc", "/sys", "/dev", "/boot")
)
SOCKETS = (Path("/var/run/docker.sock"), Path("/run/docker.sock"))


def _default_cpus() -> float:
    return float(min(4, os.cpu_count() or 1))


@dataclass(frozen=True)
class DockerLimits:
    cpus: float = field(default_factory=_default_cpus)
    pids: int = 512  # processes in the container (a fork bomb stops here)
    job_processes: int = 384  # RLIMIT_NPROC of a job's uid: below `pids`, so our cleanup exec can still start
    scratch_mb: int = 1024  # the run's workspaces (tmpfs: counted against memory, never the host's disk)
    tmp_mb: int = 256
    shm_mb: int = 64
    file_mb: int = 1024  # RLIMIT_FSIZE: largest file a job may write
    overhead_mb: int = 256  # on top of the job's memory limit and the tmpfs sizes, for the whole container
    max_output_bytes: int = 32 << 20  # a job printing without end is stopped here, not buffered on the host


@dataclass
class _Collected:
    stdout: bytearray = field(default_factory=bytearray)
    stderr: bytearray = field(default_factory=bytearray)
    overflow: bool = False
    error: BaseException | None = None


class DockerSandbox:
    def __init__(self, image: str | None = None, limits: DockerLimits | None = None) -> None:
        self.client = connect(timeout=None)  # job output streams may be silent for minutes
        self.api = self.client.api
        self.limits = limits or DockerLimits()
        self.own_interpreter = image is not None
        if image is None:
            self.image = ensure_offline_image(self.client)
            self.python = sys.executable
        else:
            self.image = image
            self.python = image_python(self.client, image)
        self.name = f"docker ({self.image})"
        self.warning: str | None = None
        self.reason: str | None = None
        self.run_id = uuid.uuid4().hex[:12]
        self.container: str | None = None
        self._stdin: Any = None
        self._scratch: Path | None = None
        # Job uids: a random base per run, far from real users and from other runs on this machine.
        self._next_uid = 1_000_000 + secrets.randbelow(1_000_000) * 1_000
        self._confine = str(sandbox_dir().resolve() / "coderefine_sandbox" / "confine.py")
        self._check_readable()

    # ------------------------------------------------------------------ container lifecycle

    def _host_paths(self) -> list[Path]:
        """What every container of this sandbox mounts read-only from the host: the runner, and for the
        offline image the interpreter and the system libraries. The folder coderefine was started from
        is left out: `python -m` puts it on sys.path, but the sandbox never needs it."""
        wanted = [sandbox_dir().resolve()]
        if not self.own_interpreter:
            launched_from = Path(sys.path[0]).resolve() if sys.path and sys.path[0] else None
            wanted += [p for p in interpreter_paths() if p != launched_from or p == Path(sys.prefix).resolve()]
            wanted += system_mounts()
        return wanted

    def _check_readable(self) -> None:
        """Jobs run as users that exist nowhere on the host, so they read the host's folders with the
        permissions for "others". A 0700 folder (a virtualenv under a private temporary folder, say)
        would make the interpreter fail inside; say so now, in one line, instead."""
        for path in self._host_paths():
            if not path.exists() or _forbidden(path):
                continue
            mode = path.stat().st_mode
            if (mode & 0o005 != 0o005) if path.is_dir() else not mode & 0o004:
                raise SandboxError(
                    f"the Docker sandbox's users cannot read {path} (mode {oct(mode & 0o777)}): make it readable "
                    "for others (chmod o+rX), or use --sandbox process, or --image with an image of your own"
                )

    def _mounts(self, job: SandboxJob, scratch: Path) -> dict[str, dict[str, str]]:
        wanted = [*self._host_paths(), *(p.resolve() for p in job.readonly if not _inside(p.resolve(), scratch))]
        binds: dict[str, dict[str, str]] = {}
        chosen: list[Path] = []
        for path in sorted(set(wanted), key=lambda p: len(p.parts)):
            # /tmp and the scratch folder are the container's own tmpfs mounts; a folder holding either
            # (e.g. a script's folder on sys.path) would hide them or expose the host's.
            shadows = path == Path("/tmp") or _inside(scratch, path)
            if not path.exists() or shadows or _forbidden(path) or any(_inside(path, c) for c in chosen):
                continue
            chosen.append(path)
            binds[str(path)] = {"bind": str(path), "mode": "ro"}
        return binds

    def _open(self, job: SandboxJob, scratch: Path) -> None:
        limits = self.limits
        tmpfs_options = "rw,exec,nosuid,nodev,mode=1777,size={}m"
        memory = job.memory_mb + limits.scratch_mb + limits.tmp_mb + limits.shm_mb + limits.overhead_mb
        host_config = self.api.create_host_config(
            binds=self._mounts(job, scratch),
            tmpfs={str(scratch): tmpfs_options.format(limits.scratch_mb), "/tmp": tmpfs_options.format(limits.tmp_mb)},
            read_only=True,
            network_mode="none",
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            pids_limit=limits.pids,
            mem_limit=f"{memory}m",
            memswap_limit=f"{memory}m",
            nano_cpus=int(limits.cpus * 1e9),
            shm_size=f"{limits.shm_mb}m",
            ipc_mode="private",
            init=True,  # reaps the orphans that jobs leave behind (they would count against `pids`)
            auto_remove=True,
        )
        created = self.api.create_container(
            self.image,
            [self.python, "-I", "-S", self._confine, "idle"],
            user="65534:65534",
            environment={},
            stdin_open=True,  # with detach=False this also sets StdinOnce: our lifeline, see the module doc
            host_config=host_config,
            labels={LABEL: "1", f"{LABEL}.run": self.run_id, f"{LABEL}.pid": str(os.getpid())},
            name=f"coderefine-{self.run_id}",
        )
        self.container = created["Id"]
        self._scratch = scratch
        self._stdin = self.api.attach_socket(self.container, params={"stdin": 1, "stream": 1})
        self.api.start(self.container)

    def close(self) -> None:
        container, self.container = self.container, None
        if container is not None:
            with contextlib.suppress(Exception):  # already gone (auto_remove) or the engine went away
                self.api.remove_container(container, force=True)
        stdin, self._stdin = self._stdin, None
        if stdin is not None:
            with contextlib.suppress(Exception):
                stdin.close()

    # ------------------------------------------------------------------ jobs

    def run(self, job: SandboxJob) -> SandboxOutcome:
        import docker.errors
        import requests.exceptions

        scratch = (job.scratch or Path(os.path.commonpath([str(p) for p in job.writable or (job.cwd,)]))).resolve()
        try:
            if self.container is None or self._scratch != scratch:
                self.close()
                self._open(job, scratch)
            return self._run(job, scratch)
        except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
            raise SandboxError(f"the Docker engine failed: {describe_error(exc)}") from None

    def _run(self, job: SandboxJob, scratch: Path) -> SandboxOutcome:
        uid = self._next_uid
        self._next_uid += 1
        folders = _outermost([p.resolve() for p in job.writable])
        for folder in folders:
            if not _inside(folder, scratch) or folder == scratch:
                raise SandboxError(f"the Docker sandbox can only write inside the run's scratch folder, not {folder}")
        argv = list(job.argv)
        if self.own_interpreter and argv and argv[0] == sys.executable:
            argv[0] = self.python  # "this interpreter" means the image's own inside a user's image
        spec = {
            "root": str(scratch),
            "rlimits": {
                "as": job.memory_mb << 20,
                "nproc": self.limits.job_processes,
                "fsize": self.limits.file_mb << 20,
                "core": 0,
            },
            "cwd": str(job.cwd),
            "argv": argv,
        }
        payload = _tarball(folders, scratch)
        env = {**job.env, SOLE_USER_ENV: "1"}
        started = time.perf_counter()
        exec_id = self.api.exec_create(
            self.container,
            [self.python, "-I", "-S", self._confine, "start", json.dumps(spec)],
            stdin=True,
            user=f"{uid}:{uid}",
            environment=env,
            workdir="/",
        )["Id"]
        sock = self.api.exec_start(exec_id, socket=True)
        collected = _Collected()
        reader = threading.Thread(target=self._collect, args=(sock, collected), daemon=True)
        reader.start()
        timed_out = False
        try:
            _send(sock, len(payload).to_bytes(8, "big") + payload)
            reader.join(job.timeout)
            if reader.is_alive():
                timed_out = True
            if reader.is_alive() or collected.overflow:
                self._reap(uid)
                reader.join(30)
        except BaseException:
            with contextlib.suppress(Exception):  # Ctrl-C: stop the job; close() removes the container
                self._reap(uid)
            raise
        finally:
            with contextlib.suppress(Exception):
                sock.close()
        seconds = time.perf_counter() - started
        if collected.error is not None:
            raise collected.error
        returncode = self.api.exec_inspect(exec_id).get("ExitCode")
        stderr = collected.stderr.decode("utf-8", "replace")
        if not stderr.startswith(READY):
            self._finish(uid, folders, scratch, keep=False)
            detail = stderr.strip().splitlines()[-1] if stderr.strip() else f"exit code {returncode}"
            raise SandboxError(f"the Docker sandbox could not start a job: {detail[:300]}")
        self._finish(uid, folders, scratch, keep=job.keep)
        if collected.overflow:
            stderr += f"\n[the job printed more than {self.limits.max_output_bytes} bytes and was stopped]"
        return SandboxOutcome(
            returncode=-9 if timed_out or returncode is None else returncode,
            stdout=collected.stdout.decode("utf-8", "replace"),
            stderr=stderr[len(READY) + 1 :],
            timed_out=timed_out,
            seconds=seconds,
        )

    def _collect(self, sock: Any, collected: _Collected) -> None:
        from docker.utils.socket import STDERR, frames_iter

        try:
            for stream, data in frames_iter(sock, tty=False):
                if collected.overflow:
                    continue  # drain: the job is being killed
                (collected.stderr if stream == STDERR else collected.stdout).extend(data)
                if len(collected.stdout) + len(collected.stderr) > self.limits.max_output_bytes:
                    collected.overflow = True
        except Exception as exc:  # raised again in the caller's thread
            collected.error = exc

    def _exec_own(self, uid: int, *args: str) -> tuple[int | None, str]:
        """One of our own steps (confine.py), as the job's uid, with a retry: right after a fork bomb the
        container's process limit can refuse a new process for a moment."""
        command = [self.python, "-I", "-S", self._confine, *args]
        problem = ""
        for attempt in range(5):
            exec_id = self.api.exec_create(self.container, command, user=f"{uid}:{uid}")["Id"]
            output = self.api.exec_start(exec_id).decode("utf-8", "replace")
            code = self.api.exec_inspect(exec_id).get("ExitCode")
            if code is not None and "OCI runtime exec failed" not in output:
                return code, output
            problem = output.strip()
            time.sleep(0.2 * (attempt + 1))
        raise SandboxError(f"the Docker sandbox could not clean up after a job: {problem[:300]}")

    def _reap(self, uid: int) -> None:
        self._exec_own(uid, "reap")

    def _finish(self, uid: int, folders: list[Path], scratch: Path, keep: bool) -> None:
        spec = {
            "remove": [] if keep else [str(f) for f in folders],
            "seal": [str(f) for f in folders] if keep else [],
            "sweep": ["/tmp", "/dev/shm", str(scratch)],
        }
        _, output = self._exec_own(uid, "finish", json.dumps(spec))
        try:
            problems = json.loads(output)["problems"]
        except (ValueError, KeyError, TypeError):
            problems = [output.strip()[:300] or "no answer"]
        if problems:
            raise SandboxError(f"cleaning up after a job in the Docker sandbox failed: {problems[0]}")


def _tarball(folders: list[Path], root: Path) -> bytes:
    """The job's folders as the host prepared them, named relative to the scratch folder. Links are
    kept as links: copy_project already turned the ones pointing out of the project into files."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for folder in folders:
            tar.add(folder, arcname=str(folder.relative_to(root)))
    return buffer.getvalue()


def _send(sock: Any, data: bytes) -> None:
    raw = getattr(sock, "_sock", sock)  # the engine hands back a SocketIO over the hijacked connection
    raw.sendall(data)


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _outermost(paths: list[Path]) -> list[Path]:
    """Drop the paths inside another one of the list: copying the outer folder brings them along."""
    unique = sorted(set(paths), key=lambda p: len(p.parts))
    return [p for i, p in enumerate(unique) if not any(_inside(p, q) for q in unique[:i])]


def _forbidden(path: Path) -> bool:
    return path in FORBIDDEN or any(_inside(socket, path) for socket in SOCKETS)

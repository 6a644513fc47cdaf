"""The sandbox backends' own steps around a job, run inside the sandbox before and after untrusted code.

    python -I -S confine.py idle            # a container's main process: lives until its stdin closes
    python -I -S confine.py start SPEC      # unpack the job's folders (from stdin), set limits, exec the job
    python -I -S confine.py finish SPEC     # kill what the job left running, then discard or seal its folders
    python -I -S confine.py reap            # kill every process of the calling user (a job past its limit)

Run with -I -S (isolated, no site): standard library only, nothing from the job's environment or folders
can change what this code does. Every job runs under a user id of its own that no other job ever gets,
so "every process of this uid" is exactly "the job's processes", and "every file this uid owns" is
exactly what the job wrote: `finish` needs no bookkeeping to be complete.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import shutil
import signal
import stat
import sys
import tarfile
import time
from typing import Any

# The first line `start` writes to stderr once our own setup is done: anything the job prints comes
# after it, so the host can tell a setup failure from whatever the job may print to imitate one.
READY = "coderefine-confine: ready"

_RLIMITS = {
    "as": resource.RLIMIT_AS,
    "nproc": resource.RLIMIT_NPROC,
    "fsize": resource.RLIMIT_FSIZE,
    "core": resource.RLIMIT_CORE,
    "nofile": resource.RLIMIT_NOFILE,
}


def idle() -> int:
    """Block until stdin reaches end of file. The host holds the other end of stdin open for the life of
    the run: when it closes it, or dies (even by SIGKILL), this returns and the container stops."""
    while sys.stdin.buffer.read(65536):
        pass
    return 0


def _read_exactly(stream: Any, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = stream.read(min(left, 1 << 20))
        if not chunk:
            raise ValueError(f"the job's files ended {left} bytes early")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def unpack(data: bytes, root: str) -> None:
    """Unpack the host's tarball of the job's folders under `root`, owned by the job's uid, with modes
    normalised so that no other job's uid can write to them. The tarball is ours, but names are still
    checked: nothing may land outside `root`."""
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
        for member in tar:
            name = os.path.normpath(member.name)
            if name.startswith(("/", "..")) or name == ".":
                raise ValueError(f"refusing to unpack {member.name!r}")
            target = os.path.join(root, name)
            os.makedirs(os.path.dirname(target), 0o755, exist_ok=True)
            if member.isdir():
                os.mkdir(target, 0o755)
            elif member.issym():
                os.symlink(member.linkname, target)
            elif member.isfile():
                source = tar.extractfile(member)
                assert source is not None
                with open(target, "xb") as fh:
                    shutil.copyfileobj(source, fh)
                os.chmod(target, 0o755 if member.mode & 0o111 else 0o644)


def start(spec: dict[str, Any]) -> int:
    """Docker: the job's folders arrive on stdin as a length-prefixed tarball (the host's copy is never
    mounted: the container sees none of the host's scratch folder); stdin is then /dev/null for the job.
    Bubblewrap: only the limits (no "root" in the spec, no ready marker)."""
    try:
        if "root" in spec:
            stdin = sys.stdin.buffer
            unpack(_read_exactly(stdin, int.from_bytes(_read_exactly(stdin, 8), "big")), spec["root"])
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.close(null)
            os.umask(0o022)
        for name, value in spec.get("rlimits", {}).items():
            resource.setrlimit(_RLIMITS[name], (value, value))
        os.chdir(spec["cwd"])
    except (OSError, ValueError, tarfile.TarError) as exc:
        sys.stderr.write(f"coderefine-confine: setup failed: {exc}\n")
        return 120
    if spec.get("ready", True):
        sys.stderr.write(READY + "\n")
        sys.stderr.flush()
    argv = spec["argv"]
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        sys.stderr.write(f"cannot run {argv[0]}: {exc}\n")
        return 127
    return 0  # not reached


def _survivors() -> list[int]:
    """Our uid's processes other than ourselves and init (which kill(-1) spares, and which is ours under
    bubblewrap), zombies aside (init collects those; they hold nothing)."""
    me, uid = os.getpid(), str(os.getuid())
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in (me, 1):
            continue
        try:
            with open(f"/proc/{name}/status", encoding="ascii", errors="replace") as fh:
                fields = dict(line.split(":", 1) for line in fh.read().splitlines() if ":" in line)
        except OSError:
            continue  # gone meanwhile
        if fields.get("State", "").strip().startswith("Z"):
            continue
        if uid in fields.get("Uid", "").split()[:3]:
            found.append(int(name))
    return found


def reap() -> bool:
    """kill(-1) signals, in one pass of the kernel, every process this uid may signal except ourselves:
    the job's processes, however they detached (new sessions, double forks). Its return value cannot tell
    whether any is left (it also counts processes it may not signal), so /proc is checked; repeated for a
    fork bomb's children caught between fork and exit."""
    for _ in range(200):
        with contextlib.suppress(ProcessLookupError):
            os.kill(-1, signal.SIGKILL)
        if not _survivors():
            return True
        time.sleep(0.01)
    return False


def _make_writable(function: Any, path: str, _exc: Any) -> None:
    # The job may have made its own folders read-only to resist removal; as their owner we can undo that.
    os.chmod(os.path.dirname(path), 0o700)
    if os.path.isdir(path) and not os.path.islink(path):
        os.chmod(path, 0o700)
    function(path)


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, onerror=_make_writable)
    elif os.path.lexists(path):
        os.unlink(path)


def seal(path: str) -> None:
    """Take away group and other write permission everywhere under `path`: later jobs (other uids) may
    read what this job left (the original's workspace, its recorded calls) but never change it."""
    for folder, dirnames, filenames in os.walk(path):
        for name in [*dirnames, *filenames, ""]:
            target = os.path.join(folder, name) if name else folder
            if not os.path.islink(target):
                mode = os.lstat(target).st_mode
                os.chmod(target, stat.S_IMODE(mode) & ~0o022 & ~stat.S_ISUID & ~stat.S_ISGID)


def sweep(folder: str, keep: tuple[str, ...] = ()) -> None:
    """Remove what this uid created directly in a shared, world-writable folder (/tmp, /dev/shm, the
    scratch root), except the kept folders: nothing else it planted there may be found by a later job."""
    uid = os.getuid()
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        path = os.path.join(folder, name)
        if os.path.normpath(path) in keep:
            continue
        try:
            if os.lstat(path).st_uid == uid:
                _remove(path)
        except OSError:
            continue


def finish(spec: dict[str, Any]) -> int:
    clean = reap()
    problems = []
    for path in spec.get("remove", []):
        try:
            _remove(path)
        except OSError as exc:
            problems.append(f"{path}: {exc}")
    for path in spec.get("seal", []):
        try:
            seal(path)
        except OSError as exc:
            problems.append(f"{path}: {exc}")
    kept = tuple(os.path.normpath(path) for path in spec.get("seal", []))
    for folder in spec.get("sweep", []):
        sweep(folder, kept)
    if not clean:
        problems.append("processes of the job survived repeated kills")
    sys.stdout.write(json.dumps({"problems": problems}))
    return 0


def main(argv: list[str]) -> int:
    command = argv[1]
    if command == "idle":
        return idle()
    if command == "reap":
        return 0 if reap() else 1
    spec = json.loads(argv[2])
    return start(spec) if command == "start" else finish(spec)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))

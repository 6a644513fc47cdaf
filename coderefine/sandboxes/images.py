"""Images for the Docker sandbox: the offline default made on the spot, and `coderefine sandbox build`.

The offline image holds almost nothing: a few folders, top-level links that mirror the host's (/lib ->
usr/lib on merged-/usr systems) and a passwd file. It is imported from a tarball coderefine writes
itself, so it needs no registry and no network. At run time the host's interpreter (its prefixes, every
sys.path folder) and the system libraries it links against are mounted into it read-only: the tests see
exactly the user's Python and installed packages, and nothing else of the host.

`build_image` builds `sandbox/Dockerfile` for users who can pull a base image: a self-contained Python
image with pytest and pyperf (and, optionally, the project's requirements), used with `--image TAG`.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import sys
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from coderefine.errors import SandboxError
from coderefine.resources import sandbox_dir
from coderefine.sandboxes.engine import LABEL, connect, describe_error

OFFLINE_REPOSITORY = "coderefine-sandbox"
BUILD_TAG = "coderefine-sandbox:latest"
PYTHON_LABEL = "org.coderefine.python"  # where a built image keeps its interpreter

# Top-level system folders the interpreter's shared libraries live in. Where the host has them as
# links (merged /usr), the image gets the same links; where they are real folders they are mounted.
# /sbin is left out: the engine mounts its init at /sbin/docker-init, which must not land in the host's
# read-only /usr through a link; nothing the tests need lives there.
SYSTEM_FOLDERS = ("/usr", "/bin", "/lib", "/lib32", "/lib64", "/libx32")
# Single files from /etc that the loader and the time functions read; /etc itself is never mounted.
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/localtime")

_PASSWD = "root:x:0:0:root:/root:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
_GROUP = "root:x:0:\nnogroup:x:65534:\n"


def _offline_tarball() -> bytes:
    """A deterministic tarball (fixed times and owners), so that its hash names the image."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:

        def add(name: str, kind: bytes, mode: int, data: bytes = b"", link: str = "") -> None:
            info = tarfile.TarInfo(name)
            info.type, info.mode, info.mtime, info.linkname, info.size = kind, mode, 0, link, len(data)
            tar.addfile(info, io.BytesIO(data) if data else None)

        for folder in ("etc", "tmp", "proc", "dev", "sys", "usr", "sbin"):
            add(folder, tarfile.DIRTYPE, 0o1777 if folder == "tmp" else 0o755)
        for folder in SYSTEM_FOLDERS[1:]:
            if os.path.islink(folder):
                add(folder.lstrip("/"), tarfile.SYMTYPE, 0o777, link=os.readlink(folder))
        add("etc/passwd", tarfile.REGTYPE, 0o644, _PASSWD.encode())
        add("etc/group", tarfile.REGTYPE, 0o644, _GROUP.encode())
    return buffer.getvalue()


def offline_tag() -> str:
    return f"{OFFLINE_REPOSITORY}:offline-{hashlib.sha256(_offline_tarball()).hexdigest()[:12]}"


def ensure_offline_image(client: Any) -> str:
    """The tag of the offline image, importing it first if the engine does not have it yet."""
    import docker.errors

    tag = offline_tag()
    try:
        client.images.get(tag)
        return tag
    except docker.errors.ImageNotFound:
        pass
    except docker.errors.DockerException as exc:
        raise SandboxError(f"cannot look up the sandbox image: {describe_error(exc)}") from None
    repository, _, version = tag.partition(":")
    try:
        client.api.import_image_from_data(
            _offline_tarball(), repository=repository, tag=version, changes=[f"LABEL {LABEL}=1"]
        )
    except docker.errors.DockerException as exc:
        raise SandboxError(f"cannot create the offline sandbox image: {describe_error(exc)}") from None
    return tag


def system_mounts() -> tuple[Path, ...]:
    """What the offline image mounts from the host besides the interpreter: the system folders that are
    real folders here (not links the image already mirrors) and a few single files."""
    folders = [Path(p) for p in SYSTEM_FOLDERS if os.path.isdir(p) and not os.path.islink(p)]
    files = [Path(p) for p in SYSTEM_FILES if os.path.isfile(p)]
    return (*folders, *files)


def image_python(client: Any, image: str) -> str:
    """The interpreter inside a user's image: its `org.coderefine.python` label, else `python3`.
    The image must exist locally: coderefine never pulls (a run must not depend on a registry)."""
    import docker.errors

    try:
        labels = client.images.get(image).labels or {}
    except docker.errors.ImageNotFound:
        raise SandboxError(
            f"image '{image}' is not on this Docker engine; build it (coderefine sandbox build) or pull it first"
        ) from None
    except docker.errors.DockerException as exc:
        raise SandboxError(f"cannot inspect image '{image}': {describe_error(exc)}") from None
    return labels.get(PYTHON_LABEL, "python3")


def build_image(
    tag: str = BUILD_TAG,
    *,
    requirements: Path | None = None,
    python_version: str | None = None,
    base: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> str:
    """Build `sandbox/Dockerfile` (a Python base image, pytest, pyperf and the given requirements file)
    and return its tag. Needs the engine to reach a registry for the base image; one line on failure."""
    version = python_version or f"{sys.version_info.major}.{sys.version_info.minor}"
    if requirements is not None and not requirements.is_file():
        raise SandboxError(f"requirements file {requirements} not found")
    client = connect(timeout=None)
    with tempfile.TemporaryDirectory(prefix="coderefine-build-") as context:
        shutil.copy(sandbox_dir() / "Dockerfile", Path(context) / "Dockerfile")
        target = Path(context) / "requirements.txt"
        if requirements is not None:
            shutil.copy(requirements, target)
        else:
            target.write_text("")
        buildargs = {"PYTHON_VERSION": version}
        if base:
            buildargs["BASE"] = base
        try:
            for chunk in client.api.build(
                path=context, tag=tag, buildargs=buildargs, rm=True, forcerm=True, decode=True, labels={LABEL: "1"}
            ):
                if "error" in chunk:
                    raise SandboxError(f"building {tag} failed: {' '.join(str(chunk['error']).split())}")
                line = str(chunk.get("stream", "")).rstrip()
                if line and progress is not None:
                    progress(line)
        except SandboxError:
            raise
        except Exception as exc:
            raise SandboxError(f"building {tag} failed: {describe_error(exc)}") from None
    return tag

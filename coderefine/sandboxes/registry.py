"""Sandbox backends by name."""

from __future__ import annotations

from coderefine.errors import SandboxError, UsageError
from coderefine.sandboxes.base import Sandbox
from coderefine.sandboxes.engine import engine_problem
from coderefine.sandboxes.process import ProcessSandbox

SANDBOXES = ("auto", "docker", "process", "subprocess")


def make_sandbox(name: str, image: str | None = None) -> Sandbox:
    """`docker`: the Docker backend (SandboxError, exit code 11, when no engine answers).
    `process`: bubblewrap when it works here, else a plain subprocess with a warning.
    `subprocess`: a plain subprocess on purpose (still warned: isolation is weaker).
    `auto`: `docker` when an engine answers within two seconds, else `process`; `reason` says which and why.
    `image` (docker only): a local image with its own Python instead of the offline default."""
    if name not in SANDBOXES:
        raise UsageError(f"unknown sandbox '{name}'; available: {', '.join(SANDBOXES)}")
    if image is not None and name not in ("docker", "auto"):
        raise UsageError(f"--image needs --sandbox docker (or auto), not --sandbox {name}")
    if name == "docker":
        return _docker(image)
    if name == "auto":
        problem = engine_problem()
        if problem is None:
            try:
                sandbox = _docker(image)
            except SandboxError as exc:
                if image is not None:
                    raise
                problem = f"Docker cannot be used ({exc.message})"
            else:
                sandbox.reason = "auto: a Docker engine answered"
                return sandbox
        if image is not None:
            raise SandboxError(f"--image {image} needs a Docker engine: {problem}")
        process = ProcessSandbox()
        # The engine's own words ("Error while fetching server API version: ...") help only when Docker
        # was asked for; falling back, it is enough to say that none answered.
        said = "no Docker engine answered" if problem.startswith("no Docker engine answered") else problem
        process.reason = f"auto: {said}; using the process sandbox"
        return process
    if name == "process":
        return ProcessSandbox()
    sandbox = ProcessSandbox(use_bwrap=False)
    sandbox.warning = "--sandbox subprocess: candidates run without bubblewrap (network and your files are reachable)"
    return sandbox


def _docker(image: str | None) -> Sandbox:
    from coderefine.sandboxes.docker import DockerSandbox  # imports the docker SDK only when used

    return DockerSandbox(image)

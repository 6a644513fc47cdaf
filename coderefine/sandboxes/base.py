"""The sandbox extension point: one small Protocol, and the job and outcome records it exchanges."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from coderefine.errors import UsageError


@dataclass(frozen=True)
class SandboxJob:
    argv: tuple[str, ...]
    cwd: Path
    writable: tuple[Path, ...]  # the only places the job may write
    readonly: tuple[Path, ...] = ()  # extra places it must be able to read (e.g. the original's copy)
    env: dict[str, str] = field(default_factory=dict)  # the whole environment: nothing else is passed in
    timeout: float = 300.0  # wall clock for the whole job
    memory_mb: int = 2048  # address-space limit per process
    # The run's private scratch folder that holds `writable` (and the readable work of earlier jobs). A
    # backend may keep it somewhere of its own (the Docker backend: on a size-limited tmpfs in the run's
    # container), copying the host's version of each writable folder in when the job starts.
    scratch: Path | None = None
    # Whether later jobs of the same sandbox read what this one writes (the baseline's recorded calls).
    # A backend may discard a job's writes once it has ended unless `keep` is set; kept writes are
    # sealed against change by later jobs.
    keep: bool = False


@dataclass(frozen=True)
class SandboxOutcome:
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool
    seconds: float


class Sandbox(Protocol):
    name: str
    warning: str | None  # shown to the user when isolation is weaker than it should be
    reason: str | None  # why this backend was chosen (set by `--sandbox auto`), shown to the user

    def run(self, job: SandboxJob) -> SandboxOutcome: ...

    def close(self) -> None:
        """Release what the sandbox holds for the run (the Docker backend: its container). Idempotent;
        called once the run is over, also after errors and Ctrl-C."""
        ...


# Set by backends in which every process of the job's user belongs to the job (a user id or a PID
# namespace of its own): the runner may then kill whatever a step left running before the next step,
# so a candidate's stray process cannot slow down the original's timing runs.
SOLE_USER_ENV = "CODEREFINE_SOLE_USER"

# Environment variables passed into the sandbox by default. Everything else (API keys, tokens, cloud
# credentials) stays out; users add what their tests need with --pass-env.
ENV_ALLOW = ("PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TZ", "TERM")
_SECRET = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)", re.IGNORECASE)


def looks_secret(name: str) -> bool:
    return bool(_SECRET.search(name))


def refuse_secrets(pass_env: tuple[str, ...]) -> None:
    """--pass-env names that look like secrets are refused before anything starts."""
    for name in pass_env:
        if looks_secret(name):
            raise UsageError(f"--pass-env {name}: refusing to pass what looks like a secret into the sandbox")


def sandbox_env(home: Path, extra: dict[str, str], pass_env: tuple[str, ...] = ()) -> dict[str, str]:
    env = {name: os.environ[name] for name in ENV_ALLOW if name in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.update({name: os.environ[name] for name in pass_env if name in os.environ})
    env.update(
        {
            "HOME": str(home),
            "TMPDIR": str(home),
            "PYTHONIOENCODING": "utf-8",
            "PYTHONNOUSERSITE": "1",
            "NO_COLOR": "1",
        }
    )
    env.update(extra)
    return env

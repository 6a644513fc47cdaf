"""Run the sandbox runner's `profile` mode on a copy of the project (the host's side of `coderefine scan`)."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path

from coderefine.errors import SandboxError, UsageError
from coderefine.evaluation.project_run import import_roots, run_on_copy, runner_said
from coderefine.evaluation.protocol import ProfileReport, ProfileRequest, ProtocolError, from_json
from coderefine.evaluation.requests import HASH_SEED
from coderefine.evaluation.settings import EvaluationSettings
from coderefine.sandboxes.base import Sandbox

_PYTHONS = ("python", "python3")


@dataclass(frozen=True)
class ProfileJob:
    root: Path  # the project, copied into the sandbox's workspace
    paths: tuple[str, ...]  # relative to root
    tests: tuple[str, ...]  # pytest arguments relative to root
    command: tuple[str, ...] | None  # python's argv after the interpreter
    min_calls: int
    timeout: float
    memory_mb: int
    pass_env: tuple[str, ...] = ()
    max_calls: int = EvaluationSettings.max_calls_per_target  # as many calls as optimize records per target


def parse_command(text: str) -> tuple[str, ...]:
    """`--command "python bench.py --size 10"` -> ("bench.py", "--size", "10"): the workload must be a Python
    program (a script or `-m module`), which the profiler runs in its own interpreter inside the sandbox."""
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        raise UsageError(f"--command {text!r}: cannot be split into words ({exc})") from None
    if len(argv) < 2 or (Path(argv[0]).name not in _PYTHONS and not Path(argv[0]).name.startswith("python3.")):
        raise UsageError(
            f"--command {text!r}: give a Python program to profile, as `python SCRIPT [ARGS]` or "
            "`python -m MODULE [ARGS]`"
        )
    rest = tuple(argv[1:])
    if rest[0] == "-m" and len(rest) < 2:
        raise UsageError(f"--command {text!r}: -m needs a module name")
    if rest[0].startswith("-") and rest[0] != "-m":
        raise UsageError(f"--command {text!r}: interpreter options other than -m are not supported")
    return rest


def profile_project(job: ProfileJob, sandbox: Sandbox) -> ProfileReport:
    def request(workspace: Path, io_dir: Path) -> ProfileRequest:
        return ProfileRequest(
            mode="profile",
            workspace=str(workspace),
            io_dir=str(io_dir),
            import_roots=import_roots(job.root),
            tests=job.tests,
            command=job.command,
            paths=job.paths,
            min_calls=job.min_calls,
            timeout=job.timeout,
            hash_seed=HASH_SEED,
            max_calls=job.max_calls,
        )

    limit = 2 * job.timeout + 60  # two passes, and the runner's own start and end
    outcome = run_on_copy(
        job.root,
        request,
        sandbox,
        prefix="coderefine-scan-",
        timeout=limit,
        memory_mb=job.memory_mb,
        pass_env=job.pass_env,
    )
    if outcome.timed_out:
        raise SandboxError(f"profiling the project exceeded its limit of {limit:g}s; raise --timeout")
    try:
        json.loads(outcome.stdout)
        return from_json(ProfileReport, outcome.stdout)
    except json.JSONDecodeError:
        raise SandboxError("the sandbox runner failed while profiling: " + runner_said(outcome)) from None
    except ProtocolError as exc:
        raise SandboxError(f"the sandbox runner's profile does not match the protocol: {exc}") from exc

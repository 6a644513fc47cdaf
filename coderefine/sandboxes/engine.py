"""Talking to a Docker engine: is one there, and a client for it, with every failure as one line."""

from __future__ import annotations

from typing import Any

from coderefine.errors import SandboxError

PING_TIMEOUT = 2.0  # `--sandbox auto` must not make a user wait for an engine that is not there
LABEL = "coderefine"  # every container we start carries it, so leaks can be found (and cleaned) by label


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return " ".join(text.splitlines()[0].split())[:300]


def engine_problem(timeout: float = PING_TIMEOUT) -> str | None:
    """None when a Docker engine answers a ping within `timeout` seconds, else why not (one line)."""
    try:
        connect(timeout)
    except SandboxError as exc:
        return exc.message
    return None


def connect(timeout: float | None = PING_TIMEOUT) -> Any:
    """A `docker.DockerClient` whose engine has just answered a ping. With `timeout=None` later calls
    may block as long as they need (a job's output stream), which a short timeout would cut off."""
    try:
        import docker
        import docker.errors
    except ImportError as exc:  # a dependency, but a broken install should still give one line
        raise SandboxError(f"the docker Python package is missing ({exc})") from None
    try:
        client = docker.from_env(timeout=PING_TIMEOUT if timeout is None else timeout)
        client.ping()
    except Exception as exc:  # docker raises DockerException, requests' and socket errors alike
        raise SandboxError(f"no Docker engine answered: {_first_line(exc)}") from None
    client.api.timeout = timeout
    return client


def describe_error(exc: BaseException) -> str:
    """One line for an engine error: the engine's own explanation when it gave one."""
    explanation = getattr(exc, "explanation", None)
    if isinstance(explanation, bytes):
        explanation = explanation.decode("utf-8", "replace")
    return _first_line(Exception(explanation)) if explanation else _first_line(exc)

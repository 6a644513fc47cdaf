"""Sandbox backends by name."""

from __future__ import annotations

from coderefine.errors import UsageError
from coderefine.sandboxes.base import Sandbox
from coderefine.sandboxes.process import ProcessSandbox

SANDBOXES = ("auto", "process", "subprocess")


def make_sandbox(name: str) -> Sandbox:
    """`auto` and `process`: bubblewrap when it works here, else a plain subprocess with a warning.
    `subprocess`: a plain subprocess on purpose (still warned: isolation is weaker)."""
    if name in ("auto", "process"):
        return ProcessSandbox()
    if name == "subprocess":
        sandbox = ProcessSandbox(use_bwrap=False)
        sandbox.warning = (
            "--sandbox subprocess: candidates run without bubblewrap (network and your files are reachable)"
        )
        return sandbox
    raise UsageError(f"unknown sandbox '{name}'; available: {', '.join(SANDBOXES)}")

"""The powers a replayed program run uses (issue 13's audit, for programs): switched on by the runner's
CODEREFINE_PROGRAM_AUDIT in the behaviour replays of the original and of each candidate, never in the
tests' own runs nor in timing.

The same `coderefine_sandbox.audit.Recorder` as for replayed calls, with one window that opens when
start-up is done (after the hook's own imports and any chained sitecustomize) and closes at exit (after
the program's own atexit handlers, so a thread it leaves running is seen). The run's working folder counts
as its temporary area: the files it reads there are the recorded inputs, and what it writes there is part
of its compared outcome. Each power is appended to the output file the moment it is first seen, so a
program that ends with `os._exit` cannot hide what it did before.
"""

from __future__ import annotations

import atexit
import os
import sys

# The spec comes in environment variables, not JSON: importing json (re, enum, ...) would cost every
# replayed run more than the audit itself. CODEREFINE_PROGRAM_AUDIT is the output file.
AUDIT_VARIABLES = ("WORKSPACE", "ORIGINAL", "SANDBOX", "WHERE")


def start(out: str) -> None:
    """Watch this run; the spec: CODEREFINE_PROGRAM_AUDIT_WORKSPACE (the version's workspace), _ORIGINAL
    (the original's: a candidate's layered workspace links to it), _SANDBOX (the folder holding
    coderefine_sandbox), _WHERE (how a refusal names this run)."""
    spec = {name: os.environ.get(f"CODEREFINE_PROGRAM_AUDIT_{name}", "") for name in AUDIT_VARIABLES}
    # Imported from the sandbox's folder without leaving it on the program's path.
    sys.path.insert(0, spec["SANDBOX"])
    try:
        from coderefine_sandbox.audit import Recorder
    finally:
        sys.path.remove(spec["SANDBOX"])

    class Noting(Recorder):
        def _note(self, kind: str, key: str, detail: str) -> None:
            before = len(self.found)
            super()._note(kind, key, detail)
            if len(self.found) > before:
                import json

                found = list(self.found.values())[-1]
                line = json.dumps({"kind": found.kind, "key": found.key, "detail": found.detail, "call": found.call})
                fd = os.open(out, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                try:
                    os.write(fd, (line + "\n").encode("utf-8"))
                finally:
                    os.close(fd)

    # TMPDIR is the sandbox step's temporary area (set by the runner); tempfile is not imported for it.
    temp = os.environ.get("TMPDIR") or None
    recorder = Noting(spec["WORKSPACE"], temporary=(os.getcwd(),), original=spec["ORIGINAL"] or None, temp=temp)
    window = recorder.watch(spec["WHERE"])
    atexit.register(window.__exit__, None, None, None)
    window.__enter__()

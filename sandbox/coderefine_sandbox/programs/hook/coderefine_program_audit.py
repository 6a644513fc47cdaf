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
import json
import os
import sys
from typing import Any


def start(raw_spec: str) -> None:
    """raw_spec: {"out": JSON-lines file, "workspace": the version's workspace, "original": the original's
    (a candidate's layered workspace links to it), "sandbox": the folder holding coderefine_sandbox,
    "where": how a refusal names this run}."""
    spec = json.loads(raw_spec)
    # Imported from the sandbox's folder without leaving it on the program's path.
    sys.path.insert(0, spec["sandbox"])
    try:
        from coderefine_sandbox.audit import Recorder
    finally:
        sys.path.remove(spec["sandbox"])
    out = spec["out"]

    class Noting(Recorder):
        def _note(self, kind: str, key: str, detail: str) -> None:
            before = len(self.found)
            super()._note(kind, key, detail)
            if len(self.found) > before:
                found = list(self.found.values())[-1]
                line = json.dumps({"kind": found.kind, "key": found.key, "detail": found.detail, "call": found.call})
                fd = os.open(out, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                try:
                    os.write(fd, (line + "\n").encode("utf-8"))
                finally:
                    os.close(fd)

    recorder = Noting(spec["workspace"], temporary=(os.getcwd(),), original=spec.get("original"))
    window: Any = recorder.watch(spec["where"])
    atexit.register(window.__exit__, None, None, None)
    window.__enter__()

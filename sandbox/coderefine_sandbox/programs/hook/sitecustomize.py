"""Interpreter start-up hook for program runs inside the sandbox (on PYTHONPATH only there).

Two jobs, each switched on by an environment variable the sandbox runner sets:

- CODEREFINE_PROGRAM_RECORD (the original's test run): when this interpreter runs the target file as a
  program (`python path/to/file.py ...` or `python -m its.module ...`), record the run's inputs: argv,
  working directory, stdin (whatever it is read through: `sys.stdin`, `input()`, `open(0)`,
  `sys.stdin.buffer`, since the bytes are taken at the file descriptor), the files it reads, the
  allow-listed environment. Outcomes are not taken here: the runner replays every recorded run on the
  original itself (twice, to find the ones that do not repeat).
- CODEREFINE_PROGRAM_LINES (the second of those replays): note the program's lines the run executes.
- CODEREFINE_PROGRAM_RAN (replays of a console-script wrapper): note at exit whether the version's own file
  (CODEREFINE_PROGRAM_FILE) was imported, so a wrapper that ran another copy cannot pass for it.
- CODEREFINE_PROGRAM_PIN (replay and timing of both versions): seed `random`, as each test is for calls.
- CODEREFINE_PROGRAM_AUDIT (the behaviour replays of both versions): record the powers the run uses
  (coderefine_program_audit.py), once start-up is done.

Any other sitecustomize further down sys.path is still run. Standard library only, nothing imported from
coderefine_sandbox (but for the audit, in the runner's own replays): this runs in every Python process the
tests start.
"""

from __future__ import annotations

import os
import sys


def _chain() -> None:
    """Run the sitecustomize this one shadows, if any (a distribution's or a virtualenv's)."""
    import importlib.machinery

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if p and os.path.abspath(p) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None and spec.origin != os.path.abspath(__file__):
        import importlib.util

        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


class _SeedRandom:
    """Seeds `random` with 0 right after a program imports it. Importing it here instead would move its
    import time (and that of what it imports) out of the program and into start-up, where a program that
    saves that import could not show it."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> object:
        if name != "random":
            return None
        sys.meta_path.remove(self)
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(name)
        if spec is None or spec.loader is None:
            return None
        loader = spec.loader
        original = loader.exec_module

        def exec_module(module: object) -> None:
            original(module)
            module.seed(0)  # type: ignore[attr-defined]

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _main() -> None:
    if os.environ.get("CODEREFINE_PROGRAM_PIN") == "1" and "random" not in sys.modules:
        sys.meta_path.insert(0, _SeedRandom())
    elif os.environ.get("CODEREFINE_PROGRAM_PIN") == "1":
        sys.modules["random"].seed(0)
    lines_out = os.environ.get("CODEREFINE_PROGRAM_LINES")
    if lines_out:
        from coderefine_program_record import trace_lines  # type: ignore[import-not-found]

        trace_lines(lines_out)
    ran_out = os.environ.get("CODEREFINE_PROGRAM_RAN")
    if ran_out:
        _note_ran(ran_out)
    spec = os.environ.get("CODEREFINE_PROGRAM_RECORD")
    if spec:
        from coderefine_program_record import maybe_record  # type: ignore[import-not-found]

        maybe_record(spec)


def _note_ran(out: str) -> None:
    import atexit

    def note() -> None:
        file = os.path.realpath(os.environ.get("CODEREFINE_PROGRAM_FILE", ""))
        ran = any(
            os.path.realpath(getattr(module, "__file__", None) or "") == file for module in list(sys.modules.values())
        )
        with open(out, "w", encoding="utf-8") as fh:
            fh.write("1" if ran else "0")

    atexit.register(note)


def _audit() -> None:
    spec = os.environ.get("CODEREFINE_PROGRAM_AUDIT")
    if spec:
        from coderefine_program_audit import start  # type: ignore[import-not-found]

        start(spec)


try:
    _main()
finally:
    _chain()
_audit()  # last: start-up's own work (this hook's, a chained sitecustomize's) is not the program's

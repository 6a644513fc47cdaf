"""Carry the recording hook into Python processes a test starts with an environment of its own.

A test that passes `env={}` (or any env without our PYTHONPATH) to `subprocess` would start the program
without the start-up hook, and its runs would be missed silently. An audit hook in every recording process
sees each process start (`subprocess.Popen`, `os.posix_spawn`, `os.exec*`, raised before the environment
is handed to the OS) and, when the child is a Python interpreter or a Python script, adds the two
variables the hook needs to the environment the test passed: CODEREFINE_PROGRAM_RECORD and the hook's
folder first on PYTHONPATH. Nothing else of the test's environment changes (the program still gets no
PATH or LANG if the test gave none; the recording keeps what it got). The test's dict gains those two
keys: the one visible side effect, and the price of seeing the run at all.

When the environment cannot take them (a read-only mapping; str and bytes keys mixed), a start of the
target is noted as missed (a `missed-*.json` file beside the records), so the sufficiency gate can say
why there are no runs instead of "no recordable runs".
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any

_PYTHON_NAME = re.compile(r"python[\d.]*(\.exe)?$")
_MISSED = [0]


def _is_python(executable: Any, argv: Any) -> bool:
    try:
        program = os.fsdecode(executable if executable is not None else next(iter(argv)))
    except (TypeError, ValueError, StopIteration):
        return False
    if _PYTHON_NAME.match(os.path.basename(program)):
        return True
    full = os.path.realpath(program)
    if full == os.path.realpath(sys.executable):
        return True
    try:
        with open(full, "rb") as fh:
            first = fh.readline(256)
    except OSError:
        return False
    return first.startswith(b"#!") and b"python" in first


def _starts_target(argv: Any, spec: dict[str, Any]) -> bool:
    from coderefine_program_record import imports_target, parse_argv  # type: ignore[import-not-found]

    try:
        args = [os.fsdecode(arg) for arg in list(argv)]
    except (TypeError, ValueError):
        return False
    first = args[0] if args else ""
    if not _PYTHON_NAME.match(os.path.basename(first)) and os.path.isfile(first):
        return imports_target(first, spec["module"])  # a wrapper started directly (its shebang)
    parsed = parse_argv(args[1:])
    if parsed is None:
        return False
    kind, target = parsed[0], parsed[1]
    if kind == "module":
        return target == spec["module"]
    return os.path.realpath(target) == spec["file"] or imports_target(target, spec["module"])


def _note_missed(spec: dict[str, Any], why: str) -> None:
    _MISSED[0] += 1
    name = os.path.join(spec["out"], f"missed-{os.getpid()}-{_MISSED[0]}.json")
    try:
        with open(name, "w", encoding="utf-8") as fh:
            json.dump({"why": why}, fh)
    except OSError:
        pass


def _get(env: Any, name: str) -> str:
    value = env.get(name)
    if value is None:
        value = env.get(os.fsencode(name))
    return os.fsdecode(value) if value is not None else ""


def _carries(env: Any, raw_spec: str, hook_dir: str) -> bool:
    """Whether the environment already starts the hook (e.g. a copy of ours, str or bytes)."""
    return _get(env, "CODEREFINE_PROGRAM_RECORD") == raw_spec and hook_dir in _get(env, "PYTHONPATH").split(os.pathsep)


def carry(raw_spec: str, spec: dict[str, Any]) -> None:
    hook_dir = os.path.dirname(os.path.abspath(__file__))
    busy = [False]

    def audit(event: str, args: tuple[Any, ...]) -> None:
        if busy[0] or event not in ("subprocess.Popen", "os.posix_spawn", "os.exec"):
            return
        if event == "subprocess.Popen":
            executable, argv, env = args[0], args[1], args[3]
        else:
            executable, argv, env = args[0], args[1], args[2]
        if env is None or isinstance(argv, (str, bytes)):
            return  # inherits our environment (hook included), or a shell command line
        busy[0] = True  # our own file reads raise audit events too
        try:
            if not _is_python(executable, argv):
                return
            try:
                if _carries(env, raw_spec, hook_dir):
                    return
                as_bytes = any(isinstance(key, bytes) for key in env)
                if as_bytes and not all(isinstance(key, bytes) for key in env):
                    raise TypeError("str and bytes keys")  # a second PYTHONPATH key: which one wins?
                paths = [p for p in _get(env, "PYTHONPATH").split(os.pathsep) if p and p != hook_dir]
                added = {"CODEREFINE_PROGRAM_RECORD": raw_spec, "PYTHONPATH": os.pathsep.join([hook_dir, *paths])}
                for name, value in added.items():
                    env[os.fsencode(name) if as_bytes else name] = os.fsencode(value) if as_bytes else value
            except (TypeError, AttributeError, KeyError):
                if _starts_target(argv, spec):
                    _note_missed(spec, "an environment the start-up hook could not be added to")
        except Exception:  # never break the test's own process start
            pass
        finally:
            busy[0] = False

    sys.addaudithook(audit)

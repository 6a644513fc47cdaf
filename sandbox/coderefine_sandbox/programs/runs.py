"""A recorded program run and the original's outcome on it, as the baseline keeps them (runs.json)."""

from __future__ import annotations

import base64
import glob
import json
import os
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Outcome:
    exit_code: int
    stdout: bytes
    stderr: bytes
    written: dict[str, str]  # files the run created or changed in its working directory -> sha256
    seconds: float
    timed_out: bool = False
    ran: bool = True  # a wrapper's run imported the version's own file (or could not tell: os._exit)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["stdout"] = _b64(self.stdout)
        data["stderr"] = _b64(self.stderr)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Outcome:
        return cls(**{**data, "stdout": _unb64(data["stdout"]), "stderr": _unb64(data["stderr"])})


@dataclass(frozen=True)
class Run:
    """The inputs of one run: how the interpreter was started, in which folder, with what stdin and files."""

    kind: str  # "file", "module" or "script" (a console-script wrapper that imports the target module)
    target: str  # the script as given, the module name, or the wrapper (relative to the workspace if in it)
    flags: tuple[str, ...]
    args: tuple[str, ...]
    stdin: bytes | None  # None: stdin was closed
    files: dict[str, bytes]  # files it read, by their path relative to its working directory
    env: dict[str, str]
    lines: tuple[int, ...]  # the program's lines it ran
    problems: tuple[str, ...] = ()  # why it cannot be replayed
    expected: Outcome | None = None  # the original's outcome (set when it repeats)
    unstable: str | None = None  # why the original's outcome does not repeat

    @property
    def usable(self) -> bool:
        return not self.problems and self.expected is not None and self.unstable is None

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "target": self.target,
            "flags": list(self.flags),
            "args": list(self.args),
            "stdin": None if self.stdin is None else _b64(self.stdin),
            "files": {path: _b64(data) for path, data in self.files.items()},
            "env": self.env,
            "lines": list(self.lines),
            "problems": list(self.problems),
            "expected": None if self.expected is None else self.expected.to_json(),
            "unstable": self.unstable,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Run:
        return cls(
            kind=data["kind"],
            target=data["target"],
            flags=tuple(data["flags"]),
            args=tuple(data["args"]),
            stdin=None if data["stdin"] is None else _unb64(data["stdin"]),
            files={path: _unb64(text) for path, text in data["files"].items()},
            env=dict(data["env"]),
            lines=tuple(data["lines"]),
            problems=tuple(data["problems"]),
            expected=None if data["expected"] is None else Outcome.from_json(data["expected"]),
            unstable=data["unstable"],
        )


@dataclass
class RunsFile:
    """runs.json: every recorded run, and the original's timing figures (for the candidates' floor)."""

    runs: list[Run] = field(default_factory=list)
    startup_seconds: float | None = None
    run_seconds: float | None = None

    def save(self, path: str) -> None:
        data = {
            "runs": [run.to_json() for run in self.runs],
            "startup_seconds": self.startup_seconds,
            "run_seconds": self.run_seconds,
        }
        with open(path + ".part", "w", encoding="utf-8") as fh:
            json.dump(data, fh)
        os.replace(path + ".part", path)

    @classmethod
    def load(cls, path: str) -> RunsFile:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        return cls([Run.from_json(run) for run in data["runs"]], data["startup_seconds"], data["run_seconds"])


MISSED = "started by the tests without the start-up hook"


def read_missed(folder: str) -> dict[str, int]:
    """Starts of the target the hook saw but could not record (coderefine_program_carry.py), by why."""
    found: dict[str, int] = {}
    for name in glob.glob(os.path.join(folder, "missed-*.json")):
        try:
            with open(name, encoding="utf-8") as fh:
                why = f"{MISSED} ({json.load(fh)['why']})"
        except (OSError, ValueError, KeyError):
            continue
        found[why] = found.get(why, 0) + 1
    return found


def read_recorded(folder: str, limit: int) -> tuple[list[Run], int]:
    """The hook's records (oldest first), at most `limit` of them, and how many there were."""
    names = sorted(glob.glob(os.path.join(folder, "run-*.json")), key=lambda name: (os.path.getmtime(name), name))
    runs = []
    for name in names[:limit]:
        with open(name, encoding="utf-8") as fh:
            runs.append(_from_hook(json.load(fh)))
    return runs, len(names)


def _from_hook(record: dict[str, Any]) -> Run:
    problems = list(record.get("problems", []))
    if not record.get("stdin_complete", True):
        problems.append("stdin was still open when the program ended")
    cwd = record["cwd"]
    files = {}
    for path, text in record.get("files", {}).items():
        relative = os.path.relpath(os.path.join(cwd, path), cwd)
        if relative.startswith(os.pardir):
            problems.append("reads a file outside its working directory")
            continue
        files[relative] = _unb64(text)
    return Run(
        kind=record["kind"],
        target=record["target"],
        flags=tuple(record["flags"]),
        args=tuple(record["args"]),
        stdin=None if record.get("stdin_kind") == "closed" else _unb64(record.get("stdin", "")),
        files=files,
        env=dict(record.get("env", {})),
        lines=(),  # traced in a replay of the original (steps.baseline)
        problems=tuple(dict.fromkeys(problems)),
    )


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.b64decode(text.encode("ascii"))

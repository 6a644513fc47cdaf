"""Record one run of the target program (see sitecustomize.py): its inputs, as one JSON file per run.

Recorded: `python [flags] FILE`, `python [flags] -m MODULE`, and a console-script wrapper (`kind
"script"`: a Python script that imports the target module at top level, as pip's entry-point scripts
`from pkg.mod import main; sys.exit(main())` do), kept only when the target module was imported from the
project's copy by the time it exits (see `_Recorder.finish`).

The record (written at exit into the folder the spec names):
    {"kind": "file"|"module"|"script", "target": ..., "flags": [...], "args": [...], "cwd": ...,
     "stdin": base64 | null, "stdin_kind": "pipe"|"file"|"null"|"tty"|"closed", "stdin_complete": bool,
     "files": {path as opened: base64}, "env": {allow-listed},
     "problems": [why it cannot be replayed]}

stdin is taken at the file descriptor, so every way of reading it is seen: a regular file is read with
pread (the program's offset is untouched); a pipe or socket is swapped for a pipe of ours, fed by a thread
that keeps a copy of every byte, which also keeps an interactive exchange working (nothing is read ahead
of what the writer sends). The program's lines are not traced here but in a replay (trace_lines).
"""

from __future__ import annotations

import atexit
import base64
import json
import os
import stat
import sys
import threading
from typing import Any

# The environment a program gets that may change its output; everything else is the sandbox's own.
ENV_ALLOW = (
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_NUMERIC",
    "TZ",
    "PYTHONIOENCODING",
    "PYTHONUTF8",
    "COLUMNS",
    "LINES",
    "NO_COLOR",
)
_ARG_OPTIONS = ("-W", "-X", "--check-hash-based-pycs")


def parse_argv(argv: list[str]) -> tuple[str, str, list[str], list[str]] | None:
    """(kind, target, interpreter flags, program args) of `python [flags] file|-m module args`, or None for
    `-c`, stdin scripts and the interactive interpreter."""
    flags: list[str] = []
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg == "-m":
            return ("module", argv[index + 1], flags, argv[index + 2 :]) if index + 1 < len(argv) else None
        if arg.startswith("-m") and not arg.startswith("--"):
            return "module", arg[2:], flags, argv[index + 1 :]
        if arg == "-c" or (arg.startswith("-c") and not arg.startswith("--")) or arg == "-":
            return None
        if arg == "--":
            index += 1
            break
        if not arg.startswith("-"):
            break
        if arg in _ARG_OPTIONS and index + 1 < len(argv):
            flags += [arg, argv[index + 1]]
            index += 2
            continue
        flags.append(arg)
        index += 1
    if index >= len(argv):
        return None
    return "file", argv[index], flags, argv[index + 1 :]


class _Recorder:
    def __init__(self, spec: dict[str, Any], kind: str, target: str, flags: list[str], args: list[str]) -> None:
        self.spec = spec
        self.out_dir = spec["out"]
        self.max_bytes = int(spec["max_bytes"])
        self.file = spec["file"]
        self.record: dict[str, Any] = {
            "kind": kind,
            "target": target,
            "flags": flags,
            "args": args,
            "cwd": os.getcwd(),
            "env": {name: os.environ[name] for name in ENV_ALLOW if name in os.environ},
            "problems": [],
        }
        self.files: dict[str, bytes] = {}
        self.size = 0
        self.stdin_chunks: list[bytes] = []
        self.stdin_done = threading.Event()
        self.busy = False  # our own open() raises the audit event too
        self.active = True  # an in-process run (runpy) records only while the program runs
        hook = os.path.dirname(os.path.realpath(__file__))
        prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
        self.skip = tuple(p + os.sep for p in (*prefixes, hook, "/proc", "/sys", "/dev"))

    # ------------------------------------------------------------------ stdin
    def take_stdin(self) -> None:
        try:
            info = os.fstat(0)
        except OSError:
            self.record["stdin_kind"] = "closed"
            return
        if stat.S_ISREG(info.st_mode):
            self.record["stdin_kind"] = "file"
            self.stdin_chunks.append(os.pread(0, info.st_size, 0))
            self.stdin_done.set()
        elif stat.S_ISFIFO(info.st_mode) or stat.S_ISSOCK(info.st_mode):
            self.record["stdin_kind"] = "pipe"
            self._tee_stdin()
        elif stat.S_ISCHR(info.st_mode) and os.path.samestat(info, os.stat(os.devnull)):
            self.record["stdin_kind"] = "null"
            self.stdin_done.set()
        else:
            self.record["stdin_kind"] = "tty"
            self.record["problems"].append("stdin is a terminal")

    def _tee_stdin(self) -> None:
        real = os.dup(0)
        read_end, write_end = os.pipe()
        os.dup2(read_end, 0)  # sys.stdin and open(0) read fd 0: from now on, our pipe
        os.close(read_end)

        def copy() -> None:
            try:
                while True:
                    chunk = os.read(real, 65536)
                    if not chunk:
                        break
                    self.stdin_chunks.append(chunk)
                    view = memoryview(chunk)
                    while view:
                        view = view[os.write(write_end, view) :]
            except OSError:
                pass  # the program closed its stdin: what it read is recorded
            finally:
                self.stdin_done.set()
                os.close(write_end)
                os.close(real)

        threading.Thread(target=copy, name="coderefine-stdin", daemon=True).start()

    # ------------------------------------------------------------------ files read
    def audit(self, event: str, args: tuple[Any, ...]) -> None:
        if event != "open" or not args or self.busy or not self.active:
            return
        self.busy = True
        try:
            self._opened(args)
        finally:
            self.busy = False

    def _opened(self, args: tuple[Any, ...]) -> None:
        path, mode = args[0], args[1] if len(args) > 1 else "r"
        if not isinstance(path, str) or not isinstance(mode, str) or any(c in mode for c in "wax+"):
            return
        if path.endswith((".py", ".pyc", ".pyo", ".so", ".pth")) or path in self.files:
            return
        full = os.path.realpath(path)
        if full == self.file or full.startswith(self.skip) or not os.path.isfile(full):
            return
        try:
            with open(full, "rb") as fh:
                data = fh.read(self.max_bytes + 1)
        except OSError:
            return
        self.size += len(data)
        self.files[path] = data
        if self.size > self.max_bytes:
            self.record["problems"].append("reads more than the recording keeps")

    # ------------------------------------------------------------------ at exit
    def finish(self) -> None:
        self.stdin_done.wait(0.5)  # the writer has usually closed our stdin by the time we exit
        stdin = b"".join(self.stdin_chunks)
        record = self.record
        if record["kind"] == "script":
            why = _wrapper_outcome(self.spec)
            if why == "absent":
                return  # a script that never imported the target: not a run of the program
            if why is not None:
                record["problems"].append(why)
            if self.spec.get("prefix") and os.path.realpath(sys.prefix) != self.spec["prefix"]:
                record["problems"].append(f"the wrapper runs another Python installation ({sys.prefix})")
        record["stdin_complete"] = self.stdin_done.is_set()
        record["stdin"] = base64.b64encode(stdin).decode("ascii")
        record["files"] = {path: base64.b64encode(data).decode("ascii") for path, data in self.files.items()}
        if len(stdin) + self.size > self.max_bytes:
            record["problems"].append("stdin and files larger than the recording keeps")
            record["stdin"], record["files"] = "", {}
        name = os.path.join(self.out_dir, f"run-{os.getpid()}-{id(self)}.json")
        try:
            with open(name + ".part", "w", encoding="utf-8") as fh:
                json.dump(record, fh)
            os.replace(name + ".part", name)
        except OSError:
            pass  # a run that cannot be saved is simply not recorded


def _is_target(spec: dict[str, Any], kind: str, target: str) -> bool:
    if kind == "file":
        return os.path.realpath(target) == spec["file"]
    return target == spec["module"]


WRAPPER_BYTES = 64 * 1024  # a console-script wrapper is a few lines; larger scripts are not read


def imports_target(script: str, module: str) -> bool:
    """Whether `script` imports the target module at top level (`from pkg.mod import main` or `import
    pkg.mod`): a console-script wrapper, or any script of the project driving it."""
    try:
        if os.path.getsize(script) > WRAPPER_BYTES:
            return False
        with open(script, "rb") as fh:
            data = fh.read()
    except OSError:
        return False
    if module.encode() not in data:
        return False
    import ast

    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return False
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == module:
            return True
        if isinstance(node, ast.Import) and any(alias.name == module for alias in node.names):
            return True
    return False


def _as_script(spec: dict[str, Any], script: str) -> str:
    """The wrapper as the replay names it: relative to the workspace when it is the project's own (each
    version's copy is run), else its absolute path (e.g. the venv's bin)."""
    full = os.path.realpath(script)
    root = spec.get("root")
    if root and full.startswith(root + os.sep):
        return os.path.relpath(full, root)
    return full


def _wrapper_outcome(spec: dict[str, Any]) -> str | None:
    """At a wrapper's exit: None when it ran the project's copy of the target; "absent" when it never
    imported the target (not a run of the program); else why it cannot be replayed."""
    module = sys.modules.get(spec["module"])
    if module is None:
        return "absent"
    origin = os.path.realpath(getattr(module, "__file__", None) or "")
    if origin != spec["file"]:
        return f"the wrapper imported {spec['module']} from {origin}, not the project's copy"
    return None


def _in_process_stdin() -> bytes | None:
    """What is left to read on sys.stdin when a test runs the program in its own process: a StringIO or
    a text wrapper over BytesIO it put there; None when it is something else (pytest's own stdin, which
    cannot be read, stands for an empty one)."""
    stdin = sys.stdin
    buffer = getattr(stdin, "buffer", None)
    if hasattr(buffer, "getvalue") and hasattr(buffer, "tell"):
        return buffer.getvalue()[buffer.tell() :]  # type: ignore[union-attr]
    if hasattr(stdin, "getvalue") and hasattr(stdin, "tell"):
        return stdin.getvalue()[stdin.tell() :].encode()
    return b"" if type(stdin).__name__ == "DontReadFromInput" else None


def _recording(function: Any, kind: str, spec: dict[str, Any]) -> Any:
    """runpy.run_path / run_module, recording a run of the target made inside the test's own process."""

    def run(target: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(target, str) or not _is_target(spec, kind, target):
            return function(target, *args, **kwargs)
        recorder = _Recorder(spec, kind, target, [], list(sys.argv[1:]))
        stdin = _in_process_stdin()
        if stdin is None:
            recorder.record["problems"].append("run in process with a stdin that cannot be read back")
        recorder.stdin_chunks.append(stdin or b"")
        recorder.stdin_done.set()
        sys.addaudithook(recorder.audit)
        try:
            return function(target, *args, **kwargs)
        finally:
            recorder.active = False
            recorder.finish()

    return run


def maybe_record(raw_spec: str) -> None:
    """Start recording when this interpreter runs the target program; otherwise watch runpy, which a test
    may use to run it in its own process."""
    spec = json.loads(raw_spec)
    from coderefine_program_carry import carry  # type: ignore[import-not-found]

    carry(raw_spec, spec)  # into processes a test starts with an environment of its own
    parsed = parse_argv(list(getattr(sys, "orig_argv", sys.argv))[1:])
    wrapper = parsed is not None and parsed[0] == "file" and not _is_target(spec, "file", parsed[1])
    if wrapper and parsed is not None and imports_target(parsed[1], spec["module"]):
        parsed = ("script", _as_script(spec, parsed[1]), parsed[2], parsed[3])
    if parsed is None or (parsed[0] != "script" and not _is_target(spec, parsed[0], parsed[1])):
        import runpy

        runpy.run_path = _recording(runpy.run_path, "file", spec)  # type: ignore[assignment]
        runpy.run_module = _recording(runpy.run_module, "module", spec)  # type: ignore[assignment]
        return
    kind, target, flags, args = parsed
    recorder = _Recorder(spec, kind, target, flags, args)
    recorder.take_stdin()
    sys.addaudithook(recorder.audit)
    atexit.register(recorder.finish)


def trace_lines(out: str) -> None:
    """Note the target program's lines (of CODEREFINE_PROGRAM_FILE) this run executes into `out` (JSON) at
    exit: set by the runner for one of the original's replays, never in the tests' own runs (tracing slows
    a program down, and a test's time limit must not be spent on it)."""
    file = os.environ.get("CODEREFINE_PROGRAM_FILE")  # the version's own file (a wrapper imports it)
    if not file:
        return
    file = os.path.realpath(file)
    lines: set[int] = set()
    own: dict[str, bool] = {}

    def local(frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            lines.add(frame.f_lineno)
        return local

    def trace(frame: Any, event: str, arg: Any) -> Any:
        filename = frame.f_code.co_filename
        mine = own.get(filename)
        if mine is None:
            mine = own[filename] = os.path.realpath(filename) == file
        return local if mine else None

    def finish() -> None:
        sys.settrace(None)
        with open(out, "w", encoding="utf-8") as fh:
            json.dump(sorted(line for line in lines if line > 0), fh)

    atexit.register(finish)
    sys.settrace(trace)

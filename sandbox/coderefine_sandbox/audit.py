"""What powers a module version uses while it is imported and its recorded calls are replayed.

An audit hook (`sys.addaudithook`, PEP 578) sees every network, process, file, native-code and
dynamic-code event of the interpreter. It only records while the target runs: during the import of the
module under judgement and during each replayed call (`Recorder.watch`), so the replay's own reading of
recorded calls, unpickling and comparing are never counted. The original is recorded the same way in the
baseline's self-check, so a candidate is judged against exactly the powers the original used under
identical runner activity (see `gained`). A program's replayed runs are watched by the same Recorder,
started in the program's own process by the start-up hook (programs/hook/coderefine_program_audit.py).

Kinds (the names `--allow` takes):
- network: any `socket.*` event (create, connect, bind, getaddrinfo, ...);
- process: subprocess, os.system, os.exec*, os.fork, os.posix_spawn, os.spawn*, os.kill, pty.spawn;
- file_write: a file opened for writing, or removed, renamed or created, outside the temporary area;
- file_read: a file opened for reading outside the temporary area, the interpreter's installation and
  /dev, /proc, /sys (e.g. the tests' data files); the import system's own reads are not counted;
- native: ctypes events, and imports of cffi;
- dynamic_code: compile/exec/eval called from the module's own code (not the standard library's
  namedtuple or dataclass machinery, not the import system);
- import: a module the original never imported that is not in the standard library or the project, or
  one of the network/process/native modules in SENSITIVE_MODULES;
- thread: a thread (or a child process) still running after the import or a call returns;
- clock: `time.perf_counter` or another clock the timing reads replaced.

Standard library only: this runs inside the sandbox.
"""

from __future__ import annotations

import _thread
import operator
import os
import sys
import threading
import time

# Light to import: a program's replay imports this module in the program's own process at start-up
# (programs/hook/coderefine_program_audit.py), so protocol, tempfile and contextlib load only when needed.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import contextlib
    from collections.abc import Callable

    from coderefine_sandbox.protocol import Capability

# Most serious first: a refusal names the first of a candidate's new powers in this order.
KINDS = ("network", "process", "native", "clock", "file_write", "dynamic_code", "thread", "file_read", "import")
MAX_RECORDED = 40  # capabilities kept per replay: the first use of each (kind, key)

SENSITIVE_MODULES = frozenset(
    {
        "socket",
        "ssl",
        "subprocess",
        "multiprocessing",
        "concurrent",
        "ctypes",
        "cffi",
        "_cffi_backend",
        "requests",
        "httpx",
        "urllib3",
        "aiohttp",
        "http",
        "ftplib",
        "smtplib",
        "telnetlib",
        "pty",
        "mmap",
    }
)
_PROCESS_EVENTS = frozenset(
    {
        "subprocess.Popen",
        "os.system",
        "os.exec",
        "os.fork",
        "os.forkpty",
        "os.posix_spawn",
        "os.spawn",
        "os.kill",
        "os.killpg",
        "pty.spawn",
    }
)
_FILE_CHANGES = frozenset(
    {"os.remove", "os.rename", "os.mkdir", "os.rmdir", "os.truncate", "os.symlink", "os.link", "shutil.rmtree"}
)
_IMPORT_SYSTEM = ("<frozen importlib._bootstrap", "<frozen zipimport")
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
# threading's own entry point for a new thread (renamed in 3.13), wrapped to see threads start.
_THREAD_ENTRY_POINTS = ("_start_new_thread", "_start_joinable_thread")
# The clocks the timing worker and pyperf read: a candidate that replaces one is tampering with the timer.
CLOCKS = ("perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "process_time", "process_time_ns")


_CLOCK_GETTER = operator.attrgetter(*CLOCKS)


def _clocks_now() -> tuple[object, ...]:
    return _CLOCK_GETTER(time)


def clock_state() -> dict[str, object]:
    return {name: getattr(time, name, None) for name in CLOCKS}


def replaced_clocks(before: dict[str, object]) -> list[str]:
    return [f"time.{name}" for name, value in clock_state().items() if value is not before.get(name)]


def _stdlib_module(name: str) -> bool:
    top = name.partition(".")[0]
    return top in sys.stdlib_module_names or top in sys.builtin_module_names  # type: ignore[attr-defined]


class Recorder:
    """Records capabilities while `watch()` is active; one per replay process."""

    def __init__(
        self,
        workspace: str,
        enabled: bool = True,
        temporary: tuple[str, ...] = (),
        original: str | None = None,
        temp: str | None = None,
    ) -> None:
        self.workspace = os.path.realpath(workspace)
        # A candidate's layered workspace links to the original's files: through them, the original's
        # workspace is the project too (its modules are no new import, its paths read as <workspace>).
        self.workspaces = tuple(dict.fromkeys(os.path.realpath(w) for w in (workspace, original or workspace)))
        # The temporary area: the step's TMPDIR, and e.g. a program run's own working folder.
        if temp is None:
            import tempfile

            temp = tempfile.gettempdir()
        self.temps = tuple(os.path.realpath(p) for p in (temp, *temporary))
        self.home = os.path.realpath(os.path.expanduser("~"))
        prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
        self.install_dirs = tuple(os.path.realpath(p) + os.sep for p in prefixes)
        self.found: dict[tuple[str, str], Capability] = {}
        self.active = False  # a window is open
        self.busy: set[int] = set()  # the threads inside the hook's own work
        self.where: str | Callable[[], str] = ""
        self.pending: list[tuple[str, str | Callable[[], str]]] = []
        self.enabled = enabled
        if not enabled:
            return
        sys.addaudithook(self._hook)
        # Python 3.11 raises no audit event for a new thread: threading's own entry point is wrapped instead
        # (`_start_new_thread` up to 3.12, `_start_joinable_thread` from 3.13).
        entry = next(name for name in _THREAD_ENTRY_POINTS if hasattr(threading, name))
        start = getattr(threading, entry)

        def noted_start(*args: object, **kwargs: object) -> object:
            if self.active:
                self.active = False  # naming the call may import or open: not the target's doing
                try:
                    self._note("thread", "", "starts a thread")
                finally:
                    self.active = True
            return start(*args, **kwargs)

        setattr(threading, entry, noted_start)

    # ----------------------------------------------------------------- the hook

    def _hook(self, event: str, args: tuple[object, ...]) -> None:
        if not self.active:  # the cheap path: the runner's own activity
            return
        # The hook's own work (realpath, frames) must not re-enter it, in this thread only. Turning `active`
        # off for it, as this once did, raced with the candidate's own threads: a thread's event classified
        # while the window closed turned `active` back on after it, and the runner's next work (the memory
        # reading's /proc/self/clear_refs) was charged to the candidate as a file write; and the main
        # thread's events went unseen while a thread's were being classified.
        thread = _thread.get_ident()
        if thread in self.busy:
            return
        self.busy.add(thread)
        try:
            self._classify(event, args)
        except Exception:  # an odd event argument must never break the call under judgement
            pass
        finally:
            self.busy.discard(thread)

    def _classify(self, event: str, args: tuple[object, ...]) -> None:
        if event.startswith("socket."):
            self._note("network", "", f"{event}{_short(args)}")
        elif event in _PROCESS_EVENTS:
            self._note("process", "", f"{event}{_short(args)}")
        elif event.startswith("ctypes."):
            self._note("native", "", event)
        elif event == "open":
            self._open(args)
        elif event in _FILE_CHANGES:
            path = args[0] if args else ""
            if isinstance(path, (str, bytes, os.PathLike)) and not self._temporary(os.fsdecode(path)):
                key = self._key(os.path.realpath(os.fsdecode(path)))
                self._note("file_write", key, f"{event} {key}")
        elif event in ("compile", "exec"):
            caller = sys._getframe(2).f_code.co_filename  # 0 _classify, 1 _hook, 2 the C builtin's caller
            if self._own_code(caller):
                source = args[0] if event == "compile" and args else ""
                detail = f"{event} of {_short((source,))}" if isinstance(source, (str, bytes)) else event
                self._note("dynamic_code", "", detail)
        elif event == "import":
            name = str(args[0]) if args else ""
            top = name.partition(".")[0]
            if top in SENSITIVE_MODULES:
                self._note("native" if top in ("ctypes", "cffi", "_cffi_backend") else "import", top, f"import {name}")
            elif not _stdlib_module(name):
                self.pending.append((name, self.where))  # the project's own modules are told apart once loaded

    def _open(self, args: tuple[object, ...]) -> None:
        path, mode, flags = [*args, None, None, 0][:3]
        if not isinstance(path, (str, bytes, os.PathLike)):
            return  # an open file descriptor
        text = os.path.realpath(os.fsdecode(path))
        if self._temporary(text):
            return
        writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and bool(flags & _WRITE_FLAGS)
        )
        if writes:
            self._note("file_write", self._key(text), f"open {self._key(text)} for writing")
            return
        if text.startswith(("/dev/", "/proc/", "/sys/")) or text.startswith(self.install_dirs):
            return
        caller = sys._getframe(3).f_code.co_filename  # 0 _open, 1 _classify, 2 _hook, 3 open's caller
        if caller.startswith(_IMPORT_SYSTEM):
            return  # the import system reading a module's source: imports are judged by the import kind
        self._note("file_read", self._key(text), f"open {self._key(text)}")

    # ----------------------------------------------------------------- helpers

    def _temporary(self, path: str) -> bool:
        real = os.path.realpath(path)
        return real == os.devnull or any(real == temp or real.startswith(temp + os.sep) for temp in self.temps)

    def _key(self, path: str) -> str:
        """Paths compare across runs and sides: the original's and a candidate's workspace copies (and HOME
        folders) differ only in prefix, and the prompts that name them must not change from run to run."""
        places = [*((workspace, "<workspace>") for workspace in self.workspaces), (self.home, "~")]
        for prefix, name in sorted(places, key=lambda p: -len(p[0])):
            if path == prefix or path.startswith(prefix + os.sep):
                return name + path[len(prefix) :]
        return path

    def _own_code(self, filename: str) -> bool:
        real = os.path.realpath(filename) if filename and not filename.startswith("<") else filename
        return real.startswith(tuple(workspace + os.sep for workspace in self.workspaces))

    def _resolve_imports(self) -> None:
        """Imports outside the standard library, once loaded: the project's own modules are not new powers."""
        for name, where in self.pending:
            module = sys.modules.get(name)
            origin = getattr(getattr(module, "__spec__", None), "origin", None) or ""
            if module is None or os.path.realpath(origin).startswith(tuple(w + os.sep for w in self.workspaces)):
                continue  # not loaded (the import failed: the replay says so) or the project's own
            self.where = where
            self._note("import", name.partition(".")[0], f"import {name}")
        self.pending.clear()

    def _note(self, kind: str, key: str, detail: str) -> None:
        if (kind, key) not in self.found and len(self.found) < MAX_RECORDED:
            where = self.where() if callable(self.where) else self.where  # described only when needed
            from coderefine_sandbox.protocol import Capability

            self.found[(kind, key)] = Capability(kind=kind, key=key, detail=detail[:200], call=where)

    # ----------------------------------------------------------------- the window

    def watch(self, where: str | Callable[[], str]) -> contextlib.AbstractContextManager[None]:
        """Record what runs inside: the import of the module, or one replayed call (`where` names it)."""
        return _Window(self, where) if self.enabled else _NoWindow()

    def _close(self, threads: int, clocks: tuple[object, ...]) -> None:
        """After a window: what it left behind (imports to tell apart, a clock replaced, a thread running)."""
        if self.pending:
            self._resolve_imports()
        if _clocks_now() != clocks:
            before = dict(zip(CLOCKS, clocks, strict=True))
            for name in replaced_clocks(before):
                self._note("clock", name, f"{name} replaced")
        if _thread._count() > threads:
            self._note("thread", "", f"{_thread._count() - threads} thread(s) still running after it returned")

    @property
    def capabilities(self) -> tuple[Capability, ...]:
        return tuple(self.found.values())


class _NoWindow:
    """What `watch` gives when the audit is off (contextlib.nullcontext, without importing contextlib)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


class _Window:
    """One audit window (a class, not a generator: it is entered around every replayed call)."""

    __slots__ = ("clocks", "recorder", "threads", "where")

    def __init__(self, recorder: Recorder, where: str | Callable[[], str]) -> None:
        self.recorder, self.where = recorder, where

    def __enter__(self) -> None:
        self.threads = _thread._count()  # every thread started through _thread, threading's included
        self.clocks = _clocks_now()
        self.recorder.where = self.where
        self.recorder.active = True

    def __exit__(self, *exc: object) -> None:
        self.recorder.active = False
        self.recorder._close(self.threads, self.clocks)


def gained(
    candidate: tuple[Capability, ...], original: tuple[Capability, ...], allowed: tuple[str, ...]
) -> tuple[Capability, ...]:
    """The candidate's capabilities the original never used, less the kinds the user allowed."""
    known = {(c.kind, c.key) for c in original}
    new = [c for c in candidate if c.kind not in allowed and (c.kind, c.key) not in known]
    return tuple(sorted(new, key=lambda c: KINDS.index(c.kind) if c.kind in KINDS else len(KINDS)))


def _short(args: tuple[object, ...]) -> str:
    text = repr(args)
    return text if len(text) <= 100 else text[:97] + "..."

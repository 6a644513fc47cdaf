"""`--engine ray`: each function's refinement is a Ray task on a cluster (`--ray-address auto|HOST:PORT|ray://...`).

- The project reaches the workers through the object store (a tar.gz of it, put once), never a shared
  filesystem; each task unpacks it into a scratch folder of its node. coderefine itself must be installed
  on every node (`pip install 'coderefine[ray]'`), as Ray expects of the code its tasks import.
- Timing is exclusive per node: every task's sandbox runs that time code lock one file in the node's
  temporary folder, named after the node, so no two timing runs overlap on a node while tests and replays
  use its other CPUs. A lock file, not an actor: the kernel releases it when a worker dies, and nodes
  started with a plain `ray start` need no custom resource.
- Results stream back as tasks finish (`ray.wait`); a task whose worker dies is retried once
  (`max_retries=1`, the outcome's `attempts` says so), and one that dies twice is a failed outcome of its
  own; Ctrl-C cancels the tasks not finished (running ones get a KeyboardInterrupt and clean up, and are
  killed only if still running after a grace period) and returns what finished.
- The sandbox still isolates every candidate on every node. The model key (when a model provider is used)
  goes to the worker processes that call the model, as an environment variable of their runtime
  environment; the sandbox passes no secret on.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import tarfile
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import Any

from coderefine.errors import UsageError
from coderefine.evaluation.workspace import IGNORED_DIRS
from coderefine.sweep.engines.base import EngineRun, OnDone, OnStart
from coderefine.sweep.jobs import FunctionJob, FunctionOutcome, lost_outcome, refine_function

MAX_RETRIES = 1  # a task whose worker dies is tried once more
RAY_MISSING = "--engine ray needs Ray: pip install 'coderefine[ray]'"


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise UsageError(RAY_MISSING) from None
    return ray


def pack_project(root: Path) -> bytes:
    """The project as a gzipped tar, without the folders a workspace copy leaves out (.git, .venv, ...)."""

    def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        parts = Path(info.name).parts
        if any(part in IGNORED_DIRS or part.endswith(".egg-info") for part in parts):
            return None
        return None if info.issym() or info.islnk() else info

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for child in sorted(root.iterdir()):
            archive.add(child, arcname=child.name, filter=keep)
    return buffer.getvalue()


def unpack_project(data: bytes, destination: Path) -> None:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        archive.extractall(destination, filter="data")


def node_lock(node_id: str) -> str:
    """A folder of its own (it is mounted read-only into the sandbox, so it must hold nothing else)."""
    folder = Path(tempfile.gettempdir()) / "coderefine-timing-locks"
    folder.mkdir(mode=0o755, exist_ok=True)
    return str(folder / f"{node_id[:16]}.lock")


def _wake(signum: int, frame: FrameType | None) -> None:
    """Nothing: the signal is there to interrupt a blocking call (see `interruptible`)."""


@contextlib.contextmanager
def interruptible(interval: float = 0.25) -> Iterator[None]:
    """Ray's cancel (without force) raises KeyboardInterrupt in the task's main thread by simulating a
    signal, which Python notices only between bytecodes: a main thread blocked reading a sandbox run's
    pipes (a test that runs for minutes) would not notice it before that run ends. A no-op signal sent
    to the main thread a few times a second interrupts the blocking call, so the pending KeyboardInterrupt
    is raised at once and the task's own cleanup (sandbox, scratch folders) runs. SIGWINCH: ignored by
    default, so one arriving after the handler is restored does nothing, and Ray's workers do not use it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGWINCH, _wake)
    main, stop = threading.main_thread().ident, threading.Event()

    def tick() -> None:
        while not stop.wait(interval) and main is not None:
            signal.pthread_kill(main, signal.SIGWINCH)

    ticker = threading.Thread(target=tick, name="coderefine-wake", daemon=True)
    ticker.start()
    try:
        yield
    finally:
        stop.set()
        ticker.join()
        # None: a handler set outside Python, which cannot be restored from here; the default ignores it.
        signal.signal(signal.SIGWINCH, previous if previous is not None else signal.SIG_DFL)


def run_on_node(job: FunctionJob, project: bytes) -> FunctionOutcome:
    """The body of one Ray task, on whichever node Ray placed it."""
    import ray

    node = ray.get_runtime_context().get_node_id()
    with interruptible(), tempfile.TemporaryDirectory(prefix="coderefine-ray-") as scratch:
        root = Path(scratch) / "project"
        unpack_project(project, root)
        outcome = refine_function(replace(job, timing_lock=node_lock(node)), root, node=node)
    return replace(outcome, attempts=_attempt(ray) + 1)


def _attempt(ray: Any) -> int:
    """0 on the task's first attempt, 1 on its retry (its first worker died). Ray tells a task only through
    its core worker (no public call); 0 where that is missing."""
    core = getattr(ray._private.worker.global_worker, "core_worker", None)
    try:
        return int(core.get_current_task_attempt_number())
    except (AttributeError, TypeError, ValueError):
        return 0


class RayEngine:
    name = "ray"

    def __init__(self, address: str = "auto", env: dict[str, str] | None = None, cancel_grace: float = 30.0) -> None:
        self.address = address
        self.env = env or {}  # the model key, for the processes that call the model
        self.cancel_grace = cancel_grace  # seconds a cancelled task has to clean up before it is killed

    def connect(self) -> Any:
        ray = import_ray()
        runtime_env = {"env_vars": self.env} if self.env else None
        try:
            ray.init(
                address=self.address,
                runtime_env=runtime_env,
                log_to_driver=False,
                ignore_reinit_error=True,
                logging_level="ERROR",
            )
        except (ConnectionError, RuntimeError, ValueError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise UsageError(
                f"--ray-address {self.address}: no Ray cluster answered ({first[:200]}); start one with "
                "`ray start --head`, or use --engine local"
            ) from None
        return ray

    def run(self, jobs: Sequence[FunctionJob], root: Path, on_done: OnDone, on_start: OnStart) -> EngineRun:
        ray = self.connect()
        try:
            nodes = [n for n in ray.nodes() if n.get("Alive")]
            cpus = sum(int(n.get("Resources", {}).get("CPU", 0)) for n in nodes)
            description = f"ray: {len(nodes)} node{'s' if len(nodes) != 1 else ''}, {cpus} CPUs"
            task = ray.remote(num_cpus=1, max_retries=MAX_RETRIES)(run_on_node)
            project = ray.put(pack_project(root))
            pending: dict[Any, FunctionJob] = {}
            for job in jobs:
                on_start(job)
                pending[task.remote(job, project)] = job
            lost: list[str] = []
            try:
                while pending:
                    ready, _ = ray.wait(list(pending), num_returns=1)
                    for ref in ready:
                        self._collect(ray, ref, pending.pop(ref), root, on_done, lost)
            except KeyboardInterrupt:
                self._cancel(ray, pending, root, on_done, lost)
                return EngineRun(True, tuple(lost), description)
            return EngineRun(False, tuple(lost), description)
        finally:
            ray.shutdown()

    @staticmethod
    def _collect(ray: Any, ref: Any, job: FunctionJob, root: Path, on_done: OnDone, lost: list[str]) -> None:
        try:
            outcome = ray.get(ref)
        except (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError) as exc:
            lost.append(job.key)  # its worker died twice: the retry did not save it
            why = f"its Ray worker died on both attempts ({type(exc).__name__}); rerun the sweep to try again"
            outcome = lost_outcome(job, root, MAX_RETRIES + 1, why)
        on_done(outcome)

    def _cancel(self, ray: Any, pending: dict[Any, FunctionJob], root: Path, on_done: OnDone, lost: list[str]) -> None:
        """Ctrl-C: queued tasks never start; running ones get a KeyboardInterrupt, so their own cleanup
        stops their sandbox and removes their scratch folders; those still running after the grace period
        (or at a second Ctrl-C) are killed. A task that finished meanwhile is kept."""
        refs = list(pending)
        for ref in refs:
            ray.cancel(ref)
        ended: list[Any] = []
        with contextlib.suppress(KeyboardInterrupt):  # a second Ctrl-C: no more waiting
            ended, _ = ray.wait(refs, num_returns=len(refs), timeout=self.cancel_grace)
        for ref in refs:
            if ref not in ended:
                ray.cancel(ref, force=True)
                continue
            with contextlib.suppress(ray.exceptions.TaskCancelledError, ray.exceptions.RayTaskError):
                self._collect(ray, ref, pending[ref], root, on_done, lost)


def model_env(settings: Any) -> dict[str, str]:
    """The model key's variable, when it is set here: the only secret the workers get."""
    name = settings.api_key_env
    value = os.environ.get(name)
    return {name: value} if value else {}

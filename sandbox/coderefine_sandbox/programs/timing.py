"""Time original and candidate as whole processes on the same inputs, interleaved, in the same sandbox.

One timing input is a recorded run (its argv, files and stdin) or a stdin file the user gave
(--timing-inputs, run like the first usable recorded run). In one pair every input is run `repeats` times
per version, the versions alternating run by run (AB AB AB, the next pair BA BA BA), and the fastest of
each input's repeats counts: a process is mostly start-up noise plus the program's work, and the minimum
is the figure least touched by the machine's other jobs. A pair's value is the sum over the inputs.

Interpreter start-up is measured in every pair too: an empty program, started exactly like the runs
(same interpreter, flags, environment and start-up hook). Two estimates come out: the whole process
(what running the program costs) and the part after start-up (whole minus start-up per process). The
verdict is on the whole process: start-up is the same for both versions and subtracting a separately
measured start-up adds its jitter to both sides, so the after-start-up ratio is never the more stable one;
it is reported beside it. A program that is mostly start-up thus shows a small, honest speedup, and its
noise floor is raised (SHORT_FLOOR), so start-up jitter cannot pass for a gain.

Statistics, early stop and the confirming second series are those of the calls' timing (timing/steps.py).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass

from coderefine_sandbox.programs.execute import Version, kill_group, run_folder
from coderefine_sandbox.programs.runs import Run
from coderefine_sandbox.protocol import Confirmation, Estimate, TimingReport
from coderefine_sandbox.timing.stats import paired_speedup

PROCESS_FLOOR = 0.10  # the least a whole process must gain: SUITE.md's same-program ratios span 0.87-1.16
SHORT_FLOOR = 0.20  # when start-up is half the original's process time or more
EMPTY = Run("file", "", (), (), b"", {}, {}, ())


@dataclass(frozen=True)
class Input:
    run: Run
    folder: str
    stdin_path: str | None


@dataclass
class Series:
    original: list[float]
    candidate: list[float]
    startup: list[float]  # per pair: one process's start-up
    processes: int  # processes per version in one value


def _recorded_exit(run: Run, code: int) -> int:
    return run.expected.exit_code if run.expected is not None else code


def floor_for(min_floor: float, startup: float | None, run_seconds: float | None, processes: int) -> float:
    floor = max(min_floor, PROCESS_FLOOR)
    if startup is not None and run_seconds and startup * processes >= 0.5 * run_seconds:
        floor = max(floor, SHORT_FLOOR)
    return floor


class ProcessTimer:
    def __init__(
        self,
        original: Version,
        candidate: Version | None,
        runs: list[Run],
        scratch: str,
        hash_seed: int,
        repeats: int,
        timeout: float,
    ) -> None:
        self.versions = {"original": original, "candidate": candidate}
        self.runs = runs
        self.scratch = scratch
        self.hash_seed = hash_seed
        self.repeats = max(1, repeats)
        self.timeout = timeout
        self.exit_codes: dict[int, int] = {}  # input index -> the original's exit code

    def _time_one(self, version: Version, item: Input, index: int, tag: str) -> float:
        argv = version.argv(item.run) if item.run is not EMPTY else [*version.argv(item.run)[:1], self.empty]
        with contextlib.ExitStack() as stack:
            stdin = stack.enter_context(open(item.stdin_path, "rb")) if item.stdin_path else subprocess.DEVNULL
            stderr = stack.enter_context(open(self.stderr_path, "w+b"))
            started = time.perf_counter()
            proc = subprocess.Popen(
                argv,
                cwd=item.folder,
                env=version.env(item.run, self.hash_seed),
                stdin=stdin,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                start_new_session=True,
            )
            try:
                code = proc.wait(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                kill_group(proc)
                proc.wait()
                raise RuntimeError(f"the {tag} ran past {self.timeout:g}s on timing input {index + 1}") from None
            seconds = time.perf_counter() - started
            kill_group(proc)
            # The exit code the original gave on this input when its outcome was recorded (a recorded run),
            # else the original's first in this timing: a process that fails fast must not pass for fast.
            expected = 0 if item.run is EMPTY else self.exit_codes.setdefault(index, _recorded_exit(item.run, code))
            if code != expected:
                stderr.seek(0)
                tail = stderr.read()[-300:].decode("utf-8", "replace").strip()
                where = "the empty program" if item.run is EMPTY else f"timing input {index + 1}"
                raise RuntimeError(
                    f"the {tag} exits with {code} on {where}, where the original exits with {expected}"
                    + (f": {tail.splitlines()[-1]}" if tail else "")
                )
        return seconds

    @contextlib.contextmanager
    def inputs(self, stdin_files: list[bytes]) -> Iterator[tuple[list[Input], Input]]:
        """The prepared inputs: each run's folder and stdin file (or the user's stdin files)."""
        with contextlib.ExitStack() as stack:
            base = tempfile.mkdtemp(prefix="timing-", dir=self.scratch)
            stack.callback(shutil.rmtree, base, ignore_errors=True)
            self.empty = os.path.join(base, "empty.py")
            self.stderr_path = os.path.join(base, "stderr")
            with open(self.empty, "w", encoding="utf-8") as fh:
                fh.write("")
            runs = self.runs
            if stdin_files:  # the user's inputs, run like the first recorded run
                runs = [Run(**{**runs[0].__dict__, "stdin": data, "expected": None}) for data in stdin_files]
            items = []
            for index, run in enumerate(runs):
                folder = stack.enter_context(run_folder(run, base))
                path = None
                if run.stdin is not None:
                    path = os.path.join(base, f"stdin-{index}")
                    with open(path, "wb") as fh:
                        fh.write(run.stdin)
                items.append(Input(run, folder, path))
            yield items, Input(EMPTY, base, None)

    def pair(self, items: list[Input], empty: Input, k: int) -> tuple[float, float, float]:
        """(original, candidate, start-up) of pair k."""
        order = ["original", "candidate"] if k % 2 == 0 else ["candidate", "original"]
        best = {"original": [float("inf")] * len(items), "candidate": [float("inf")] * len(items)}
        startup = float("inf")
        for _ in range(self.repeats):
            startup = min(startup, self._time_one(self.versions["original"], empty, -1, "empty program"))
            for index, item in enumerate(items):
                for tag in order:
                    version = self.versions[tag]
                    assert version is not None
                    best[tag][index] = min(best[tag][index], self._time_one(version, item, index, tag))
        return sum(best["original"]), sum(best["candidate"]), startup

    def calibrate(self, items: list[Input], empty: Input) -> tuple[float, float]:
        """The original's (start-up, whole pass): the fastest of `repeats` of each."""
        startup = min(
            self._time_one(self.versions["original"], empty, -1, "empty program") for _ in range(self.repeats)
        )
        whole = sum(
            min(self._time_one(self.versions["original"], item, index, "original") for _ in range(self.repeats))
            for index, item in enumerate(items)
        )
        return startup, whole


def estimates(series: Series) -> dict[str, Estimate]:
    found = {}
    n = series.processes
    after_o = [max(o - n * s, 1e-6) for o, s in zip(series.original, series.startup, strict=True)]
    after_c = [max(c - n * s, 1e-6) for c, s in zip(series.candidate, series.startup, strict=True)]
    for name, (original, candidate) in {
        "process": (series.original, series.candidate),
        "after_startup": (after_o, after_c),
    }.items():
        speedup, low, high = paired_speedup(original, candidate)
        found[name] = Estimate(speedup, (low, high), sum(original) / len(original), sum(candidate) / len(candidate))
    return found


def time_series(timer: ProcessTimer, items: list[Input], empty: Input, first: int, count: int, floor: float) -> Series:
    series = Series([], [], [], len(items))
    for k in range(first, first + count):
        original, candidate, startup = timer.pair(items, empty, k)
        series.original.append(original)
        series.candidate.append(candidate)
        series.startup.append(startup)
        if k > first and estimates(series)["process"].ci[1] < 1.0 + floor:
            break  # the candidate cannot turn out faster: only ever stops on the side of rejection
    return series


def measure(timer: ProcessTimer, stdin_files: list[bytes], pairs: int, floor: float) -> TimingReport:
    with timer.inputs(stdin_files) as (items, empty):
        runs = time_series(timer, items, empty, 0, pairs, floor)
        confirmation = None
        if estimates(runs)["process"].ci[0] >= 1.0 + floor:
            second = time_series(timer, items, empty, pairs, pairs, floor)
            confirmed = estimates(second)["process"]
            confirmation = Confirmation(
                confirmed.speedup,
                confirmed.ci,
                confirmed.original_seconds,
                confirmed.candidate_seconds,
                len(second.original),
            )
            runs = Series(
                runs.original + second.original,
                runs.candidate + second.candidate,
                runs.startup + second.startup,
                runs.processes,
            )
    found = estimates(runs)
    chosen = found["process"]
    return TimingReport(
        speedup=chosen.speedup,
        ci=chosen.ci,
        original_seconds=chosen.original_seconds,
        candidate_seconds=chosen.candidate_seconds,
        basis="process",
        estimates=found,
        pairs=len(runs.original),
        loops=1,
        floor=floor,
        confirmation=confirmation,
    )

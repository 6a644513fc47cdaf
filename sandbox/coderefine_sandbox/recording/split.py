"""A candidate's selected tests split across pytest processes side by side, by test file (RunnerRequest.test_workers).

On a large suite a candidate's test run is most of its verification: networkx's 770 tests reaching `pairwise`
take 45-50 s of CPU in one process. Split over the machine's cores, an acceptance pays about that divided by
the cores. Each process gets whole test files (their module-scoped fixtures stay together), dealt so that the
files of the tests most likely to fail (the fail-fast order) come first in different processes, and the
processes' loads stay even: the seconds the files' tests took in the original's run
(RunnerRequest.test_seconds), or their counts of tests where none was timed. A fail-fast run stops every
process when one of them fails: the rejection stays cheap. The results merge into one `TestRun`, as one
process would have written it.

Standard library only: this runs inside the sandbox.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace

from coderefine_sandbox.process import StepTimeout, read_text, remove_stale, run_steps_side_by_side
from coderefine_sandbox.protocol import (
    FailFast,
    PytestResults,
    TestRun,
    TestSelection,
    read_json,
    write_json,
)

_PYTEST_TESTS_FAILED = 1  # pytest's exit code when a test failed


def shares(
    node_ids: Sequence[str], fail_fast: FailFast | None, workers: int, seconds: Mapping[str, float] | None = None
) -> list[tuple[str, ...]]:
    """The tests of each process: whole files, the likeliest to fail first, then the longest; each file to the
    process with the least so far. What a file weighs: its tests' seconds in the original's run when known (a
    test it did not time counts as their mean), else its count of tests."""
    by_file: dict[str, list[str]] = {}
    for node in node_ids:
        by_file.setdefault(node.split("::")[0], []).append(node)
    if workers < 2 or len(by_file) < 2:
        return [tuple(node_ids)]
    timed = seconds or {}
    known = [timed[node] for node in node_ids if node in timed]
    usual = sum(known) / len(known) if known else 1.0
    weight = {name: sum(timed.get(node, usual) for node in nodes) for name, nodes in by_file.items()}
    first = [node.split("::")[0] for node in fail_fast.first] if fail_fast is not None else []
    preferred = list(fail_fast.files) if fail_fast is not None else []
    rank = {name: index for index, name in enumerate(dict.fromkeys([*first, *preferred]))}
    files = sorted(by_file, key=lambda name: (rank.get(name, len(rank)), -weight[name], name))
    dealt: list[list[str]] = [[] for _ in range(min(workers, len(files)))]
    # The likeliest to fail lead the processes; the rest go longest first (each process runs its tests in the
    # fail-fast order whatever the dealing: `first` names every test that called a target, so ranking all the
    # files by it would deal them in that order and leave a long file to the end, one process running on alone)
    lead, rest = files[: len(dealt)], files[len(dealt) :]
    files = [*lead, *sorted(rest, key=lambda name: (-weight[name], rank.get(name, len(rank)), name))]
    loads = [0.0] * len(dealt)
    for name in files:
        lightest = loads.index(min(loads))
        dealt[lightest] += by_file[name]
        loads[lightest] += weight[name]
    return [tuple(share) for share in dealt]


def run_split(
    argv: list[str],
    workspace: str,
    env: dict[str, str],
    io_dir: str,
    selection: TestSelection,
    split: list[tuple[str, ...]],
    timeout: float,
    fail_fast: bool,
) -> TestRun | None:
    """The split run's merged results; None when a process ended without its results (the caller then reports
    it as one run that never finished)."""
    envs, results, progress = [], [], []
    for index, share in enumerate(split):
        selection_path = os.path.join(io_dir, f"selection-{index}.json")
        write_json(selection_path, replace(selection, node_ids=share))
        results.append(os.path.join(io_dir, f"pytest-results-{index}.json"))
        progress.append(os.path.join(io_dir, f"pytest-progress-{index}.txt"))
        remove_stale(results[-1], progress[-1])
        temp = os.path.join(io_dir, f"tmp-{index}")  # pytest's tmp_path numbering, one folder per process
        os.makedirs(temp, exist_ok=True)
        envs.append(
            {
                **env,
                "CODEREFINE_SELECT": selection_path,
                "CODEREFINE_RESULTS": results[-1],
                "CODEREFINE_PROGRESS": progress[-1],
                "TMPDIR": temp,
            }
        )
    stop = (lambda code: code == _PYTEST_TESTS_FAILED) if fail_fast else None
    try:
        codes = run_steps_side_by_side(argv, cwd=workspace, envs=envs, timeout=timeout, stop_others=stop)
    except StepTimeout:
        running = next((text for text in map(read_text, progress) if text), "")
        raise SplitTimeout(running) from None
    found = []
    unreported = 0  # tests of the processes stopped before they wrote their results
    for code, path, share in zip(codes, results, split, strict=True):
        if os.path.exists(path):
            found.append(read_json(PytestResults, path))
        elif code is not None:
            return None  # that process never reached the end of its session
        else:
            unreported += len(share)
    return merged(found, unreported, stopped=any(code is None for code in codes))


class SplitTimeout(Exception):
    """The split run passed its time limit; the test one of its processes was running, if any."""


def merged(found: list[PytestResults], unreported: int, stopped: bool) -> TestRun:
    """One run's results from the processes': `unreported` selected tests were in processes stopped early."""
    outcomes: dict[str, str] = {}
    messages: dict[str, str] = {}
    for results in found:
        outcomes.update(results.outcomes)
        messages.update(results.messages)
    return TestRun.from_outcomes(
        outcomes,
        messages,
        duration=0.0,  # the caller's clock
        exit_code=max((results.exit_code for results in found), default=0),
        output_tail="",
        collected=sum(results.collected for results in found) + unreported,
        module_file=next((results.module_file for results in found if results.module_file), None),
        selected=found[0].selected if found else None,
        stopped_early=stopped or any(results.stopped_early for results in found),
    )

"""pytest plugin of the runner's `reach` mode (`-p coderefine_sandbox.recording.reach_plugin`, beside the
shared pytest_plugin.py, which still writes every test's outcome): with CODEREFINE_REACH (a protocol.ReachSpec
in a file) it keeps this worker's share of the tests and writes, for each, the project functions it executed
(reach.py) as a protocol.ReachTable.

A share is whole test files (`test_files`) and single tests of other files (`node_ids`, an incremental
update); a test file of the host's list (`universe`) in neither is never collected, so a worker imports only
its own files. With a deadline (a bounded first run), tests run in the order of `test_files` (nearest to the
target first), and past it no more files are collected and no more tests run: they are named as untraced.
Tests of files outside the universe (data files a conftest collects) run only where `others` is set, so that
N workers do not each run them.

Standard library only (and pytest): this runs inside the sandbox, in the user's test process.
"""

from __future__ import annotations

import os
import time
from typing import Any

import pytest

from coderefine_sandbox.protocol import ReachSpec, ReachTable, read_json, write_json
from coderefine_sandbox.recording.reach import ReachTracer


class _State:
    def __init__(self) -> None:
        self.spec: ReachSpec | None = None
        self.tracer: ReachTracer | None = None
        self.outcomes: dict[str, str] = {}
        self.files: frozenset[str] = frozenset()
        self.node_files: frozenset[str] = frozenset()
        self.universe: frozenset[str] = frozenset()
        self.started = time.monotonic()
        self.untraced_files: set[str] = set()
        self.tests_untraced = 0

    def past_deadline(self) -> bool:
        return self.spec is not None and self.spec.deadline > 0 and time.monotonic() - self.started > self.spec.deadline


_state = _State()


def _start() -> None:
    """At import: pytest imports a `-p` plugin before it loads any conftest.py, and a conftest importing the
    project must already find the instrumenting import hook (reach.py) in place."""
    path = os.environ.get("CODEREFINE_REACH")
    if not path:
        return
    spec = read_json(ReachSpec, path)
    _state.spec = spec
    _state.tracer = ReachTracer(spec.workspace, spec.tracer or None, spec.test_patterns)
    _state.files = frozenset(spec.test_files)
    _state.node_files = frozenset(node.split("::")[0] for node in spec.node_ids)
    _state.universe = frozenset(spec.universe)


_start()


def _relative(path: Any) -> str:
    spec = _state.spec
    assert spec is not None
    return os.path.relpath(str(path), spec.workspace).replace(os.sep, "/")


@pytest.hookimpl(tryfirst=True)
def pytest_ignore_collect(collection_path: Any, config: pytest.Config) -> bool | None:
    if _state.spec is None:
        return None
    rel = _relative(collection_path)
    if rel in _state.universe and rel not in _state.files and rel not in _state.node_files:
        return True
    if rel in _state.files and _state.past_deadline():
        _state.untraced_files.add(rel)
        return True
    return None


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    spec = _state.spec
    if spec is None:
        return
    wanted = frozenset(spec.node_ids)

    def kept(item: pytest.Item) -> bool:
        rel = item.nodeid.split("::")[0]
        if rel in _state.files or item.nodeid in wanted:
            return True
        return spec.others and rel not in _state.universe

    dropped = [item for item in items if not kept(item)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if kept(item)]
    if spec.deadline > 0:  # nearest first: in the order of the share's files (a stable sort keeps pytest's within)
        rank = {name: index for index, name in enumerate(spec.test_files)}
        items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: Any) -> bool | None:
    if _state.past_deadline():
        _state.tests_untraced += 1  # left unrun, and its file named as not (wholly) traced
        _state.untraced_files.add(item.nodeid.split("::")[0])
        return True
    return None


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    if _state.tracer is not None:
        _state.tracer.start(nodeid)  # from before its fixtures are set up: what they run is the test's reach


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    if _state.tracer is not None:
        _state.tracer.stop()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if _state.spec is None:
        return
    if report.failed:
        _state.outcomes[report.nodeid] = "failed"
    elif report.when == "call" or report.skipped:
        _state.outcomes.setdefault(report.nodeid, report.outcome)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    spec, tracer = _state.spec, _state.tracer
    if spec is None or tracer is None:
        return
    tracer.close()
    functions, tests = tracer.table()
    untraced = tuple(sorted(_state.untraced_files))
    table = ReachTable(functions, tests, dict(_state.outcomes), tracer.kind, untraced, _state.tests_untraced)
    write_json(spec.out, table)

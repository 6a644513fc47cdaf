"""A pytest-xdist scheduler that runs the tests which time something last, alone.

The suite runs on two workers per core (`-n auto`, tests/conftest.py), but a test that measures speed must
never share the CPU with another test: its verdict would measure the neighbour. Nor may a test that watches
the whole host (its processes, its containers) share it with tests that start their own. Such tests are marked
`timed` or `alone`. This scheduler hands out every other test first, in the usual load-balanced way; once only
those are left, one worker is kept for them and every other worker is shut down; they start on the kept worker
only when it is the last one alive, so they run one after another on an otherwise idle machine, in the same
`pytest` command.

Which tests are `timed`: those whose assertion is about a measurement's precision — a null edit never
called faster, a speedup that agrees with an independent measurement, when a timing series stops, timing
inputs of programs. A test that only needs some candidate accepted (to check a merge, a write, a report,
a prompt) offers one 7x to 1000x faster, which clears the noise floor under load too (each was run beside
two busy loops), and runs with the others: the serial phase is one idle core per second it lasts.

Tests that share an expensive module or session fixture carry `xdist_group(name)` and run on one worker,
so the fixture is built once. xdist's own `--dist loadgroup` reads the groups from suffixed test ids,
which pytest 9 no longer lets it write; here each worker writes every test's group to a file (the folder
comes from the controller in `workerinput`) and the scheduler reads them once all workers have collected.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from xdist.scheduler import LoadScopeScheduling
from xdist.workermanage import WorkerController

ALONE = "alone"  # the group of the tests that run last, alone: `timed` and `alone`
GROUPS_FOLDER = "coderefine_test_groups"  # the workerinput key: where the workers write the groups


def group_of(item: pytest.Item) -> str | None:
    if item.get_closest_marker("timed") or item.get_closest_marker("alone"):
        return ALONE
    marker = item.get_closest_marker("xdist_group")
    return str(marker.args[0] if marker.args else marker.kwargs.get("name", "default")) if marker else None


def write_groups(folder: Path, worker: str, items: list[pytest.Item]) -> None:
    """The worker's side: {test id: group} for the tests in a group."""
    groups = {item.nodeid: group for item in items if (group := group_of(item)) is not None}
    temporary = folder / f"{worker}.json.tmp"
    temporary.write_text(json.dumps(groups))
    os.replace(temporary, folder / f"{worker}.json")


class TimedLastScheduling(LoadScopeScheduling):
    def __init__(self, config: pytest.Config, log: object, folder: Path) -> None:
        super().__init__(config, log)
        self.folder = folder
        self.groups: dict[str, str] = {}
        self.timing_node: WorkerController | None = None

    def schedule(self) -> None:
        if self.collection is None:  # every worker has collected, so each has written its groups
            for path in self.folder.glob("*.json"):
                self.groups.update(json.loads(path.read_text()))
        super().schedule()

    def _split_scope(self, nodeid: str) -> str:
        return self.groups.get(nodeid, nodeid)  # a test alone is its own work unit

    def _only_alone_left(self) -> bool:
        return list(self.workqueue) == [ALONE]

    def _alone(self, node: WorkerController) -> bool:
        return list(self.assigned_work) == [node]

    def _assign_work_unit(self, node: WorkerController) -> None:
        if next(iter(self.workqueue)) == ALONE:
            if not self._only_alone_left():
                self.workqueue.move_to_end(ALONE)  # everything else first
            elif not self._alone(node):
                return  # they wait until the other workers have exited
        super()._assign_work_unit(node)

    def _reschedule(self, node: WorkerController) -> None:
        if node.shutting_down or not self._only_alone_left():
            super()._reschedule(node)
            return
        if self.timing_node is None:
            self.timing_node = node  # the first worker to run out of other work keeps them
        if node is not self.timing_node:
            node.shutdown()  # it finishes what it holds, then exits: they get the machine
        elif self._alone(node):
            self._assign_work_unit(node)

    def remove_node(self, node: WorkerController) -> str | None:
        crashed = super().remove_node(node)
        if node is self.timing_node:
            self.timing_node = None  # it crashed: another (restarted) worker takes them
        for remaining in list(self.assigned_work):
            self._reschedule(remaining)  # the last worker alive may now start them
        return crashed

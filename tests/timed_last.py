"""A pytest-xdist scheduler that runs the tests which time something last, alone.

The suite runs on several workers (`-n auto --dist loadgroup`), but a test that measures speed must never
share the CPU with another test: its verdict would measure the neighbour. Tests marked `timed` form one
xdist group (`tests/conftest.py` adds it); this scheduler hands out every other work unit first, in the
usual load-balanced way. Once only the timed group is left, one worker is kept for it and every other
worker is shut down; the timed tests start on the kept worker only when it is the last one alive, so
they run one after another on an otherwise idle machine, in the same `pytest` command.
"""

from __future__ import annotations

from xdist.scheduler import LoadGroupScheduling
from xdist.workermanage import WorkerController

TIMED = "timed"  # the xdist group of the tests that measure speed


class TimedLastScheduling(LoadGroupScheduling):
    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.timing_node: WorkerController | None = None

    def _only_timed_left(self) -> bool:
        return list(self.workqueue) == [TIMED]

    def _alone(self, node: WorkerController) -> bool:
        return list(self.assigned_work) == [node]

    def _assign_work_unit(self, node: WorkerController) -> None:
        if next(iter(self.workqueue)) == TIMED:
            if not self._only_timed_left():
                self.workqueue.move_to_end(TIMED)  # everything else first
            elif not self._alone(node):
                return  # the timed tests wait until the other workers have exited
        super()._assign_work_unit(node)

    def _reschedule(self, node: WorkerController) -> None:
        if node.shutting_down or not self._only_timed_left():
            super()._reschedule(node)
            return
        if self.timing_node is None:
            self.timing_node = node  # the first worker to run out of untimed work keeps the timed tests
        if node is not self.timing_node:
            node.shutdown()  # it finishes what it holds, then exits: the timed tests get the machine
        elif self._alone(node):
            self._assign_work_unit(node)

    def remove_node(self, node: WorkerController) -> str | None:
        crashed = super().remove_node(node)
        if node is self.timing_node:
            self.timing_node = None  # crashed: another (restarted) worker takes the timed tests
        for remaining in list(self.assigned_work):
            self._reschedule(remaining)  # the last worker alive may now start the timed tests
        return crashed

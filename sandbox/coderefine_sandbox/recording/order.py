"""A candidate's tests, most likely to fail first (CODEREFINE_ORDER, a protocol.FailFast read by pytest_plugin.py).

A wrong candidate is usually caught by a test that failed for an earlier candidate of the same run, or by one
that calls the target a lot; running those first and stopping at the first failure makes a rejection cost a
few tests instead of the whole selection. An acceptance still runs every test, so the order changes nothing
about what is judged.

Standard library only: this runs inside the sandbox, in the user's test process.
"""

from __future__ import annotations

from collections.abc import Sequence


def ranked(node_ids: Sequence[str], first: Sequence[str], files: Sequence[str]) -> list[int]:
    """The positions of `node_ids` in run order: those in `first` in its order, then the tests of `files`,
    then the rest; pytest's order is kept within each group (the sort is stable)."""
    position = {node: index for index, node in enumerate(first)}
    preferred = set(files)
    after = len(position)

    def key(index: int) -> int:
        node = node_ids[index]
        if node in position:
            return position[node]
        return after if node.split("::")[0] in preferred else after + 1

    return sorted(range(len(node_ids)), key=key)

"""coderefine/pool.py: jobs on worker processes, and what happens when a worker dies (a real SIGKILL)."""

from __future__ import annotations

import pytest

from coderefine.pool import WORKER_DIED, WorkerDied, run_in_workers
from tests.pool_jobs import square_or_die


def test_results_come_back_and_a_job_that_kills_its_worker_twice_is_lost_alone(tmp_path):
    deaths = str(tmp_path)
    values = [1, 2, "die", 3, "die-once", 4]
    results, lost, retried = [], [], []
    interrupted = run_in_workers(
        square_or_die,
        [(value, deaths) for value in values],
        2,
        results.append,
        lambda args, why, runs: lost.append((args[0], why, runs)),
        lambda args: retried.append(args[0]),
    )
    assert not interrupted
    # Every other job finished exactly once, the one that died once included (on its retry, alone).
    assert sorted(str(value) for value, _ in results) == ["1", "16", "4", "9", "die-once"]
    # "die" was run at most three times: once beside another job (a death not surely its own), then alone.
    assert len(lost) == 1 and lost[0][:2] == ("die", WORKER_DIED) and lost[0][2] in (2, 3)
    assert "die" in retried and "die-once" in retried
    assert len({pid for _, pid in results}) >= 2  # a fresh pool (and its own processes) after each death


def test_without_on_lost_a_worker_that_dies_twice_is_an_error(tmp_path):
    with pytest.raises(WorkerDied, match="died twice"):
        run_in_workers(square_or_die, [(1, str(tmp_path)), ("die", str(tmp_path))], 2, lambda r: None)

"""`--engine local` when a worker process dies: a real SIGKILL of the worker running a function's job."""

from __future__ import annotations

import json

import pytest

from coderefine.commands.sweep import outcome_line
from coderefine.settings import resolve_settings
from coderefine.sweep.engines.local import LocalEngine
from coderefine.sweep.jobs import WORKER_DIED, FunctionJob
from tests.worker_deaths import dying_test

MODULES = {
    "pkg/__init__.py": "",
    "pkg/doubling.py": "def double(xs):\n    out = []\n    for x in xs:\n        out.append(2 * x)\n    return out\n",
    "pkg2/__init__.py": "",
    "pkg2/summing.py": "def total(xs):\n    s = 0\n    for x in xs:\n        s += x\n    return s\n",
}


@pytest.mark.slow
def test_a_job_whose_worker_dies_is_run_again_alone_and_one_that_dies_twice_fails_alone(make_project, tmp_path):
    tests = {
        # Module names no other test file contains, and a package each: a function's first run traces the
        # test files naming it or importing its package, and no other.
        "tests/test_doubling.py": ("pkg", "doubling", "double", 1, "[2 * x for x in range(n)]"),  # dies once
        "tests/test_summing.py": ("pkg2", "summing", "total", 9, "sum(range(n))"),  # dies every time
    }
    files = dict(MODULES)
    for path, (package, module, function, times, expected) in tests.items():
        deaths = str(tmp_path / f"{function}.deaths")
        files[path] = dying_test(b"spawn_main", module, function, times, expected, deaths, package)
    root = make_project(files)
    # A plain subprocess sandbox, so that a test can reach its worker (bubblewrap hides it, rightly);
    # readability, so that no baseline is timed: the runs are about the worker, not the verdict.
    settings = resolve_settings({"provider": "scripted", "sandbox": "subprocess"}, tmp_path)
    script = json.dumps({"generate": ["no code this time"]})
    jobs = [
        FunctionJob(f"{package}/{module}.py", function, "readability", settings, script=script)
        for package, module, function, _, _ in tests.values()
    ]
    done = []
    run = LocalEngine(2).run(jobs, root, done.append, lambda job: None)
    assert not run.interrupted and run.lost == ("pkg2/summing.py::total",)
    by_key = {o.key: o for o in done}
    assert sorted(by_key) == ["pkg/doubling.py::double", "pkg2/summing.py::total"] and len(done) == 2
    # A death beside another job is not surely a job's own: it may take a third run to tell.
    assert (tmp_path / "double.deaths").read_text() == "1" and (tmp_path / "total.deaths").read_text() in ("2", "3")
    retried, dead = by_key["pkg/doubling.py::double"], by_key["pkg2/summing.py::total"]
    # The other function still finishes: run again alone, on a fresh worker, it ran its whole refinement.
    assert retried.status == "unchanged" and retried.error is None and retried.attempts in (2, 3), retried.reason
    assert dead.status == "failed" and dead.stop_reason == WORKER_DIED and dead.attempts in (2, 3)
    assert dead.error.startswith("its worker process died twice while running it alone")
    assert "retried: its first worker died" in outcome_line(retried) and "retried" not in outcome_line(dead)

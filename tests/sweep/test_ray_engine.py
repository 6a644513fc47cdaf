"""--engine ray on a real local Ray cluster of two nodes (ray.cluster_utils.Cluster: a head and a worker node,
each a raylet of its own on loopback, one CPU each so that two tasks must land on both nodes).

Ray is an optional extra: these tests skip where it is not installed, and fail instead where it must be
(CODEREFINE_REQUIRE_RAY=1, set by .ci/run, which installs the extra). One cluster for this module: starting
one takes seconds.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import textwrap
from pathlib import Path

import pytest

from coderefine.commands.sweep import make_engine, outcome_line
from coderefine.settings import resolve_settings
from coderefine.sweep.engines.ray_engine import RayEngine, interruptible, pack_project, unpack_project
from coderefine.sweep.jobs import WORKER_DIED, FunctionJob
from coderefine.sweep.report import timing_overlaps
from tests.sweep import interrupted
from tests.worker_deaths import dying_test

REQUIRED = os.environ.get("CODEREFINE_REQUIRE_RAY") == "1"
# All of this module on one xdist worker: the two-node cluster (a module fixture) starts once, not once per worker.
pytestmark = pytest.mark.xdist_group("ray-cluster")

MODULES = {
    "pkg/__init__.py": "",
    "pkg/a.py": "def double(xs):\n    out = []\n    for x in xs:\n        out.append(2 * x)\n    return out\n",
    "pkg/b.py": "def total(xs):\n    s = 0\n    for x in xs:\n        s += x\n    return s\n",
    "tests/test_pkg.py": """
        from pkg.a import double
        from pkg.b import total


        def test_double():
            for n in range(5):
                assert double(list(range(n))) == [2 * x for x in range(n)]


        def test_total():
            for n in range(5):
                assert total(range(n)) == sum(range(n))
    """,
}


# Module scope: the cluster's daemons (GCS, raylets, idle workers) would otherwise keep running, and taking CPU,
# for the rest of the xdist worker's session, timed tests included.
@pytest.fixture(scope="module")
def ray_cluster():
    try:
        from ray.cluster_utils import Cluster
    except ImportError:
        if REQUIRED:
            pytest.fail("Ray is required here (CODEREFINE_REQUIRE_RAY=1): pip install 'coderefine[ray]'")
        pytest.skip("Ray is not installed (pip install 'coderefine[ray]')")
    # The nodes' temporary folder (their tasks' scratch folders, Ray's session): one of this module's, short
    # enough for Ray's socket paths, so a test can check that a task cleaned up after itself.
    tmp = Path(tempfile.mkdtemp(prefix="crray-"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TMPDIR", str(tmp))  # read by the nodes' processes as they start, not after
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("TMPDIR", str(tmp))
            cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        cluster.tmp = tmp
        yield cluster
    finally:
        cluster.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)


def test_the_project_travels_as_an_archive_without_what_a_workspace_leaves_out(make_project, tmp_path):
    root = make_project({**MODULES, ".venv/lib/x.py": "", "pkg/__pycache__/a.pyc": ""})
    unpack_project(pack_project(root), tmp_path / "copy")
    copied = {p.relative_to(tmp_path / "copy").as_posix() for p in (tmp_path / "copy").rglob("*") if p.is_file()}
    assert copied == {"pytest.ini", *MODULES}


KEY = "sk-test-ray-0123456789abcdef"
KEY_CHECK = f"""


def test_no_model_key_here():
    # The sandbox, on a Ray worker that holds the model key, is given none of it.
    import os

    assert "OPENAI_API_KEY" not in os.environ and not any("{KEY}" in v for v in os.environ.values())
"""


@pytest.mark.slow
def test_each_function_is_a_ray_task_spread_over_the_nodes_timing_never_overlaps_and_only_workers_get_the_key(
    ray_cluster, make_project, tmp_path, monkeypatch
):
    from tests.openai_server import OpenAIServer

    root = make_project({**MODULES, "tests/test_pkg.py": textwrap.dedent(MODULES["tests/test_pkg.py"]) + KEY_CHECK})
    server = OpenAIServer(api_key=KEY).start()
    try:
        flags = {"provider": "openai", "base_url": server.url, "model": "test-model", "sandbox": "process",
                 "timing_pairs": 2, "max_iterations": 1, "cache_dir": str(tmp_path / "cache"), "engine": "ray",
                 "ray_address": ray_cluster.address}  # fmt: skip
        settings = resolve_settings(flags, tmp_path)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)  # the user's shell, where the sweep starts
        engine = make_engine(settings)
        monkeypatch.delenv("OPENAI_API_KEY")  # from here on, only the tasks' runtime environment has it
        assert engine.env == {"OPENAI_API_KEY": KEY}
        # No candidate: each task's run is its baseline (tests, recording, replay, timing calibration).
        server.queue("No code this time.", "No code this time.")
        jobs = [
            FunctionJob("pkg/a.py", "double", "optimize", settings),
            FunctionJob("pkg/b.py", "total", "optimize", settings),
        ]
        started, done = [], []
        run = engine.run(jobs, root, done.append, started.append)
    finally:
        server.stop()
    assert not run.interrupted and not run.lost and run.description == "ray: 2 nodes, 2 CPUs"
    assert started == jobs
    assert sorted(o.key for o in done) == ["pkg/a.py::double", "pkg/b.py::total"]
    for outcome in done:
        assert outcome.error is None, outcome.reason  # the sandbox's key check passed, with the other tests
        assert outcome.status == "unchanged" and outcome.original_sha256
        assert outcome.placement.timing, "the baseline's timing calibration held the node's timing lock"
        assert Path(outcome.placement.host)  # the trace names where it ran
    assert len({o.placement.node for o in done}) == 2, "one CPU per node: the two tasks ran on both nodes"
    assert timing_overlaps([o.to_dict() for o in done]) == []
    assert (root / "pkg/a.py").read_text() == MODULES["pkg/a.py"]  # the user's tree is only read
    # Each task's worker called the model with the key its runtime environment gave it.
    chats = server.chat_requests()
    assert len(chats) == 2 and all(r.headers["authorization"] == f"Bearer {KEY}" for r in chats)


@pytest.mark.slow
def test_ctrl_c_of_a_ray_sweep_cancels_the_running_task_which_cleans_up_and_reports_what_finished(
    ray_cluster, make_project, tmp_path
):
    root = make_project(interrupted.FILES)
    script = tmp_path / "script.json"
    script.write_text(interrupted.NO_CODE)
    state, report = tmp_path / "state.jsonl", tmp_path / "r.json"
    args = ["sweep", "pkg", "--script", script, "--sandbox", "process", "--timing-pairs", "2", "--engine", "ray",
            "--ray-address", ray_cluster.address, "--state", state, "--report", report]  # fmt: skip
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = interrupted.sweep_env(tmp_path, scratch)
    # The nodes' processes are this process's descendants (the cluster's raylets started them).
    proc, _, held, seconds = interrupted.start_and_interrupt(args, root, env, state, watch=os.getpid())
    assert held, "the held function's sandbox run was going on a node"
    assert proc.returncode == 130, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    [message] = [line for line in proc.stdout.splitlines() if line.startswith("interrupted: ")]
    assert message == f"interrupted: 1 finished functions kept in {state}; rerun the same command to continue (1 left)"
    assert [o["key"] for o in interrupted.outcomes(state)] == ["pkg/quick.py::quick"]
    data = json.loads(report.read_text())
    assert data["interrupted"] and data["engine"] == "ray" and data["summary"]["finished"] == 1
    # Cancelled, not killed: the task stopped its sandbox run (two minutes long) at once and removed its
    # scratch folders on the node; nothing of the held function is left on the cluster.
    assert seconds < 30, seconds
    assert interrupted.still_running(held) == []
    assert sorted(p.name for p in ray_cluster.tmp.iterdir()) == ["coderefine-timing-locks", "ray"]


@pytest.mark.slow
def test_the_reach_map_built_over_the_cluster_equals_the_local_one(ray_cluster, cli, make_project, tmp_path):
    # `coderefine reach --engine ray`: each share of the test files is a task; two shares land on both nodes.
    tests_a = "from pkg.a import double\n\n\ndef test_double():\n    assert double([1]) == [2]\n"
    tests_b = "from pkg.b import total\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n"
    root = make_project({**MODULES, "tests/test_pkg.py": "", "tests/test_a.py": tests_a, "tests/test_b.py": tests_b})
    local, spread = tmp_path / "local", tmp_path / "spread"
    assert cli("reach", root, env={"XDG_CACHE_HOME": str(local)}).returncode == 0
    args = ("reach", root, "--engine", "ray", "--ray-address", ray_cluster.address, "--jobs", "2", "--json")
    built = cli(*args, env={"XDG_CACHE_HOME": str(spread)})
    assert built.returncode == 0, built.stdout + built.stderr
    data = json.loads(built.stdout)
    assert data["workers"] == 2 and data["ray_nodes"] == 2 and data["retraced_tests"] == 2

    def tests(cache: Path) -> dict:
        (path,) = (cache / "coderefine/reach").glob("*.json")
        found = json.loads(path.read_text())
        return {test: sorted(found["functions"][n] for n in numbers) for test, numbers in found["tests"].items()}

    assert (
        tests(spread)
        == tests(local)
        == {
            "tests/test_a.py::test_double": ["pkg/a.py::double"],
            "tests/test_b.py::test_total": ["pkg/b.py::total"],
        }
    )


# Last in this module: a killed worker leaves its scratch folder behind on the node, as a crash does.
@pytest.mark.slow
def test_a_task_whose_worker_dies_is_retried_once_and_one_that_dies_twice_fails_alone(
    ray_cluster, make_project, tmp_path
):
    tests = {
        # Module names no other test file contains, and a package each: a function's first run traces the
        # test files naming it or importing its package, and no other.
        "tests/test_doubling.py": ("pkg", "doubling", "double", 1, "[2 * x for x in range(n)]"),  # dies once
        "tests/test_summing.py": ("pkg2", "summing", "total", 2, "sum(range(n))"),  # dies on the retry too
    }
    files = {
        "pkg/__init__.py": "",
        "pkg/doubling.py": MODULES["pkg/a.py"],
        "pkg2/__init__.py": "",
        "pkg2/summing.py": MODULES["pkg/b.py"],
    }
    for path, (package, module, function, times, expected) in tests.items():
        deaths = str(tmp_path / f"{function}.deaths")
        files[path] = dying_test(b"ray::", module, function, times, expected, deaths, package)
    root = make_project(files)
    # A plain subprocess sandbox, so that a test can reach its Ray worker (bubblewrap hides it, rightly).
    settings = resolve_settings({"provider": "scripted", "sandbox": "subprocess", "timing_pairs": 2}, tmp_path)
    script = json.dumps({"generate": ["no code this time"]})
    jobs = [
        FunctionJob(f"{package}/{module}.py", function, "optimize", settings, script=script)
        for package, module, function, _, _ in tests.values()
    ]
    done = []
    run = RayEngine(ray_cluster.address).run(jobs, root, done.append, lambda job: None)
    assert not run.interrupted and run.lost == ("pkg2/summing.py::total",)
    by_key = {o.key: o for o in done}
    assert sorted(by_key) == ["pkg/doubling.py::double", "pkg2/summing.py::total"]
    assert (tmp_path / "double.deaths").read_text() == "1" and (tmp_path / "total.deaths").read_text() == "2"
    retried, dead = by_key["pkg/doubling.py::double"], by_key["pkg2/summing.py::total"]
    # The other function still finishes: its retry, on a fresh worker, ran its whole refinement.
    assert retried.status == "unchanged" and retried.error is None and retried.attempts == 2, retried.reason
    assert dead.status == "failed" and dead.stop_reason == WORKER_DIED and dead.attempts == 2
    assert dead.error.startswith("its Ray worker died on both attempts (WorkerCrashedError)")
    assert "retried: its first worker died" in outcome_line(retried) and "retried" not in outcome_line(dead)


def test_a_cancelled_task_blocked_reading_a_pipe_is_interrupted_at_once():
    """Ray's cancel simulates a SIGINT (`_thread.interrupt_main`), which a read blocked in the kernel does not
    see; `interruptible` wakes the main thread so the KeyboardInterrupt is raised within a fraction of a
    second, not when the read ends."""
    import _thread
    import select
    import threading
    import time

    read_end, write_end = os.pipe()
    try:
        threading.Timer(0.2, _thread.interrupt_main).start()
        started = time.monotonic()
        with pytest.raises(KeyboardInterrupt), interruptible(interval=0.05):
            select.select([read_end], [], [], 20)  # nothing is ever written
        assert time.monotonic() - started < 5
    finally:
        os.close(read_end)
        os.close(write_end)

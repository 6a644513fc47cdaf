"""`coderefine reach --engine ray`: each share of the test files is a Ray task, so a very large suite's map is
traced over a cluster. The project travels through the object store as the sweep's does (ray_engine.py);
each task unpacks it on its node, makes the sandbox there and runs its share as the local build does."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from coderefine.evaluation.reach_build import BuildOptions, ShareRequest, ShareResult, ShareRunner, run_share
from coderefine.sandboxes.registry import make_sandbox
from coderefine.sweep.engines.ray_engine import RayEngine, interruptible, pack_project, unpack_project


def trace_on_node(
    project: bytes,
    universe: tuple[str, ...],
    options: BuildOptions,
    sandbox_name: str,
    image: str | None,
    request: ShareRequest,
) -> tuple[ShareResult, str]:
    """The body of one Ray task: the share's table (or why none), and the node it ran on."""
    import ray

    node = ray.get_runtime_context().get_node_id()
    with interruptible(), tempfile.TemporaryDirectory(prefix="coderefine-reach-ray-") as scratch:
        root = Path(scratch) / "project"
        unpack_project(project, root)
        sandbox = make_sandbox(sandbox_name, image)
        try:
            return run_share(root, universe, replace(options, root=root), sandbox, *request), node
        finally:
            sandbox.close()


def ray_runner(address: str, sandbox_name: str, image: str | None, nodes_seen: list[str]) -> ShareRunner:
    """Shares as Ray tasks on the cluster at `address` (one CPU each); the nodes they ran on go to `nodes_seen`."""

    def run(
        root: Path, universe: tuple[str, ...], options: BuildOptions, requests: list[ShareRequest]
    ) -> list[ShareResult]:
        ray: Any = RayEngine(address).connect()
        try:
            task = ray.remote(num_cpus=1, max_retries=1)(trace_on_node)
            project = ray.put(pack_project(root))
            refs = [task.remote(project, universe, options, sandbox_name, image, request) for request in requests]
            results: list[ShareResult] = []
            for ref in refs:
                try:
                    result, node = ray.get(ref)
                except (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError) as exc:
                    results.append((None, f"its Ray worker died on both attempts ({type(exc).__name__})"))
                    continue
                results.append(result)
                nodes_seen.append(node)
            return results
        finally:
            ray.shutdown()

    return run

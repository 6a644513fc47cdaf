"""What setting up one candidate's workspace costs, by project size (issue 14, item 4).

    python benchmarks/workspace_setup.py [--sizes 2000:36,50000:1024] [--repeat 5] [--where /tmp] [--json out.json]

For each size (files : MiB) a synthetic project is generated under --where (a package tree with the
target module at pkg/sub/mod.py, a tests folder and data files), then, as an Evaluator does:
- once per run: the copy of the project the original runs in (`copy_project`) and the snapshot of it
  that tells whether the tests write into the tree (`layered.snapshot`);
- per candidate, before: a full copy of the project with the candidate written over the target;
- per candidate, now: the links into the original's copy with only the target written (`shadow_project`);
- for the Docker backend, the tarball a job ships into its container, for either kind of workspace.

Prints the median seconds of --repeat set-ups of each kind; the generated trees are deleted at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from coderefine.evaluation.layered import shadow_project, snapshot  # noqa: E402
from coderefine.evaluation.workspace import copy_project, write_module  # noqa: E402
from coderefine.sandboxes.docker import _tarball  # noqa: E402

TARGET = Path("pkg/sub/mod.py")
CANDIDATE = "def f(x):\n    return x + 1\n"


def generate(root: Path, files: int, mib: int) -> None:
    """`files` files of `mib` MiB in all: modules and data spread over folders of 100 entries."""
    size = max(1, (mib << 20) // files)
    block = os.urandom(min(size, 1 << 20))
    (root / "pkg/sub").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'synthetic'\n")
    (root / "pkg/__init__.py").write_text("")
    (root / "pkg/sub/__init__.py").write_text("")
    (root / TARGET).write_text("def f(x):\n    return x + 1 if x else 1\n")
    (root / "tests").mkdir()
    (root / "tests/test_mod.py").write_text("from pkg.sub.mod import f\n\n\ndef test_f():\n    assert f(1) == 2\n")
    for index in range(files - 5):
        folder = root / "pkg" / f"d{index // 10000}" / f"e{(index // 100) % 100}"
        if index % 100 == 0:
            folder.mkdir(parents=True, exist_ok=True)
        if index % 4 == 0:
            (folder / f"m{index}.py").write_text(f"VALUE = {index}\n" + "# padding\n" * (size // 10))
        else:
            (folder / f"data{index}.bin").write_bytes((block * (size // len(block) + 1))[:size])


def timed(action: Callable[[], object], repeat: int) -> float:
    seconds = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds)


def measure(files: int, mib: int, repeat: int, where: Path) -> dict[str, float | int]:
    scratch = Path(tempfile.mkdtemp(prefix="coderefine-ws-bench-", dir=where))
    try:
        project = scratch / "project"
        project.mkdir()
        generate(project, files, mib)
        original = scratch / "run/original"
        started = time.perf_counter()
        copy_project(project, original)
        once_copy = time.perf_counter() - started
        once_snapshot = timed(lambda: snapshot(original), 1)
        counter = iter(range(10**6))

        def full_copy() -> Path:
            workspace = scratch / f"run/cand-{next(counter)}"
            copy_project(project, workspace)
            write_module(workspace, TARGET, CANDIDATE, False)
            return workspace

        def layered() -> Path:
            workspace = scratch / f"run/cand-{next(counter)}"
            shadow_project(original, workspace, TARGET)
            write_module(workspace, TARGET, CANDIDATE, False)
            return workspace

        copies = timed(lambda: shutil.rmtree(full_copy()), repeat)
        links = timed(lambda: shutil.rmtree(layered()), repeat)
        copy_ws, link_ws = full_copy(), layered()
        copy_tar = timed(lambda: _tarball([copy_ws], scratch / "run"), 1)
        link_tar = timed(lambda: _tarball([link_ws], scratch / "run"), repeat)
        return {
            "files": files,
            "mib": mib,
            "once_original_copy_s": round(once_copy, 3),
            "once_tree_snapshot_s": round(once_snapshot, 3),
            "per_candidate_full_copy_s": round(copies, 4),
            "per_candidate_layered_s": round(links, 4),
            "docker_tar_full_copy_s": round(copy_tar, 3),
            "docker_tar_layered_s": round(link_tar, 4),
            "docker_tar_layered_bytes": len(_tarball([link_ws], scratch / "run")),
        }
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2000:36,50000:1024", help="files:MiB, comma-separated")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--where", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows = []
    for size in args.sizes.split(","):
        files, mib = (int(part) for part in size.split(":"))
        row = measure(files, mib, args.repeat, args.where)
        rows.append(row)
        print(
            f"{files} files / {mib} MiB: per candidate {row['per_candidate_layered_s']:.4f}s layered "
            f"(was {row['per_candidate_full_copy_s']:.3f}s as a full copy); Docker payload "
            f"{row['docker_tar_layered_bytes']} bytes in {row['docker_tar_layered_s']:.4f}s "
            f"(was {row['docker_tar_full_copy_s']:.3f}s); once per run: copy {row['once_original_copy_s']:.2f}s, "
            f"snapshot {row['once_tree_snapshot_s']:.2f}s",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

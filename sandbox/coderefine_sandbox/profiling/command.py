"""Run a workload command's Python program under the scan's profiler or coverage tracer:

    python -m coderefine_sandbox.profiling.command SCRIPT [ARGS...]      (or  -m MODULE [ARGS...])

with CODEREFINE_PROFILE saying which pass and where the JSON goes (profile_collect.from_environment).
The program runs as `python SCRIPT ARGS` would run it: as __main__, with sys.argv set.
"""

from __future__ import annotations

import os
import runpy
import sys

from coderefine_sandbox.profiling.collect import from_environment


def main(argv: list[str]) -> int:
    profiles, coverage, out, _ = from_environment()
    is_module = argv[0] == "-m"
    target = argv[1] if is_module else argv[0]
    sys.argv = [target, *argv[(2 if is_module else 1) :]]
    if not is_module:
        sys.path.insert(0, os.path.dirname(os.path.abspath(target)))  # as `python SCRIPT` puts it first
    code = 0
    collector = profiles if profiles is not None else coverage
    assert collector is not None
    collector.start()
    try:
        if is_module:
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(target, run_name="__main__")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        if profiles is not None:
            profiles.stop(None)
        elif coverage is not None:
            coverage.stop()
        (profiles or coverage).dump(out)  # type: ignore[union-attr]
    return code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

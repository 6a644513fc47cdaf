"""Wrong candidates on real libraries: does coderefine refuse every one, and still accept the correct ones?

    python benchmarks/wrong_candidates.py [--cache DIR] [--only NAME,...] [--kinds KIND,...] [--sandbox process]
                                          [--no-ratio] [--json out.json]

Each data file in benchmarks/wrong_candidates/ (TOML, one per library) lists candidates for functions of a
pinned sdist: `function`, `file`, `kind`, `expected` ("refused" or "accepted"), `why` and `code`. Kinds:
`indirect` (only a test reaching the function through another public function shows it wrong), `boundary`
(no test shows it; an input next to the recorded ones does: README "Inputs the tests never tried"),
`direct` (the function's own tests) and `correct` (a faster rewrite that changes nothing).

The sdists are downloaded with pip (`pip download --no-binary :all: --no-deps`) into DIR/sdists (default
~/.cache/coderefine-bench/real-projects, shared with real_projects.py; never into this repository) and
unpacked once. Per function, one real `coderefine optimize FILE --function F --provider scripted` run serves
its candidates in the data file's order (wrong ones first, the correct one last, so that every wrong one is
judged against the original), with the process sandbox under `nice -n 10`, one run at a time, and a
private selection cache (the first run on a project state traces which tests reach the function).

Printed per library: wrong candidates caught / total, each with what caught it (the failing test, the
input the tests never tried, a recorded call), correct candidates accepted / total (with the reason of
any lost), and seconds. Beside each correct candidate's verdict and the tool's figure stands an independent
ratio (wrong_candidates_ratio.py, unless --no-ratio): the original and the candidate timed in a plain loop
on the arguments the library's own tests call the function with, so a lost candidate that is simply not
faster shows as such. A correct candidate refused because the function's recorded calls are too fast to time
("speed not measured: too fast to measure reliably ...") is counted as unmeasurable, not lost: the tool
says why, and no timing could tell. A wrong candidate accepted is a false accept (FALSE ACCEPT); one refused only for
not being faster passed every check of correctness (MISSED): a faster version of the same mistake would
have been accepted, so it counts against the checks, not for them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # a dependency of coderefine's before 3.11
    import tomli as tomllib

DATA = Path(__file__).resolve().parent / "wrong_candidates"
RATIO = Path(__file__).resolve().parent / "wrong_candidates_ratio.py"
DEFAULT_CACHE = Path.home() / ".cache" / "coderefine-bench" / "real-projects"
CONTINUE = "Keep the behaviour exactly.\nVERDICT: CONTINUE"


@dataclass(frozen=True)
class Candidate:
    file: str  # relative to the unpacked sdist
    function: str
    kind: str  # indirect, boundary, direct or correct
    expected: str  # refused or accepted
    why: str
    code: str

    @property
    def wrong(self) -> bool:
        return self.kind != "correct"


@dataclass(frozen=True)
class LibrarySet:
    name: str
    version: str
    candidates: tuple[Candidate, ...]


@dataclass(frozen=True)
class Outcome:
    candidate: Candidate
    verdict: str  # accepted, rejected, or "not run"
    reason: str
    refused_by: str  # test, boundary input, recorded call, unmeasurable, speed, other ("" when accepted)
    seconds: float | None  # this candidate's evaluation
    speedup: float | None = None  # the tool's figure, when it timed the candidate
    speedup_ci: tuple[float, float] | None = None

    @property
    def caught(self) -> bool:
        """Refused for what it does, not for its speed."""
        return self.verdict == "rejected" and self.refused_by not in ("speed", "")


def load_sets(only: set[str], kinds: set[str] = frozenset()) -> list[LibrarySet]:
    sets = []
    for path in sorted(DATA.glob("*.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        if only and data["library"] not in only:
            continue
        candidates = tuple(
            Candidate(c["file"], c["function"], c["kind"], c["expected"], c["why"], c["code"].strip() + "\n")
            for c in data["candidates"]
            if not kinds or c["kind"] in kinds
        )
        sets.append(LibrarySet(data["library"], data["version"], candidates))
    return sets


def unpacked(name: str, version: str, cache: Path) -> Path:
    """The sdist, downloaded once and unpacked once, under the cache folder."""
    tree = cache / "src" / f"{name}-{version}"
    if tree.is_dir():
        return tree
    sdists = cache / "sdists"
    sdists.mkdir(parents=True, exist_ok=True)
    # sdist names are normalised differently by different build backends: more-itertools is more_itertools-...
    pattern = re.compile(rf"{re.sub(r'[-_.]+', '[-_.]', name)}-{re.escape(version)}\.tar\.gz", re.IGNORECASE)
    archive = next((path for path in sdists.iterdir() if pattern.fullmatch(path.name)), None)
    if archive is None:
        command = [sys.executable, "-m", "pip", "-q", "download", "--no-binary", ":all:", "--no-deps"]
        subprocess.run([*command, f"{name}=={version}", "-d", str(sdists)], check=True)
        archive = next(path for path in sdists.iterdir() if pattern.fullmatch(path.name))
    with tempfile.TemporaryDirectory(dir=cache) as scratch, tarfile.open(archive) as tar:
        tar.extractall(scratch, filter="data")
        tree.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(next(Path(scratch).iterdir())), tree)
    return tree


def refused_by(reason: str) -> str:
    """What the rejection's reason says refused the candidate."""
    if "on an input the tests never tried" in reason or "inputs the tests never tried" in reason:
        return "boundary input"
    if re.search(r"\btests? \S+ failed|tests? failed|tests timed out", reason):
        return "test"
    if reason.startswith("behaviour changed on"):
        return "recorded call"
    if "too fast to measure" in reason:
        return "unmeasurable"  # the function's recorded calls, not the candidate: nothing could time them
    if "faster" in reason or "speed" in reason or "measure" in reason:
        return "speed"
    return "other"


def run_function(tree: Path, candidates: list[Candidate], env: dict[str, str], sandbox: str) -> list[Outcome]:
    """One scripted optimize run over the function's candidates, in order."""
    first = candidates[0]
    fenced = [f"```python\n{c.code}```" for c in candidates]
    scratch = Path(tempfile.mkdtemp(prefix="wrong-candidates-"))
    script, report = scratch / "script.json", scratch / "report.json"
    payload = {"generate": fenced[:1], "feedback": [CONTINUE] * (len(fenced) - 1), "refine": fenced[1:]}
    script.write_text(json.dumps(payload))
    count = str(len(candidates))
    argv = [
        "nice", "-n", "10", sys.executable, "-m", "coderefine", "optimize", first.file, "--function", first.function,
        "--provider", "scripted", "--script", str(script), "--sandbox", sandbox, "--report", str(report),
        "--max-iterations", count, "--patience", count,
    ]  # fmt: skip
    proc = subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True)
    try:
        data = json.loads(report.read_text() or "{}")
    except (OSError, ValueError):
        data = {}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    iterations = data.get("iterations") or []
    if not iterations:
        error = (data.get("error") or {}).get("message") or proc.stderr.strip()[-300:] or f"exit {proc.returncode}"
        return [Outcome(c, "not run", error, "", None) for c in candidates]
    outcomes = []
    for number, candidate in enumerate(candidates):
        if number >= len(iterations):
            outcomes.append(Outcome(candidate, "not run", "the run stopped before it", "", None))
            continue
        it = iterations[number]
        verdict, reason = it.get("verdict", "?"), it.get("reason", "")
        interval = it.get("speedup_ci")
        outcomes.append(
            Outcome(
                candidate,
                verdict,
                reason,
                "" if verdict == "accepted" else refused_by(reason),
                it.get("seconds"),
                it.get("speedup"),
                (interval[0], interval[1]) if interval else None,
            )
        )
    return outcomes


def independent_ratio(tree: Path, candidate: Candidate, env: dict[str, str]) -> dict:
    """wrong_candidates_ratio.py on a correct candidate, in a process of its own under `nice -n 10`."""
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(candidate.code)
    try:
        argv = ["nice", "-n", "10", sys.executable, str(RATIO), str(tree), candidate.file, candidate.function, fh.name]
        proc = subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True)
    finally:
        os.unlink(fh.name)
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return {"error": (proc.stderr.strip() or f"exit {proc.returncode}")[-300:]}


def bench_library(library: LibrarySet, cache: Path, sandbox: str, ratio: bool = True) -> dict:
    tree = unpacked(library.name, library.version, cache)
    env = {**os.environ, "XDG_CACHE_HOME": str(cache / "xdg-wrong-candidates"), "NO_COLOR": "1"}
    for name in ("OPENAI_API_KEY", "CODEREFINE_PROVIDER", "CODEREFINE_BASE_URL", "OPENAI_BASE_URL"):
        env.pop(name, None)
    shutil.rmtree(cache / "xdg-wrong-candidates" / "coderefine" / "selection", ignore_errors=True)
    by_function: dict[tuple[str, str], list[Candidate]] = {}
    for candidate in library.candidates:
        by_function.setdefault((candidate.file, candidate.function), []).append(candidate)
    started = time.perf_counter()
    outcomes: list[Outcome] = []
    ratios: dict[Candidate, dict] = {}
    runs = []
    for candidates in by_function.values():
        # wrong ones first: each is then judged against the original, not against an accepted rewrite
        ordered = sorted(candidates, key=lambda c: not c.wrong)
        began = time.perf_counter()
        outcomes += run_function(tree, ordered, env, sandbox)
        if ratio:
            for candidate in ordered:
                if not candidate.wrong:
                    ratios[candidate] = independent_ratio(tree, candidate, env)
        runs.append({"function": ordered[0].function, "seconds": round(time.perf_counter() - began, 1)})
    wrong = [o for o in outcomes if o.candidate.wrong]
    correct = [o for o in outcomes if not o.candidate.wrong]
    return {
        "library": f"{library.name}=={library.version}",
        "seconds": round(time.perf_counter() - started, 1),
        "runs": runs,
        "wrong_total": len(wrong),
        "wrong_caught": sum(o.caught for o in wrong),
        "false_accepts": sum(o.verdict == "accepted" for o in wrong),
        "missed": sum(o.verdict == "rejected" and not o.caught for o in wrong),  # refused only as not faster
        "correct_total": len(correct),
        "correct_accepted": sum(o.verdict == "accepted" for o in correct),
        "correct_unmeasurable": sum(o.refused_by == "unmeasurable" for o in correct),
        "candidates": [
            {
                "function": o.candidate.function,
                "kind": o.candidate.kind,
                "expected": o.candidate.expected,
                "why": o.candidate.why,
                "verdict": o.verdict,
                "refused_by": o.refused_by,
                "caught": o.caught,
                "reason": o.reason,
                "seconds": o.seconds,
                "speedup": o.speedup,
                "speedup_ci": list(o.speedup_ci) if o.speedup_ci else None,
                "independent": ratios.get(o.candidate),
            }
            for o in outcomes
        ],
    }


def print_library(row: dict) -> None:
    runs = ", ".join(f"{run['function']} {run['seconds']:.0f} s" for run in row["runs"])
    print(
        f"\n{row['library']}: wrong caught {row['wrong_caught']}/{row['wrong_total']} (false accepts "
        f"{row['false_accepts']}, missed {row['missed']}), correct accepted {row['correct_accepted']}/"
        f"{row['correct_total']} (unmeasurable {row['correct_unmeasurable']}), "
        f"{row['seconds']:.0f} s ({runs})"
    )
    for c in row["candidates"]:
        if c["kind"] == "correct":
            unmeasurable = c["refused_by"] == "unmeasurable"
            mark = "ok" if c["verdict"] == "accepted" else "unmeasurable" if unmeasurable else "lost"
        else:
            mark = "ok" if c["caught"] else "FALSE ACCEPT" if c["verdict"] == "accepted" else "MISSED"
        by = f" by {c['refused_by']}" if c["refused_by"] else ""
        seconds = f"{c['seconds']:.1f} s" if c["seconds"] is not None else "-"
        print(f"  {mark:12} {c['function']:24} {c['kind']:9} {c['verdict']}{by} ({seconds}): {c['reason'][:170]}")
        if c["kind"] == "correct":
            print(f"  {'':12} {'':24} {'':9} {figures(c)}")


def figures(candidate: dict) -> str:
    """A correct candidate's speed: the tool's figure and the independent plain-loop ratio."""
    tool = "tool: not timed"
    if candidate["speedup"] is not None:
        low, high = candidate["speedup_ci"] or (float("nan"), float("nan"))
        tool = f"tool: {candidate['speedup']:.2f}x [{low:.2f}, {high:.2f}]"
    ratio = candidate.get("independent")
    if not ratio:
        return tool
    if "error" in ratio:
        return f"{tool}; plain loop: {ratio['error']}"
    return (
        f"{tool}; plain loop: {ratio['ratio']:.2f}x (pairs {ratio['pair_median']:.2f}x "
        f"[{ratio['pair_low']:.2f}, {ratio['pair_high']:.2f}]), {ratio['original_ns']:.0f} -> "
        f"{ratio['candidate_ns']:.0f} ns per call over {ratio['calls']} test calls, "
        f"{ratio['differing_calls']} differing"
    )


def run_all(cache: Path, only: set[str], sandbox: str, kinds: set[str] = frozenset(), ratio: bool = True) -> list[dict]:
    rows = []
    for library in load_sets(only, kinds):
        row = bench_library(library, cache, sandbox, ratio)
        print_library(row)
        rows.append(row)
    if rows:
        wrong = sum(r["wrong_total"] for r in rows)
        print(
            f"\nall: wrong caught {sum(r['wrong_caught'] for r in rows)}/{wrong} (false accepts "
            f"{sum(r['false_accepts'] for r in rows)}, missed {sum(r['missed'] for r in rows)}), correct accepted "
            f"{sum(r['correct_accepted'] for r in rows)}/{sum(r['correct_total'] for r in rows)} (unmeasurable "
            f"{sum(r['correct_unmeasurable'] for r in rows)}), "
            f"{sum(r['seconds'] for r in rows):.0f} s"
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--only", default="", help="comma-separated library names")
    parser.add_argument("--kinds", default="", help="comma-separated kinds (e.g. correct): only those candidates")
    parser.add_argument("--sandbox", default="process")
    parser.add_argument("--no-ratio", action="store_true", help="no independent plain-loop ratio")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    cache = args.cache.expanduser().resolve()
    cache.mkdir(parents=True, exist_ok=True)
    kinds = {kind for kind in args.kinds.split(",") if kind}
    rows = run_all(cache, {name for name in args.only.split(",") if name}, args.sandbox, kinds, not args.no_ratio)
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()

"""coderefine on real libraries: pinned source distributions with their own tests, run as a user would.

    python benchmarks/real_projects.py [--cache DIR] [--only NAME,...] [--install] [--whole-suite]
                                       [--whole-file] [--sandbox process] [--json out.json]
                                       [--overhead RUNS] [--wrong-candidates] [--reach [--first-runs]]

For each library below it downloads the pinned sdist with pip (`pip download --no-binary :all: --no-deps
NAME==VERSION`, into DIR/sdists, default ~/.cache/coderefine-bench/real-projects: never into this
repository), unpacks it, and for each chosen function (one the library's tests exercise) runs the real
command line, with a private cache folder:

1. `optimize FILE --function F --provider offline --max-iterations 3`: the first run on this project
   state, so its baseline is the traced run that finds the tests calling F;
2. `optimize ... --provider scripted` with three hand-written candidates (one known faster, one null
   edit, one more): the second run, on the cached selection;
3. with --whole-suite, `readability ... --test-selection all --max-iterations 1`: the original's test run
   over the whole suite, for the baseline time without selection;
4. with --whole-file, `optimize FILE --provider offline` without `--function`: every function of the
   module is a target, each judged on its own calls (the whole-file run's wall time).

and reports per function: tests selected / run by the first baseline / test files kept of all, the
baselines' test time (traced, cached, whole suite), the time per candidate, each run's wall time, and the
verdicts. `--overhead RUNS` measures instead what recording costs: one test file per library run by
plain pytest and by pytest with coderefine's recording plugin (every function of the module recorded,
with line coverage), interleaved RUNS times, medians and their ratio. The test dependencies must be
importable by this interpreter (`--install` pip-installs them, and installs a library that reads its own
metadata with `pip install --no-deps -e`). `--wrong-candidates` runs wrong_candidates.py instead (its own
libraries: sqlparse, more-itertools, inflection, tabulate): wrong candidates refused, correct ones accepted,
false accepts, and the seconds per library and function.

`--reach` measures instead the first run on large libraries (networkx, docutils: thousands of tests) and
their reach map, each step in a fresh cache folder on a copy of the unpacked sdist, beside the load average:
the first `optimize FILE --function F` with three scripted candidates (a wrong one, a faster one, a null
edit), the first whole-file run with the offline provider, the full map built serially and with `--jobs 2`,
the `--function` run from that full map, the map's update after the target's body changed, and the tests the
map shows reaching F against those the name filter selected before (tests of files naming F, its module or
its callers). `--first-runs` times the two first runs only (the ones with targets: 3 and 5 minutes).

Why these libraries: humanize (a src layout whose package reads its installed metadata: the case that
was misdiagnosed), toolz (a flat layout with tests inside the package), and Pygments, the one of real
size: 2,682 files and 45 MB unpacked, 5,177 tests (most of them data files collected by conftest
hooks), pure Python, tests in its sdist. sympy is bigger still but its suite takes far too long for a
benchmark that must finish in minutes.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_CACHE = Path.home() / ".cache" / "coderefine-bench" / "real-projects"
FEEDBACK = "Keep the behaviour exactly; make it faster where the profile says.\nVERDICT: CONTINUE"

INTCOMMA_FASTER = '''
def intcomma(value: NumberOrString, ndigits: int | None = None) -> str:
    """Converts an integer to a string containing commas every three digits."""
    thousands_sep = thousands_separator()
    decimal_sep = decimal_separator()
    try:
        if isinstance(value, str):
            value = value.replace(thousands_sep, "").replace(decimal_sep, ".")
            if not math.isfinite(float(value)):
                return _format_not_finite(float(value))
            if "." in value:
                value = float(value)
            else:
                value = int(value)
        else:
            if not math.isfinite(float(value)):
                return _format_not_finite(float(value))
            float(value)
    except (TypeError, ValueError):
        return str(value)

    if ndigits is not None:
        orig = "{0:.{1}f}".format(value, ndigits)
    else:
        orig = str(value)
    orig = orig.replace(".", decimal_sep)
    start = 1 if orig.startswith("-") else 0
    end = start
    while end < len(orig) and orig[end].isdigit():
        end += 1
    digits = orig[start:end]
    if len(digits) <= 3:
        return orig
    head = len(digits) % 3 or 3
    groups = [digits[:head]] + [digits[i : i + 3] for i in range(head, len(digits), 3)]
    return orig[:start] + thousands_sep.join(groups) + orig[end:]
'''
FREQUENCIES_FASTER = '''
def frequencies(seq):
    """ Find number of occurrences of each value in seq """
    return dict(collections.Counter(seq))
'''
FREQUENCIES_COUNTER = '''
def frequencies(seq):
    """ Find number of occurrences of each value in seq """
    counts = collections.Counter(seq)
    return dict(counts)
'''
FREQUENCIES_NULL = '''
def frequencies(seq):
    """ Find number of occurrences of each value in seq """
    counts = collections.defaultdict(int)
    for element in seq:
        counts[element] += 1
    return dict(counts)
'''
BOOL_OPT_FASTER = '''
def get_bool_opt(options, optname, default=None):
    """As options.get(optname, default), restricted to Boolean values (see the original's docstring)."""
    string = options.get(optname, default)
    if isinstance(string, bool):
        return string
    elif isinstance(string, int):
        return bool(string)
    elif not isinstance(string, str):
        raise OptionError(f'Invalid type {string!r} for option {optname}; use '
                          '1/0, yes/no, true/false, on/off')
    lowered = string.lower()
    if lowered in {'1', 'yes', 'true', 'on'}:
        return True
    elif lowered in {'0', 'no', 'false', 'off'}:
        return False
    raise OptionError(f'Invalid value {string!r} for option {optname}; use '
                      '1/0, yes/no, true/false, on/off')
'''
BOOL_OPT_NULL = '''
def get_bool_opt(options, optname, default=None):
    """As options.get(optname, default), restricted to Boolean values (see the original's docstring)."""
    value = options.get(optname, default)
    if isinstance(value, bool):
        return value
    elif isinstance(value, int):
        return bool(value)
    elif not isinstance(value, str):
        raise OptionError(f'Invalid type {value!r} for option {optname}; use '
                          '1/0, yes/no, true/false, on/off')
    elif value.lower() in ('1', 'yes', 'true', 'on'):
        return True
    elif value.lower() in ('0', 'no', 'false', 'off'):
        return False
    else:
        raise OptionError(f'Invalid value {value!r} for option {optname}; use '
                          '1/0, yes/no, true/false, on/off')
'''


PAIRWISE_WRONG = """
def pairwise(iterable, cyclic=False):
    "s -> (s0, s1), (s1, s2), (s2, s3), ..."
    a, b = tee(iterable)
    next(b, None)
    return zip(a, b)
"""
PAIRWISE_FASTER = """
def pairwise(iterable, cyclic=False):
    "s -> (s0, s1), (s1, s2), (s2, s3), ..."
    a, b = tee(iterable)
    first = next(b, None)
    if cyclic is not True:
        return zip(a, b)
    return zip(a, chain(b, (first,)))
"""
PAIRWISE_NULL = """
def pairwise(iterable, cyclic=False):
    "s -> (s0, s1), (s1, s2), (s2, s3), ..."
    left, right = tee(iterable)
    first = next(right, None)
    if cyclic is True:
        return zip(left, chain(right, (first,)))
    return zip(left, right)
"""
ESCAPE2NULL_WRONG = '''
def escape2null(text: str) -> str:
    """Return a string with escape-backslashes converted to nulls."""
    return text.replace("\\\\", "\\x00")
'''
ESCAPE2NULL_FASTER = '''
def escape2null(text: str) -> str:
    """Return a string with escape-backslashes converted to nulls."""
    if "\\\\" not in text:
        return text
    parts = []
    start = 0
    while True:
        bs_index = text.find("\\\\", start)
        if bs_index == -1:
            parts.append(text[start:])
            return "".join(parts)
        parts.extend((text[start:bs_index], "\\x00" + text[bs_index + 1 : bs_index + 2]))
        start = bs_index + 2
'''
ESCAPE2NULL_NULL = '''
def escape2null(text: str) -> str:
    """Return a string with escape-backslashes converted to nulls."""
    pieces = []
    begin = 0
    while True:
        found = text.find("\\\\", begin)
        if found == -1:
            pieces.append(text[begin:])
            return "".join(pieces)
        pieces.extend((text[begin:found], "\\x00" + text[found + 1 : found + 2]))
        begin = found + 2
'''


@dataclass(frozen=True)
class Target:
    file: str  # relative to the unpacked sdist
    function: str
    candidates: tuple[str, ...] = ()  # scripted: generate, then two refinements (first one known faster)


@dataclass(frozen=True)
class Overhead:
    test_file: str  # a test file of the library's
    module: str  # the module whose every top-level function is recorded
    file: str  # that module's file


@dataclass(frozen=True)
class Library:
    name: str
    version: str
    targets: tuple[Target, ...]
    test_deps: tuple[str, ...] = ()  # pip requirements its tests import
    install: bool = False  # its code reads its own installed metadata: pip install --no-deps -e
    modules: tuple[str, ...] = field(default=())  # import names of test_deps, to check they are there
    overhead: Overhead | None = None


LIBRARIES = (
    Library(
        "humanize",
        "4.9.0",
        (
            Target(
                "src/humanize/number.py",
                "intcomma",
                (INTCOMMA_FASTER, INTCOMMA_FASTER.replace("groups", "parts"), INTCOMMA_FASTER.replace("head", "lead")),
            ),
        ),
        test_deps=("freezegun",),
        install=True,
        modules=("freezegun",),
        overhead=Overhead("tests/test_number.py", "humanize.number", "src/humanize/number.py"),
    ),
    Library(
        "toolz",
        "0.12.1",
        (
            Target(
                "toolz/itertoolz.py",
                "frequencies",
                (FREQUENCIES_FASTER, FREQUENCIES_NULL, FREQUENCIES_COUNTER),
            ),
        ),
    ),
    Library(
        "pygments",
        "2.19.2",
        (
            Target(
                "pygments/util.py",
                "get_bool_opt",
                (
                    BOOL_OPT_FASTER,
                    BOOL_OPT_NULL,
                    BOOL_OPT_FASTER.replace("{'0', 'no', 'false', 'off'}", "('0', 'no', 'false', 'off')"),
                ),
            ),
        ),
        test_deps=("wcag-contrast-ratio",),
        modules=("wcag_contrast_ratio",),
        overhead=Overhead("tests/test_basic_api.py", "pygments.util", "pygments/util.py"),
    ),
)


# Large libraries for --reach: pure Python, thousands of tests, the target reached from all over the suite.
# docutils 0.22.4 rather than 0.21.2: two of 0.21.2's code-directive tests fail with today's Pygments.
REACH_LIBRARIES = (
    Library(
        "networkx",
        "3.4.2",
        (Target("networkx/utils/misc.py", "pairwise", (PAIRWISE_WRONG, PAIRWISE_FASTER, PAIRWISE_NULL)),),
    ),
    Library(
        "docutils",
        "0.22.4",
        (
            Target(
                "docutils/utils/__init__.py",
                "escape2null",
                (ESCAPE2NULL_WRONG, ESCAPE2NULL_FASTER, ESCAPE2NULL_NULL),
            ),
        ),
    ),
)


def pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", "-q", *args], check=True)


def unpacked(library: Library, cache: Path) -> Path:
    """The sdist, downloaded once and unpacked once, under the cache folder."""
    sdists = cache / "sdists"
    tree = cache / "src" / f"{library.name}-{library.version}"
    if tree.is_dir():
        return tree
    sdists.mkdir(parents=True, exist_ok=True)
    archive = next(sdists.glob(f"{library.name}-{library.version}.tar.gz"), None)
    if archive is None:
        pip("download", "--no-binary", ":all:", "--no-deps", f"{library.name}=={library.version}", "-d", str(sdists))
        archive = next(sdists.glob(f"{library.name}-{library.version}.tar.gz"))
    with tempfile.TemporaryDirectory(dir=cache) as scratch, tarfile.open(archive) as tar:
        tar.extractall(scratch, filter="data")
        (tree.parent).mkdir(parents=True, exist_ok=True)
        shutil.move(str(next(Path(scratch).iterdir())), tree)
    return tree


def ready(library: Library, tree: Path, install: bool) -> str | None:
    """Why the library's tests cannot run with this interpreter, or None."""
    if install:
        if library.test_deps:
            pip("install", *library.test_deps)
        if library.install:
            pip("install", "--no-deps", "-e", str(tree))
    missing = [name for name in library.modules if importlib.util.find_spec(name) is None]
    if library.install and importlib.util.find_spec(library.name) is None:
        missing.append(f"{library.name} (pip install --no-deps -e {tree})")
    return f"missing {', '.join(missing)} (rerun with --install)" if missing else None


def coderefine(tree: Path, env: dict[str, str], *args: str) -> tuple[dict, float, int]:
    report = Path(tempfile.mkstemp(suffix=".json")[1])
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "coderefine", *args, "--report", str(report)],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - started
    try:
        data = json.loads(report.read_text() or "{}")
    finally:
        report.unlink(missing_ok=True)
    if proc.returncode not in (0, 21):
        data.setdefault("error", {"message": proc.stderr.strip()[-300:]})
    return data, wall, proc.returncode


def write_script(path: Path, candidates: tuple[str, ...]) -> Path:
    fenced = [f"```python\n{code.strip()}\n```" for code in candidates]
    payload = {"generate": fenced[:1], "feedback": [FEEDBACK] * (len(fenced) - 1), "refine": fenced[1:]}
    path.write_text(json.dumps(payload))
    return path


def summary(data: dict, wall: float, code: int) -> dict:
    baseline = data.get("baseline") or {}
    selection = baseline.get("selection") or {}
    iterations = data.get("iterations", [])
    return {
        "exit_code": code,
        "wall_seconds": round(wall, 1),
        "status": data.get("status"),
        "error": (data.get("error") or {}).get("message"),
        "selection": selection.get("mode"),
        "tests_selected": selection.get("candidate_tests"),
        "tests_baseline": selection.get("baseline_tests"),
        "test_files": [selection.get("test_files_run"), selection.get("test_files")],
        "baseline_test_seconds": baseline.get("test_seconds"),
        "baseline_seconds": baseline.get("seconds"),
        "calls_recorded": baseline.get("calls_recorded"),
        "candidate_seconds": [it.get("seconds") for it in iterations],
        "candidate_cpu_seconds": [it.get("cpu_seconds") for it in iterations],
        "candidate_timing_pairs": [(it.get("timing") or {}).get("pairs") for it in iterations],
        "verdicts": [f"{it.get('verdict')}: {it.get('reason')}" for it in iterations],
    }


def bench_target(library: Library, tree: Path, target: Target, args: argparse.Namespace, cache: Path) -> dict:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache / "xdg"), "NO_COLOR": "1"}
    for name in ("OPENAI_API_KEY", "CODEREFINE_PROVIDER", "CODEREFINE_BASE_URL", "OPENAI_BASE_URL"):
        env.pop(name, None)
    shutil.rmtree(cache / "xdg" / "coderefine" / "selection", ignore_errors=True)  # the first run traces
    common = ("optimize", target.file, "--function", target.function, "--sandbox", args.sandbox)
    result: dict = {"library": f"{library.name}=={library.version}", "function": target.function}
    result["offline"] = summary(*coderefine(tree, env, *common, "--provider", "offline", "--max-iterations", "3"))
    if target.candidates:
        script = write_script(cache / f"{library.name}-{target.function}.json", target.candidates)
        scripted = coderefine(
            tree, env, *common, "--script", str(script), "--max-iterations", str(len(target.candidates)),
            "--patience", str(len(target.candidates)),
        )  # fmt: skip
        result["scripted"] = summary(*scripted)
    if args.whole_suite:
        whole = coderefine(
            tree, env, "readability", target.file, "--function", target.function, "--sandbox", args.sandbox,
            "--provider", "offline", "--max-iterations", "1", "--test-selection", "all",
        )  # fmt: skip
        result["whole_suite"] = summary(*whole)
    if args.whole_file:
        shutil.rmtree(cache / "xdg" / "coderefine" / "selection", ignore_errors=True)  # a first run again
        whole_file = coderefine(tree, env, "optimize", target.file, "--sandbox", args.sandbox, "--provider", "offline")
        result["whole_file"] = summary(*whole_file)
    return result


def load() -> float:
    return round(os.getloadavg()[0], 1)


def timed_step(rows: list[dict], library: str, what: str, tree: Path, env: dict[str, str], *args: str) -> dict:
    """One command on `tree`, its wall time and the load around it, appended to `rows` and printed."""
    before = load()
    if args[0] == "reach":
        started = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "coderefine", *args], cwd=tree, env=env, capture_output=True, text=True
        )
        wall, code = time.perf_counter() - started, proc.returncode
        try:
            data = json.loads(proc.stdout)
        except ValueError:
            data = {"error": {"message": proc.stderr.strip()[-300:]}}
    else:
        data, wall, code = coderefine(tree, env, *args)
    row = {"library": library, "what": what, "seconds": round(wall, 1), "exit_code": code, "load": [before, load()]}
    if args[0] == "reach":
        row["detail"] = {
            key: data.get(key) for key in ("tests", "test_files", "functions", "retraced_tests", "workers")
        }
    else:
        row["detail"] = summary(data, wall, code)
        row["detail"]["reason"] = ((data.get("baseline") or {}).get("selection") or {}).get("reason")
    if (data.get("error") or {}).get("message"):
        row["error"] = data["error"]["message"]
    rows.append(row)
    print(f"  {what:44} {row['seconds']:7.1f} s  exit {code:>2}  load {before} -> {row['load'][1]}", flush=True)
    return row


def reach_figures(library: Library, tree: Path, cache: Path, sandbox: str, first_only: bool = False) -> list[dict]:
    """The first runs and the reach map of one large library (see the module's docstring), on a fresh copy;
    `first_only`: the two first runs alone."""
    target = library.targets[0]
    name = f"{library.name}=={library.version}"
    work = cache / "reach-work" / f"{library.name}-{library.version}"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(tree, work, symlinks=True)
    base = {**os.environ, "NO_COLOR": "1"}
    for variable in ("OPENAI_API_KEY", "CODEREFINE_PROVIDER", "CODEREFINE_BASE_URL", "OPENAI_BASE_URL"):
        base.pop(variable, None)

    def fresh(label: str) -> dict[str, str]:
        folder = cache / "reach-xdg" / f"{library.name}-{label}"
        shutil.rmtree(folder, ignore_errors=True)
        return {**base, "XDG_CACHE_HOME": str(folder)}

    script = write_script(cache / f"{library.name}-{target.function}.json", target.candidates)
    scripted = ("--script", str(script), "--max-iterations", "3", "--patience", "3", "--sandbox", sandbox)
    one = ("optimize", target.file, "--function", target.function, *scripted)
    rows: list[dict] = []
    print(f"\n{name} ({target.file}::{target.function}), uptime: {os.popen('uptime').read().strip()}")
    timed_step(rows, name, "first --function run, 3 candidates", work, fresh("first"), *one)
    whole = ("optimize", target.file, "--provider", "offline", "--sandbox", sandbox)
    timed_step(rows, name, "first whole-file run, offline", work, fresh("whole"), *whole)
    if first_only:
        return rows
    full = ("reach", ".", "--full", "--json", "--sandbox", sandbox)
    timed_step(rows, name, "full reach map, serial", work, fresh("serial"), *full, "--jobs", "1")
    mapped = fresh("jobs2")
    built = timed_step(rows, name, "full reach map, --jobs 2", work, mapped, *full, "--jobs", "2")
    timed_step(rows, name, "--function run from the full map", work, mapped, *one)
    source = (work / target.file).read_text(encoding="utf-8")
    reaching, before = reach_counts(work, mapped, target)
    built["detail"] |= {"tests_reaching": reaching, "tests_selected_before": before}
    print(f"  tests reaching {target.function}: {reaching}; selected before by the name filter: {before}")
    marker = f"def {target.function}("
    head, _, tail = source.partition(marker)
    signature, newline, body = tail.partition("\n")
    # the target's body changed (one statement more, same behaviour): its tests are traced again
    (work / target.file).write_text(f"{head}{marker}{signature}{newline}    _unused = None\n{body}", encoding="utf-8")
    timed_step(rows, name, "incremental map, target's body edited", work, mapped, "reach", ".", "--json",
               "--sandbox", sandbox)  # fmt: skip
    (work / target.file).write_text(source, encoding="utf-8")
    return rows


def reach_counts(work: Path, env: dict[str, str], target: Target) -> tuple[int, int]:
    """Tests the full map shows reaching the target, and tests of the test files the name filter kept."""
    import re

    from coderefine.evaluation.reach_build import cached_map
    from coderefine.evaluation.reach_map import default_reach_cache
    from coderefine.evaluation.selection import selection_names

    saved = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = env["XDG_CACHE_HOME"]
    try:
        reach = cached_map(work, default_reach_cache())
    finally:
        if saved is None:
            os.environ.pop("XDG_CACHE_HOME", None)
        else:
            os.environ["XDG_CACHE_HOME"] = saved
    if reach is None:
        return 0, 0
    module = target.file.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    names = selection_names(module, (target.function,), (work / target.file).read_text(encoding="utf-8"))
    words = re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(names, key=len, reverse=True))) + r")\b")
    files = {test.split("::")[0] for test in reach.tests}
    naming = {name for name in files if words.search((work / name).read_text(encoding="utf-8", errors="replace"))}
    before = sum(1 for test in reach.tests if test.split("::")[0] in naming)
    return len(reach.reaching(target.file, (target.function,))), before


def print_reach_table(rows: list[dict]) -> None:
    print("\n| library | what | seconds | load (1 min, before -> after) |\n| --- | --- | --- | --- |")
    for row in rows:
        print(f"| {row['library']} | {row['what']} | {row['seconds']} | {row['load'][0]} -> {row['load'][1]} |")


def recording_overhead(tree: Path, overhead: Overhead, runs: int) -> dict:
    """Plain pytest against pytest with the recording plugin on the same test file, interleaved."""
    import ast
    import statistics

    from coderefine.resources import load_sandbox_package

    load_sandbox_package()  # the calls file is read with the sandbox's own protocol
    from coderefine_sandbox.protocol import read_calls

    source = (tree / overhead.file).read_text(encoding="utf-8")
    functions = [node.name for node in ast.parse(source).body if isinstance(node, ast.FunctionDef)]
    sandbox = Path(__file__).resolve().parent.parent / "sandbox"
    import_root = overhead.file.split("/")[0] if overhead.file.startswith("src/") else "."
    base = {**os.environ, "PYTHONPATH": f"{sandbox}{os.pathsep}{tree / import_root}", "PYTHONHASHSEED": "0"}
    scratch = Path(tempfile.mkdtemp())
    capture = {"module": overhead.module, "targets": functions, "max_calls": 500, "max_bytes": 64 << 20}
    recorded_env = {
        **base,
        "CODEREFINE_CAPTURE": json.dumps(capture),
        "CODEREFINE_CALLS_OUT": str(scratch / "calls.pkl"),
        "CODEREFINE_RESULTS": str(scratch / "results.json"),
        "CODEREFINE_MODULE": overhead.module,
    }
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
    plain, recorded = [], []
    for _ in range(runs):
        for env, extra, times in (
            (base, [], plain),
            (recorded_env, ["-p", "coderefine_sandbox.recording.pytest_plugin"], recorded),
        ):
            started = time.perf_counter()
            subprocess.run([*argv, *extra, overhead.test_file], cwd=tree, env=env, capture_output=True, check=True)
            times.append(time.perf_counter() - started)
    header, records = read_calls(str(scratch / "calls.pkl"))
    recording = header.recording
    assert recording is not None  # the tests' own recording
    shutil.rmtree(scratch, ignore_errors=True)
    return {
        "test_file": overhead.test_file,
        "targets": len(functions),
        "calls": sum(recording.counts.values()),
        "recorded": len(records),
        "coverage_method": recording.coverage_method,
        "plain_seconds": round(statistics.median(plain), 3),
        "recorded_seconds": round(statistics.median(recorded), 3),
        "ratio": round(statistics.median(recorded) / statistics.median(plain), 3),
        "python": sys.version.split()[0],
    }


def print_row(row: dict) -> None:
    print(f"\n{row['library']} {row['function']}")
    for kind in ("offline", "scripted", "whole_suite", "whole_file"):
        run = row.get(kind)
        if run is None:
            continue
        print(
            f"  {kind:11} exit {run['exit_code']:>2}  {run['wall_seconds']:6.1f}s  selection {run['selection']}: "
            f"{run['tests_selected']}/{run['tests_baseline']} tests, files {run['test_files'][0]}/"
            f"{run['test_files'][1]}  baseline tests {run['baseline_test_seconds']}s (baseline "
            f"{run['baseline_seconds']}s, {run['calls_recorded']} calls)  per candidate "
            f"{run['candidate_seconds']} (CPU {run['candidate_cpu_seconds']})"
        )
        for verdict in run["verdicts"]:
            print(f"      {verdict[:160]}")
        if run["error"]:
            print(f"      error: {run['error'][:300]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--only", default="", help="comma-separated library names")
    parser.add_argument("--install", action="store_true", help="pip install the test dependencies first")
    parser.add_argument("--whole-suite", action="store_true", help="also time a baseline of the whole suite")
    parser.add_argument("--whole-file", action="store_true", help="also run the offline provider on the whole file")
    parser.add_argument("--sandbox", default="process")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--overhead", type=int, default=0, metavar="RUNS", help="measure recording overhead only")
    parser.add_argument(
        "--wrong-candidates", action="store_true", help="run the wrong-candidate set (wrong_candidates.py) instead"
    )
    parser.add_argument("--reach", action="store_true", help="the first runs and reach maps of large libraries")
    parser.add_argument("--first-runs", action="store_true", help="with --reach: the two first runs only")
    args = parser.parse_args()
    cache = args.cache.expanduser().resolve()
    cache.mkdir(parents=True, exist_ok=True)
    chosen = {name for name in args.only.split(",") if name}
    if args.wrong_candidates:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import wrong_candidates

        rows = wrong_candidates.run_all(cache, chosen, args.sandbox)
        if args.json is not None:
            args.json.write_text(json.dumps(rows, indent=1))
        return
    if args.reach:
        rows = []
        for library in REACH_LIBRARIES:
            if not chosen or library.name in chosen:
                rows += reach_figures(library, unpacked(library, cache), cache, args.sandbox, args.first_runs)
        print_reach_table(rows)
        if args.json is not None:
            args.json.write_text(json.dumps(rows, indent=1))
        return
    rows = []
    for library in LIBRARIES:
        if chosen and library.name not in chosen:
            continue
        tree = unpacked(library, cache)
        problem = ready(library, tree, args.install)
        if problem is not None:
            print(f"\n{library.name}=={library.version}: skipped: {problem}")
            continue
        if args.overhead:
            if library.overhead is not None:
                row = {"library": f"{library.name}=={library.version}"}
                row |= recording_overhead(tree, library.overhead, args.overhead)
                print(json.dumps(row))
                rows.append(row)
            continue
        files = sum(len(names) for _, _, names in os.walk(tree))
        size = sum(os.path.getsize(os.path.join(d, n)) for d, _, names in os.walk(tree) for n in names)
        print(f"\n{library.name}=={library.version}: {files} files, {size / 1e6:.0f} MB at {tree}")
        for target in library.targets:
            row = bench_target(library, tree, target, args, cache)
            row["files"], row["megabytes"] = files, round(size / 1e6, 1)
            print_row(row)
            rows.append(row)
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()

"""Every setting coderefine has: its name, kind, default, limits and help, written once.

The CLI's options and their help are generated from these specs (cli/options.py), `coderefine config` lists
them, the README's settings table is checked against them, and the evaluation's defaults read them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class SettingSpec:
    name: str
    kind: type  # str, int, float, bool, Path, or tuple (of names: "a,b" in a flag or variable, a list in TOML)
    default: Any
    help: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    also_env: tuple[str, ...] = ()  # variables other tools already use for the same thing
    panel: str = ""  # the help panel its option is shown in: Model, Cache, Loop, Sandbox, Verdict, Thresholds
    metavar: str = ""  # what the option's value is called in the help (unset: from the kind: N, F, NAME, ...)
    off_flag: str = ""  # a bool's flag that turns it off (unset: --no-<name>)

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def flags(self) -> tuple[str, ...]:
        """Every spelling of its option: a bool has one flag to turn it on and one to turn it off."""
        if self.kind is bool:
            return (self.flag, self.off_flag or "--no-" + self.flag.removeprefix("--"))
        return (self.flag,)

    @property
    def env(self) -> tuple[str, ...]:
        """Variables to read, first found wins: CODEREFINE_<NAME>, then the shared ones."""
        return (f"CODEREFINE_{self.name.upper()}", *self.also_env)


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "coderefine" / "responses"


_PROVIDER_HELP = "openai, offline or scripted; unset: openai when a key or base URL is configured, else offline"
_MODEL, _CACHE, _LOOP, _SANDBOX, _VERDICT, _THRESHOLDS = "Model", "Cache", "Loop", "Sandbox", "Verdict", "Thresholds"
# The capability kinds the sandbox's audit hook tells apart (coderefine_sandbox/audit.py), for --allow.
POWERS = ("network", "process", "file_write", "file_read", "native", "dynamic_code", "import", "thread", "clock")
_SWEEP = "Sweep"
SPECS: tuple[SettingSpec, ...] = (
    SettingSpec("provider", str, None, _PROVIDER_HELP, choices=("openai", "offline", "scripted"), panel=_MODEL),
    SettingSpec("model", str, "gpt-4o-mini", "model name the endpoint knows", panel=_MODEL),
    SettingSpec(
        "base_url",
        str,
        None,
        "OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (Ollama); unset: api.openai.com",
        also_env=("OPENAI_BASE_URL",),
        panel=_MODEL,
        metavar="URL",
    ),
    SettingSpec("api_key_env", str, "OPENAI_API_KEY", "environment variable holding the API key", panel=_MODEL),
    SettingSpec(
        "temperature", float, None, "sampling temperature (unset: the server's default)", 0.0, 2.0, panel=_MODEL
    ),
    SettingSpec("seed", int, None, "sampling seed, for endpoints that honour it", panel=_MODEL),
    SettingSpec("request_timeout", float, 120.0, "seconds to wait for one answer", 0.1, panel=_MODEL, metavar="S"),
    SettingSpec("max_retries", int, 2, "retries with backoff on 429, 5xx and connection errors", 0, 20, panel=_MODEL),
    SettingSpec("max_calls", int, None, "most model calls in a run", 1, panel=_MODEL),
    SettingSpec("max_tokens", int, None, "most tokens (prompt + answer) in a run", 1, panel=_MODEL),
    SettingSpec(
        "context_tokens", int, 16000, "prompt budget; older attempts are left out beyond it", 1000, panel=_MODEL
    ),
    SettingSpec(
        "cache", bool, True, "reuse answers (and check results) saved on disk for identical requests", panel=_CACHE
    ),
    SettingSpec(
        "cache_dir",
        Path,
        None,
        "where answers are saved (unset: ~/.cache/coderefine/responses)",
        panel=_CACHE,
        metavar="DIR",
    ),
    SettingSpec(
        "sandbox",
        str,
        "auto",
        "sandbox backend: auto (Docker when an engine answers, else process), docker, process or subprocess",
        choices=("auto", "docker", "process", "subprocess"),
        panel=_SANDBOX,
    ),
    SettingSpec(
        "image",
        str,
        None,
        "Docker image with its own Python (unset: an offline image of this interpreter)",
        panel=_SANDBOX,
        metavar="TAG",
    ),
    SettingSpec("min_speedup", float, 0.05, "speedup the interval's lower bound must clear", 0.0, 10.0, panel=_LOOP),
    SettingSpec("max_iterations", int, None, "most candidates (unset: the task's default)", 1, panel=_LOOP),
    SettingSpec(
        "patience", int, None, "rounds without improvement before stopping (unset: the task's)", 1, panel=_LOOP
    ),
    SettingSpec(
        "timeout", float, 300.0, "time limit in seconds for the original's test run", 0.1, panel=_SANDBOX, metavar="S"
    ),
    SettingSpec("memory_mb", int, 2048, "memory limit per sandboxed process, MiB", 64, panel=_SANDBOX),
    SettingSpec("timing_pairs", int, 6, "interleaved original/candidate process pairs per timing", 2, panel=_SANDBOX),
    SettingSpec(
        "timing_budget",
        float,
        0.5,
        "seconds one timing pass may take; beyond, a stratified sample of the recorded calls is timed",
        0.1,
        panel=_SANDBOX,
        metavar="S",
    ),
    SettingSpec("max_complexity", int, 10, "check: most cyclomatic complexity of one function", 1, panel=_THRESHOLDS),
    SettingSpec(
        "min_maintainability",
        float,
        10.0,
        "check: least maintainability index of a file",
        0.0,
        100.0,
        panel=_THRESHOLDS,
    ),
    SettingSpec(
        "min_readability",
        float,
        40.0,
        "check: least readability score of a file (0: off)",
        0.0,
        100.0,
        panel=_THRESHOLDS,
    ),
    SettingSpec(
        "rel_tol",
        float,
        1e-9,
        "relative tolerance when comparing floats in recorded calls",
        0.0,
        1.0,
        panel=_VERDICT,
    ),
    SettingSpec(
        "abs_tol", float, 0.0, "absolute tolerance when comparing floats in recorded calls", 0.0, panel=_VERDICT
    ),
    SettingSpec(
        "unordered",
        tuple,
        (),
        "targets whose returned list or tuple may come in any order (comma-separated names)",
        panel=_VERDICT,
        metavar="NAMES",
    ),
    SettingSpec(
        "min_calls",
        int,
        3,
        "fewest usable recorded calls to the targets that can judge a candidate",
        0,
        panel=_VERDICT,
    ),
    SettingSpec(
        "min_coverage",
        float,
        0.75,
        "least share of the targets' lines the tests must run",
        0.0,
        1.0,
        panel=_VERDICT,
    ),
    SettingSpec(
        "allow_insufficient_tests",
        bool,
        False,
        "judge candidates even when min_calls or min_coverage is not met",
        panel=_VERDICT,
        off_flag="--require-sufficient-tests",
    ),
    SettingSpec(
        "allow",
        tuple,
        (),
        "powers a candidate may gain over the original (comma-separated): network, process, file_write, "
        "file_read, native, dynamic_code, import, thread, clock; unset: none",
        choices=POWERS,
        panel=_VERDICT,
        metavar="KINDS",
    ),
    SettingSpec(
        "test_selection",
        str,
        "auto",
        "tests that judge a run without --tests: auto (those that call the targets, found once per project "
        "state and cached) or all (the whole suite)",
        choices=("auto", "all"),
        panel=_VERDICT,
    ),
    SettingSpec(
        "gen_inputs",
        bool,
        False,
        "also compare on inputs generated from type hints (needs hypothesis)",
        panel=_VERDICT,
    ),
    # Programs (a target its tests run as a process: coderefine.evaluation.programs)
    SettingSpec(
        "output_match",
        str,
        "exact",
        "programs: how a recorded run's stdout must match (whitespace: trailing blanks ignored; numeric: "
        "numbers within rel_tol/abs_tol)",
        choices=("exact", "whitespace", "numeric"),
        panel=_VERDICT,
    ),
    SettingSpec("compare_stderr", bool, False, "programs: compare stderr of each recorded run too", panel=_VERDICT),
    SettingSpec(
        "min_runs",
        int,
        1,
        "programs: fewest usable recorded runs of the program that can judge a candidate",
        0,
        panel=_VERDICT,
    ),
    SettingSpec(
        "timing_inputs",
        tuple,
        (),
        "programs: stdin files (globs under the project root, comma-separated) to time on instead of the recorded runs",
        panel=_LOOP,
        metavar="GLOBS",
    ),
)
SPECS += (
    SettingSpec(
        "engine",
        str,
        "local",
        "sweep: where refinements run: local (processes) or ray",
        choices=("local", "ray"),
        panel=_SWEEP,
    ),
    SettingSpec(
        "ray_address",
        str,
        None,
        "sweep --engine ray: the cluster, auto, HOST:PORT or ray://HOST:PORT (unset: auto)",
        panel=_SWEEP,
        metavar="ADDRESS",
    ),
    SettingSpec("workers", int, None, "sweep --engine local: worker processes (unset: one per CPU)", 1, panel=_SWEEP),
)
SPEC_BY_NAME = {spec.name: spec for spec in SPECS}

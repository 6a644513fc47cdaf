"""Every setting coderefine has, written once: a typed field of `SettingValues` whose metadata is its spec
(help, bounds, choices, panel).

The specs (`SPECS`) are read off those fields: the CLI's options and their help are generated from them
(cli/options.py), `coderefine config` lists them, the README's settings table is checked against them, and
the evaluation's defaults read them. The resolved settings of a run (`coderefine.settings.Settings`) are a
`SettingValues`, read by attribute: `settings.rel_tol` is a float wherever it is read.
"""

from __future__ import annotations

import os
import types
import typing
from dataclasses import dataclass, field, fields
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


_SPEC = "coderefine.setting"  # the metadata key a setting's field carries its spec under


def setting(
    default: Any,
    help: str,
    minimum: float | None = None,
    maximum: float | None = None,
    *,
    choices: tuple[str, ...] = (),
    also_env: tuple[str, ...] = (),
    panel: str = "",
    metavar: str = "",
    off_flag: str = "",
) -> Any:
    """A field of `SettingValues`: its default, and the rest of its spec as metadata."""
    spec = {
        "help": help,
        "minimum": minimum,
        "maximum": maximum,
        "choices": choices,
        "also_env": also_env,
        "panel": panel,
        "metavar": metavar,
        "off_flag": off_flag,
    }
    return field(default=default, metadata={_SPEC: spec})


_PROVIDER_HELP = "openai, offline or scripted; unset: openai when a key or base URL is configured, else offline"
_MODEL, _CACHE, _LOOP, _SANDBOX, _VERDICT, _THRESHOLDS = "Model", "Cache", "Loop", "Sandbox", "Verdict", "Thresholds"
_SWEEP = "Sweep"
# The capability kinds the sandbox's audit hook tells apart (coderefine_sandbox/audit.py), for --allow.
POWERS = ("network", "process", "file_write", "file_read", "native", "dynamic_code", "import", "thread", "clock")
# What `--allow` takes: those powers, and `memory` (a candidate's peak memory per call beyond the limit).
ALLOWABLE = (*POWERS, "memory")


@dataclass(frozen=True)
class SettingValues:
    """Every setting's value, typed; a field's default is the setting's, its metadata the rest of the spec."""

    provider: str | None = setting(None, _PROVIDER_HELP, choices=("openai", "offline", "scripted"), panel=_MODEL)
    model: str = setting("gpt-4o-mini", "model name the endpoint knows", panel=_MODEL)
    base_url: str | None = setting(
        None,
        "OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (Ollama); unset: api.openai.com",
        also_env=("OPENAI_BASE_URL",),
        panel=_MODEL,
        metavar="URL",
    )
    api_key_env: str = setting("OPENAI_API_KEY", "environment variable holding the API key", panel=_MODEL)
    temperature: float | None = setting(
        None, "sampling temperature (unset: the server's default)", 0.0, 2.0, panel=_MODEL
    )
    seed: int | None = setting(None, "sampling seed, for endpoints that honour it", panel=_MODEL)
    request_timeout: float = setting(
        120.0,
        "seconds to wait for one answer; when streamed, for the next token (the silence, not the whole answer)",
        0.1,
        panel=_MODEL,
        metavar="S",
    )
    stream: bool = setting(True, "stream answers where the server streams (progress shown, no cut-off)", panel=_MODEL)
    max_retries: int = setting(2, "retries with backoff on 429, 5xx and connection errors", 0, 20, panel=_MODEL)
    max_calls: int | None = setting(None, "most model calls in a run", 1, panel=_MODEL)
    max_tokens: int | None = setting(None, "most tokens (prompt + answer) in a run", 1, panel=_MODEL)
    context_tokens: int = setting(16000, "prompt budget; older attempts are left out beyond it", 1000, panel=_MODEL)
    cache: bool = setting(True, "reuse answers (and check results) saved on disk for identical requests", panel=_CACHE)
    cache_dir: Path | None = setting(
        None, "where answers are saved (unset: ~/.cache/coderefine/responses)", panel=_CACHE, metavar="DIR"
    )
    sandbox: str = setting(
        "auto",
        "sandbox backend: auto (Docker when an engine answers, else process), docker, process or subprocess",
        choices=("auto", "docker", "process", "subprocess"),
        panel=_SANDBOX,
    )
    image: str | None = setting(
        None,
        "Docker image with its own Python (unset: an offline image of this interpreter)",
        panel=_SANDBOX,
        metavar="TAG",
    )
    min_speedup: float = setting(0.05, "speedup the interval's lower bound must clear", 0.0, 10.0, panel=_LOOP)
    max_iterations: int | None = setting(None, "most candidates (unset: the task's default)", 1, panel=_LOOP)
    patience: int | None = setting(
        None, "rounds without improvement before stopping (unset: the task's)", 1, panel=_LOOP
    )
    drafts: int = setting(
        1,
        "drafts asked for per generate/refine step, verified side by side; the best verified one is carried forward",
        1,
        16,
        panel=_LOOP,
    )
    timeout: float = setting(
        300.0, "time limit in seconds for the original's test run", 0.1, panel=_SANDBOX, metavar="S"
    )
    memory_mb: int = setting(2048, "memory limit per sandboxed process, MiB", 64, panel=_SANDBOX)
    timing_pairs: int = setting(6, "interleaved original/candidate process pairs per timing", 2, panel=_SANDBOX)
    timing_budget: float = setting(
        0.5,
        "seconds one timing pass may take; beyond, a stratified sample of the recorded calls is timed",
        0.1,
        panel=_SANDBOX,
        metavar="S",
    )
    timing_value_seconds: float = setting(
        0.1,
        "wall seconds one timing value may take (a worker process times a warm-up and up to 3 values); shorter "
        "values finish sooner and read noisier, which the intervals show",
        0.05,
        5.0,
        panel=_SANDBOX,
        metavar="S",
    )
    max_complexity: int = setting(10, "check: most cyclomatic complexity of one function", 1, panel=_THRESHOLDS)
    min_maintainability: float = setting(
        10.0, "check: least maintainability index of a file", 0.0, 100.0, panel=_THRESHOLDS
    )
    min_readability: float = setting(
        40.0, "check: least readability score of a file (0: off)", 0.0, 100.0, panel=_THRESHOLDS
    )
    rel_tol: float = setting(
        1e-9, "relative tolerance when comparing floats in recorded calls", 0.0, 1.0, panel=_VERDICT
    )
    abs_tol: float = setting(0.0, "absolute tolerance when comparing floats in recorded calls", 0.0, panel=_VERDICT)
    unordered: tuple[str, ...] = setting(
        (),
        "targets whose returned list or tuple may come in any order (comma-separated names)",
        panel=_VERDICT,
        metavar="NAMES",
    )
    min_calls: int = setting(
        3, "fewest usable recorded calls to the targets that can judge a candidate", 0, panel=_VERDICT
    )
    min_coverage: float = setting(
        0.75, "least share of the targets' lines the tests must run", 0.0, 1.0, panel=_VERDICT
    )
    allow_insufficient_tests: bool = setting(
        False,
        "judge candidates even when min_calls or min_coverage is not met",
        panel=_VERDICT,
        off_flag="--require-sufficient-tests",
    )
    allow: tuple[str, ...] = setting(
        (),
        "powers a candidate may gain over the original (comma-separated): network, process, file_write, "
        "file_read, native, dynamic_code, import, thread, clock, memory (peak memory beyond memory_growth); "
        "unset: none",
        choices=ALLOWABLE,
        panel=_VERDICT,
        metavar="KINDS",
    )
    memory_growth: float = setting(
        2.0,
        "refuse a candidate whose peak memory per call is more than this many times the original's and "
        "memory_margin_mb over it (0: never; --allow memory: shown, not refused)",
        0.0,
        panel=_VERDICT,
    )
    memory_margin_mb: float = setting(
        8.0, "how many MiB over the original's peak memory per call a candidate may always use", 0.0, panel=_VERDICT
    )
    test_selection: str = setting(
        "auto",
        "tests that judge a run without --tests: auto (those that call the targets, found once per project "
        "state and cached) or all (the whole suite)",
        choices=("auto", "all"),
        panel=_VERDICT,
    )
    gen_inputs: bool = setting(
        False, "also compare on inputs generated from type hints (needs hypothesis)", panel=_VERDICT
    )
    boundary_inputs: int = setting(
        200,
        "also compare on up to N boundary variants of the recorded calls (empty and one-element containers, "
        "0, empty strings, ...) that the tests never tried; 0: off",
        0,
        panel=_VERDICT,
    )
    # Programs (a target its tests run as a process: coderefine.evaluation.programs)
    output_match: str = setting(
        "exact",
        "programs: how a recorded run's stdout must match (whitespace: trailing blanks ignored; numeric: "
        "numbers within rel_tol/abs_tol)",
        choices=("exact", "whitespace", "numeric"),
        panel=_VERDICT,
    )
    compare_stderr: bool = setting(False, "programs: compare stderr of each recorded run too", panel=_VERDICT)
    min_runs: int = setting(
        1, "programs: fewest usable recorded runs of the program that can judge a candidate", 0, panel=_VERDICT
    )
    timing_inputs: tuple[str, ...] = setting(
        (),
        "programs: stdin files (globs under the project root, comma-separated) to time on instead of the recorded runs",
        panel=_LOOP,
        metavar="GLOBS",
    )
    # Sweeps (coderefine.sweep)
    engine: str = setting(
        "local", "sweep: where refinements run: local (processes) or ray", choices=("local", "ray"), panel=_SWEEP
    )
    ray_address: str | None = setting(
        None,
        "sweep --engine ray: the cluster, auto, HOST:PORT or ray://HOST:PORT (unset: auto)",
        panel=_SWEEP,
        metavar="ADDRESS",
    )
    workers: int | None = setting(
        None,
        "worker processes: sweep --engine local's, and those verifying a round's drafts (unset: one per CPU)",
        1,
        panel=_SWEEP,
    )


def _kind(annotation: Any) -> type:
    """The kind a field's type stands for: `float | None` is a float that may be unset, `tuple[str, ...]` names."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        (annotation,) = (arg for arg in typing.get_args(annotation) if arg is not type(None))
    origin = typing.get_origin(annotation)
    return origin if origin is not None else annotation


def _specs() -> tuple[SettingSpec, ...]:
    hints = typing.get_type_hints(SettingValues)
    return tuple(
        SettingSpec(name=f.name, kind=_kind(hints[f.name]), default=f.default, **f.metadata[_SPEC])
        for f in fields(SettingValues)
    )


SPECS: tuple[SettingSpec, ...] = _specs()
SPEC_BY_NAME = {spec.name: spec for spec in SPECS}

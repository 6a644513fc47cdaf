"""`coderefine scan`: profile the project in the sandbox and rank its functions (validation first)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coderefine.errors import InputFileNotFound, NoTestsFound, ScanFailed, UsageError
from coderefine.evaluation.project import ROOT_MARKERS, find_root
from coderefine.evaluation.workspace import IGNORED_DIRS
from coderefine.sandboxes.base import refuse_secrets
from coderefine.sandboxes.registry import make_sandbox
from coderefine.settings import Settings
from coderefine.sweep.profiling import ProfileJob, parse_command, profile_project
from coderefine.sweep.ranking import ScanEntry, rank


@dataclass(frozen=True)
class ScanOptions:
    paths: tuple[Path, ...]  # () : the whole project
    settings: Settings
    tests: Path | None = None
    command: str | None = None
    root: Path | None = None
    pass_env: tuple[str, ...] = ()


@dataclass(frozen=True)
class ScanResult:
    root: Path
    paths: tuple[str, ...]  # relative to root
    workload: str  # "tests" or the command
    tests_passed: int | None
    total_seconds: float  # profiled own time of everything that ran (the shares' denominator)
    wall_seconds: float
    entries: tuple[ScanEntry, ...]
    sandbox: str
    coverage_method: str
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": str(self.root),
            "paths": list(self.paths),
            "workload": self.workload,
            "tests_passed": self.tests_passed,
            "total_seconds": round(self.total_seconds, 6),
            "wall_seconds": round(self.wall_seconds, 3),
            "sandbox": self.sandbox,
            "coverage_method": self.coverage_method,
            "warnings": list(self.warnings),
            "functions": [entry.to_dict() for entry in self.entries],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScanResult:
        return cls(
            root=Path(data["root"]),
            paths=tuple(data["paths"]),
            workload=data["workload"],
            tests_passed=data["tests_passed"],
            total_seconds=data["total_seconds"],
            wall_seconds=data["wall_seconds"],
            entries=tuple(ScanEntry.from_dict(e) for e in data["functions"]),
            sandbox=data["sandbox"],
            coverage_method=data["coverage_method"],
            warnings=tuple(data["warnings"]),
        )


def project_root(paths: tuple[Path, ...], root: Path | None) -> Path:
    if root is not None:
        root = root.expanduser().resolve()
        if not root.is_dir():
            raise InputFileNotFound(f"--root {root}: no such folder")
        return root
    start = paths[0].resolve() if paths else Path.cwd().resolve()
    folder = start if start.is_dir() else start.parent
    if any((folder / marker).exists() for marker in ROOT_MARKERS):
        return folder
    return find_root(start if start.is_file() else folder / "_")


def _relative_paths(paths: tuple[Path, ...], root: Path) -> tuple[str, ...]:
    found = []
    for path in paths:
        resolved = path.expanduser().resolve()
        if not resolved.exists():
            raise InputFileNotFound(f"{path}: no such file or folder")
        if resolved != root and root not in resolved.parents:
            raise UsageError(f"{path} is outside the project root {root}; pass --root")
        found.append(resolved.relative_to(root).as_posix() or ".")
    return tuple(found)


def _has_tests(root: Path) -> bool:
    for path in root.rglob("*.py"):
        if IGNORED_DIRS & set(path.relative_to(root).parts):
            continue
        if path.name.startswith("test_") or path.stem.endswith("_test"):
            return True
    return False


def validate(options: ScanOptions) -> tuple[Path, tuple[str, ...], tuple[str, ...], tuple[str, ...] | None]:
    """Root, paths, pytest arguments and the workload command, checked before any sandbox starts."""
    refuse_secrets(options.pass_env)
    if options.tests is not None and options.command is not None:
        raise UsageError("--tests and --command choose the workload to profile: give one of them")
    root = project_root(options.paths, options.root)
    paths = _relative_paths(options.paths, root)
    command = parse_command(options.command) if options.command is not None else None
    if command is not None and command[0] != "-m" and not (root / command[0]).is_file():
        raise InputFileNotFound(f"--command: {command[0]}: no such file in the project root {root}")
    tests: tuple[str, ...] = ()
    if options.tests is not None:
        tests = _relative_paths((options.tests,), root)
    elif command is None and not _has_tests(root):
        raise NoTestsFound(f"no tests found under {root} (looked for test_*.py and *_test.py); pass --tests PATH")
    return root, paths, tests, command


def _read(root: Path) -> Any:
    def read(relative: str) -> str | None:
        try:
            return (root / relative).read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError):
            return None

    return read


def run_scan(options: ScanOptions) -> ScanResult:
    started = time.perf_counter()
    settings = options.settings
    root, paths, tests, command = validate(options)
    sandbox = make_sandbox(settings.sandbox, settings.image)
    job = ProfileJob(
        root=root,
        paths=paths,
        tests=tests,
        command=command,
        min_calls=max(1, settings.min_calls),
        timeout=settings.timeout,
        memory_mb=settings.memory_mb,
        pass_env=options.pass_env,
    )
    try:
        report = profile_project(job, sandbox)
    finally:
        sandbox.close()
    if report.runner_error is not None:
        raise ScanFailed(f"profiling failed: {report.runner_error}")
    if report.tests is not None and report.tests.stops_the_run:
        tests_run = report.tests
        first = tests_run.failures[0] if tests_run.failures else None
        detail = f" ({first.nodeid}: {first.message.strip().splitlines()[0][:200] if first.message else ''})"
        what = "no test passed" if not tests_run.failed else f"{tests_run.failed} failing"
        raise ScanFailed(f"the project's tests do not pass under the profiler: {what}{detail if first else ''}")
    if report.command_exit not in (None, 0):
        tail = report.command_output.strip().splitlines()[-1:] or [""]
        raise ScanFailed(f"--command exited with {report.command_exit}: {tail[0][:200]}")
    warnings = []
    if report.coverage_error is not None:
        warnings.append(report.coverage_error)
    if command is not None:
        warnings.append("profiled a workload command: each refinement still needs tests that call its function")
    entries = rank(
        report.functions,
        report.total_seconds,
        _read(root),
        min_calls=settings.min_calls,
        min_coverage=settings.min_coverage,
    )
    return ScanResult(
        root=root,
        paths=paths,
        workload="tests" if command is None else "python " + " ".join(command),
        tests_passed=report.tests.passed if report.tests is not None else None,
        total_seconds=report.total_seconds,
        wall_seconds=time.perf_counter() - started,
        entries=entries,
        sandbox=sandbox.name,
        coverage_method=report.coverage_method,
        warnings=tuple(warnings),
    )

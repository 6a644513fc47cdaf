"""`--trace DIR`: save every request and answer as JSON, and what is needed to replay the run.

    DIR/run.json            the run: task, file, function, tests, root and the settings that steer the loop
    DIR/001-generate.json   {"index", "role", "provider", "request": {"messages", "parameters",
                             "omitted_attempts"}, "reply": {"content", "finish_reason", "usage", "cached",
                             "seconds", "reasoning" (a reasoning model's thinking sent apart, if any)}}
    DIR/002-feedback.json   ... (a failed request is saved too, with "error" instead of "reply"; with
                            --drafts N each draft of a step is a file of its own)
    DIR/script.json         {"generate": [reply, ...], "feedback": [...], "refine": [...]}

`coderefine replay DIR` reruns the run from run.json with the scripted provider on script.json; the
same answers come back without a model (`--provider scripted --script DIR/script.json` does the same
for any file).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coderefine.errors import BadScript, CoderefineError
from coderefine.providers.base import ModelReply, ModelRequest, Provider, complete_drafts
from coderefine.records import Role
from coderefine.refine.options import RunOptions
from coderefine.writeback import write_text_atomically

RUN_RECORD = "run.json"
SCRIPT = "script.json"
# The settings a replay must repeat to take the same path through the loop.
REPLAYED_SETTINGS = (
    "max_iterations",
    "patience",
    "max_calls",
    "max_tokens",
    "drafts",
    "context_tokens",
    "min_speedup",
    "timeout",
    "memory_mb",
    "timing_pairs",
    "timing_budget",
    "timing_value_seconds",
    "rel_tol",
    "abs_tol",
    "unordered",
    "min_calls",
    "min_coverage",
    "allow_insufficient_tests",
    "allow",
    "gen_inputs",
    "boundary_inputs",
)


def write_run_record(folder: Path, options: RunOptions, project_root: Path, file_sha256: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    record = {
        "task": options.task,
        "file": str(options.file.resolve()),
        "file_sha256": file_sha256,
        "function": options.function,
        "tests": str(options.tests.resolve()) if options.tests else None,
        "root": str(project_root),
        "pass_env": list(options.pass_env),
        "bench": options.bench,
        "settings": {name: value for name, value in options.settings.as_dict().items() if name in REPLAYED_SETTINGS},
    }
    write_text_atomically(folder / RUN_RECORD, json.dumps(record, indent=2) + "\n")


class TracingProvider:
    """Wraps a provider; records each exchange as it happens, so an interrupted run keeps its trace."""

    def __init__(self, inner: Provider, folder: Path) -> None:
        self.inner = inner
        self.name = inner.name
        self.folder = folder
        self.count = 0
        self.script: dict[str, list[dict[str, Any]]] = {role.value: [] for role in Role}
        folder.mkdir(parents=True, exist_ok=True)

    def complete(self, request: ModelRequest) -> ModelReply:
        return self._traced(request, lambda: [self.inner.complete(request)])[0]

    def complete_drafts(self, request: ModelRequest) -> list[ModelReply]:
        """Each draft is saved as an exchange of its own, so a replay with the same --drafts takes them again."""
        return self._traced(request, lambda: complete_drafts(self.inner, request))

    def _traced(self, request: ModelRequest, ask: Callable[[], list[ModelReply]]) -> list[ModelReply]:
        try:
            replies = ask()
        except CoderefineError as exc:
            self._record(request, None, exc.message)
            raise
        for reply in replies:
            self._record(request, reply, None)
        return replies

    def _record(self, request: ModelRequest, reply: ModelReply | None, error: str | None) -> None:
        self.count += 1
        record: dict[str, Any] = {
            "index": self.count,
            "role": request.role.value,
            "provider": self.inner.name,
            "request": {"messages": request.messages, "omitted_attempts": list(request.omitted_attempts)},
        }
        if reply is None:
            record["error"] = error
            self._save(record, request.role)
            return
        record["request"]["parameters"] = reply.parameters
        usage = {"prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens}
        if reply.reasoning_tokens:
            usage["reasoning_tokens"] = reply.reasoning_tokens
        answer: dict[str, Any] = {"content": reply.content, "finish_reason": reply.finish_reason, "usage": usage}
        if reply.reasoning:
            answer["reasoning"] = reply.reasoning
        record["reply"] = {
            **answer,
            "cached": reply.cached,
            "usage_estimated": reply.usage_estimated,
            "seconds": round(reply.seconds, 3),
        }
        self._save(record, request.role)
        self.script[request.role.value].append(answer)
        write_text_atomically(self.folder / SCRIPT, json.dumps(self.script, indent=2) + "\n")

    def _save(self, record: dict[str, Any], role: Role) -> None:
        write_text_atomically(self.folder / f"{self.count:03d}-{role.value}.json", json.dumps(record, indent=2) + "\n")


@dataclass(frozen=True)
class RunRecord:
    task: str
    file: Path
    function: str | None
    tests: Path | None
    root: Path | None
    pass_env: tuple[str, ...]
    settings: dict[str, Any]
    script: Path
    file_sha256: str | None  # the file as it was traced: a replay on a changed file may diverge
    bench: str | None = None


def read_run_record(folder: Path) -> RunRecord:
    """What `coderefine replay DIR` needs; a folder that is not a trace gets one line saying why."""
    if not folder.is_dir():
        raise BadScript(f"{folder}: no such trace folder")
    path = folder / RUN_RECORD
    if not path.is_file():
        raise BadScript(f"{folder}: not a trace folder ({RUN_RECORD} is missing; was it made with --trace?)")
    if not (folder / SCRIPT).is_file():
        raise BadScript(f"{folder}: the trace has no {SCRIPT} (the run made no model call)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        settings = data.get("settings", {})
        if not isinstance(settings, dict) or not set(settings) <= set(REPLAYED_SETTINGS):
            raise ValueError("settings")
        return RunRecord(
            task=str(data["task"]),
            file=Path(data["file"]),
            function=data.get("function"),
            tests=Path(data["tests"]) if data.get("tests") else None,
            root=Path(data["root"]) if data.get("root") else None,
            pass_env=tuple(data.get("pass_env", ())),
            settings=settings,
            script=folder / SCRIPT,
            file_sha256=data.get("file_sha256"),
            bench=data.get("bench"),
        )
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError):
        raise BadScript(f"{path}: not a run record coderefine wrote") from None

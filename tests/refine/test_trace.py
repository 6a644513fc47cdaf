"""`--trace DIR`: every exchange saved as it happens, a script that replays the run, and the run record."""

from __future__ import annotations

import json

import pytest

from coderefine.errors import BadScript, ProviderError
from coderefine.providers.base import ModelReply, ModelRequest, RunContext
from coderefine.providers.scripted import ScriptedProvider
from coderefine.records import Role
from coderefine.refine.options import RunOptions
from coderefine.refine.trace import REPLAYED_SETTINGS, TracingProvider, read_run_record, write_run_record
from coderefine.settings import resolve_settings


class Answers:
    """A provider that answers from a list and fails when told to (a model endpoint, without the network)."""

    name = "answers"

    def __init__(self, *replies: ModelReply | Exception) -> None:
        self.replies = list(replies)

    def complete(self, request: ModelRequest) -> ModelReply:
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply


def request(role: Role, text: str) -> ModelRequest:
    context = RunContext("optimize", "mod.py", "x = 1\n", ("f",), None, False, ())
    return ModelRequest(role, [{"role": "user", "content": text}], context, omitted_attempts=(0,))


def test_each_exchange_is_saved_and_the_script_replays_the_answers(tmp_path):
    generate = ModelReply("```python\nx = 2\n```", 30, 7, "stop", parameters={"model": "m", "temperature": 0.2})
    feedback = ModelReply("VERDICT: STOP", 40, 3, "stop", cached=True)
    tracing = TracingProvider(Answers(generate, feedback), tmp_path / "trace")
    assert tracing.complete(request(Role.GENERATE, "make it faster")) is generate
    assert tracing.complete(request(Role.FEEDBACK, "review it")) is feedback

    first = json.loads((tmp_path / "trace" / "001-generate.json").read_text())
    assert first == {
        "index": 1,
        "role": "generate",
        "provider": "answers",
        "request": {
            "messages": [{"role": "user", "content": "make it faster"}],
            "omitted_attempts": [0],
            "parameters": {"model": "m", "temperature": 0.2},
        },
        "reply": {
            "content": "```python\nx = 2\n```",
            "finish_reason": "stop",
            "usage": {"prompt_tokens": 30, "completion_tokens": 7},
            "cached": False,
            "usage_estimated": False,
            "seconds": 0.0,
        },
    }
    assert json.loads((tmp_path / "trace" / "002-feedback.json").read_text())["reply"]["cached"] is True

    replay = ScriptedProvider(tmp_path / "trace" / "script.json")
    again = replay.complete(request(Role.GENERATE, "anything"))
    assert (again.content, again.prompt_tokens, again.completion_tokens, again.finish_reason) == (
        generate.content,
        30,
        7,
        "stop",
    )
    assert replay.complete(request(Role.FEEDBACK, "anything")).content == "VERDICT: STOP"


def test_a_failed_request_is_saved_with_its_error_and_still_raised(tmp_path):
    tracing = TracingProvider(Answers(ProviderError("endpoint failed with HTTP 500")), tmp_path)
    with pytest.raises(ProviderError):
        tracing.complete(request(Role.GENERATE, "make it faster"))
    saved = json.loads((tmp_path / "001-generate.json").read_text())
    assert saved["error"] == "endpoint failed with HTTP 500" and "reply" not in saved
    assert not (tmp_path / "script.json").exists()  # nothing to replay


def test_the_run_record_round_trips(tmp_path):
    module = tmp_path / "mod.py"
    module.write_text("x = 1\n")
    settings = resolve_settings({"max_iterations": 2}, tmp_path, environ={})
    options = RunOptions(
        task="optimize", file=module, settings=settings, function="f", pass_env=("HOME",), bench="b.py::run"
    )
    trace = tmp_path / "trace"
    write_run_record(trace, options, tmp_path, "ab" * 32)
    (trace / "script.json").write_text("{}")
    record = read_run_record(trace)
    assert (record.task, record.file, record.function, record.tests) == ("optimize", module.resolve(), "f", None)
    assert record.root == tmp_path and record.pass_env == ("HOME",) and record.bench == "b.py::run"
    assert record.file_sha256 == "ab" * 32 and record.script == trace / "script.json"
    assert set(record.settings) == set(REPLAYED_SETTINGS) and record.settings["max_iterations"] == 2


def test_what_is_not_a_trace_gets_one_line_saying_why(tmp_path):
    with pytest.raises(BadScript, match="no such trace folder"):
        read_run_record(tmp_path / "missing")
    with pytest.raises(BadScript, match=r"not a trace folder \(run.json is missing; was it made with --trace\?\)"):
        read_run_record(tmp_path)
    (tmp_path / "run.json").write_text(json.dumps({"task": "optimize", "file": "m.py"}))
    with pytest.raises(BadScript, match=r"the trace has no script\.json"):
        read_run_record(tmp_path)
    (tmp_path / "script.json").write_text("{}")
    assert read_run_record(tmp_path).task == "optimize"
    (tmp_path / "run.json").write_text(json.dumps({"task": "optimize", "file": "m.py", "settings": {"api_key": 1}}))
    with pytest.raises(BadScript, match="not a run record coderefine wrote"):
        read_run_record(tmp_path)
    (tmp_path / "run.json").write_text("[1, 2")
    with pytest.raises(BadScript, match="not a run record coderefine wrote"):
        read_run_record(tmp_path)

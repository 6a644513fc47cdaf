"""What real endpoints send, against the real `openai` client and the loopback server (tests/openai_server.py):
streamed answers slower than the request timeout, stalls, reasoning fields, `n` honoured or ignored, servers
that refuse or ignore streaming, and per-draft caching. In-process, a second or so each."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from coderefine.errors import ProviderError
from coderefine.providers.base import ModelRequest, RunContext
from coderefine.providers.cache import ResponseCache
from coderefine.providers.openai_provider import OpenAIConfig, OpenAIProvider
from coderefine.records import Role
from tests.openai_server import OpenAIServer, Reply, fault

KEY = "sk-test-0123456789abcdef"
CODE = "```python\ndef total(n):\n    return n * (n - 1) // 2 if n > 0 else 0\n```"
CONTEXT = RunContext("optimize", "mod.py", "def total(n):\n    return 0\n", ("total",), None, False, ())


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    server = OpenAIServer(api_key=KEY).start()
    yield server
    server.stop()


def provider(server: OpenAIServer, cache: Path | None = None, **config) -> OpenAIProvider:
    settings = {"request_timeout": 5.0, "max_retries": 0, **config}
    return OpenAIProvider(
        OpenAIConfig("test-model", server.url, KEY, "OPENAI_API_KEY", **settings),
        ResponseCache(cache) if cache is not None else None,
    )


def request(drafts: int = 1, progress: list[int] | None = None) -> ModelRequest:
    messages = [{"role": "user", "content": "make it faster"}]
    told = progress.append if progress is not None else None
    return ModelRequest(Role.GENERATE, messages, CONTEXT, drafts=drafts, on_progress=told)


def test_a_streamed_answer_slower_than_the_timeout_arrives_whole_and_shows_progress(server):
    # 9 chunks 0.2 s apart: 1.8 s in all, over the 1 s timeout, but never 1 s of silence.
    server.queue(Reply(CODE, chunk_delay=0.2))
    progress: list[int] = []
    reply = provider(server, request_timeout=1.0).complete(request(progress=progress))
    assert reply.content == CODE and reply.finish_reason == "stop"
    assert server.chat_requests()[0].body["stream"] is True
    assert server.chat_requests()[0].body["stream_options"] == {"include_usage": True}
    assert reply.prompt_tokens == 100 and reply.completion_tokens == 20 and not reply.usage_estimated
    assert progress and progress == sorted(progress) and progress[-1] >= 5  # tokens so far, growing
    assert reply.seconds >= 1.5


def test_the_same_answer_unstreamed_is_lost_to_the_timeout(server):
    server.queue(Reply(CODE, delay=1.8))
    with pytest.raises(ProviderError, match=r"did not answer the generate request within 1s"):
        provider(server, request_timeout=1.0, stream=False).complete(request())


def test_a_stalled_stream_ends_with_one_line(server):
    server.queue(Reply(CODE, stall_after=3, stall=2.0))
    with pytest.raises(ProviderError) as failed:
        provider(server, request_timeout=0.5).complete(request())
    message = failed.value.message
    assert "stalled: no token for 0.5s during the generate request (after 3 tokens in" in message
    assert "\n" not in message and server.url.removesuffix("/v1") in message


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_thinking_sent_apart_is_kept_apart_and_counted(server, stream, field):
    thinking = "Draft: ```python\ndef total(n):\n    return sum(range(n))\n``` but the closed form is better."
    server.queue(Reply(CODE, reasoning=thinking, reasoning_field=field, reasoning_tokens=15))
    reply = provider(server, stream=stream).complete(request())
    assert reply.content == CODE and reply.reasoning == thinking
    assert reply.reasoning_tokens == 15 and reply.completion_tokens == 20
    assert reply.split().answer == CODE and "sum(range(n))" in reply.split().thinking


def test_thinking_tokens_are_estimated_when_the_server_reports_none(server):
    server.queue(Reply("<think>" + "hmm " * 100 + "</think>" + CODE, usage=None))
    reply = provider(server).complete(request())
    assert reply.usage_estimated and reply.reasoning_tokens >= 100
    assert reply.completion_tokens >= reply.reasoning_tokens


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
def test_drafts_come_in_one_request_where_n_is_honoured(server, stream):
    server.queue(*(Reply(CODE.replace("0\n", f"{k}\n")) for k in range(3)))
    replies = provider(server, stream=stream).complete_drafts(request(drafts=3))
    assert len(server.chat_requests()) == 1 and server.chat_requests()[0].body["n"] == 3
    assert [r.content.count(f"else {k}") for k, r in enumerate(replies)] == [1, 1, 1]
    # one usage for the request: the prompt once, the completions shared out
    assert [r.prompt_tokens for r in replies] == [100, 0, 0] and sum(r.completion_tokens for r in replies) == 60


def test_drafts_are_asked_again_where_n_is_ignored(server):
    server.honour_n = False  # llama.cpp's server and Ollama answer one choice whatever n says
    server.queue(*(Reply(CODE) for _ in range(5)))
    model = provider(server)
    assert len(model.complete_drafts(request(drafts=3))) == 3
    bodies = [r.body for r in server.chat_requests()]
    assert [b.get("n") for b in bodies] == [3, None, None]  # learnt after the first: not sent again
    model.complete_drafts(request(drafts=2))  # and remembered
    assert [r.body.get("n") for r in server.chat_requests()][3:] == [None, None]


def test_a_server_refusing_streaming_is_asked_for_whole_answers_with_a_warning(server):
    server.refuse_streaming = True
    server.queue(CODE, CODE)
    model = provider(server)
    assert model.complete(request()).content == CODE
    assert model.complete(request()).content == CODE
    assert [r.body.get("stream", False) for r in server.chat_requests()] == [True, True, False, False]
    assert any("refused streaming" in w and "request_timeout" in w for w in model.warnings)


def test_a_server_ignoring_stream_is_read_as_a_whole_answer(server):
    server.ignore_streaming = True
    server.queue(Reply(CODE, reasoning="thought"))
    model = provider(server)
    reply = model.complete(request())
    assert reply.content == CODE and reply.reasoning == "thought" and len(server.chat_requests()) == 1
    assert any("whole body" in w for w in model.warnings) and model.streaming is False


def test_each_draft_is_cached_on_its_own(server, tmp_path):
    server.queue(*(Reply(CODE.replace("0\n", f"{k}\n")) for k in range(3)))
    first = provider(server, tmp_path).complete_drafts(request(drafts=3))
    again = provider(server, tmp_path).complete_drafts(request(drafts=3))
    assert len(server.chat_requests()) == 1 and all(r.cached for r in again)
    assert [r.content for r in again] == [r.content for r in first]
    # one draft per round reuses the first draft's entry
    assert provider(server, tmp_path).complete(request()).content == first[0].content


def test_a_stream_that_ends_empty_is_asked_again_whole_to_learn_why(server):
    # llama.cpp's server answers 200, then fails (a prompt longer than its context) and ends the stream.
    server.queue(Reply(empty_stream=True), fault(400, "Requested tokens (2636) exceed context window of 2560"))
    with pytest.raises(ProviderError) as failed:
        provider(server).complete(request())
    assert "Requested tokens (2636) exceed context window of 2560" in failed.value.message
    assert "ended before the first token" in failed.value.message and len(server.chat_requests()) == 2
    server.queue(Reply(empty_stream=True), CODE)  # a glitch: the whole answer comes
    assert provider(server).complete(request()).content == CODE

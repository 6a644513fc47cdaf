"""The `openai` provider: any endpoint that speaks the OpenAI chat completions API.

OpenAI itself, Azure OpenAI's v1 endpoint, Ollama (`http://localhost:11434/v1`), vLLM
(`http://localhost:8000/v1`), llama.cpp's server, LM Studio (`http://localhost:1234/v1`): the same
client, a different base URL. Retries with backoff on 429, 5xx and connection errors are the client's
own (`max_retries`, honouring Retry-After); what is left after them becomes one line for the user:
401/403/404 mean the settings are wrong (exit 15), anything else that the endpoint failed (exit 12).
"""

from __future__ import annotations

import json
import socket
import time
from dataclasses import dataclass, field, replace
from typing import Any

import openai
from openai.types.chat import ChatCompletion

from coderefine.errors import ConfigError, ProviderError, ProviderRejected
from coderefine.providers.base import ModelReply, ModelRequest, estimate_tokens
from coderefine.providers.cache import ResponseCache, cache_key
from coderefine.providers.thinking import split_thinking

OPENAI_BASE_URL = "https://api.openai.com/v1"
# Local servers ignore the key but the client insists on one.
_UNUSED_KEY = "unused"


@dataclass(frozen=True)
class OpenAIConfig:
    model: str
    base_url: str | None  # None: OpenAI's own endpoint
    api_key: str | None
    api_key_env: str  # the variable the key came from, for messages
    temperature: float | None = None
    seed: int | None = None
    request_timeout: float = 120.0  # streamed: the longest silence between two chunks
    max_retries: int = 2
    stream: bool = True

    @property
    def endpoint(self) -> str:
        return (self.base_url or OPENAI_BASE_URL).rstrip("/")

    def parameters(self) -> dict[str, Any]:
        """Sampling parameters sent with every request (only those the user set)."""
        parameters: dict[str, Any] = {}
        if self.temperature is not None:
            parameters["temperature"] = self.temperature
        if self.seed is not None:
            parameters["seed"] = self.seed
        return parameters


class OpenAIProvider:
    name = "openai"

    def __init__(self, config: OpenAIConfig, cache: ResponseCache | None = None) -> None:
        if not config.api_key and config.base_url is None:
            raise ConfigError(
                f"--provider openai needs an API key: set {config.api_key_env} (or name another variable with "
                "api_key_env), or point base_url at a local server"
            )
        self.config = config
        self.cache = cache
        self.warnings: list[str] = []
        self.streaming = config.stream  # until the server shows it cannot
        self.stream_usage = True  # ask for usage in the stream's last chunk, until the server refuses
        self.honours_n: bool | None = None  # None: not known yet whether `n` > 1 gets n choices
        self.client = openai.OpenAI(
            api_key=config.api_key or _UNUSED_KEY,
            base_url=config.endpoint,
            timeout=config.request_timeout,
            max_retries=config.max_retries,
        )

    @property
    def description(self) -> str:
        return f"model {self.config.model} at {self.config.endpoint}"

    def check(self) -> None:
        """Fail fast, before the baseline's test run, on a wrong key or an endpoint that is not there.

        Lists the endpoint's models: 401/403 and connection failures end the run; a server without the
        listing (404) is not an error; a model missing from the list is only a warning, because some
        endpoints (Azure deployments, proxies) accept names they do not list.
        """
        try:
            listing = self.client.with_options(timeout=min(self.config.request_timeout, 30.0)).models.list()
            names = [model.id for model in listing.data]
        except openai.NotFoundError:
            return
        except openai.APIError as exc:
            raise self._error(exc, "listing models") from None
        except (ValueError, TypeError, AttributeError):
            return  # an odd listing says nothing about the chat endpoint
        if names and self.config.model not in names:
            shown = ", ".join(sorted(names)[:8]) + (", ..." if len(names) > 8 else "")
            self.warnings.append(
                f"model '{self.config.model}' is not among the models {self.config.endpoint} lists ({shown}); "
                "trying it anyway"
            )

    def complete(self, request: ModelRequest) -> ModelReply:
        return self.complete_drafts(replace(request, drafts=1))[0]

    def complete_drafts(self, request: ModelRequest) -> list[ModelReply]:
        """`request.drafts` answers: one request with the API's `n` where the server honours it, else the
        missing ones asked again. Each draft is cached on its own (the first under the key a single answer
        has, so a run with one draft per round reuses it)."""
        wanted = max(1, request.drafts)
        parameters = self.config.parameters()
        keys = [
            cache_key(
                self.config.endpoint,
                self.config.model,
                request.messages,
                parameters if number == 0 else {**parameters, "draft": number},
            )
            for number in range(wanted)
        ]
        replies: dict[int, ModelReply] = {}
        if self.cache is not None:
            for number, key in enumerate(keys):
                hit = self.cache.get(key)
                if hit is not None:
                    replies[number] = hit
        missing = [number for number in range(wanted) if number not in replies]
        while missing:
            got = self._ask(request, len(missing), parameters)
            for number, reply in zip(missing, got, strict=False):
                replies[number] = reply
                self._save(keys[number], reply)
            missing = missing[len(got) :]
        return [replies[number] for number in range(wanted)]

    def _save(self, key: str, reply: ModelReply) -> None:
        if self.cache is not None and not self.cache.put(key, reply):
            note = f"cannot write the response cache in {self.cache.folder}; answers are not saved"
            if note not in self.warnings:
                self.warnings.append(note)

    def _ask(self, request: ModelRequest, wanted: int, parameters: dict[str, Any]) -> list[ModelReply]:
        """One request for up to `wanted` answers (at least one comes back, or an error is raised)."""
        arguments: dict[str, Any] = {"model": self.config.model, "messages": request.messages, **parameters}
        if wanted > 1 and self.honours_n is not False:
            arguments["n"] = wanted
        what = f"the {request.role.value} request"
        started = time.monotonic()
        try:
            if self.streaming:
                try:
                    replies = self._streamed(arguments, request, what, started)
                except _EmptyStream:
                    # A stream that ended before its first token: servers that fail after answering 200
                    # (llama.cpp's, on a prompt longer than its context) say why only when asked whole.
                    replies = self._whole(arguments, request, what)
            else:
                replies = self._replies(self.client.chat.completions.create(**arguments), request.messages)
        except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
            # Servers that refuse `n`, streaming or `stream_options` say so with 400/422: ask again without
            # what they refused, and remember it; anything else they refuse is the request's own fault.
            if "n" in arguments and self.honours_n is None:
                self.honours_n = False
                return self._ask(request, wanted, parameters)
            if self.streaming:
                self._stop_streaming(f"refused streaming ({_detail(exc).removeprefix(': ') or exc.status_code})")
                return self._ask(request, wanted, parameters)
            raise self._error(exc, what) from None
        except openai.APIError as exc:
            raise self._error(exc, what) from None
        except ValueError as exc:  # a 200 whose body is not JSON (a proxy's HTML page, a broken server)
            raise ProviderError(
                f"{self.config.endpoint} answered {what} with a body that is not JSON "
                f"({type(exc).__name__}); is base_url an OpenAI-compatible endpoint?"
            ) from None
        if wanted > 1 and "n" in arguments:
            self.honours_n = len(replies) >= wanted
        seconds = (time.monotonic() - started) / len(replies)
        sent = {"model": self.config.model, **parameters}
        return [replace(reply, seconds=seconds, parameters=sent) for reply in replies]

    def _whole(self, arguments: dict[str, Any], request: ModelRequest, what: str) -> list[ModelReply]:
        """The request asked again, unstreamed, after a stream that ended empty: its answer, or the
        server's own error for it (not taken for a refusal to stream)."""
        try:
            return self._replies(self.client.chat.completions.create(**arguments), request.messages)
        except openai.APIError as exc:
            error = self._error(exc, what)
        raise ProviderError(f"{error.message} (its streamed answer had ended before the first token)")

    def _stop_streaming(self, why: str) -> None:
        self.streaming = False
        self.warnings.append(
            f"{self.config.endpoint} {why}; answers are asked for whole, and request_timeout "
            f"({self.config.request_timeout:g}s) bounds each one"
        )

    def _streamed(
        self, arguments: dict[str, Any], request: ModelRequest, what: str, started: float
    ) -> list[ModelReply]:
        """A streamed answer, gathered chunk by chunk: the request timeout bounds the silence between two
        chunks, not the whole answer, so a slow local model is not cut off; the tokens so far go to
        `request.on_progress`. A server that answers a streamed request with a plain JSON body is read as
        such (and not asked to stream again)."""
        options = {"stream_options": {"include_usage": True}} if self.stream_usage else {}
        try:
            stream = self.client.chat.completions.create(**arguments, stream=True, **options)
        except (openai.BadRequestError, openai.UnprocessableEntityError):
            if not self.stream_usage:
                raise
            self.stream_usage = False  # older servers reject stream_options: stream without it
            stream = self.client.chat.completions.create(**arguments, stream=True)
        response = getattr(stream, "response", None)
        kind = str(getattr(response, "headers", {}).get("content-type", "text/event-stream"))
        if "event-stream" not in kind and response is not None:
            self._stop_streaming("answered a streamed request with a whole body")
            return self._replies(_completion(response.read()), request.messages)
        try:
            return self._gather(stream, request, {}, what, started)
        finally:
            close = getattr(stream, "close", None)
            if callable(close):
                close()  # a stalled or broken stream must not keep its connection

    def _gather(
        self, stream: Any, request: ModelRequest, gathered: dict[int, _Gathered], what: str, started: float
    ) -> list[ModelReply]:
        usage: Any = None
        chunks = 0
        told = 0.0
        try:
            for chunk in stream:
                usage = getattr(chunk, "usage", None) or usage
                for choice in getattr(chunk, "choices", None) or ():
                    part = gathered.setdefault(int(getattr(choice, "index", 0) or 0), _Gathered())
                    chunks += part.take(choice)
                now = time.monotonic()
                if request.on_progress is not None and now - told >= _PROGRESS_EVERY:
                    told = now
                    request.on_progress(chunks)
        except openai.APITimeoutError:
            raise ProviderError(
                f"{self.config.endpoint} stalled: no token for {self.config.request_timeout:g}s during {what} "
                f"(after {chunks} tokens in {time.monotonic() - started:.0f}s); the answer so far is lost. "
                "Raise request_timeout for a model this slow"
            ) from None
        if not gathered:
            raise _EmptyStream(what)
        return self._gathered(gathered, usage, request.messages)

    def _gathered(self, gathered: dict[int, _Gathered], usage: Any, messages: list[dict[str, str]]) -> list[ModelReply]:
        parts = [gathered[index] for index in sorted(gathered)]
        return _with_usage([(part.content(), part.reasoning(), part.finish_reason) for part in parts], usage, messages)

    def _replies(self, completion: Any, messages: list[dict[str, str]]) -> list[ModelReply]:
        try:
            choices = list(completion.choices)
            choices[0].message  # noqa: B018  (a choice without a message is no chat completion)
        except (AttributeError, IndexError, TypeError):
            raise ProviderError(
                f"{self.config.endpoint} answered with JSON that is not a chat completion (no choices[0].message)"
            ) from None
        answers = []
        for choice in choices:
            message = choice.message
            content = getattr(message, "content", None)
            if not isinstance(content, str):
                refusal = getattr(message, "refusal", None)
                content = f"(the model refused: {refusal})" if refusal else ""
            answers.append((content, _reasoning_of(message), getattr(choice, "finish_reason", None)))
        return _with_usage(answers, getattr(completion, "usage", None), messages)

    def _error(self, exc: openai.APIError, what: str) -> ProviderError | ProviderRejected:
        endpoint = self.config.endpoint
        retries = self.config.max_retries
        after = f" after {retries} retr{'y' if retries == 1 else 'ies'}" if retries else ""
        detail = _detail(exc)
        if isinstance(exc, openai.AuthenticationError):
            return ProviderRejected(
                f"{endpoint} rejected the API key from {self.config.api_key_env} (401){detail}; check the key"
            )
        if isinstance(exc, openai.PermissionDeniedError):
            return ProviderRejected(
                f"{endpoint} refused access (403) to model '{self.config.model}'{detail}; check the key's permissions"
            )
        if isinstance(exc, openai.NotFoundError):
            return ProviderRejected(
                f"{endpoint}: {what} got 404{detail}; check the model name '{self.config.model}' and the base URL "
                "(OpenAI-compatible servers usually end in /v1)"
            )
        if isinstance(exc, openai.RateLimitError):
            return ProviderError(f"{endpoint} kept rate-limiting {what} (429){after}{detail}; try again later")
        if isinstance(exc, openai.APIStatusError):
            return ProviderError(f"{endpoint} failed {what} with HTTP {exc.status_code}{after}{detail}")
        if isinstance(exc, openai.APITimeoutError):
            return ProviderError(
                f"{endpoint} did not answer {what} within {self.config.request_timeout:g}s{after}; "
                "raise request_timeout for slow models"
            )
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc.__context__
            reason = f": {cause}" if cause else ""
            if _never_connected(exc):
                return ProviderError(f"cannot connect to {endpoint}{after}{reason}")
            # The server took the request and then dropped the connection: nothing is wrong with the address,
            # the server itself failed (a local server that crashed or ran out of memory mid-answer).
            return ProviderError(
                f"{endpoint} closed the connection during {what} without answering{after}{reason}; "
                "check the server's log (it may have crashed)"
            )
        return ProviderError(
            f"{endpoint} answered {what} with something that is not a chat completion{detail or ': ' + str(exc)}"
        )


def _never_connected(exc: BaseException) -> bool:
    """Whether the request never reached the server (refused, unresolvable, unreachable), as opposed to a
    connection the server closed after taking the request."""
    seen: BaseException | None = exc
    while seen is not None:
        # By name: the HTTP layer under openai is httpx or, in newer releases, httpx2.
        if type(seen).__name__ in ("ConnectError", "ConnectTimeout"):
            return True
        if isinstance(seen, (ConnectionRefusedError, socket.gaierror)):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _detail(exc: openai.APIError) -> str:
    """The server's own explanation, shortened to fit one line."""
    body = exc.body
    message = None
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
    text = " ".join(str(message).split()) if message else ""
    if len(text) > 160:
        text = text[:157] + "..."
    return f": {text}" if text else ""


# How often a streamed answer's progress is told (seconds): often enough to see it move, not per token.
_PROGRESS_EVERY = 0.5


def _reasoning_of(message: Any) -> str:
    """A reasoning model's thinking sent apart from the answer: `reasoning_content` (DeepSeek, llama.cpp,
    vLLM) or `reasoning` (Ollama, OpenRouter, newer vLLM); extra fields the client keeps as attributes."""
    for name in ("reasoning_content", "reasoning"):
        value = getattr(message, name, None)
        if isinstance(value, str) and value:
            return value
    return ""


@dataclass
class _Gathered:
    """One choice of a streamed answer, as its chunks arrive."""

    pieces: list[str] = field(default_factory=list)
    thoughts: list[str] = field(default_factory=list)
    finish_reason: str | None = None

    def take(self, choice: Any) -> int:
        """Adds a chunk's text; 1 when it carried some (a token, as most servers stream), else 0."""
        got = 0
        delta = getattr(choice, "delta", None)
        if delta is not None:
            text = getattr(delta, "content", None)
            if isinstance(text, str) and text:
                self.pieces.append(text)
                got = 1
            thought = _reasoning_of(delta)
            if thought:
                self.thoughts.append(thought)
                got = 1
        self.finish_reason = getattr(choice, "finish_reason", None) or self.finish_reason
        return got

    def content(self) -> str:
        return "".join(self.pieces)

    def reasoning(self) -> str:
        return "".join(self.thoughts)


def _completion(body: bytes) -> ChatCompletion:
    """A plain JSON body (a server that ignored `stream`) as a chat completion; ValueError if not JSON."""
    data = json.loads(body)
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    return ChatCompletion.construct(**data)


def _with_usage(
    answers: list[tuple[str, str, str | None]], usage: Any, messages: list[dict[str, str]]
) -> list[ModelReply]:
    """Replies with their tokens. One usage covers all the choices of a request: the prompt is counted on
    the first, the completion tokens shared out by length. Without usage (some local servers), tokens are
    estimated from the text, thinking included, and marked so."""
    prompt_tokens = getattr(usage, "prompt_tokens", None)
    completion_tokens = getattr(usage, "completion_tokens", None)
    details = getattr(usage, "completion_tokens_details", None)
    reported_reasoning = getattr(details, "reasoning_tokens", None)
    estimated = not isinstance(prompt_tokens, int) or not isinstance(completion_tokens, int)
    thinking = [reasoning + split_thinking(content).thinking for content, reasoning, _ in answers]
    lengths = [estimate_tokens(content + reasoning) for content, reasoning, _ in answers]
    if estimated:
        prompt_tokens = sum(estimate_tokens(m.get("content", "")) for m in messages)
        shares = lengths
    else:
        total = max(1, sum(lengths))
        shares = [round(int(completion_tokens) * length / total) for length in lengths]
        shares[0] += int(completion_tokens) - sum(shares)
    replies = []
    for number, (content, reasoning, finish_reason) in enumerate(answers):
        if isinstance(reported_reasoning, int) and reported_reasoning and not estimated:
            thought = round(reported_reasoning * shares[number] / max(1, int(completion_tokens)))
        else:
            thought = estimate_tokens(thinking[number]) if thinking[number] else 0
        replies.append(
            ModelReply(
                content=content,
                prompt_tokens=int(prompt_tokens or 0) if number == 0 else 0,
                completion_tokens=shares[number],
                finish_reason=finish_reason,
                usage_estimated=estimated,
                reasoning=reasoning,
                reasoning_tokens=min(thought, shares[number]) if not estimated else thought,
            )
        )
    return replies


class _EmptyStream(Exception):
    """A streamed answer that ended without a single choice."""

"""The `openai` provider: any endpoint that speaks the OpenAI chat completions API.

OpenAI itself, Azure OpenAI's v1 endpoint, Ollama (`http://localhost:11434/v1`), vLLM
(`http://localhost:8000/v1`), llama.cpp's server, LM Studio (`http://localhost:1234/v1`): the same
client, a different base URL. Retries with backoff on 429, 5xx and connection errors are the client's
own (`max_retries`, honouring Retry-After); what is left after them becomes one line for the user:
401/403/404 mean the settings are wrong (exit 15), anything else that the endpoint failed (exit 12).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import openai

from coderefine.errors import ConfigError, ProviderError, ProviderRejected
from coderefine.providers.base import ModelReply, ModelRequest, estimate_tokens
from coderefine.providers.cache import ResponseCache, cache_key

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
    request_timeout: float = 120.0
    max_retries: int = 2

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
        parameters = self.config.parameters()
        key = cache_key(self.config.endpoint, self.config.model, request.messages, parameters)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                return hit
        try:
            completion = self.client.chat.completions.create(
                model=self.config.model,
                messages=request.messages,  # type: ignore[arg-type]  # plain dicts in the chat format
                **parameters,
            )
        except openai.APIError as exc:
            raise self._error(exc, f"the {request.role.value} request") from None
        except ValueError as exc:  # a 200 whose body is not JSON (a proxy's HTML page, a broken server)
            raise ProviderError(
                f"{self.config.endpoint} answered the {request.role.value} request with a body that is not JSON "
                f"({type(exc).__name__}); is base_url an OpenAI-compatible endpoint?"
            ) from None
        reply = self._reply(completion, request.messages, parameters)
        if self.cache is not None and not self.cache.put(key, reply):
            note = f"cannot write the response cache in {self.cache.folder}; answers are not saved"
            if note not in self.warnings:
                self.warnings.append(note)
        return reply

    def _reply(self, completion: Any, messages: list[dict[str, str]], parameters: dict[str, Any]) -> ModelReply:
        try:
            choice = completion.choices[0]
            message = choice.message
            content = message.content
            refusal = getattr(message, "refusal", None)
        except (AttributeError, IndexError, TypeError):
            raise ProviderError(
                f"{self.config.endpoint} answered with JSON that is not a chat completion (no choices[0].message)"
            ) from None
        if not isinstance(content, str):
            content = f"(the model refused: {refusal})" if refusal else ""
        usage = getattr(completion, "usage", None)
        prompt_tokens = getattr(usage, "prompt_tokens", None)
        completion_tokens = getattr(usage, "completion_tokens", None)
        estimated = not isinstance(prompt_tokens, int) or not isinstance(completion_tokens, int)
        if estimated:  # some local servers leave usage out: estimate, and say so
            prompt_tokens = sum(estimate_tokens(m.get("content", "")) for m in messages)
            completion_tokens = estimate_tokens(content)
        return ModelReply(
            content=content,
            prompt_tokens=int(prompt_tokens or 0),
            completion_tokens=int(completion_tokens or 0),
            finish_reason=getattr(choice, "finish_reason", None),
            usage_estimated=estimated,
            parameters={"model": self.config.model, **parameters},
        )

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
            return ProviderError(f"cannot connect to {endpoint}{after}{reason}")
        return ProviderError(
            f"{endpoint} answered {what} with something that is not a chat completion{detail or ': ' + str(exc)}"
        )


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

"""A loopback HTTP server that speaks the OpenAI chat completions API, for tests.

It serves scripted replies in order (`POST /v1/chat/completions`), lists models (`GET /v1/models`),
checks the bearer key, records every request, and can inject faults: an HTTP status with an OpenAI error
body (429, 500, 404, ...), a slow answer, a body that is not JSON, a JSON body that is not a completion.
As real servers do, it streams when asked (`stream: true`: server-sent events, one chunk per few
characters, usage in a last chunk when `stream_options.include_usage`), honours `n` (one queued reply
per choice) unless told not to (`honour_n=False`, like llama.cpp and Ollama), sends a reasoning model's
thinking in `reasoning_content` or `reasoning`, and can stall mid-stream or refuse streaming.
The real `openai` client talks to it exactly as it would to a real endpoint.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted answer. `content` None with `status` set is a fault instead of an answer."""

    content: str | None = None
    finish_reason: str = "stop"
    usage: dict[str, int] | None = field(default_factory=lambda: {"prompt_tokens": 100, "completion_tokens": 20})
    status: int = 200
    delay: float = 0.0  # seconds to wait before answering (a slow model)
    raw: bytes | None = None  # sent as is, instead of a completion (malformed bodies)
    headers: dict[str, str] = field(default_factory=dict)
    reasoning: str | None = None  # thinking sent apart from the content, under `reasoning_field`
    reasoning_field: str = "reasoning_content"  # or "reasoning" (Ollama, OpenRouter)
    reasoning_tokens: int | None = None  # usage.completion_tokens_details.reasoning_tokens
    chunk_delay: float = 0.0  # streamed: seconds between chunks (a slow local model)
    stall_after: int | None = None  # streamed: after this many chunks, fall silent for `stall` seconds
    stall: float = 0.0
    empty_stream: bool = False  # streamed: [DONE] at once, no chunk (a server failing after its 200)
    hang_up: bool = False  # the connection is closed with no answer (a server that crashed mid-request)


def fault(status: int, message: str = "injected", **headers: str) -> Reply:
    # Retry-After in milliseconds keeps the client's backoff short in tests.
    return Reply(status=status, content=message, headers={"retry-after-ms": "10", **headers})


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


class OpenAIServer:
    def __init__(self, api_key: str | None = "sk-test-0123456789abcdef", models: tuple[str, ...] = ("test-model",)):
        self.api_key = api_key
        self.models = models
        self.replies: list[Reply] = []
        self.requests: list[Recorded] = []
        self.honour_n = True  # False: one choice whatever `n` asks (llama.cpp's server, Ollama)
        self.refuse_streaming = False  # True: 400 to a request with `stream: true`
        self.ignore_streaming = False  # True: a whole JSON body even when asked to stream
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    # -- test API

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def queue(self, *replies: Reply | str) -> None:
        with self._lock:
            self.replies += [Reply(content=r) if isinstance(r, str) else r for r in replies]

    def chat_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def prompts(self) -> list[str]:
        """The user message of each chat request, in order."""
        return [r.body["messages"][-1]["content"] for r in self.chat_requests()]

    def start(self) -> OpenAIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Idempotent; shutdown() would wait forever on a server that never served."""
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()

    # -- HTTP

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, status: int, payload: Any = None, raw: bytes | None = None, **headers: str) -> None:
                data = raw if raw is not None else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _record(self, body: Any) -> bool:
                server.requests.append(
                    Recorded(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                )
                if server.api_key and self.headers.get("authorization") != f"Bearer {server.api_key}":
                    self._send(401, {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}})
                    return False
                return True

            def do_GET(self) -> None:
                if not self._record(None):
                    return
                if self.path.rstrip("/").endswith("/models"):
                    data = [{"id": name, "object": "model", "created": 0, "owned_by": "test"} for name in server.models]
                    self._send(200, {"object": "list", "data": data})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"null")
                if not self._record(body):
                    return
                if not self.path.endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                streamed = bool(body.get("stream"))
                if streamed and server.refuse_streaming:
                    self._send(400, {"error": {"message": "streaming is not supported"}})
                    return
                wanted = int(body.get("n") or 1) if server.honour_n else 1
                with server._lock:
                    taken = [server.replies.pop(0) for _ in range(min(wanted, len(server.replies)))]
                if not taken:
                    self._send(
                        500, {"error": {"message": "the test server has no reply left"}}, **{"x-should-retry": "false"}
                    )
                    return
                reply = taken[0]
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.hang_up:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if reply.status != 200:
                    self._send(reply.status, {"error": {"message": reply.content}}, **reply.headers)
                    return
                if reply.raw is not None:
                    self._send(200, raw=reply.raw)
                    return
                if streamed and not server.ignore_streaming:
                    self._stream(body, taken)
                    return
                completion: dict[str, Any] = {
                    "id": f"chatcmpl-{len(server.requests)}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body.get("model"),
                    "choices": [
                        {"index": index, "message": _message(each), "finish_reason": each.finish_reason}
                        for index, each in enumerate(taken)
                    ],
                }
                usage = _usage(taken)
                if usage is not None:
                    completion["usage"] = usage
                self._send(200, completion)

            def _stream(self, body: Any, taken: list[Reply]) -> None:
                """Server-sent events as OpenAI sends them: role, then the thinking and the content a few
                characters a chunk, the finish reason, usage last (when asked), then [DONE]."""
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.end_headers()  # no content-length: the connection closes after [DONE]
                self.close_connection = True
                base = {
                    "id": f"chatcmpl-{len(server.requests)}",
                    "object": "chat.completion.chunk",
                    "model": body.get("model"),
                }
                sent = 0

                def event(choices: list[dict[str, Any]], **extra: Any) -> None:
                    self.wfile.write(f"data: {json.dumps({**base, 'choices': choices, **extra})}\n\n".encode())
                    self.wfile.flush()

                try:
                    if taken[0].empty_stream:
                        self.wfile.write(b"data: [DONE]\n\n")
                        return
                    for index, each in enumerate(taken):
                        event([{"index": index, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
                        pieces = [(each.reasoning_field, text) for text in _pieces(each.reasoning or "")]
                        pieces += [("content", text) for text in _pieces(each.content or "")]
                        for name, text in pieces:
                            if each.stall_after is not None and sent == each.stall_after:
                                time.sleep(each.stall)
                            if each.chunk_delay:
                                time.sleep(each.chunk_delay)
                            event([{"index": index, "delta": {name: text}, "finish_reason": None}])
                            sent += 1
                        event([{"index": index, "delta": {}, "finish_reason": each.finish_reason}])
                    usage = _usage(taken)
                    if usage is not None and (body.get("stream_options") or {}).get("include_usage"):
                        event([], usage=usage)
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a stall): nothing more to send

        return Handler


def _pieces(text: str, size: int = 8) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _message(reply: Reply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.reasoning is not None:
        message[reply.reasoning_field] = reply.reasoning
    return message


def _usage(taken: list[Reply]) -> dict[str, Any] | None:
    """One usage for all the choices of a request, as OpenAI reports it: the prompt once, completions summed."""
    if taken[0].usage is None:
        return None
    prompt = taken[0].usage["prompt_tokens"]
    completion = sum((each.usage or {}).get("completion_tokens", 0) for each in taken)
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    thinking = [each.reasoning_tokens for each in taken if each.reasoning_tokens is not None]
    if thinking:
        usage["completion_tokens_details"] = {"reasoning_tokens": sum(thinking)}
    return usage

"""A loopback HTTP server that speaks the OpenAI chat completions API, for tests.

It serves scripted replies in order (`POST /v1/chat/completions`), lists models (`GET /v1/models`),
checks the bearer key, records every request, and can inject faults: an HTTP status with an OpenAI error
body (429, 500, 404, ...), a slow answer, a body that is not JSON, a JSON body that is not a completion.
The real `openai` client talks to it exactly as it would to a real endpoint.
"""

from __future__ import annotations

import json
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
                with server._lock:
                    reply = server.replies.pop(0) if server.replies else None
                if reply is None:
                    self._send(
                        500, {"error": {"message": "the test server has no reply left"}}, **{"x-should-retry": "false"}
                    )
                    return
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.status != 200:
                    self._send(reply.status, {"error": {"message": reply.content}}, **reply.headers)
                    return
                if reply.raw is not None:
                    self._send(200, raw=reply.raw)
                    return
                completion: dict[str, Any] = {
                    "id": f"chatcmpl-{len(server.requests)}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body.get("model"),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": reply.content},
                            "finish_reason": reply.finish_reason,
                        }
                    ],
                }
                if reply.usage is not None:
                    completion["usage"] = {
                        **reply.usage,
                        "total_tokens": reply.usage["prompt_tokens"] + reply.usage["completion_tokens"],
                    }
                self._send(200, completion)

        return Handler

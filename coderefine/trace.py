"""`--trace DIR`: save every prompt and answer, and a script that replays the run.

    DIR/001-generate.json   {"index", "role", "provider", "messages", "reply"}
    DIR/002-feedback.json   ...
    DIR/script.json         {"generate": [reply, ...], "feedback": [...], "refine": [...]}

`coderefine optimize FILE --provider scripted --script DIR/script.json` replays the same answers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from coderefine.context import ModelReply, ModelRequest
from coderefine.providers.base import Provider
from coderefine.records import Role
from coderefine.writeback import write_text_atomically


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
        reply = self.inner.complete(request)
        self.count += 1
        answer = {
            "content": reply.content,
            "finish_reason": reply.finish_reason,
            "usage": {"prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens},
        }
        record = {
            "index": self.count,
            "role": request.role.value,
            "provider": self.inner.name,
            "messages": request.messages,
            "reply": answer,
        }
        write_text_atomically(
            self.folder / f"{self.count:03d}-{request.role.value}.json", json.dumps(record, indent=2) + "\n"
        )
        self.script[request.role.value].append(answer)
        write_text_atomically(self.folder / "script.json", json.dumps(self.script, indent=2) + "\n")
        return reply

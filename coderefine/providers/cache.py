"""Answers saved on disk, keyed by everything that shapes them, so a repeated run costs nothing.

The key is a hash of the endpoint, the model, the messages and the sampling parameters: change any of
them and the request goes to the model again. One exception keeps the cache useful: what was measured
differs a little on every run, so it is masked in the key outside code blocks: decimals and percentages
(durations, speedups, shares), the number of timing pairs (timing stops early once a candidate cannot turn
out faster), and the profile's hot spots as a whole (which functions rank highest, and in what order, is a
measurement too: two at 2% swap places under load). Code, test names, counts and every other word must
match exactly.
One JSON file per answer under `folder/ab/abcdef....json`, written atomically; an unreadable entry is
treated as a miss, never as an error.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from coderefine.errors import WriteConflict
from coderefine.fences import FENCED_BLOCK
from coderefine.providers.base import ModelReply
from coderefine.reports.facts import HOT_SPOTS_LABEL, TIMING_PAIRS_LABEL
from coderefine.writeback import write_text_atomically

CACHE_FORMAT = 1
_MEASURED = re.compile(rf"\d+\.\d+|\d+(?=%)|\d+(?= {re.escape(TIMING_PAIRS_LABEL)})")
_HOT_SPOTS = re.compile(rf"^{re.escape(HOT_SPOTS_LABEL)}.*$", re.MULTILINE)


def _mask(prose: str) -> str:
    return _MEASURED.sub("#", _HOT_SPOTS.sub(f"{HOT_SPOTS_LABEL} #", prose))


def mask_measurements(text: str) -> str:
    """Replace what was measured outside fenced code with '#': '1.92x [1.80, 2.05]' -> '#x [#, #]'."""
    parts, end = [], 0
    for block in FENCED_BLOCK.finditer(text):
        parts += [_mask(text[end : block.start()]), block.group(0)]
        end = block.end()
    return "".join([*parts, _mask(text[end:])])


def cache_key(endpoint: str, model: str, messages: list[dict[str, str]], parameters: dict[str, Any]) -> str:
    masked = [{**message, "content": mask_measurements(message.get("content", ""))} for message in messages]
    canonical = json.dumps(
        {"format": CACHE_FORMAT, "endpoint": endpoint, "model": model, "messages": masked, "parameters": parameters},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ResponseCache:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> ModelReply | None:
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
            return ModelReply(
                content=str(data["content"]),
                prompt_tokens=int(data.get("prompt_tokens", 0)),
                completion_tokens=int(data.get("completion_tokens", 0)),
                finish_reason=data.get("finish_reason"),
                cached=True,
                usage_estimated=bool(data.get("usage_estimated", False)),
                parameters=dict(data.get("parameters", {})),
                reasoning=str(data.get("reasoning", "")),
                reasoning_tokens=int(data.get("reasoning_tokens", 0)),
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, key: str, reply: ModelReply) -> bool:
        """False when the entry could not be written (the run goes on; it only costs money later)."""
        record = {
            "content": reply.content,
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "finish_reason": reply.finish_reason,
            "usage_estimated": reply.usage_estimated,
            "parameters": reply.parameters,
            "reasoning": reply.reasoning,
            "reasoning_tokens": reply.reasoning_tokens,
        }
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_text_atomically(path, json.dumps(record, ensure_ascii=False) + "\n")
        except (OSError, WriteConflict):
            return False
        return True

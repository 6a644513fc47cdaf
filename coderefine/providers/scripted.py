"""The `scripted` provider: replays messages from a JSON file, for tests, benchmarks and reproducing runs.

    {"generate": [msg, ...], "feedback": [msg, ...], "refine": [msg, ...]}

Each call of a role returns that role's next message; a step asking for N drafts (--drafts N) takes the
role's next N messages (fewer when fewer are left). A message is a string, or an object
`{"content": str, "finish_reason": str, "usage": {"prompt_tokens": int, "completion_tokens": int,
"reasoning_tokens": int}, "reasoning": str}` (the shape `--trace` saves, so a traced run replays exactly;
`reasoning` is a reasoning model's thinking as a server sends it apart from the answer).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from coderefine.errors import BadScript
from coderefine.providers.base import ModelReply, ModelRequest, ScriptExhausted
from coderefine.records import Role

ROLES = tuple(role.value for role in Role)


def _reply(entry: Any, where: str) -> ModelReply:
    if isinstance(entry, str):
        return ModelReply(content=entry)
    if isinstance(entry, dict) and isinstance(entry.get("content"), str):
        usage = entry.get("usage") or {}
        if not isinstance(usage, dict):
            raise BadScript(f"{where}: 'usage' must be an object")
        reasoning = entry.get("reasoning") or ""
        if not isinstance(reasoning, str):
            raise BadScript(f"{where}: 'reasoning' must be a string")
        return ModelReply(
            content=entry["content"],
            prompt_tokens=int(usage.get("prompt_tokens", 0)),
            completion_tokens=int(usage.get("completion_tokens", 0)),
            finish_reason=entry.get("finish_reason"),
            reasoning=reasoning,
            reasoning_tokens=int(usage.get("reasoning_tokens", 0)),
        )
    raise BadScript(f"{where}: each message must be a string or an object with a string 'content'")


def load_script(path: Path) -> dict[str, list[ModelReply]]:
    if not path.exists():
        raise BadScript(f"{path}: script file not found")
    if path.is_dir():
        raise BadScript(f"{path}: is a directory, not a script file")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise BadScript(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise BadScript(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise BadScript(f"{path}: must be a JSON object with lists under 'generate', 'feedback', 'refine'")
    unknown = sorted(set(data) - set(ROLES))
    if unknown:
        raise BadScript(f"{path}: unknown key(s) {', '.join(unknown)}; expected {', '.join(ROLES)}")
    script: dict[str, list[ModelReply]] = {}
    for role in ROLES:
        entries = data.get(role, [])
        if not isinstance(entries, list):
            raise BadScript(f"{path}: '{role}' must be a list of messages")
        script[role] = [_reply(entry, f"{path}: {role}[{i}]") for i, entry in enumerate(entries)]
    return script


class ScriptedProvider:
    name = "scripted"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.script = load_script(path)
        self.position = dict.fromkeys(ROLES, 0)

    def complete(self, request: ModelRequest) -> ModelReply:
        return self._take(request.role.value, 1)[0]

    def complete_drafts(self, request: ModelRequest) -> list[ModelReply]:
        return self._take(request.role.value, request.drafts)

    def _take(self, role: str, count: int) -> list[ModelReply]:
        index = self.position[role]
        if index >= len(self.script[role]):
            raise ScriptExhausted(role)
        taken = self.script[role][index : index + max(1, count)]
        self.position[role] = index + len(taken)
        return taken

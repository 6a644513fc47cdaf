"""The `scripted` provider: replays messages from a JSON file, for tests, benchmarks and reproducing runs.

    {"generate": [msg, ...], "feedback": [msg, ...], "refine": [msg, ...]}

Each call of a role returns that role's next message. A message is a string, or an object
`{"content": str, "finish_reason": str, "usage": {"prompt_tokens": int, "completion_tokens": int}}`
(the shape `--trace` saves, so a traced run replays exactly).
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
        return ModelReply(
            content=entry["content"],
            prompt_tokens=int(usage.get("prompt_tokens", 0)),
            completion_tokens=int(usage.get("completion_tokens", 0)),
            finish_reason=entry.get("finish_reason"),
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
        role = request.role.value
        index = self.position[role]
        if index >= len(self.script[role]):
            raise ScriptExhausted(role)
        self.position[role] = index + 1
        return self.script[role][index]

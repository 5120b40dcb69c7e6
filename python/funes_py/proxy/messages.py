"""Small facts about OpenAI chat messages (pure): their text, their tool calls, where a tool output came from."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

ORIGIN_MAX_CHARS = 90


def text_of(content: Any) -> str:
    """A message's text: a string as is; a list of parts joined (text parts verbatim, others as a marker)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, Mapping):
                if part.get("type") in ("text", "input_text", "output_text") and isinstance(part.get("text"), str):
                    out.append(part["text"])
                else:
                    out.append(f"[{part.get('type', 'part')}]")
            elif isinstance(part, str):
                out.append(part)
        return "\n".join(out)
    return json.dumps(content, ensure_ascii=False, sort_keys=True)


def normalized_arguments(arguments: Any) -> str:
    """Tool-call arguments with their JSON normalised (key order, spacing); non-JSON strings as given."""
    if isinstance(arguments, str):
        return _normalized(arguments)
    return json.dumps(arguments, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


@functools.lru_cache(maxsize=8192)
def _normalized(arguments: str) -> str:
    """Cached: every request re-identifies the whole history, and its calls' arguments repeat."""
    try:
        value = json.loads(arguments)
    except ValueError:
        return arguments
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def tool_calls_of(msg: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(call id, function name, normalised arguments) of each tool call of an assistant message."""
    calls = msg.get("tool_calls") or []
    out = []
    for call in calls if isinstance(calls, list) else []:
        if not isinstance(call, Mapping):
            continue
        fn = call.get("function")
        fn = fn if isinstance(fn, Mapping) else {}
        out.append((str(call.get("id") or ""), str(fn.get("name") or ""), normalized_arguments(fn.get("arguments"))))
    return out


@dataclass(frozen=True)
class Call:
    name: str
    arguments: str  # normalised JSON (or the raw string when it is not JSON)

    @property
    def origin(self) -> str:
        """What produced an output, for receipts and recall headers: a command, a path, or compact arguments."""
        try:
            args = json.loads(self.arguments)
        except ValueError:
            args = self.arguments
        if isinstance(args, dict):
            for key in ("command", "cmd", "script"):
                if isinstance(args.get(key), str):
                    return f"`{_cut(args[key])}`"
            for key in ("path", "file_path", "filePath", "filename", "file", "url", "pattern", "query"):
                if isinstance(args.get(key), str):
                    return _cut(args[key])
        return _cut(self.arguments)


def _cut(s: str) -> str:
    s = " ".join(s.split())
    return s if len(s) <= ORIGIN_MAX_CHARS else s[: ORIGIN_MAX_CHARS - 1] + "…"


def call_for(messages: Sequence[Mapping[str, Any]], i: int) -> Call | None:
    """The call behind the tool output at position i: the nearest earlier assistant call with its id."""
    cid = str(messages[i].get("tool_call_id") or "")
    for j in range(i - 1, -1, -1):
        m = messages[j]
        if m.get("role") == "assistant" and m.get("tool_calls"):
            for call_id, name, args in tool_calls_of(m):
                if call_id == cid:
                    return Call(name, args)
    return None


def calls_by_id(messages: Sequence[Mapping[str, Any]]) -> dict[str, Call]:
    """Every tool call in a history, by its call id (to name the tool and command behind an output)."""
    out: dict[str, Call] = {}
    for m in messages:
        if m.get("role") == "assistant" and m.get("tool_calls"):
            for cid, name, args in tool_calls_of(m):
                if cid:
                    out[cid] = Call(name, args)
    return out

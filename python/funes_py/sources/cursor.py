"""Cursor agent transcripts (`~/.cursor/projects/<slug>/agent-transcripts/<uuid>/<uuid>.jsonl`) -> turns.

No public specification; the fields relied on: each line `{"role": "user"|"assistant", "message":
{"content": [parts]}}`, parts `{"type": "text", "text"}`, `{"type": "tool_use", "name", "input"}`,
`{"type": "thinking", "thinking"}` (and `tool_result` if one ever appears). Lines without a role (status
lines such as `turn_ended`) are skipped; a line with a role but no `message.content` list is refused.
* User text comes wrapped in tags: the `<user_query>` content is kept, a `<timestamp>` tag is dropped (and,
  when it holds an ISO-8601 time, gives that turn and the replies after it their time).
* Lines carry no timestamps: every other turn takes the file's modification time. A re-read after the file
  grew stamps only the new turns with the new time (a stored turn keeps its first one).
* An assistant text that is only `[REDACTED]` (Cursor's placeholder for hidden thinking) is dropped.
Lines have no ids: a turn's uuid is made from (session, line number); the session id is the file's stem."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from .common import (
    Block,
    Refused,
    Source,
    Unit,
    compact_json,
    format_utc,
    iso_utc,
    position_id,
    text_of_parts,
    turn_line,
)  # fmt: skip
from .tail import read_whole

NAME = "cursor"
HARNESS = "cursor"
_QUERY = re.compile(r"<user_query>\s*(.*?)\s*</user_query>", re.DOTALL)
_TIMESTAMP = re.compile(r"<timestamp>\s*(.*?)\s*</timestamp>", re.DOTALL)


def looks_like(record: dict[str, Any]) -> bool:
    return (
        record.get("role") in ("user", "assistant")
        and isinstance(record.get("message"), dict)
        and "type" not in record
        and "uuid" not in record
    )


class Reader:
    """One transcript: its session (the file's stem), the next seq and the time of the turns read now."""

    def __init__(self, unit: Unit, carry: dict[str, Any] | None = None) -> None:
        self.session = unit.stem
        self.seq = int((carry or {}).get("seq", 0))
        # read before the content: a file written meanwhile is newer than this. A resumed read stamps only its
        # new turns with the file's new time.
        self.ts = format_utc(unit.mtime())

    def feed(self, n: int, rec: dict[str, Any]) -> str | None:
        role = rec.get("role")
        if role is None:
            return None  # a status line
        blocks, stamp = _blocks(role, rec)
        self.ts = stamp or self.ts
        line = turn_line(self.session, position_id(self.session, f"line {n}"), self.seq, self.ts, role, HARNESS, blocks)
        if line is not None:
            self.seq += 1
        return line

    def carry(self) -> dict[str, Any]:
        return {"seq": self.seq}


def read(unit: Unit) -> Iterator[Source]:
    return read_whole(unit, Reader)


def _blocks(role: Any, rec: dict[str, Any]) -> tuple[list[Block], str | None]:
    if role not in ("user", "assistant"):
        raise Refused(f"field `role` is {str(role)[:20]!r}, not user or assistant")
    message = rec.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise Refused("missing field `message.content`")
    blocks: list[Block] = []
    stamp = None
    for part in content:
        if not isinstance(part, dict):
            continue
        t = part.get("type")
        if t == "text" and isinstance(part.get("text"), str):
            text = part["text"]
            if role == "user":
                text, found = _unwrap(text)
                stamp = stamp or found
            elif text.strip() == "[REDACTED]":
                continue
            blocks.append(("text", text, None))
        elif t == "thinking" and isinstance(part.get("thinking"), str):
            blocks.append(("thinking", part["thinking"], None))
        elif t == "tool_use":
            name = part.get("name") if isinstance(part.get("name"), str) else None
            blocks.append(("tool_use", compact_json(part.get("input", {})), name))
        elif t == "tool_result":
            name = part.get("name") if isinstance(part.get("name"), str) else None
            blocks.append(("tool_result", text_of_parts(part.get("content")), name))
    return blocks, stamp


def _unwrap(text: str) -> tuple[str, str | None]:
    """The user's words from a wrapped message, and the time its `<timestamp>` tag gives (ISO-8601 only)."""
    m = _TIMESTAMP.search(text)
    stamp = iso_utc(m.group(1)) if m else None
    queries = _QUERY.findall(text)
    if queries:
        return "\n\n".join(queries), stamp
    return _TIMESTAMP.sub("", text).strip(), stamp

"""Codex rollout JSONL (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`) -> turns.

Each line is `{"timestamp", "type", "payload"}`. The first, `session_meta`, gives the session id
(`payload.id`; else the uuid in the file name) and `payload.cwd` (kept as `workdir`). Every `response_item`
becomes its own turn, as in the reference funes:
* `message`: role `user` / `assistant`, its `input_text` / `output_text` parts as text. Dropped: role
  `developer` / `system`, and user messages Codex injects itself (`<environment_context>`,
  `<user_instructions>`, `# AGENTS.md instructions ...`), images;
* `reasoning`: the readable `summary` (and `content`, when present) as one thinking block
  (`encrypted_content` is not readable and is ignored);
* `function_call` / `custom_tool_call` / `local_shell_call` / `web_search_call`: a tool_use named by the call;
* `function_call_output` / `custom_tool_call_output`: a tool_result with role "tool", named after its call
  (`call_id`); an output that is a JSON object with an `output` string is unwrapped to that string.
`event_msg` (duplicates of the items for the UI), `turn_context` and `compacted` records are skipped.
Codex lines have no ids: a turn's uuid is made from (session, line number). Older rollouts without the
`{"type", "payload"}` envelope (a first line with `id`/`timestamp`, then bare items) are read the same way."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from .common import (
    Block,
    Refused,
    Source,
    Unit,
    compact_json,
    iso_utc,
    need,
    position_id,
    turn_line,
)
from .tail import read_whole

NAME = "codex"
HARNESS = "codex"
ENVELOPES = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
ITEMS = {
    "message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
    "custom_tool_call_output", "local_shell_call", "web_search_call",
}  # fmt: skip
_INJECTED = re.compile(
    r"^\s*(<environment_context>|<user_instructions>|<permissions instructions>|# AGENTS\.md instructions)"
)
_UUID_TAIL = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$")


def looks_like(record: dict[str, Any]) -> bool:
    if record.get("type") in ENVELOPES and isinstance(record.get("payload"), dict):
        return True
    # The older layout: a meta line {"id", "timestamp", "instructions"} or a state marker.
    return "record_type" in record or {"id", "timestamp", "instructions"} <= record.keys()


class _Session:
    """One rollout file (and a resumed read's carry): the session's id, project and start time, the next seq,
    the names of its calls (an output is named after its call)."""

    def __init__(self, unit: Unit, carry: dict[str, Any] | None = None) -> None:
        carry = carry or {}
        m = _UUID_TAIL.search(unit.stem)
        self.id: str = carry.get("id") or (m.group(1) if m else unit.stem)
        self.cwd: str | None = carry.get("cwd")
        self.ts: str | None = carry.get("ts")
        self.calls: dict[str, str] = dict(carry.get("calls", {}))
        self.seq = int(carry.get("seq", 0))

    def feed(self, n: int, rec: dict[str, Any]) -> str | None:
        line = _record(self, n, rec)
        if line is not None:
            self.seq += 1
        return line

    def carry(self) -> dict[str, Any]:
        calls = list(self.calls.items())[-256:]  # an output follows its call within a few records
        return {"id": self.id, "cwd": self.cwd, "ts": self.ts, "calls": dict(calls), "seq": self.seq}


Reader = _Session


def read(unit: Unit) -> Iterator[Source]:
    return read_whole(unit, Reader)


def _record(s: _Session, n: int, rec: dict[str, Any]) -> str | None:
    kind = rec.get("type")
    if kind == "session_meta" or (n == 1 and "payload" not in rec and "id" in rec and kind is None):
        meta = rec.get("payload") if kind == "session_meta" else rec
        if isinstance(meta, dict):
            if isinstance(meta.get("id"), str) and meta["id"].strip():
                s.id = meta["id"]
            s.cwd = meta.get("cwd") if isinstance(meta.get("cwd"), str) else s.cwd
            s.ts = iso_utc(meta.get("timestamp")) or iso_utc(rec.get("timestamp")) or s.ts
        return None
    if kind == "response_item":
        item = need(rec, "payload", dict)
    elif kind in ITEMS and "payload" not in rec:
        item = rec  # the older layout: the item itself
    else:
        return None
    ts = iso_utc(rec.get("timestamp")) or s.ts
    if ts is None:
        raise Refused("missing field `timestamp` (and no session_meta timestamp to fall back on)")
    found = _item(s, item)
    if found is None:
        return None
    role, blocks = found
    extra = {"workdir": s.cwd} if s.cwd else None
    return turn_line(s.id, position_id(s.id, f"line {n}"), s.seq, ts, role, HARNESS, blocks, extra)


def _item(s: _Session, item: dict[str, Any]) -> tuple[str, list[Block]] | None:
    t = item.get("type")
    if t == "message":
        role = need(item, "role", str, "payload.")
        if role not in ("user", "assistant"):
            return None
        parts = need(item, "content", list, "payload.")
        texts = [p["text"] for p in parts if isinstance(p, dict) and p.get("type") in ("input_text", "output_text", "text")
                 and isinstance(p.get("text"), str)]  # fmt: skip
        if role == "user":
            texts = [x for x in texts if not _INJECTED.match(x)]
        return role, [("text", x, None) for x in texts]
    if t == "reasoning":
        parts = [p.get("text") for key in ("summary", "content") for p in (item.get(key) or []) if isinstance(p, dict)]
        return "assistant", [("thinking", "\n".join(x for x in parts if isinstance(x, str)), None)]
    if t in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call"):
        name = str(item["name"]) if isinstance(item.get("name"), str) else t.removesuffix("_call")
        if isinstance(item.get("call_id"), str):
            s.calls[item["call_id"]] = name
        args = item.get("arguments", item.get("input", item.get("action")))
        return "assistant", [("tool_use", args if isinstance(args, str) else compact_json(args or {}), name)]
    if t in ("function_call_output", "custom_tool_call_output"):
        name = s.calls.get(item.get("call_id") or "")
        return "tool", [("tool_result", _output_text(item.get("output")), name)]
    return None


def _output_text(output: Any) -> str:
    if output is None:
        return ""
    if isinstance(output, str):
        if output.startswith("{"):
            try:
                inner = json.loads(output)
            except json.JSONDecodeError:
                return output
            if isinstance(inner, dict) and isinstance(inner.get("output"), str):
                return str(inner["output"])
        return output
    if isinstance(output, dict) and isinstance(output.get("content"), str):
        return str(output["content"])
    return compact_json(output)

"""Claude Code session JSONL (`~/.claude/projects/<project>/<session>.jsonl`) -> turns.

One line per record. Kept: `type` "user" / "assistant" records on the main chain, one turn each
(`uuid` -> turn uuid, `timestamp` -> ts, `message.content` -> blocks). Dropped, deliberately:
* sidechains (`isSidechain`: a Task sub-agent's own steps; its prompt and its final report are already in
  the main chain as the Task tool_use and tool_result), and with them `subagents/agent-*.jsonl` files;
* `summary` records (a generated title) and compaction summaries (`isCompactSummary`): nobody said them;
* `isMeta` user records (caveats the CLI injects) and slash-command echoes (`<command-name>`,
  `<local-command-stdout>`, ...);
* `system`, `file-history-snapshot`, `queue-operation` and other record types;
* images and `redacted_thinking`.
A user record whose blocks are all tool results gets role "tool" (Claude records them as "user", but they are
not something the user said). Tool results get the name of their tool_use (same id, earlier in the file).
The session id is the record's `sessionId` (else the file name's stem, which is the same for a session's own
records): a resumed session that copies earlier turns into a new file then keeps their session and ids, so
they are stored once. `cwd` travels as `workdir`."""

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
    iso_utc,
    need,
    text_of_parts,
    turn_line,
)
from .tail import read_whole

NAME = "claude-code"
HARNESS = "claude-code"
RECORD_TYPES = {"user", "assistant", "summary", "system", "file-history-snapshot", "queue-operation", "progress"}
_ID_KEYS = ("sessionId", "leafUuid", "uuid", "messageId", "parentUuid")
_COMMAND_ECHO = re.compile(
    r"^\s*<(command-name|command-message|command-args|local-command-stdout|local-command-stderr|local-command-caveat)>",
)


def looks_like(record: dict[str, Any]) -> bool:
    kind = record.get("type")
    if not isinstance(kind, str) or "payload" in record or "role" in record:
        return False
    # Every record Claude Code writes carries `sessionId` (new record types appear often: `pr-link`, ...);
    # a `summary` carries only `leafUuid`.
    return "sessionId" in record or (kind in RECORD_TYPES and any(k in record for k in _ID_KEYS))


# The tool calls a resumed read remembers: a result nearly always follows its call within a few records.
_CARRIED_TOOL_NAMES = 256


class Reader:
    """One session file: the next seq and the names of its tool calls (a result is named after its call)."""

    def __init__(self, unit: Unit, carry: dict[str, Any] | None = None) -> None:
        carry = carry or {}
        self.stem = unit.stem
        self.seq = int(carry.get("seq", 0))
        self.tool_names: dict[str, str] = dict(carry.get("tool_names", {}))

    def feed(self, n: int, rec: dict[str, Any]) -> str | None:
        sid = rec.get("sessionId")
        line = _turn(sid if isinstance(sid, str) and sid else self.stem, rec, self.seq, self.tool_names)
        if line is not None:
            self.seq += 1
        return line

    def carry(self) -> dict[str, Any]:
        names = list(self.tool_names.items())[-_CARRIED_TOOL_NAMES:]
        return {"seq": self.seq, "tool_names": dict(names)}


def read(unit: Unit) -> Iterator[Source]:
    return read_whole(unit, Reader)


def _turn(session_id: str, rec: dict[str, Any], seq: int, tool_names: dict[str, str]) -> str | None:
    kind = rec.get("type")
    if kind not in ("user", "assistant") or rec.get("isSidechain") or rec.get("isMeta") or rec.get("isCompactSummary"):
        return None
    if rec.get("isVisibleInTranscriptOnly"):
        return None
    message = need(rec, "message", dict)
    content = message.get("content")
    if content is None:
        raise Refused("missing field `message.content`")
    turn_uuid = need(rec, "uuid", str)
    ts = iso_utc(need(rec, "timestamp", str))
    if ts is None:
        raise Refused(f"field `timestamp` is not an ISO-8601 time: {str(rec['timestamp'])[:40]!r}")
    blocks = _blocks(content, tool_names)
    role = message.get("role") if message.get("role") in ("user", "assistant") else kind
    if blocks and all(b[0] == "tool_result" for b in blocks):
        role = "tool"
    cwd = rec.get("cwd") if isinstance(rec.get("cwd"), str) else None
    return turn_line(session_id, turn_uuid, seq, ts, role, HARNESS, blocks, {"workdir": cwd} if cwd else None)


def _blocks(content: Any, tool_names: dict[str, str]) -> list[Block]:
    if isinstance(content, str):
        return [] if _COMMAND_ECHO.match(content) else [("text", content, None)]
    if not isinstance(content, list):
        raise Refused("field `message.content` is neither a string nor a list")
    out: list[Block] = []
    for item in content:
        if not isinstance(item, dict):
            continue
        t = item.get("type")
        if t == "text" and isinstance(item.get("text"), str) and not _COMMAND_ECHO.match(item["text"]):
            out.append(("text", item["text"], None))
        elif t == "thinking" and isinstance(item.get("thinking"), str):
            out.append(("thinking", item["thinking"], None))
        elif t == "tool_use":
            name = item.get("name") if isinstance(item.get("name"), str) else None
            if name and isinstance(item.get("id"), str):
                tool_names[item["id"]] = name
            out.append(("tool_use", compact_json(item.get("input", {})), name))
        elif t == "tool_result":
            name = tool_names.get(item.get("tool_use_id") or "")
            out.append(("tool_result", text_of_parts(item.get("content")), name))
        # image, redacted_thinking, document and unknown parts are not text anyone will recall.
    return out

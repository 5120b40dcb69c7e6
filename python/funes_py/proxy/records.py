"""A chat message as an archive record: its blocks, and the tool and command an output came from (pure)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .archive import Record
from .messages import Call, text_of, tool_calls_of


def record(msg: Mapping[str, Any], mid: str, calls: Mapping[str, Call], kind: str = "message",
           position: int | None = None, chain: str | None = None) -> Record:  # fmt: skip
    """`calls`: the history's tool calls by id, to name the tool behind a tool output."""
    role = str(msg.get("role") or "")
    text = text_of(msg.get("content"))
    tool = origin = None
    blocks: list[dict[str, Any]] = []
    if role == "tool":
        call = calls.get(str(msg.get("tool_call_id") or ""))
        tool, origin = (call.name, call.origin) if call is not None else (str(msg.get("name") or "tool"), None)
        blocks.append({"block_type": "tool_result", "text": text, "tool_name": tool})
    else:
        if text or not msg.get("tool_calls"):
            blocks.append({"block_type": "text", "text": text})
        for _, name, args in tool_calls_of(msg):
            blocks.append({"block_type": "tool_use", "text": f"{name} {args}", "tool_name": name})
    return Record(mid, role, blocks, kind, position, chain, tool, origin)

"""Claude.ai data export (`conversations.json`, alone or in the export zip) -> turns.

No public specification; the fields relied on, per conversation: `uuid`, `name`, `created_at`,
`chat_messages`; per message: `uuid`, `sender` ("human" / "assistant"), `created_at`, `content` (typed blocks:
`text`, `thinking`, `tool_use` with `name` / `input`, `tool_result` with `name` / `content`) or, in older
exports, `text`; `attachments[].extracted_content`; `parent_message_uuid`, `current_leaf_message_uuid`.
* Branches: when messages carry `parent_message_uuid`, only the branch ending at
  `current_leaf_message_uuid` (else at the newest leaf) is kept, as ChatGPT's visible branch; without parent
  links the messages are taken in order.
* Kept: each message as one turn (role user / assistant): its blocks in order; a tool_use's input as compact
  JSON, named; a tool_result's text parts, named. When `content` has nothing readable, the message's `text`.
  An attachment's extracted text (a long paste becomes one) as a text block after the message's own.
* Dropped: images and files (`files`: only their names are exported), other block types, messages from other
  senders, empty messages.
The turn uuid is the message uuid (else one made from (conversation, index)); a message without
`created_at` takes the time of the turn before it (else the conversation's)."""

from __future__ import annotations

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
    text_of_parts,
    turn_line,
)  # fmt: skip
from .export import read_export

NAME = "claude-ai"
HARNESS = "claude-ai"
ROOT_PARENT = "00000000-0000-4000-8000-000000000000"
_ROLES = {"human": "user", "user": "user", "assistant": "assistant"}


def read(unit: Unit) -> Iterator[Source]:
    return read_export(unit, convert, ("uuid",))


def convert(conv: dict[str, Any]) -> list[str]:
    cid = need(conv, "uuid", str)
    messages = need(conv, "chat_messages", list)
    conv_ts = iso_utc(conv.get("created_at"))
    title = conv.get("name") if isinstance(conv.get("name"), str) else None
    lines: list[str] = []
    last_ts: str | None = None
    for i, msg in _branch(conv, messages):
        sender = msg.get("sender")
        if not isinstance(sender, str):
            raise Refused(f"`chat_messages[{i}].sender` is missing or not a string")
        role = _ROLES.get(sender)
        if role is None:
            continue  # another sender (none is known today): not the user's nor the assistant's words
        ts = iso_utc(msg.get("created_at")) or last_ts or conv_ts
        if ts is None:
            raise Refused(f"message {i}: no `created_at`, and the conversation has none")
        mid = msg.get("uuid")
        turn_uuid = mid if isinstance(mid, str) and mid else position_id(cid, f"message {i}")
        line = turn_line(
            cid, turn_uuid, len(lines), ts, role, HARNESS, _blocks(msg), {"title": title} if title else None
        )
        if line is not None:
            lines.append(line)
            last_ts = ts
    return lines


def _branch(conv: dict[str, Any], messages: list[Any]) -> list[tuple[int, dict[str, Any]]]:
    """(index, message) along the current branch, root first."""
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            raise Refused(f"`chat_messages[{i}]` is not an object")
    indexed = list(enumerate(messages))
    by_id = {m["uuid"]: (i, m) for i, m in indexed if isinstance(m.get("uuid"), str)}
    if not any("parent_message_uuid" in m for _, m in indexed):
        return indexed
    leaf = conv.get("current_leaf_message_uuid")
    if leaf not in by_id:
        parents = {m.get("parent_message_uuid") for _, m in indexed}
        leaves = [(i, m) for i, m in indexed if m.get("uuid") not in parents]
        if not leaves:
            return indexed
        leaf = max(leaves, key=lambda im: (str(im[1].get("created_at") or ""), im[0]))[1].get("uuid")
    chain: list[tuple[int, dict[str, Any]]] = []
    node = leaf
    while isinstance(node, str) and node in by_id and len(chain) < len(indexed):
        chain.append(by_id[node])
        node = by_id[node][1].get("parent_message_uuid")
    chain.reverse()
    return chain


def _blocks(msg: dict[str, Any]) -> list[Block]:
    out: list[Block] = []
    for part in msg.get("content") or []:
        if not isinstance(part, dict):
            continue
        t = part.get("type")
        name = part.get("name") if isinstance(part.get("name"), str) else None
        if t == "text" and isinstance(part.get("text"), str):
            out.append(("text", part["text"], None))
        elif t == "thinking" and isinstance(part.get("thinking"), str):
            out.append(("thinking", part["thinking"], None))
        elif t == "tool_use":
            out.append(("tool_use", compact_json(part.get("input", {})), name))
        elif t == "tool_result":  # web search results are "knowledge" parts with a text
            out.append(("tool_result", text_of_parts(part.get("content"), ("text", "knowledge")), name))
    if not any(text.strip() for _, text, _ in out) and isinstance(msg.get("text"), str):
        out = [("text", msg["text"], None)]
    for att in msg.get("attachments") or []:
        if isinstance(att, dict) and isinstance(att.get("extracted_content"), str):
            out.append(("text", att["extracted_content"], None))
    return out

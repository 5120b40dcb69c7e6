"""ChatGPT data export (`conversations.json`, alone or in the export zip) -> turns.

No public specification; the fields relied on, per conversation: `mapping` (node id -> {`message`,
`parent`}), `current_node`, `conversation_id` (or `id`), `title`, `create_time` (epoch seconds, a float);
per message: `author.role`, `content.content_type`, `content.parts` (or `content.text`, `content.thoughts`),
`create_time`, `recipient`, `metadata.is_visually_hidden_from_conversation`.
* Only the visible branch is kept: the walk goes from `current_node` up the `parent` links, so answers the user
  regenerated and questions they edited away are dropped.
* Kept: user and assistant messages addressed to all (`recipient` "all"): `text` and `multimodal_text`
  parts that are text (images and other assets dropped), `code` text, and `thoughts` as a thinking block.
* Dropped: null messages (the root), `system` and `tool` messages, hidden ones, messages to a tool
  (`recipient` not "all": the calls to python, browser, dalle), `reasoning_recap` ("Thought for 8s"),
  `user_editable_context` (custom instructions).
The turn uuid is the message id (the node id); seq counts kept turns along the visible branch; a message
without `create_time` takes the time of the turn before it (else the conversation's). Masked secrets as everywhere."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .common import Block, Refused, Source, Unit, iso_utc, need, turn_line
from .export import read_export

NAME = "chatgpt"
HARNESS = "chatgpt"
_IDS = ("conversation_id", "id")


def read(unit: Unit) -> Iterator[Source]:
    return read_export(unit, convert, _IDS)


def convert(conv: dict[str, Any]) -> list[str]:
    cid = next((conv[k] for k in _IDS if isinstance(conv.get(k), str) and conv[k]), None)
    if cid is None:
        raise Refused("missing field `conversation_id`")
    mapping = need(conv, "mapping", dict)
    conv_ts = iso_utc(conv.get("create_time"))
    title = conv.get("title") if isinstance(conv.get("title"), str) else None
    lines: list[str] = []
    last_ts: str | None = None
    for node_id, msg in visible_branch(conv, mapping):
        found = _message(msg)
        if found is None:
            continue
        role, blocks = found
        ts = iso_utc(msg.get("create_time")) or last_ts or conv_ts
        if ts is None:
            raise Refused(f"message {node_id}: no `create_time`, and the conversation has none")
        turn_uuid = msg["id"] if isinstance(msg.get("id"), str) and msg["id"] else node_id
        line = turn_line(cid, turn_uuid, len(lines), ts, role, HARNESS, blocks, {"title": title} if title else None)
        if line is not None:
            lines.append(line)
            last_ts = ts
    return lines


def visible_branch(conv: dict[str, Any], mapping: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(node id, message) from the root down to `current_node`; nodes without a message are left out."""
    node = need(conv, "current_node", str)
    chain = []
    seen = set()
    while node is not None:
        if node in seen:
            raise Refused(f"`mapping` has a cycle through node {node}")
        seen.add(node)
        entry = mapping.get(node)
        if not isinstance(entry, dict):
            raise Refused(f"node {node} (from `current_node` or a `parent`) is not in `mapping`")
        if isinstance(entry.get("message"), dict):
            chain.append((node, entry["message"]))
        parent = entry.get("parent")
        node = parent if isinstance(parent, str) else None
    chain.reverse()
    return chain


def _message(msg: dict[str, Any]) -> tuple[str, list[Block]] | None:
    author = msg.get("author")
    role = author.get("role") if isinstance(author, dict) else None
    if role not in ("user", "assistant"):
        return None
    meta = msg.get("metadata")
    if (
        isinstance(meta, dict)
        and meta.get("is_visually_hidden_from_conversation")
        or msg.get("recipient", "all") != "all"
    ):
        return None
    content = msg.get("content")
    if not isinstance(content, dict):
        return None
    ctype = content.get("content_type")
    if ctype in ("text", "multimodal_text"):
        texts = []
        for part in content.get("parts") or []:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):  # e.g. an audio transcription
                texts.append(part["text"])
        return role, [("text", "\n".join(t for t in texts if t.strip()), None)]
    if ctype == "code" and isinstance(content.get("text"), str):
        return role, [("text", content["text"], None)]
    if ctype == "thoughts":
        thoughts = [t for t in content.get("thoughts") or [] if isinstance(t, dict)]
        parts = [str(t.get(k)) for t in thoughts for k in ("summary", "content") if isinstance(t.get(k), str)]
        return role, [("thinking", "\n".join(parts), None)]
    return None

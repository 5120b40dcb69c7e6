"""Hiding old tool outputs: which ones (a batch), and the one-line receipt that takes each one's place (pure).

A receipt names the message id, the tool and command behind the output, its size, a hash of its text, its
last line, and how to read it back. It is computed once, stored with the mask decision and replayed
verbatim, so its bytes never change (the engine's prefix cache depends on it).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .messages import Call, text_of

LAST_LINE_CHARS = 120
RECEIPT_TOKENS = 70  # what a receipt costs in the prompt, about


def last_line(text: str) -> str:
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line:
            return line if len(line) <= LAST_LINE_CHARS else line[: LAST_LINE_CHARS - 1] + "…"
    return ""


def receipt(mid: str, text: str, call: Call | None, tokens: int, tool_name: str = "recall") -> str:
    """The one line that replaces a hidden output."""
    origin = f"{call.name} {call.origin}" if call is not None else "a tool"
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    lines = text.count("\n") + 1 if text else 0
    return (
        f"⟪archived id={mid} · output of {origin} · {tokens:,} tokens, {lines:,} lines, sha256 {digest} · "
        f"hidden to save space⟫ Last line: «{last_line(text)}». Exact text: {tool_name}(id=\"{mid}\"). "
        f"For the current state, re-read the file or re-run the command."
    )


@dataclass(frozen=True)
class Candidate:
    position: int
    mid: str
    tokens: int


def candidates(
    messages: Sequence[Mapping[str, Any]],
    ids: Sequence[str],
    tokens: Sequence[int],
    hidden: Mapping[str, str],
    start: int,
    min_tokens: int,
    min_age_turns: int,
) -> list[Candidate]:
    """Tool outputs that may be hidden, oldest first: from `start` on, not hidden yet, at least `min_tokens`,
    followed by at least `min_age_turns` assistant messages, and never the newest tool output."""
    newest_tool = max((i for i, m in enumerate(messages) if m.get("role") == "tool"), default=-1)
    assistants_after = [0] * (len(messages) + 1)
    for i in range(len(messages) - 1, -1, -1):
        assistants_after[i] = assistants_after[i + 1] + (messages[i].get("role") == "assistant")
    out = []
    for i in range(start, len(messages)):
        m = messages[i]
        if m.get("role") != "tool" or i == newest_tool or ids[i] in hidden:
            continue
        if tokens[i] < min_tokens or assistants_after[i + 1] < min_age_turns:
            continue
        out.append(Candidate(i, ids[i], tokens[i]))
    return out


def choose_batch(pool: Sequence[Candidate], to_free: int, min_free: int) -> list[Candidate]:
    """Oldest first until `to_free` tokens are freed; empty when the batch would free less than `min_free`."""
    batch: list[Candidate] = []
    freed = 0
    for c in pool:
        if freed >= to_free:
            break
        batch.append(c)
        freed += c.tokens - RECEIPT_TOKENS
    return batch if batch and freed >= min_free else []


def masked_copy(msg: Mapping[str, Any], text: str) -> dict[str, Any]:
    """The message with its content replaced (a receipt, or auto-recall's addition), other fields kept."""
    out = dict(msg)
    out["content"] = text
    return out


def appended(msg: Mapping[str, Any], line: str) -> dict[str, Any]:
    """A user message with a line appended to its text (a list of parts gets one more text part)."""
    out = dict(msg)
    content = msg.get("content")
    if isinstance(content, list):
        out["content"] = [*content, {"type": "text", "text": line}]
    else:
        out["content"] = f"{text_of(content)}\n\n{line}"
    return out

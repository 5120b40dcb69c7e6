"""Segments: when even the masked prompt does not fit, start over with handoff notes (pure parts).

A switch asks the model for notes under fixed headings (appended to the current prompt, so the engine reuses
its cache), then the new segment's prompt is: the client's leading system messages, one segment message
(what happened, the first user request verbatim, the notes, an index of the largest archived outputs), then
the verbatim tail of the history from the cut on. The cut is a user message (or, failing that, an assistant
message that starts a new group: a call is never separated from its results), as early as keeps the tail
within its share of the window.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .archive import Entry
from .messages import text_of

HEADINGS = (
    "## Goal",
    "## Constraints from the user",
    "## Decisions and reasons",
    "## Current state",
    "## Open problems and next steps",
    "## Facts to keep (with archive ids)",
)
NOTES_PROMPT = (
    "[funes-proxy] This conversation will continue in a fresh context window. Write handoff notes for "
    "yourself: short and factual, under exactly these headings:\n" + "\n".join(HEADINGS) + "\n"
    "Copy identifiers, paths, commands and numbers exactly, and give the archive id (m…) a fact came from "
    "when you know it. Do not call tools."
)
NOTES_FAILED = "(No handoff notes: {why}. Use the recall tool to look up anything from before.)"
INDEX_ENTRIES = 8


def leading_system(messages: Sequence[Mapping[str, Any]]) -> int:
    """How many messages at the start are system/developer messages."""
    n = 0
    while n < len(messages) and messages[n].get("role") in ("system", "developer"):
        n += 1
    return n


def notes_source(phys: Sequence[Mapping[str, Any]], sizes: Sequence[int], budget: int) -> list[Mapping[str, Any]]:
    """The longest head of the physical prompt within `budget` tokens that does not end on an assistant
    message still waiting for its tool results (the notes request keeps the engine's cached prefix)."""
    total = 0
    end = 0
    for i, size in enumerate(sizes):
        if total + size > budget:
            break
        total += size
        end = i + 1
    while end > 0 and phys[end - 1].get("role") == "assistant" and phys[end - 1].get("tool_calls"):
        end -= 1
    return list(phys[:end])


def cut_points(messages: Sequence[Mapping[str, Any]], after: int) -> list[int]:
    """Positions where a tail may start, later than `after`: user messages, and assistant messages that open
    a group (the message before is not an assistant call waiting for results)."""
    out = []
    for i in range(after + 1, len(messages)):
        role = messages[i].get("role")
        if role == "user":
            out.append(i)
        elif role == "assistant":
            prev = messages[i - 1]
            if not (prev.get("role") == "assistant" and prev.get("tool_calls")):
                out.append(i)
    return out


def choose_cut(points: Sequence[int], tail_tokens: Callable[[int], int], tail_budget: int,
               fits: Callable[[int], bool]) -> int | None:  # fmt: skip
    """The earliest cut whose tail is within `tail_budget`; else the latest cut that still fits at all."""
    for p in points:
        if tail_tokens(p) <= tail_budget and fits(p):
            return p
    for p in reversed(points):
        if fits(p):
            return p
    return None


def archive_index(entries: Sequence[tuple[str, Entry]], sizes: Mapping[str, int], tool: str) -> list[str]:
    """Lines naming the largest archived tool outputs before the cut, largest first."""
    outputs = [(mid, e) for mid, e in entries if e.role == "tool"]
    outputs.sort(key=lambda x: -sizes.get(x[0], x[1].chars))
    lines = []
    for mid, e in outputs[:INDEX_ENTRIES]:
        what = f"{e.tool} {e.origin}" if e.tool else "tool output"
        lines.append(f"- {tool}(id=\"{mid}\") · {what} · about {sizes.get(mid, 0):,} tokens")
    return lines


def segment_message(number: int, cut: int, first_request: str, notes: str, index: Sequence[str], tool: str) -> str:
    parts = [
        f"[funes-proxy: segment {number}] This conversation is longer than the model's context window. "
        f"Its first {cut} messages were archived verbatim: {tool}(query=\"…\") searches them and "
        f"{tool}(id=\"…\") reads any one exactly.",
        "The first request, verbatim:\n«««\n" + first_request + "\n»»»",
        "Handoff notes written before the switch:\n" + notes.strip(),
    ]
    if index:
        parts.append("Largest archived outputs:\n" + "\n".join(index))
    return "\n\n".join(parts)


def head(messages: Sequence[Mapping[str, Any]], number: int, cut: int, notes: str, index: Sequence[str],
         tool: str) -> list[dict[str, Any]]:  # fmt: skip
    """The new segment's first messages: the leading system messages verbatim, then the segment message."""
    n_sys = leading_system(messages)
    first = next((text_of(m.get("content")) for m in messages if m.get("role") == "user"), "")
    out = [dict(m) for m in messages[:n_sys]]
    out.append({"role": "user", "content": segment_message(number, cut, first, notes, index, tool)})
    return out

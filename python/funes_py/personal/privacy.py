"""What is cut from a turn before the one-person mode stores it (pure).

* ``<private>…</private>`` spans (the tag is ``personal.toml``'s ``private_tag``) are removed from every
  block; an opened span that is never closed runs to the end of its block. A block left empty is dropped, a
  turn left with no block is not stored.
* A session holding the skip marker anywhere (``funes:skip`` by default) is not stored at all; the sync
  forgets what it stored of that session before the marker was written.
* The memory's own recall results are not stored again: an agent's session file records each call of this
  server's tools and what they returned (Claude Code names them ``mcp__funes__recall``), and storing them
  would make every later recall find its own earlier answers. An assistant's text that pastes recall output
  loses those lines (``server.passages.strip_pasted_recall``, the service's rule).

Works on ``.funes.jsonl`` turn lines, as the format readers write them."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ..server.passages import strip_pasted_recall

# The stdio server's name in an agent's MCP configuration (personal.clients writes it) and its tools.
SERVER_NAME = "funes"
_OWN_TOOL = re.compile(r"^(mcp__funes__|funes[.:_])", re.IGNORECASE)


@dataclass(frozen=True)
class Privacy:
    skip_marker: str
    private_tag: str

    def __post_init__(self) -> None:
        tag = re.escape(self.private_tag)
        object.__setattr__(self, "_span", re.compile(rf"<{tag}>.*?(?:</{tag}>|\Z)", re.DOTALL | re.IGNORECASE))

    def cut(self, text: str) -> str:
        """``text`` without its private spans."""
        if "<" not in text:
            return text
        return self._span.sub("", text)  # type: ignore[attr-defined]

    def marked(self, line: str) -> bool:
        """Does this turn line hold the skip marker (anywhere, even inside a private span)?"""
        return self.skip_marker in line

    def keep(self, line: str, row: dict[str, Any] | None = None) -> str | None:
        """The turn line as it may be stored, or None when nothing of it may. ``row``: the line already parsed."""
        row = json.loads(line) if row is None else row
        changed = False
        blocks = []
        for b in row.get("blocks", []):
            name = b.get("tool_name") or ""
            if b.get("block_type") in ("tool_use", "tool_result") and _OWN_TOOL.match(name):
                changed = True
                continue
            text = self.cut(b.get("text", ""))
            if row.get("role") == "assistant" and b.get("block_type") == "text":
                text = strip_pasted_recall(text) or ""
            if text != b.get("text"):
                changed = True
            if text.strip():
                blocks.append({**b, "text": text})
        if not blocks:
            return None
        if not changed:
            return line
        return json.dumps({**row, "blocks": blocks}, ensure_ascii=False)

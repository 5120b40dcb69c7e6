"""The agent text format of recall results (documented in the README, pinned by tests).

Per hit::

    [2026-10-08 09:14 UTC] assistant · conv-0042 · text
    <the passage, verbatim>
      ~ user #3: <preview of the neighbouring turn>
    ---

Dates come first so a reader can weigh old against new; the session id is kept so a reader can ask
``get`` for more; neighbouring turns are one-line previews so the question that led to an answer shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

NOTHING = "Nothing relevant found in earlier conversations."


def short_ts(ts: str) -> str:
    """``2026-10-08T09:14:00Z`` → ``2026-10-08 09:14 UTC``; anything else as stored."""
    if len(ts) >= 16 and ts[10] == "T":
        tail = " UTC" if ts.endswith("Z") or ts.endswith("+00:00") else ""
        return f"{ts[:10]} {ts[11:16]}{tail}"
    return ts


def format_hit(hit: Any) -> str:
    lines = [f"[{short_ts(hit.ts)}] {hit.role} · {hit.session_id} · {hit.block_type}", hit.text]
    for n in hit.neighbors:
        lines.append(f"  ~ {n.role} #{n.seq}: {n.text}")
    lines.append("---")
    return "\n".join(lines) + "\n"


def format_hits(hits: Sequence[Any], max_chars: int | None = None) -> str:
    """Hits in the agent format; ``NOTHING`` when there are none. With ``max_chars`` whole hits are kept
    while they fit (never a passage cut mid-word); the first hit alone is cut at a word if it is too long."""
    if not hits:
        return NOTHING
    out: list[str] = []
    used = 0
    for h in hits:
        block = format_hit(h)
        if max_chars is not None and used + len(block) > max_chars:
            if not out:
                cut = block[: max(0, max_chars - 1)]
                cut = cut[: cut.rfind(" ")] if " " in cut else cut
                out.append(cut + "…")
            break
        out.append(block)
        used += len(block)
    return "".join(out)

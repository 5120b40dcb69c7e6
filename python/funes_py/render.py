"""Recall hits as text, in two forms that share their dates, cuts and empty answer.

``format_hits`` (the library and the CLI): one block per hit, with its session id and block type, so a
reader can ask ``get`` for more::

    [2026-10-08 09:14 UTC] assistant · conv-0042 · text
    <the passage, verbatim>
      ~ user #3: <preview of the neighbouring turn>
    ---

``format_passages`` (the MCP tool): an agent that cannot run ``get`` sees no ids; a hit and its neighbouring
turns are merged into one run of consecutive turns with any other hit of the same conversation that
touches it, so no turn is printed twice::

    Earlier conversations, quoted verbatim (best match first):

    [2026-10-08 09:14 UTC]
    user: Did last night's batch finish?
    assistant: Two jobs failed: the settlement feed ...
      (continuation lines are indented)

Dates come first so a reader can weigh old against new, always in UTC. An empty answer is ``NOTHING``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

NOTHING = "Nothing relevant found in earlier conversations."
INTRO = "Earlier conversations, quoted verbatim (best match first):"


def format_ts(ts: str) -> str:
    """'2026-10-08T09:14:00+02:00' -> '2026-10-08 07:14 UTC' (naive times are taken as UTC); anything that is
    not a time, as stored."""
    try:
        t = dt.datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return str(ts)
    if t.tzinfo is not None:
        t = t.astimezone(dt.UTC)
    return t.strftime("%Y-%m-%d %H:%M UTC")


# --- the library's form --------------------------------------------------------------------------


def format_hit(hit: Any) -> str:
    lines = [f"[{format_ts(hit.ts)}] {hit.role} · {hit.session_id} · {hit.block_type}", hit.text]
    for n in hit.neighbors:
        lines.append(f"  ~ {n.role} #{n.seq}: {n.text}")
    lines.append("---")
    return "\n".join(lines) + "\n"


def format_hits(hits: Sequence[Any], max_chars: int | None = None) -> str:
    """Hits in the library's form; ``NOTHING`` when there are none. With ``max_chars`` whole hits are kept
    while they fit; the first hit alone is cut at a word if it is too long."""
    if not hits:
        return NOTHING
    out: list[str] = []
    used = 0
    for h in hits:
        block = format_hit(h)
        if max_chars is not None and used + len(block) > max_chars:
            if not out:
                out.append(cut_at_word(block, max_chars))
            break
        out.append(block)
        used += len(block)
    return "".join(out)


# --- the MCP tool's form -------------------------------------------------------------------------

_ELLIPSIS = " …"
# Below this many characters of room, a passage is left out rather than shown as a stub.
_MIN_TRUNCATED_PASSAGE = 160
_NOTE_RESERVE = 90


@dataclass
class _Turn:
    seq: int
    ts: str
    role: str
    texts: list[str] = field(default_factory=list)

    def add(self, text: str) -> None:
        """One more rendering of this turn: kept unless another already holds it (a neighbour's preview is
        held by the turn's full text, which replaces it)."""
        text = text.strip()
        if not text:
            return
        gist = _gist(text)
        for i, old in enumerate(self.texts):
            if gist in _gist(old):
                return
            if _gist(old) in gist:
                self.texts[i] = text
                return
        self.texts.append(text)


def _gist(text: str) -> str:
    """What two renderings of one turn share: the engine's neighbour preview is the turn's start with its
    whitespace flattened and a trailing ellipsis, so compare without either."""
    return " ".join(text.removesuffix(_ELLIPSIS.strip()).split())


_WHERE = "  (session "


@dataclass
class _Passage:
    rank: int
    turns: list[_Turn]
    session: str = ""
    project: str = ""


def _passages(hits: Sequence[Any]) -> list[_Passage]:
    """Group hits and their neighbours into runs of consecutive turns, ordered by their best hit."""
    sessions: dict[str, dict[int, _Turn]] = {}
    best_rank: dict[tuple[str, int], int] = {}
    projects: dict[str, str] = {}
    for rank, hit in enumerate(hits):
        projects.setdefault(hit.session_id, getattr(hit, "workdir", "") or "")
        turns = sessions.setdefault(hit.session_id, {})
        for n in getattr(hit, "neighbors", None) or ():
            turns.setdefault(n.seq, _Turn(n.seq, n.ts, n.role)).add(n.text)
        turns.setdefault(hit.seq, _Turn(hit.seq, hit.ts, hit.role)).add(hit.text)
        best_rank.setdefault((hit.session_id, hit.seq), rank)

    out: list[_Passage] = []
    for sid, turns in sessions.items():
        run: list[_Turn] = []
        for seq in sorted(turns):
            if run and seq != run[-1].seq + 1:
                out.append(_Passage(_rank(sid, run, best_rank), run, sid, projects[sid]))
                run = []
            run.append(turns[seq])
        if run:
            out.append(_Passage(_rank(sid, run, best_rank), run, sid, projects[sid]))
    out.sort(key=lambda p: p.rank)
    return [p for p in out if any(t.texts for t in p.turns)]


def _rank(sid: str, run: list[_Turn], best_rank: dict[tuple[str, int], int]) -> int:
    ranks = [best_rank[(sid, t.seq)] for t in run if (sid, t.seq) in best_rank]
    return min(ranks) if ranks else len(best_rank)


def _render_passage(p: _Passage, where: bool = False) -> str:
    lines = [f"[{format_ts(p.turns[0].ts)}]"]
    if where:  # indented, so the rule that keeps pasted recall output out of memory removes it with the rest
        lines.append(f"{_WHERE}{p.session}" + (f", project {p.project})" if p.project else ")"))
    for turn in p.turns:
        for text in turn.texts:
            body = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
            if not body:
                continue
            lines.append(f"{turn.role}: {body[0].strip()}")
            lines.extend(f"  {ln.strip()}" for ln in body[1:])
    return "\n".join(lines)


def cut_at_word(text: str, limit: int, keep: int = 0) -> str:
    """The longest prefix of `text` that ends at a word boundary and, with ' …', fits in `limit`. A word
    that starts before `keep` or takes more than half the room (a pasted hash, a line of base64) is cut
    inside: cutting before it would show a passage header and a role with nothing after them."""
    if len(text) <= limit:
        return text
    room = limit - len(_ELLIPSIS)
    if room <= 0:
        return ""
    head = text[: room + 1]
    cut = max(head.rfind(" "), head.rfind("\n"))
    head = head[:cut] if cut > max(keep, room // 2) else text[:room]
    return head.rstrip() + _ELLIPSIS


def _quotes_something(block: str) -> bool:
    """A rendered passage with at least one turn line that says something beyond its role and ' …'."""
    for line in block.splitlines()[1:]:
        if line.startswith(_WHERE):
            continue
        # A turn's first line is "<role>: ..." (unindented); its continuation lines are indented.
        words = line if line[:1].isspace() else line.partition(": ")[2]
        if words.strip().removesuffix(_ELLIPSIS.strip()).strip():
            return True
    return False


def format_passages(hits: Sequence[Any], max_chars: int, where: bool = False) -> str:
    """The tool's answer for `hits`, at most `max_chars` characters, never cut inside a word. `where`: each
    passage names its session and project under its date (the one-person server, whose agent can ask `get`
    for more of a session)."""
    passages = [_render_passage(p, where) for p in _passages(hits)]
    passages = [p for p in passages if p.count("\n") > (1 if where else 0)]
    if not passages:
        return NOTHING
    out = INTRO
    shown = 0
    for i, block in enumerate(passages):
        sep = "\n\n"
        last = i == len(passages) - 1
        room = max_chars - len(out) - len(sep) - (0 if last else _NOTE_RESERVE)
        if len(block) <= room:
            out += sep + block
            shown += 1
            continue
        # The first passage is always shown, cut if need be; a later one only if a fair part of it fits.
        room = max_chars - len(out) - len(sep) - (0 if shown == 0 else _NOTE_RESERVE)
        if room >= _MIN_TRUNCATED_PASSAGE or shown == 0:
            cut = cut_at_word(block, max(room, 0), keep=block.find(": ", block.find("\n")) + 2)
            if _quotes_something(cut):
                out += sep + cut
                shown += 1
        break
    if shown == 0:  # nothing fit: the empty answer, never an intro with no passage under it
        return NOTHING
    left = len(passages) - shown
    if left:
        note = f"\n\n({left} more passage{'s' if left > 1 else ''} left out for length; search with narrower words.)"
        if len(out) + len(note) <= max_chars:
            out += note
    if len(out) > max_chars:  # a cap smaller than the intro itself: still never over it
        out = cut_at_word(out, max_chars)
    return out

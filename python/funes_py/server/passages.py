"""The tool's text form of recall hits, and the rule that keeps pasted tool output out of memory (pure).

Both live here because they are two sides of one format: `render` writes passages an agent can quote,
`strip_pasted_recall` recognises those same passages when the agent pastes them back into its answer.

Rendered form (the agent sees nothing else: no paths, no ids, no follow-up commands it cannot run):

    Earlier conversations, quoted verbatim (best match first):

    [2026-10-08 09:14 UTC]
    user: Did last night's batch finish?
    assistant: Two jobs failed: the settlement feed ...
      (continuation lines are indented)

One block per run of consecutive turns of one conversation: a hit and its neighbouring turns, merged with
any other hit of the same conversation that touches it, so no turn is printed twice.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

INTRO = "Earlier conversations, quoted verbatim (best match first):"
NOTHING_FOUND = "Nothing relevant found in earlier conversations."
NO_MEMORY = "No earlier conversations are stored for this user yet."
UNAVAILABLE = "Conversation memory is unavailable right now; continue without it."
EMPTY_QUERY = "The query is empty: pass a few key words (identifiers, names, key nouns)."

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


@dataclass
class _Passage:
    rank: int
    turns: list[_Turn]


def format_ts(ts: str) -> str:
    """'2026-10-08T09:14:00Z' -> '2026-10-08 09:14 UTC' (naive times are taken as UTC)."""
    try:
        t = dt.datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return str(ts)[:16]
    if t.tzinfo is not None:
        t = t.astimezone(dt.timezone.utc)
    return t.strftime("%Y-%m-%d %H:%M UTC")


def _passages(hits: Sequence[Any]) -> list[_Passage]:
    """Group hits and their neighbours into runs of consecutive turns, ordered by their best hit."""
    sessions: dict[str, dict[int, _Turn]] = {}
    best_rank: dict[tuple[str, int], int] = {}
    for rank, hit in enumerate(hits):
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
                out.append(_Passage(_rank(sid, run, best_rank), run))
                run = []
            run.append(turns[seq])
        if run:
            out.append(_Passage(_rank(sid, run, best_rank), run))
    out.sort(key=lambda p: p.rank)
    return [p for p in out if any(t.texts for t in p.turns)]


def _rank(sid: str, run: list[_Turn], best_rank: dict[tuple[str, int], int]) -> int:
    ranks = [best_rank[(sid, t.seq)] for t in run if (sid, t.seq) in best_rank]
    return min(ranks) if ranks else len(best_rank)


def _render_passage(p: _Passage) -> str:
    lines = [f"[{format_ts(p.turns[0].ts)}]"]
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
        words = line.split(":", 1)[1] if _ROLE_RE.match(line) else line
        if words.strip().removesuffix(_ELLIPSIS.strip()).strip():
            return True
    return False


def render(hits: Sequence[Any], max_chars: int) -> str:
    """The tool's answer for `hits`, at most `max_chars` characters, never cut inside a word."""
    passages = [_render_passage(p) for p in _passages(hits)]
    passages = [p for p in passages if p.count("\n") > 0]
    if not passages:
        return NOTHING_FOUND
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
        return NOTHING_FOUND
    left = len(passages) - shown
    if left:
        note = f"\n\n({left} more passage{'s' if left > 1 else ''} left out for length; search with narrower words.)"
        if len(out) + len(note) <= max_chars:
            out += note
    if len(out) > max_chars:  # a cap smaller than the intro itself: still never over it
        out = cut_at_word(out, max_chars)
    return out


# --- pasted recall output -------------------------------------------------------------------------
# Rule: in an assistant turn, lines that carry this tool's own formatting are removed before the turn
# is stored: the intro line, a passage header "[YYYY-MM-DD HH:MM UTC]", and the "user:"/"assistant:"
# and indented lines that follow such a header (a leading "> " quote marker or code fence is allowed).
# If less than MIN_KEPT_CHARS of the turn remain, the whole turn is skipped. So a turn that is mostly a
# paste of recall output never becomes a memory, and an answer that quotes one passage keeps its own words
# but not the quote. Down-weighting was not an option: the engine has no per-turn weight.
MIN_KEPT_CHARS = 40
_PREFIX = r"^\s*(?:>\s*)*"
_PREFIX_RE = re.compile(_PREFIX)
_HEADER_RE = re.compile(_PREFIX + r"\[\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC\]\s*$")
_ROLE_RE = re.compile(_PREFIX + r"(?:user|assistant):\s")
_FENCE_RE = re.compile(_PREFIX + r"(?:```|~~~)\w*\s*$")
_TOOL_LINES = {INTRO, NOTHING_FOUND, NO_MEMORY, UNAVAILABLE}


def strip_pasted_recall(text: str) -> str | None:
    """`text` without pasted recall output; None when what is left is too little to keep as a memory."""
    # Nothing is removed unless a line is a passage header or one of the tool's fixed lines: most turns
    # (and every large pasted log) skip the line-by-line pass.
    if "UTC]" not in text and not any(line in text for line in _TOOL_LINES):
        return text
    kept: list[str] = []
    in_block = False
    removed = False
    for line in text.splitlines():
        bare = _PREFIX_RE.sub("", line, count=1).strip()
        if bare in _TOOL_LINES or _HEADER_RE.match(line):
            in_block = bare not in _TOOL_LINES or in_block
            removed = True
            continue
        if in_block:
            if not line.strip() or _FENCE_RE.match(line):
                continue
            if _ROLE_RE.match(line) or line[:1].isspace() or line.lstrip().startswith(">"):
                removed = True
                continue
            in_block = False
        kept.append(line)
    if not removed:
        return text
    rest = "\n".join(kept).strip()
    return rest if len(rest) >= MIN_KEPT_CHARS else None


def passage_count(rendered: str) -> int:
    """How many passages a rendered answer holds (for tests and the benchmark)."""
    return sum(1 for line in rendered.splitlines() if _HEADER_RE.match(line))


def iter_passage_texts(rendered: str) -> Iterable[str]:
    """The quoted lines of a rendered answer, without headers (for tests)."""
    for line in rendered.splitlines():
        if _ROLE_RE.match(line):
            yield line.split(":", 1)[1].strip()
        elif line.startswith("  "):
            yield line.strip()

"""The service's fixed answers and the rule that keeps pasted tool output out of memory (pure).

The rule is the other side of the tool's output form (`funes_py.render.format_passages`): it recognises
those same passages when an agent pastes them back into its answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..render import INTRO
from ..render import NOTHING as NOTHING_FOUND

NO_MEMORY = "No earlier conversations are stored for this user yet."
UNAVAILABLE = "Conversation memory is unavailable right now; continue without it."
EMPTY_QUERY = "The query is empty: pass a few key words (identifiers, names, key nouns)."

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

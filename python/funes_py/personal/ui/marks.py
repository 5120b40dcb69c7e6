"""The query's words marked in a passage: the passage escaped, each occurrence of a query word (any case, at
the start of a word) wrapped in ``<mark>``. Pure; the templates call ``highlight``."""

from __future__ import annotations

import re

from markupsafe import Markup, escape

# Words this short mark half of every passage ("a", "is", "of") and say nothing about why it was found.
_MIN_WORD = 3
# English words a question is made of but no passage is found by.
_QUESTION_WORDS = frozenset(
    "the and for are was were what where when which who why how did does this that with from have has you your "
    "about there their our can could would should into".split()
)


def query_words(query: str) -> list[str]:
    """The query's distinct words worth marking, longest first (so "indexes" wins over "index")."""
    words = {w.lower() for w in re.findall(r"\w+", query) if len(w) >= _MIN_WORD or not w.isascii()}
    words -= _QUESTION_WORDS
    return sorted(words, key=lambda w: (-len(w), w))


def highlight(text: str, query: str) -> Markup:
    """``text`` escaped for HTML, with the words of ``query`` in ``<mark>``."""
    words = query_words(query)
    if not words:
        return escape(text)
    # At a word's start only, so "key" marks "keys" (the engine stems) but not "turkey".
    pattern = re.compile(r"(?<!\w)(?:" + "|".join(re.escape(w) for w in words) + ")", re.IGNORECASE)
    out: list[str] = []
    last = 0
    for m in pattern.finditer(text):
        out.append(str(escape(text[last : m.start()])))
        out.append(f"<mark>{escape(m.group(0))}</mark>")
        last = m.end()
    out.append(str(escape(text[last:])))
    return Markup("".join(out))

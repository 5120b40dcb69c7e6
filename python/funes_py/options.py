"""``RecallOptions``: every option of a recall, in one frozen object whose defaults are the engine's own
constants. The API, the CLI, the MCP service and the proxy all build one (``RecallOptions(k=3)``,
``opts.replace(sessions=[...])``) and hand it to ``Engine.recall``; the binding reads it field by field
(``rust/src/py/options.rs``). Adding an option: a field here, its extraction there, its field in the core's
``options::RecallOptions``, and where it acts (see ``rust/src/lib.rs``, *Recipes*).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
from collections.abc import Sequence
from typing import Any, Literal

from . import _funes

# The memory size (passages) above which the answer floor rises by `answer_floor_per_decade` per tenfold.
ANSWER_FLOOR_BASE_ROWS: int = _funes.ANSWER_FLOOR_BASE_ROWS

TimeBound = str | _dt.date | _dt.datetime | None
Legs = Literal["hybrid", "dense", "bm25"]


def _iso(t: TimeBound) -> str | None:
    """A time bound as the engine reads it: ISO text (a naive datetime is UTC; a date is the whole day)."""
    if t is None or isinstance(t, str):
        return t
    if isinstance(t, _dt.datetime):
        return (t if t.tzinfo is not None else t.replace(tzinfo=_dt.UTC)).isoformat()
    return t.isoformat()


def _names(v: str | Sequence[str] | None) -> tuple[str, ...]:
    """A filter list: one name, several, or none (all)."""
    if v is None:
        return ()
    return (v,) if isinstance(v, str) else tuple(v)


@dataclasses.dataclass(frozen=True)
class RecallOptions:
    """What a recall returns and how it ranks.

    * ``k`` passages, from ``candidates`` per search leg; ``neighbors`` turns shown around each.
    * ``half_life_days``: recency orders passages of about equal relevance newest first (0: off).
    * Filters, applied before ranking (empty: everything): ``since`` / ``until`` (ISO date or time, or a
      ``date``/``datetime``; a bare ``until`` date includes that day), ``sessions``, ``roles``,
      ``block_types``, ``harnesses``, ``projects`` (working directories, exactly: a coding agent's sessions
      of one project; ``Hit.workdir`` is a hit's).
    * ``min_similarity``: drop passages whose cosine similarity to the query is below it, so a question
      about something never discussed returns nothing. ``answer_floor``: when the query names no identifier
      and no passage found reaches this cosine, return nothing (it reads the best passage, not each).
      ``answer_floor_per_decade``: how much that floor rises per tenfold passages above
      ``ANSWER_FLOOR_BASE_ROWS`` (the best cosine of passages that do not answer grows with their number).
      ``identifier_guard``: a query naming identifiers (``MT-4471``) gets only passages containing one of
      them.
    * ``rerank``: None = automatic when a reranker is loaded and ``candidates >= 4 * k``.
    * ``now`` pins the reference time of recency (benchmarks); ``legs`` "dense" or "bm25" alone (for
      comparisons); ``dense_weight`` the dense leg's weight in the fusion; ``exact``: exact vector search
      on Lance instead of the resident copy; ``keep_repeats``: every copy of a passage said more than once
      (default: the best-ranked copy of each text, case and spacing aside, stands for the others);
      ``near_words``: BM25 also asks for the embedder's near words of the query's words, weighted below
      them (the model's ``thesaurus.tsv``; nothing changes for a model without one).
    """

    k: int = _funes.DEFAULT_K
    candidates: int = _funes.DEFAULT_CANDIDATES
    half_life_days: float = _funes.DEFAULT_HALF_LIFE_DAYS
    neighbors: int = _funes.DEFAULT_NEIGHBORS
    since: TimeBound = None
    until: TimeBound = None
    sessions: Sequence[str] = ()
    roles: Sequence[str] = ()
    block_types: Sequence[str] = ()
    harnesses: Sequence[str] = ()
    projects: Sequence[str] = ()
    min_similarity: float | None = None
    answer_floor: float | None = None
    answer_floor_per_decade: float = 0.0
    identifier_guard: bool = False
    rerank: bool | None = None
    now: TimeBound = None
    legs: Legs = "hybrid"
    dense_weight: float = _funes.DEFAULT_DENSE_WEIGHT
    exact: bool = False
    keep_repeats: bool = False
    near_words: bool = True

    def __post_init__(self) -> None:
        # Normalised once, here, so the binding reads plain values: ISO text and tuples.
        for name in ("since", "until", "now"):
            object.__setattr__(self, name, _iso(getattr(self, name)))
        for name in ("sessions", "roles", "block_types", "harnesses", "projects"):
            object.__setattr__(self, name, _names(getattr(self, name)))
        if self.k < 0 or self.candidates < 0 or self.neighbors < 0:
            raise ValueError("k, candidates and neighbors must not be negative")
        if self.answer_floor_per_decade < 0:
            raise ValueError("answer_floor_per_decade must not be negative: a larger memory never needs a lower floor")

    def answer_floor_at(self, rows: int) -> float | None:
        """The answer floor a memory of ``rows`` passages gets: ``answer_floor`` raised by
        ``answer_floor_per_decade`` per tenfold passages above ``ANSWER_FLOOR_BASE_ROWS`` (None: no floor)."""
        return _funes.answer_floor_at(self, rows)

    def replace(self, **changes: Any) -> RecallOptions:
        """A copy with ``changes``; an unknown name is a ``TypeError``."""
        return dataclasses.replace(self, **changes)

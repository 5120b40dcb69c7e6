"""Fusion kernels for the offline lab: pure functions from one query's leg results to a ranking.

A query's `Pool` holds what both legs found at some depth (each leg's top `depth` rows with its own score)
and, for every row of the union, both raw scores: its cosine estimate to the query (the engine computes it
for every candidate already, `Hit.similarity`) and its BM25 score (0 when it shares no term; the resident
BM25 scores every document it touches before it cuts to the top n). `wanted` / `id_count` feed the identifier
leg. Everything the engine's fusion reads is in these numbers, so a formula here ranks as it would there.

* `score_fusion` is the engine's fusion since the port (`rust/src/search/fusion.rs`, main d3ff2eb): each
  leg's raw scores as z-scores over that leg's own top list (`ENGINE_NORM`), combined convexly (dense weight
  0.3), plus `ENGINE_ID_BONUS` times the share of the query's identifiers a row names and `DAY_BONUS` for a
  row said near a day the query names; other normalisations and weights are the levers the sweep tried.
* `rrf` is the engine before the port: reciprocal-rank fusion of dense (weight 0.3), BM25 and an identifier
  list, k 60, equal scores sharing a rank. The lab keeps it as the baseline its first tables and `sweep`
  compare against; the engine no longer has it.
* `finish` is what the engine does after fusion either way (`search/mod.rs`): the first `candidates`, the
  floor, the guard, recency, one copy of each text, the top k.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date

RRF_K = 60.0   # `rrf`'s k, as the engine before the port had it
RECENCY_SHARE = 0.02
# The engine's score fusion (`rust/src/search/fusion.rs`): dense weight, each leg's normalisation, the bonus
# for the query's identifiers.
ENGINE_ALPHA, ENGINE_NORM, ENGINE_ID_BONUS = 0.3, "z", 0.5
# `options::DAY_BONUS`: what a passage said near a day the query names adds in fused units (`near_day`), and
# `DAY_WINDOW_BEFORE` / `DAY_WINDOW_AFTER`: the days around a named day that count as near it.
DAY_BONUS = 2.0
DAY_WINDOW_BEFORE, DAY_WINDOW_AFTER = 7, 2


@dataclass
class Pool:
    dense: list[tuple[int, float]]           # the dense leg's top rows, best first (row, cosine)
    bm25: list[tuple[int, float]]            # the BM25 leg's top rows, best first (row, score)
    cos: dict[int, float]                    # cosine of every row in either list
    bm: dict[int, float]                     # BM25 score of every row in either list (0: no shared term)
    id_count: dict[int, int] = field(default_factory=dict)   # wanted identifiers each row contains
    wanted: int = 0                          # identifiers the query names
    age_days: dict[int, float] = field(default_factory=dict)  # for recency; absent rows count as fresh
    chunk_id: dict[int, str] = field(default_factory=dict)   # the engine's chunk ids: its tie-breaker
    near_day: set[int] = field(default_factory=set)          # rows said near a day the query names

    def tie(self, r: int) -> str:
        return self.chunk_id.get(r) or f"{r:016d}"

    def cut(self, depth: int) -> Pool:
        """The pool as a leg depth of `depth` would have found it."""
        d, b = self.dense[:depth], self.bm25[:depth]
        rows = {r for r, _ in d} | {r for r, _ in b}
        return Pool(d, b, {r: self.cos[r] for r in rows}, {r: self.bm[r] for r in rows},
                    {r: c for r, c in self.id_count.items() if r in rows}, self.wanted,
                    {r: a for r, a in self.age_days.items() if r in rows}, self.chunk_id,
                    self.near_day & rows)  # fmt: skip


def competition_ranks(scores: Sequence[float]) -> list[int]:
    """Competition ranks, as the RRF engine ranked a leg (`Ranked::by_score` before the port): equal
    neighbours share a rank (0, 1, 1, 3)."""
    ranks: list[int] = []
    for i, s in enumerate(scores):
        ranks.append(ranks[i - 1] if i > 0 and s == scores[i - 1] else i)
    return ranks


def identifier_order(pool: Pool) -> list[int]:
    """The RRF engine's identifier list (`fusion::identifier_ranking` before the port, where score fusion
    replaced it by the identifier bonus): rows naming wanted identifiers, most first, then BM25's order, then
    dense's (the order the engine listed candidates in)."""
    if not pool.wanted:
        return []
    seen: dict[int, int] = {}
    for r, _ in pool.bm25 + pool.dense:
        if r not in seen and pool.id_count.get(r, 0) > 0:
            seen[r] = len(seen)
    return sorted(seen, key=lambda r: (-pool.id_count[r], seen[r]))


def recency_factor(age_days: float | None, half_life_days: float) -> float:
    if age_days is None or half_life_days <= 0:
        return 1.0
    return 1.0 - RECENCY_SHARE * (1.0 - 0.5 ** (max(age_days, 0.0) / half_life_days))


def finish(pool: Pool, fused: list[tuple[int, float]], candidates: int, k: int, floor: float | None,
           guard: bool, half_life_days: float, floor_spares_ids: bool = False,
           text_of: Callable[[int], str] | None = None) -> list[int]:  # fmt: skip
    """The engine's steps after fusion: the first `candidates` (distinct texts when `text_of` gives a row's
    text; None keeps repeats), the relevance floor on cosine, the identifier guard, recency, one copy of each
    text, the top k (ties by row). `floor_spares_ids`: a row naming an identifier the query names passes the
    floor whatever its cosine (the lever measured in `floor_lab`). The engine's answer floor, which reads the
    best cosine of the legs before fusion, is `floor_lab.answers_nothing`."""
    def above(r: int) -> bool:
        return floor is None or pool.cos[r] >= floor or (floor_spares_ids and pool.id_count.get(r, 0) > 0)

    if text_of is None:
        cut = fused[:candidates]
    else:   # `repeats::first_n_texts`: the first `candidates` distinct texts, every copy of them
        texts: set[str] = set()
        cut = []
        for r, s in fused:
            key = repeat_key(text_of(r))
            if key in texts or len(texts) < candidates:
                texts.add(key)
                cut.append((r, s))
    kept = [(r, s) for r, s in cut if above(r)]
    if guard and pool.wanted:
        kept = [(r, s) for r, s in kept if pool.id_count.get(r, 0) > 0]
    kept = [(r, s * recency_factor(pool.age_days.get(r), half_life_days)) for r, s in kept]
    kept.sort(key=lambda x: (-x[1], pool.tie(x[0])))
    ranked, seen = [], set()
    for r, _ in kept:
        if text_of is not None:   # `search::repeats`: the best-placed copy of each text, case and spacing aside
            key = repeat_key(text_of(r))
            if key in seen:
                continue
            seen.add(key)
        ranked.append(r)
    return ranked[:k]


def near_named_day(said: date | None, days: list[date]) -> bool:
    """`fusion::near_named_day`: said from `DAY_WINDOW_BEFORE` days before one of `days` to
    `DAY_WINDOW_AFTER` after."""
    return said is not None and any(-DAY_WINDOW_BEFORE <= (said - d).days <= DAY_WINDOW_AFTER for d in days)


def repeat_key(text: str) -> str:
    """`repeats::repeat_key`: lower case, whitespace runs as one space, trimmed."""
    return " ".join(w.lower() for w in text.split())


def rrf(pool: Pool, dense_weight: float = 0.3, k: float = RRF_K) -> list[tuple[int, float]]:
    """Reciprocal-rank fusion as `fusion::rrf_fuse` did it before the port, over dense, BM25 and the
    identifier list."""
    acc: dict[int, list[float]] = {}
    lists = [([r for r, _ in pool.dense], competition_ranks([s for _, s in pool.dense]), dense_weight),
             ([r for r, _ in pool.bm25], competition_ranks([s for _, s in pool.bm25]), 1.0)]
    ids = identifier_order(pool)
    lists.append((ids, list(range(len(ids))), 1.0))
    for rows, ranks, w in lists:
        for r, rank in zip(rows, ranks, strict=True):
            e = acc.setdefault(r, [0.0, math.inf])
            e[0] += w / (k + rank)
            e[1] = min(e[1], rank)
    return sorted(((r, s) for r, (s, _) in acc.items()), key=lambda x: (-x[1], acc[x[0]][1], pool.tie(x[0])))


def _normalise(values: dict[int, float], over: Sequence[float], how: str) -> dict[int, float]:
    """Scores mapped onto a common scale by the statistics of `over` (the leg's own top list)."""
    if not over:
        return {r: 0.0 for r in values}
    if how == "minmax":
        lo, hi = min(over), max(over)
        span = hi - lo
        return {r: (v - lo) / span if span > 0 else 1.0 for r, v in values.items()}
    if how == "max":
        hi = max(over)
        return {r: v / hi if hi > 0 else 0.0 for r, v in values.items()}
    if how == "z":
        mean = sum(over) / len(over)
        sd = math.sqrt(sum((x - mean) ** 2 for x in over) / len(over)) or 1.0
        return {r: (v - mean) / sd for r, v in values.items()}
    if how == "raw":
        return dict(values)
    raise ValueError(f"unknown normalisation {how!r}")


def score_fusion(pool: Pool, alpha: float, norm: str = "minmax", dense_norm: str | None = None,
                 id_bonus: float = 0.0) -> list[tuple[int, float]]:  # fmt: skip
    """`alpha` × normalised cosine + (1 − alpha) × normalised BM25 + `id_bonus` × share of the query's
    identifiers the row names, over the union of both legs. Each leg is normalised by its own top list
    (`norm`, or `dense_norm` for the dense leg), so a leg's confident lead counts, not only its order.
    Returned as exp(fused): positive, in the same order, so recency's factor (at most 1 − RECENCY_SHARE)
    moves a fused score by at most ln(1 − 0.02) ≈ −0.02 whatever its sign."""
    rows = list(pool.cos)
    nd = _normalise({r: pool.cos[r] for r in rows}, [s for _, s in pool.dense], dense_norm or norm)
    nb = _normalise({r: pool.bm[r] for r in rows}, [s for _, s in pool.bm25], norm)
    out = []
    for r in rows:
        s = alpha * nd[r] + (1.0 - alpha) * nb[r]
        if pool.wanted and id_bonus:
            s += id_bonus * pool.id_count.get(r, 0) / pool.wanted
        if r in pool.near_day:
            s += DAY_BONUS
        out.append((r, math.exp(s)))
    out.sort(key=lambda x: (-x[1], pool.tie(x[0])))
    return out


def lance_view(pool: Pool) -> Pool:
    """The pool as the Lance path (`exact`, or no resident copy) sees it: Lance's BM25 gives no score to a
    row outside its list, so such a row scores 0 (the spec's rule), not its true BM25 value."""
    listed = {r for r, _ in pool.bm25}
    bm = {r: (s if r in listed else 0.0) for r, s in pool.bm.items()}
    return Pool(pool.dense, pool.bm25, pool.cos, bm, pool.id_count, pool.wanted, pool.age_days, pool.chunk_id,
                pool.near_day)

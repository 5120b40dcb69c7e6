"""Levers beyond the fusion formula, simulated on a `lab_corpus.Corpus`: more keys per passage for the dense
leg, a deterministic second hop (and pseudo-relevance feedback), and a per-session cap on the answer.

Each takes what the engine has at query time (the query, its vector, the first ranking) and returns a new
ranking, so its cost per query is what it adds to a recall: a second BM25 pass and a second dense scan for
the second hop, nothing at query time for extra keys (more vectors per row at index time).
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime

import numpy as np

from .fusion import Pool, finish, score_fusion
from .lab_corpus import Corpus
from .lexical import K1, analyse, query_terms

# ---------------------------------------------------------------------------------------------------
# Keys: the texts a row can be embedded as, besides its own.

def key_texts(corpus: Corpus, kind: str) -> list[str]:
    """One text per row: "window" (previous, own and next turn of the session), "prev" (previous and own),
    "opening" (the session's first user turn: its opening ask), "dated" (the turn's date, then the text)."""
    out = []
    for i, r in enumerate(corpus.rows):
        rows = corpus.sessions[r.session_id]
        at = rows.index(i)
        if kind == "window":
            out.append("\n".join(corpus.rows[j].text for j in rows[max(0, at - 1): at + 2]))
        elif kind == "prev":
            out.append("\n".join(corpus.rows[j].text for j in rows[max(0, at - 1): at + 1]))
        elif kind == "opening":
            first = next((j for j in rows if corpus.rows[j].role == "user"), rows[0])
            out.append(corpus.rows[first].text)
        elif kind == "dated":
            day = datetime.fromisoformat(r.ts.replace("Z", "+00:00"))
            out.append(f"{day.day} {day:%B %Y}: {r.text}")
        else:
            raise ValueError(f"unknown key kind {kind!r}")
    return out


# ---------------------------------------------------------------------------------------------------
# Second hop and pseudo-relevance feedback

def expansion_terms(corpus: Corpus, rows: list[int], query: str, terms: int, min_idf: float) -> dict[str, float]:
    """The rarest terms of `rows` that the query does not have (idf at least `min_idf`), weighted by
    idf × frequency among the rows, the `terms` best, scaled so the best weighs 1."""
    have = set(query_terms(query))
    counts: Counter[str] = Counter()
    for r in rows:
        counts.update(set(analyse(corpus.rows[r].text)))
    scored = {t: corpus.bm25.idf(t) * c for t, c in counts.items()
              if t not in have and corpus.bm25.idf(t) >= min_idf and not t.isdigit()}
    best = sorted(scored.items(), key=lambda x: (-x[1], x[0]))[:terms]
    top = best[0][1] if best else 1.0
    return {t: s / top for t, s in best}


def rocchio(corpus: Corpus, qv: np.ndarray, rows: list[int], beta: float) -> np.ndarray:
    """The query vector moved towards the mean of `rows`' vectors (normalised)."""
    if not rows or beta <= 0:
        return qv
    v = qv / np.linalg.norm(qv) + beta * corpus.vectors[rows].mean(axis=0)
    return (v / np.linalg.norm(v)).astype(np.float32)


def rrf_merge(first: list[int], second: list[int], w2: float, k: float = 60.0) -> list[int]:
    """Two rankings merged by reciprocal rank (the first weighs 1), ties to the first ranking's order."""
    score: dict[int, float] = {}
    for w, ranking in ((1.0, first), (w2, second)):
        for i, r in enumerate(ranking):
            score[r] = score.get(r, 0.0) + w / (k + i)
    pos = {r: i for i, r in enumerate(first)}
    return sorted(score, key=lambda r: (-score[r], pos.get(r, len(pos)), r))


def session_cap(ranking: list[int], corpus: Corpus, cap: int) -> list[int]:
    """The ranking with at most `cap` rows of any one session before every other session's rows (the
    overflow keeps its order after them): diversifies an answer across conversations."""
    if cap <= 0:
        return ranking
    seen: Counter[str] = Counter()
    head, tail = [], []
    for r in ranking:
        s = corpus.rows[r].session_id
        (head if seen[s] < cap else tail).append(r)
        seen[s] += 1
    return head + tail


# ---------------------------------------------------------------------------------------------------
# Levers as rankings: what `fusion_lab --levers` compares with the engine's ranking (`Config.lever`)

LONG = 50  # the first ranking a lever reorders or merges into, before the cut to k


def first_ranking(p: Pool, fuse, candidates: int, floor: float | None, guard: bool, half_life: float) -> list[int]:
    return finish(p, fuse(p), candidates, LONG, floor, guard, half_life)


def capped(cap: int):
    """The engine's ranking with at most `cap` passages of one session before the others (`session_cap`)."""
    def lever(corpus: Corpus, query: str, p: Pool, fuse, candidates: int, floor, guard: bool, half_life: float) -> list[int]:
        return session_cap(first_ranking(p, fuse, candidates, floor, guard, half_life), corpus, cap)
    return lever


def second_hop(top: int, terms: int, weight: float, min_idf: float):
    """The rare terms of the first ranking's `top` passages (`expansion_terms`) added to the query for a
    second BM25 pass, its ranking merged into the first with `weight` (`rrf_merge`)."""
    def lever(corpus: Corpus, query: str, p: Pool, fuse, candidates: int, floor, guard: bool, half_life: float) -> list[int]:
        first = first_ranking(p, fuse, candidates, floor, guard, half_life)
        extra = expansion_terms(corpus, first[:top], query, terms, min_idf)
        if not extra:
            return first
        scores = corpus.bm25.scores(query, extra=extra)
        second = [r for r, _ in sorted(scores.items(), key=lambda x: (-x[1], x[0]))[:LONG]]
        return rrf_merge(first, second, weight)
    return lever


def bm25_coverage(corpus: Corpus, query: str, p: Pool) -> float:
    """BM25's best score as a share of what a passage holding every query term once could score at most
    (idf × (k1 + 1) summed over the query's known terms): how well the stored words cover the question."""
    best = sum(corpus.bm25.idf(t) * (K1 + 1.0) for t in set(query_terms(query)) if t in corpus.bm25.postings)
    return min(1.0, p.bm25[0][1] / best) if best > 0 and p.bm25 else 0.0


def coverage_weight(low: float, high: float, pivot: float):
    """Score fusion with dense weight `high` when BM25 covers the query less than `pivot`, else `low` (a
    per-query leg weight: reworded questions share few words with their answer)."""
    def lever(corpus: Corpus, query: str, p: Pool, fuse, candidates: int, floor, guard: bool, half_life: float) -> list[int]:
        alpha = high if bm25_coverage(corpus, query, p) < pivot else low
        return first_ranking(p, lambda q: score_fusion(q, alpha, "z", None, 0.5), candidates, floor, guard, half_life)
    return lever

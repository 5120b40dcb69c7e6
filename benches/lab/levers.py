"""Levers beyond the fusion formula, simulated on a `lab.corpus.Corpus`: more keys per passage for the dense
leg, a deterministic second hop (and pseudo-relevance feedback), and a per-session cap on the answer.

Each takes what the engine has at query time (the query, its vector, the first ranking) and returns a new
ranking, so its cost per query is what it adds to a recall: a second BM25 pass and a second dense scan for
the second hop, nothing at query time for extra keys (more vectors per row at index time).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import numpy as np

from .corpus import Corpus
from .fusion import ENGINE_ID_BONUS, ENGINE_NORM, Pool, score_fusion
from .lexical import K1, _split, analyse, query_terms, words_of

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


def neighbour_vectors(corpus: Corpus, before: float, after: float = 0.0) -> np.ndarray:
    """Each row's vector plus `before` times the previous row's of its session and `after` times the next
    one's, normalised: a key that knows what led to a turn, made of the vectors the index already has (no
    second embedding, unlike "prev" in `key_texts`). A session's first row keeps its own direction."""
    assert corpus.vectors is not None
    v = corpus.vectors / np.maximum(np.linalg.norm(corpus.vectors, axis=1, keepdims=True), 1e-12)
    out = v.copy()
    for rows in corpus.sessions.values():
        idx = np.asarray(rows)
        if before and len(idx) > 1:
            out[idx[1:]] += before * v[idx[:-1]]
        if after and len(idx) > 1:
            out[idx[:-1]] += after * v[idx[1:]]
    return (out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)).astype(np.float32)


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


# ---------------------------------------------------------------------------------------------------
# Query terms by meaning: BM25 also asks for the corpus's words nearest each query word in the embedder's
# space ("ticket" -> "incident"), so a synonym the dense leg misses can still match a word.

def vocabulary(corpus: Corpus) -> dict[str, str]:
    """Each BM25 term of the corpus as a word one can embed: term -> its commonest surface form."""
    counts: Counter[str] = Counter()
    for r in corpus.rows:
        counts.update(w.lower() for w in _split(r.text) if w.isalpha() and w.isascii() and len(w) >= 3)
    out: dict[str, str] = {}
    for w, _ in counts.most_common():
        for t in analyse(w):
            out.setdefault(t, w)
    return out


class MeaningTerms:
    """The corpus's words nearest a query's words (cosine of the words embedded alone)."""

    def __init__(self, corpus: Corpus, models, word_vectors: dict[str, np.ndarray]):
        from .corpus import embed_cached

        vocab = vocabulary(corpus)
        self.terms = list(vocab)
        v = embed_cached(models, [vocab[t] for t in self.terms], f"{corpus.name}-vocab")
        self.vectors = v / np.linalg.norm(v, axis=1, keepdims=True)
        self.word_vectors = word_vectors
        self.corpus = corpus

    def extra(self, query: str, tau: float, weight: float, per_word: int, absent_only: bool) -> dict[str, float]:
        have = set(query_terms(query))
        out: dict[str, float] = {}
        for w in words_of(query):
            stems = analyse(w)
            if not stems or (absent_only and stems[0] in self.corpus.bm25.postings):
                continue
            v = self.word_vectors[w]
            sims = self.vectors @ (v / np.linalg.norm(v))
            for i in np.argsort(-sims)[:per_word + 1]:
                t, sim = self.terms[int(i)], float(sims[int(i)])
                if sim >= tau and t not in have and not t.isdigit():
                    out[t] = max(out.get(t, 0.0), weight * sim)
        return out


class Thesaurus:
    """The same from a fixed word list instead of the corpus's words: the embedder's own whole-word tokens
    (about 21,000 for MiniLM's WordPiece), embedded once per model, so nothing is embedded per memory. A
    query word's nearest list words are kept when the memory has their term."""

    def __init__(self, models, word_vectors: dict[str, np.ndarray], tokenizer_json: Path):
        from funes_py.convert.thesaurus import vocabulary_words

        from .corpus import embed_cached

        self.words = vocabulary_words(tokenizer_json)
        self.listed = set(self.words)
        v = embed_cached(models, self.words, "wordpiece-words")
        self.vectors = v / np.linalg.norm(v, axis=1, keepdims=True)
        self.word_vectors = word_vectors
        self._near: dict[str, list[tuple[str, float]]] = {}

    def near(self, word: str, n: int = 10) -> list[tuple[str, float]]:
        """The `n` list words nearest `word` (itself aside), as BM25 terms with their cosine."""
        if word not in self._near:
            v = self.word_vectors[word]
            sims = self.vectors @ (v / np.linalg.norm(v))
            out = []
            for i in np.argsort(-sims)[:n + 1]:
                w = self.words[int(i)]
                if w != word and (t := analyse(w)):
                    out.append((t[0], float(sims[int(i)])))
            self._near[word] = out
        return self._near[word]

    def extra(self, corpus: Corpus, query: str, tau: float, weight: float, per_word: int, absent_only: bool,
              present_only: bool = True, listed_only: bool = False) -> dict[str, float]:  # fmt: skip
        """`present_only`: the nearest words the memory has (False: the list's nearest, had or not, which
        needs no look at the memory's terms, as a query through Lance's own index could not)."""
        have = set(query_terms(query))
        out: dict[str, float] = {}
        for w in words_of(query):
            stems = analyse(w)
            if not stems or (absent_only and stems[0] in corpus.bm25.postings) or (listed_only and w not in self.listed):
                continue
            kept = [(t, sim) for t, sim in self.near(w) if sim >= tau and t not in have
                    and (t in corpus.bm25.postings or not present_only)]  # fmt: skip
            for t, sim in (kept if per_word == 0 else kept[:per_word]):
                out[t] = max(out.get(t, 0.0), weight * sim)
        return out


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

# A lever's view of the engine: `first(pool)` is the engine's ranking of a pool, LONG deep (its fusion, then
# its cut to `candidates`, floor, guard and recency); `first(pool, fuse)` the same with another fusion.
First = Callable[..., list[int]]


def capped(cap: int):
    """The engine's ranking with at most `cap` passages of one session before the others (`session_cap`)."""
    def lever(corpus: Corpus, query: str, p: Pool, first: First) -> list[int]:
        return session_cap(first(p), corpus, cap)
    return lever


def second_hop(top: int, terms: int, weight: float, min_idf: float):
    """The rare terms of the first ranking's `top` passages (`expansion_terms`) added to the query for a
    second BM25 pass, its ranking merged into the first with `weight` (`rrf_merge`)."""
    def lever(corpus: Corpus, query: str, p: Pool, first: First) -> list[int]:
        ranked = first(p)
        extra = expansion_terms(corpus, ranked[:top], query, terms, min_idf)
        if not extra:
            return ranked
        scores = corpus.bm25.scores(query, extra={**(corpus.near_extra(query) or {}), **extra})
        second = [r for r, _ in sorted(scores.items(), key=lambda x: (-x[1], x[0]))[:LONG]]
        return rrf_merge(ranked, second, weight)
    return lever


def bm25_coverage(corpus: Corpus, query: str, p: Pool) -> float:
    """BM25's best score as a share of what a passage holding every query term once could score at most
    (idf × (k1 + 1) summed over the query's known terms): how well the stored words cover the question."""
    best = sum(corpus.bm25.idf(t) * (K1 + 1.0) for t in set(query_terms(query)) if t in corpus.bm25.postings)
    return min(1.0, p.bm25[0][1] / best) if best > 0 and p.bm25 else 0.0


def coverage_weight(low: float, high: float, pivot: float):
    """Score fusion with dense weight `high` when BM25 covers the query less than `pivot`, else `low` (a
    per-query leg weight: reworded questions share few words with their answer)."""
    def lever(corpus: Corpus, query: str, p: Pool, first: First) -> list[int]:
        alpha = high if bm25_coverage(corpus, query, p) < pivot else low
        return first(p, lambda q: score_fusion(q, alpha, ENGINE_NORM, None, ENGINE_ID_BONUS))
    return lever

"""Scoring for the recall benchmarks: pure functions, no engine, no disk.

- `hit_at_k` / `hit_rates`: does the expected answer string appear in one of the first k passages
  (the synthetic history, where each question has exactly one answer string).
- `turn_recall_at_k` / `turn_recall_table`: LoCoMo's turn-level recall, the share of a question's
  evidence turns found among the first k *distinct* turns returned.
- `percentiles`: latency summaries, nearest-rank.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

# An answer matches only as a whole token: the characters around it must not continue it. A word
# character continues it, and so does "-" or "." directly followed by a word character, because
# identifiers are made of such runs: "MT-104" must not hit "MT-1040", "MT-104-B" or "XMT-104", but
# "MT-104." at the end of a sentence is a hit. Whitespace inside an answer ("Priya Raman") matches any
# run of whitespace, so a passage that wraps the name over a line break still counts. Korean attaches
# particles to the word before them (MT-4471을, L-12에서, 3.7%로): a Hangul syllable right after an answer
# that ends in a Latin letter, digit or sign is a particle, not part of the token. (A Hangul answer, a
# Korean name, is still continued by Hangul: the history writes names before a space and an honorific.)
_BEFORE = r"(?<!\w)(?<!\w[-.])"
_AFTER = r"(?:(?<![가-힣])(?=[가-힣])|(?!\w)(?![-.]\w))"


def _literal(s: str) -> str:
    return r"\s+".join(re.escape(part) for part in s.split())


def boundary_regex(strings: Iterable[str]) -> re.Pattern[str]:
    """One case-insensitive pattern matching any of `strings` under the token-boundary rule.

    Longest first, so one pass over a text finds every answer (the generator checks 100 answers
    against 10,000 conversations this way instead of one search per answer and conversation).
    """
    alts = sorted({s.strip() for s in strings if s.strip()}, key=len, reverse=True)
    if not alts:
        raise ValueError("boundary_regex needs at least one non-empty string")
    return re.compile(_BEFORE + "(?:" + "|".join(_literal(a) for a in alts) + ")" + _AFTER, re.IGNORECASE)


@lru_cache(maxsize=4096)
def answer_pattern(answer: str) -> re.Pattern[str]:
    """The compiled token-boundary pattern for one answer (cached: each question asks many times)."""
    return boundary_regex([answer])


def contains_answer(text: str, answer: str) -> bool:
    return answer_pattern(answer).search(text) is not None


def hit_at_k(returned_texts: Sequence[str], answer: str, k: int) -> bool:
    """True when `answer` appears (case-insensitive, whole token) in one of the first k passages."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    pattern = answer_pattern(answer)
    return any(pattern.search(t) for t in returned_texts[:k])


def hit_rates(results: Iterable[tuple[Sequence[str], str]], ks: Sequence[int] = (1, 3, 8)) -> dict:
    """Share of questions with a hit at each k. `results` holds (returned_texts, answer) pairs.

    Returns {"n": questions, "hit@1": share, "hit@3": share, ...}; shares are 0.0 when n is 0.
    """
    n = 0
    hits = dict.fromkeys(ks, 0)
    for returned, answer in results:
        n += 1
        for k in ks:
            hits[k] += hit_at_k(returned, answer, k)
    out: dict = {"n": n}
    for k in ks:
        out[f"hit@{k}"] = hits[k] / n if n else 0.0
    return out


def percentiles(samples_ms: Sequence[float], ps: Sequence[float] = (50, 95, 99)) -> dict:
    """Nearest-rank percentiles: the ceil(p/100 * n)-th smallest sample, so every figure reported is a
    latency that was actually observed (with 100 samples, p99 is the second slowest, not an interpolation).

    Returns {"n": count, "p50": ..., "p95": ..., "p99": ..., "max": ...}. Raises ValueError on no samples.
    """
    if not samples_ms:
        raise ValueError("percentiles of an empty sample")
    xs = sorted(samples_ms)
    n = len(xs)
    out: dict = {"n": n}
    for p in ps:
        if not 0 < p <= 100:
            raise ValueError(f"percentile must be in (0, 100], got {p}")
        rank = max(1, math.ceil(p / 100 * n))
        out[f"p{p:g}"] = xs[rank - 1]
    out["max"] = xs[-1]
    return out


def first_distinct(items: Iterable[str], k: int) -> list[str]:
    """The first k distinct items, in order (passages can repeat a turn, or cover several)."""
    seen: dict[str, None] = {}
    for item in items:
        if item not in seen:
            seen[item] = None
            if len(seen) == k:
                break
    return list(seen)


def turn_recall_at_k(returned_turn_uuids: Sequence[str], evidence_turns: Sequence[str], k: int) -> float:
    """Share of the (distinct) evidence turns found among the first k DISTINCT returned turns.

    `returned_turn_uuids` is in rank order and may repeat a turn (two chunks of one turn, or a passage
    that spans turns flattened into its turns); repeats do not use up the budget of k.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    evidence = set(evidence_turns)
    if not evidence:
        raise ValueError("turn recall is undefined without evidence turns (skip such questions)")
    top = set(first_distinct(returned_turn_uuids, k))
    return len(evidence & top) / len(evidence)


def turn_recall_table(results: Iterable[tuple[str, Sequence[str], Sequence[str]]],
                      ks: Sequence[int] = (1, 5, 10, 25, 50)) -> dict[str, dict]:
    """Average turn recall@k and turn hit@k, per category and over all ("ALL").

    `results` holds (category, returned_turn_uuids_in_rank_order, evidence_turns). turn_hit@k is 1 when
    any evidence turn is among the first k distinct turns (as in LoCoMo's bm25_reference.txt).
    Returns {category: {"n": count, "turn_recall@5": mean, "turn_hit@5": mean, ...}}, "ALL" last.
    """
    sums: dict[str, dict[str, float]] = {}
    counts: dict[str, int] = {}
    for category, returned, evidence in results:
        scores = {}
        for k in ks:
            r = turn_recall_at_k(returned, evidence, k)
            scores[f"turn_recall@{k}"] = r
            scores[f"turn_hit@{k}"] = float(r > 0)
        for cat in (category, "ALL"):
            row = sums.setdefault(cat, {})
            counts[cat] = counts.get(cat, 0) + 1
            for name, v in scores.items():
                row[name] = row.get(name, 0.0) + v
    order = [c for c in sums if c != "ALL"] + (["ALL"] if "ALL" in sums else [])
    return {c: {"n": counts[c], **{m: v / counts[c] for m, v in sums[c].items()}} for c in order}

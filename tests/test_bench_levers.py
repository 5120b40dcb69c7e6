"""The lab's levers beyond the fusion formula (`benches/levers.py`) do what `fusion_lab --levers` reports them
as doing, on a corpus of a few passages. Pure Python; no engine, no model."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benches import fusion, levers  # noqa: E402
from benches.lab_corpus import Corpus, Row  # noqa: E402

TEXTS = [
    ("s1", "the boiler pressure dropped after the plumber visit"),
    ("s1", "we topped the boiler up to one point five bar"),
    ("s1", "the plumber invoice was sent by email"),
    ("s2", "the radiator in the hall is cold again"),
    ("s3", "book the chimney sweep for the boiler flue"),
]


def corpus() -> Corpus:
    rows = [Row(s, f"{s}-{i}", i, "2026-11-01T10:00:00Z", "user", t) for i, (s, t) in enumerate(TEXTS)]
    return Corpus("levers", rows, None)


def pool_for(c: Corpus, query: str) -> fusion.Pool:
    bm25 = c.bm25.top(query, 10)
    cos = {r: 0.5 - 0.01 * r for r in range(len(c.rows))}
    dense = sorted(cos.items(), key=lambda x: -x[1])
    return fusion.Pool(dense, bm25, cos, {r: dict(bm25).get(r, 0.0) for r in cos})


def test_session_cap_moves_a_sessions_overflow_behind_the_others():
    c = corpus()
    assert levers.session_cap([0, 1, 2, 3, 4], c, 2) == [0, 1, 3, 4, 2]
    assert levers.session_cap([0, 1, 2, 3, 4], c, 0) == [0, 1, 2, 3, 4]


def test_coverage_is_high_for_the_stored_words_and_low_for_other_words():
    c = corpus()
    close = "boiler pressure plumber"
    reworded = "heating system low after tradesman came boiler"
    assert levers.bm25_coverage(c, close, pool_for(c, close)) > levers.bm25_coverage(c, reworded, pool_for(c, reworded))
    assert levers.bm25_coverage(c, "zzz unknown", pool_for(c, "zzz unknown")) == 0.0


def test_a_lever_returns_a_ranking_of_the_pool_and_the_second_hop_adds_passages_it_found():
    c = corpus()
    query = "boiler pressure"
    p = pool_for(c, query)
    fuse = lambda q: fusion.score_fusion(q, 0.3, "z", None, 0.5)  # noqa: E731
    first = levers.first_ranking(p, fuse, 30, None, False, 0.0)
    assert set(first) == set(p.cos) and first[0] == 0
    hop = levers.second_hop(1, 5, 0.5, 0.0)(c, query, p, fuse, 30, None, False, 0.0)
    assert hop[0] == 0 and set(first) <= set(hop)
    capped = levers.capped(1)(c, query, p, fuse, 30, None, False, 0.0)
    assert sorted(capped) == sorted(first) and [c.rows[r].session_id for r in capped[:3]] == ["s1", "s3", "s2"]

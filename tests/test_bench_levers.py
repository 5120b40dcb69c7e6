"""The lab's levers beyond the fusion formula (`benches/lab/levers.py`) do what `fusion_lab --levers` reports them
as doing, on a corpus of a few passages. Pure Python; no engine, no model."""
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benches.lab import fusion, levers  # noqa: E402
from benches.lab.corpus import Corpus, Row  # noqa: E402

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
    reworded = "heating system low after tradesman came, boiler or radiator"
    assert levers.bm25_coverage(c, close, pool_for(c, close)) > levers.bm25_coverage(c, reworded, pool_for(c, reworded))
    assert levers.bm25_coverage(c, "zzz unknown", pool_for(c, "zzz unknown")) == 0.0


def test_a_lever_returns_a_ranking_of_the_pool_and_the_second_hop_adds_passages_it_found():
    c = corpus()
    query = "boiler pressure"
    p = pool_for(c, query)
    fuse = lambda q: fusion.score_fusion(q, fusion.ENGINE_ALPHA, fusion.ENGINE_NORM, None, fusion.ENGINE_ID_BONUS)  # noqa: E731
    first = lambda q, f=None: fusion.finish(q, (f or fuse)(q), 30, levers.LONG, None, False, 0.0)  # noqa: E731
    ranked = first(p)
    assert set(ranked) == set(p.cos) and ranked[0] == 0
    hop = levers.second_hop(1, 5, 0.5, 0.0)(c, query, p, first)
    assert hop[0] == 0 and set(ranked) <= set(hop)
    capped = levers.capped(1)(c, query, p, first)
    assert sorted(capped) == sorted(ranked) and [c.rows[r].session_id for r in capped[:3]] == ["s1", "s3", "s2"]


def test_a_neighbour_key_leans_towards_the_turn_before_it_within_its_session_only():
    c = corpus()
    c.vectors = np.eye(len(TEXTS), dtype=np.float32) * 2.0   # orthogonal, not unit: the key normalises
    keys = levers.neighbour_vectors(c, 0.5)
    assert np.allclose(np.linalg.norm(keys, axis=1), 1.0)
    assert np.allclose(keys[0], np.eye(5)[0]), "a session's first turn keeps its own direction"
    assert keys[1][0] > 0 and keys[1][1] > keys[1][0] and keys[1][2] == 0, "s1's second turn: its own, then the first"
    assert keys[3][2] == 0 and np.allclose(keys[3], np.eye(5)[3]), "s2 does not lean on s1's last turn"
    both = levers.neighbour_vectors(c, 0.5, 0.5)
    assert both[1][2] > 0 and both[2][1] > 0 and both[2][3] == 0


def test_the_variants_table_ranks_each_variant_on_pools_built_with_its_keys():
    # Row 1 holds the answer but points away from the query; row 0, the turn before it, is the query itself.
    # With the turn alone the answer is last; leaning on row 0 it comes second (row 0 first).
    from benches.lab import fusion_lab
    from benches.lab.sets import Query, QuerySet

    c = corpus()
    c.vectors = np.array([[1, 0, 0], [-0.2, 1, 0], [0.3, 0, 1], [0.2, 1, 1], [0.1, 0, -1]], dtype=np.float32)
    c.__post_init__()
    qs = QuerySet("tiny", "tuning", "tiny", [Query("q1", "zzz", answer="one point five")])
    qs.vectors = np.array([[1, 0, 0]], dtype=np.float32)
    cfg = fusion_lab.Config("dense only", lambda p: fusion.score_fusion(p, 1.0, "z", None, 0.0), k=3)
    c.add_vectors("lean", levers.neighbour_vectors(c, 1.0))
    variants = [fusion_lab.Variant("turn"), fusion_lab.Variant("lean", ("turn", "lean"))]
    md, rows = fusion_lab.variants_table([qs], {"tiny": c}, variants, cfg, models=None)
    assert [r["variant"] for r in rows] == ["turn", "lean"]
    assert rows[0]["hit@3"] == 0.0 and rows[1]["hit@1"] == 0.0 and rows[1]["hit@3"] == 1.0, rows
    assert md.splitlines()[0] == "| set | split | turn | lean |"


def test_a_masked_query_drops_its_rare_words_and_identifiers_only():
    from benches.lab import fusion_lab

    c = corpus()
    # "radiator" is in one passage of five (idf 1.39), "plumber" in two (0.88); MT-4471 is an identifier.
    assert fusion_lab.masked_query(c, "the radiator and the plumber MT-4471", 1.0) == "the and the plumber"
    assert fusion_lab.masked_query(c, "radiator", 1.0) == "radiator", "never an empty query"


def test_bm25_without_length_normalisation_scores_a_term_alike_in_long_and_short_passages():
    c = corpus()
    default, flat = c.bm25.scores("plumber"), c.bm25.scores("plumber", b=0.0)
    assert default[0] != default[2], "b = 0.75: the shorter passage scores higher"
    assert abs(flat[0] - flat[2]) < 1e-9

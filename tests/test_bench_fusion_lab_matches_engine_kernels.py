"""The fusion lab's re-implementations agree with the engine's kernels on the engine's own test cases
(rust/src/analyzer.rs, resident/bm25.rs, resident/dense.rs, search/fusion.rs), so a formula simulated in
the lab ranks as its Rust port will. Pure Python; no engine."""
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benches.lab import fusion, lexical  # noqa: E402
from benches.lab.corpus import encode  # noqa: E402


def test_analyser_stems_drops_stop_words_and_glues_identifiers():
    doc = lexical.analyse(lexical.fts_document("The pumps were leaking at MT-4471", ""))
    assert "pump" in doc and "mt4471" in doc and "the" not in doc
    assert lexical.query_terms("leaking pump pump MT-4471?") == ["leak", "pump", "mt", "4471", "mt4471"]
    # The stop-word filter runs after the stemmer, as in lance-tokenizer: "very" stems to "veri" and stays.
    assert lexical.analyse("very") == ["veri"] and lexical.analyse("was doing") == []


def test_identifiers_as_the_engine_reads_them():
    assert lexical.identifier_tokens("ticket MT-4471 blocks N-11; see BLD-9W2LNZYG and K-047.") == [
        "mt4471", "n11", "bld9w2lnzyg", "k047"]
    assert lexical.identifier_tokens("an e-mail about 4471 and 3.5 percent") == []
    assert lexical.id_terms("ask about N11 and MT-4471 at 4pm") == ["mt4471", "n11"]
    assert lexical.fts_query("what about MT-4471?") == "what about MT 4471 mt4471"
    assert lexical.fts_document("Yes, C.", "Pick C for N-11?") == "Pick C for N-11?\nYes, C.\nn11"


def test_a_passage_is_indexed_with_its_month_as_the_engine_does():
    # analyzer::tests::a_passage_is_found_by_the_month_it_was_said_in and time::tests.
    doc = lexical.fts_document("We adopted a puppy, N-11 is her tag.", "Any news?", "2022-04-09T10:00:00Z")
    assert doc == "April 2022\nAny news?\nWe adopted a puppy, N-11 is her tag.\nn11"
    assert lexical.month_words("2023-05-31T23:30:00-05:00") == "May 2023"
    assert lexical.month_words("2024-02-29") == "February 2024" and lexical.month_words("last Tuesday") == ""
    ix = lexical.Bm25([("a puppy", "", "2022-04-09T10:00:00Z"), ("a puppy", "", "2022-05-09T10:00:00Z")])
    assert [d for d, _ in ix.top("puppy in April 2022", 2)] == [0, 1]


def test_bm25_follows_the_lance_formula():
    ix = lexical.Bm25([("alpha beta", "", ""), ("beta gamma delta epsilon", "", "")])
    s = ix.scores("alpha")[0]
    idf = math.log(1 + (2 - 1 + 0.5) / (1 + 0.5))
    assert abs(s - idf * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 2 / 3))) < 1e-9
    assert [d for d, _ in ix.top("beta", 5)] == [0, 1]          # the shorter document first
    assert ix.top("absent", 5) == []


def test_context_tail_starts_at_a_word():
    text = "word " * 60
    tail = lexical.tail_at_word(text.strip(), 200)
    assert len(tail) <= 200 and tail.startswith("word") and tail.endswith("word")


def test_int8_codes_round_half_away_from_zero_and_estimate_the_cosine():
    codes, scales = encode(np.array([[1.0, -0.5, 0.25, 0.0]], dtype=np.float32))
    assert codes.tolist() == [[127, -64, 32, 0]]                 # -63.5 -> -64, 31.75 -> 32
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(2, 384)).astype(np.float32)
    (ca, cb), (sa, sb) = encode(np.stack([a, b]))
    est = float(ca.astype(np.int32) @ cb.astype(np.int32)) * sa * sb
    assert abs(est - float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))) < 2e-3


def _pool(dense, bm25, cos=None, bm=None, **kw):
    rows = {r for r, _ in dense} | {r for r, _ in bm25}
    cos = cos or {r: dict(dense).get(r, 0.0) for r in rows}
    bm = bm or {r: dict(bm25).get(r, 0.0) for r in rows}
    return fusion.Pool(dense, bm25, cos, bm, **kw)


def test_rrf_sums_legs_shares_ranks_and_breaks_ties_deterministically():
    p = _pool([(10, 0.9), (11, 0.8)], [(11, 5.0), (12, 4.0)])
    fused = dict(fusion.rrf(p, dense_weight=1.0))
    assert abs(fused[11] - (1 / 61 + 1 / 60)) < 1e-12
    assert fusion.competition_ranks([0.9, 0.7, 0.7, 0.5]) == [0, 1, 1, 3]
    tied = _pool([(2, 0.5), (1, 0.5)], [])
    assert [r for r, _ in fusion.rrf(tied, 1.0)] == [1, 2]


def test_identifier_leg_prefers_more_identifiers_then_bm25_order():
    p = _pool([(3, 0.9)], [(1, 2.0), (2, 1.0)], id_count={2: 2, 1: 1, 3: 1}, wanted=2)
    assert fusion.identifier_order(p) == [2, 1, 3]
    assert fusion.identifier_order(_pool([(3, 0.9)], [], id_count={3: 1}, wanted=0)) == []


def test_score_fusion_lets_a_confident_dense_match_win_over_weak_bm25_ranks():
    # Row 7 is far ahead on cosine but third in BM25 by a hair; rows 1 and 2 lead BM25 narrowly.
    p = _pool([(7, 0.80), (1, 0.40), (2, 0.38)], [(1, 3.1), (2, 3.0), (7, 2.9)])
    assert fusion.rrf(p, 0.3)[0][0] == 1                          # rank fusion: BM25's order wins
    assert fusion.score_fusion(p, alpha=0.5, norm="max")[0][0] == 7   # score fusion: the clear dense lead wins
    assert [r for r, _ in fusion.score_fusion(p, alpha=0.0)][:2] == [1, 2]


def test_finish_applies_floor_guard_recency_then_k():
    p = _pool([(1, 0.9), (2, 0.5), (3, 0.2)], [], id_count={2: 1}, wanted=1, age_days={1: 365.0, 2: 0.0})
    fused = [(1, 1.0), (2, 0.99), (3, 0.98)]
    assert fusion.finish(p, fused, 30, 8, None, False, 0.0) == [1, 2, 3]
    assert fusion.finish(p, fused, 30, 8, 0.3, False, 0.0) == [1, 2]
    assert fusion.finish(p, fused, 30, 8, None, True, 0.0) == [2]
    assert fusion.finish(p, fused, 30, 8, None, False, 30.0)[:2] == [2, 1]   # a year old loses its 1% lead
    assert fusion.finish(p, fused, 2, 8, None, False, 0.0) == [1, 2]         # only the first `candidates`


def _z_pool(dense, bm25, rows):
    """A pool whose legs' top lists are `dense` / `bm25` (scores) and whose union rows carry `rows`
    (row -> (cosine, bm25))."""
    return fusion.Pool(dense=[(100 + i, s) for i, s in enumerate(dense)], bm25=[(200 + i, s) for i, s in enumerate(bm25)],
                       cos={r: c for r, (c, _) in rows.items()}, bm={r: b for r, (_, b) in rows.items()})


def test_score_fusion_as_search_fusion_rs_scores_count_not_ranks():
    # `scores_count_not_ranks`: A leads BM25 by a hair and is second in dense; B is far ahead in dense.
    pool = _z_pool([0.80, 0.50, 0.40, 0.39, 0.38], [6.0, 5.95, 3.0, 2.9, 2.8], {0: (0.50, 6.0), 1: (0.80, 5.95)})
    out = dict(fusion.score_fusion(_restrict(pool, {0, 1}), 0.3, "z", None, 0.5))
    assert out[1] > out[0]


def test_score_fusion_as_search_fusion_rs_the_dense_weight_mixes_the_legs():
    # `the_dense_weight_mixes_the_legs`: +1 sd dense, -1 sd BM25 gives ln(score) = 0.3 - 0.7.
    pool = _z_pool([0.2, 0.6], [1.0, 3.0], {0: (0.6, 1.0)})
    assert math.isclose(math.log(dict(fusion.score_fusion(_restrict(pool, {0}), 0.3, "z"))[0]), 0.3 - 0.7, abs_tol=1e-6)
    no_bm25 = fusion.Pool(dense=pool.dense, bm25=[], cos={0: 0.6}, bm={0: 1.0})
    assert math.isclose(math.log(dict(fusion.score_fusion(no_bm25, 0.3, "z"))[0]), 0.3, abs_tol=1e-6), "BM25 off"
    # `a_leg_scale_is_its_lists_mean_and_spread`: no spread counts as 1.
    flat = fusion.Pool(dense=[(5, 0.4), (6, 0.4)], bm25=[], cos={0: 0.9}, bm={0: 0.0})
    assert math.isclose(math.log(dict(fusion.score_fusion(flat, 1.0, "z"))[0]), 0.5, abs_tol=1e-6)


def test_score_fusion_identifier_bonus_is_its_share():
    pool = fusion.Pool(dense=[], bm25=[], cos={0: 0.5, 1: 0.5}, bm={0: 1.0, 1: 1.0}, id_count={1: 1}, wanted=2)
    out = dict(fusion.score_fusion(pool, 0.3, "z", None, 0.5))
    assert math.isclose(math.log(out[1]) - math.log(out[0]), 0.5 * 0.5, abs_tol=1e-9)


def _restrict(pool: fusion.Pool, rows: set[int]) -> fusion.Pool:
    """The pool scoring only `rows` (the legs' lists still give the statistics)."""
    return fusion.Pool(pool.dense, pool.bm25, {r: pool.cos[r] for r in rows}, {r: pool.bm[r] for r in rows})


def test_days_named_and_the_day_bonus_as_the_engine_reads_them():
    # time::tests::a_question_names_a_day_in_full and fusion::tests::a_passage_said_near_a_named_day_...
    from datetime import date

    assert lexical.days_named("What did Audrey eat for dinner on October 24, 2023?") == [date(2023, 10, 24)]
    assert lexical.days_named("how was John on 10th april 2022") == [date(2022, 4, 10)]
    assert lexical.days_named("the 3rd of March 2024") == [date(2024, 3, 3)]
    assert lexical.days_named("the deploy of 2026-03-03 and Sept 4 2025") == [date(2026, 3, 3), date(2025, 9, 4)]
    assert lexical.days_named("the release of 2023.10.24, then Oct. 30, 2023.") == [date(2023, 10, 24), date(2023, 10, 30)]
    assert lexical.days_named("2023/10/24 or 10/24/2023") == [date(2023, 10, 24)]
    # time::tests::a_question_names_a_day_with_unit_words
    assert lexical.days_named("2023년 10월 24일에 뭘 먹었지?") == [date(2023, 10, 24)]
    assert lexical.days_named("2023년10월24일 회의") == lexical.days_named("2023年10月24日の会議") == [date(2023, 10, 24)]
    for loose in ("what did we decide in March 2026?", "on May 3rd", "21 Cedar Way, 2023", "February 30, 2023",
                  "10월 24일에", "2023년 2월 30일", "2023년에 10월 24일"):
        assert lexical.days_named(loose) == [], loose
    assert lexical.written_day("2023-05-31T23:30:00-05:00") == date(2023, 5, 31)
    asked = [date(2023, 10, 24)]
    assert all(fusion.near_named_day(date(2023, 10, d), asked) for d in (17, 24, 26))
    assert not any(fusion.near_named_day(date(2023, 10, d), asked) for d in (16, 27)) and not fusion.near_named_day(None, asked)
    plain = fusion.Pool([(0, 0.5), (1, 0.5)], [], {0: 0.5, 1: 0.5}, {0: 0.0, 1: 0.0})
    near = fusion.Pool(plain.dense, [], plain.cos, plain.bm, near_day={1})
    scores = dict(fusion.score_fusion(near, 0.3, "z"))
    assert abs(math.log(scores[1]) - math.log(scores[0]) - fusion.DAY_BONUS) < 1e-9
    assert dict(fusion.score_fusion(plain, 0.3, "z"))[0] == scores[0]

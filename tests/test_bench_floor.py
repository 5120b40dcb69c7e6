"""The relevance-floor curve and the choice of a default, on hand-made pools. Pure Python: no engine."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benches.floor import THRESHOLDS, curve, curve_point, floored, recommend  # noqa: E402

# Two answerable queries: the answer at rank 1 with similarity 0.6, and at rank 4 (0.5) behind three
# weak passages (0.2); two unanswerable queries whose best passages reach 0.3 and 0.45.
ANSWERABLE = [
    {"sims": [0.6, 0.3, 0.1], "hits": [True, False, False]},
    {"sims": [0.2, 0.2, 0.2, 0.5], "hits": [False, False, False, True]},
]
UNANSWERABLE = [{"sims": [0.3, 0.1]}, {"sims": [0.45, 0.4]}, {"sims": []}]


def test_floored_keeps_rank_order():
    assert floored([0.5, 0.1, 0.7], 0.4) == [0, 2]
    assert floored([0.5, 0.1], None) == [0, 1]


def test_no_floor_is_the_plain_top_3():
    p = curve_point(ANSWERABLE, UNANSWERABLE, None)
    assert p["hit@3"] == 0.5                    # the second query's answer is at rank 4
    assert p["unanswerable_nothing"] == pytest.approx(1 / 3)   # only the empty pool says nothing


def test_a_floor_can_lift_an_answer_into_the_top_3():
    # At 0.25 the three 0.2 passages go: the answer at rank 4 becomes rank 1.
    p = curve_point(ANSWERABLE, UNANSWERABLE, 0.25)
    assert p["hit@3"] == 1.0
    assert p["unanswerable_nothing"] == pytest.approx(1 / 3)


def test_a_high_floor_says_nothing_to_everything():
    p = curve_point(ANSWERABLE, UNANSWERABLE, 0.65)
    assert p == {"threshold": 0.65, "hit@3": 0.0, "answerable_nothing": 1.0, "unanswerable_nothing": 1.0}


def test_curve_has_one_point_per_threshold():
    c = curve(ANSWERABLE, UNANSWERABLE)
    assert [p["threshold"] for p in c["points"]] == list(THRESHOLDS)
    assert THRESHOLDS[0] == 0.0 and THRESHOLDS[-1] == 0.9 and len(THRESHOLDS) == 19
    assert c["baseline"]["threshold"] is None


def test_recommend_picks_the_most_protective_floor_within_budget():
    c = curve(ANSWERABLE, UNANSWERABLE)
    rec = recommend({"off": {"1000": c}}, {"1000": 0.5}, min_nothing=0.8, max_loss=0.01)
    # From 0.50 to 0.60 every unanswerable pool is silent and hit@3 is at least the baseline's 0.5 (at 0.50
    # the floor even lifts the rank-4 answer into the top 3); 0.50 wins on the smallest loss.
    assert rec["met"] is True
    assert rec["identifier_guard"] is False
    assert rec["nothing"] == 1.0
    assert rec["min_similarity"] == 0.5
    assert rec["qualifying_range"]["off"] == [0.5, 0.6]


def test_recommend_needs_every_size_to_qualify():
    c = curve(ANSWERABLE, UNANSWERABLE)
    strict = {"1000": c, "10000": curve(ANSWERABLE, [{"sims": [0.95]}])}
    rec = recommend({"off": strict}, {"1000": 0.5, "10000": 0.5})
    assert rec["met"] is False          # at 10,000 nothing floor up to 0.9 silences the 0.95 pool
    assert rec["nothing"] == 0.0


def test_recommend_prefers_guard_off_on_a_tie():
    c = curve(ANSWERABLE, UNANSWERABLE)
    rec = recommend({"off": {"1": c}, "on": {"1": c}}, {"1": 0.5})
    assert rec["identifier_guard"] is False
    assert rec["qualifying_range"]["on"] == rec["qualifying_range"]["off"]


def test_on_a_tie_the_higher_floor_wins():
    # Both answers at 0.9, the unanswerable pools empty: every floor up to 0.90 says nothing and keeps hit@3.
    a = [{"sims": [0.9], "hits": [True]}]
    c = curve(a, [{"sims": []}])
    rec = recommend({"off": {"1": c}}, {"1": 1.0})
    assert rec["min_similarity"] == 0.9 and rec["best_without_guard"]["threshold"] == 0.9

"""The benchmark metrics on hand-made cases: token-boundary hits, nearest-rank percentiles, and
LoCoMo turn recall over distinct turns. Pure Python; needs neither funes_py nor the Rust extension."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benches.metrics import first_distinct, hit_at_k, hit_rates, percentiles, turn_recall_at_k, turn_recall_table  # noqa: E402


@pytest.mark.parametrize("text", [
    "ticket MT-104 is open", "see MT-104.", "(MT-104)", "mt-104, closed", "MT-104\nnext line",
    "closed MT-104; reopened", "MT-104's owner",
])
def test_identifier_hits_on_token_boundaries(text):
    assert hit_at_k([text], "MT-104", 1)


@pytest.mark.parametrize("text", [
    "ticket MT-1040 is open", "XMT-104 is not it", "MT-104-B is a sub-ticket", "MT-104.2 revision",
    "MT-10 only", "AMT-104",
])
def test_identifier_misses_longer_or_different_tokens(text):
    assert not hit_at_k([text], "MT-104", 1)


def test_rates_and_names_follow_the_same_rule():
    assert hit_at_k(["line L-12 rejected 3.7% at final QC."], "3.7%", 1)
    assert not hit_at_k(["line L-12 rejected 13.7% at final QC"], "3.7%", 1)
    assert not hit_at_k(["line L-12 rejected 3.75% at final QC"], "3.7%", 1)
    assert hit_at_k(["owned by PRIYA RAMAN."], "Priya Raman", 1)
    assert hit_at_k(["owned by Priya\n  Raman now"], "Priya Raman", 1)
    assert not hit_at_k(["owned by Priya Ramanathan"], "Priya Raman", 1)
    assert not hit_at_k(["Priya and Raman"], "Priya Raman", 1)


def test_hit_at_k_only_looks_at_the_first_k():
    texts = ["nothing here", "still nothing", "DR-2291 is the one"]
    assert not hit_at_k(texts, "DR-2291", 2)
    assert hit_at_k(texts, "DR-2291", 3)
    assert hit_at_k(texts, "DR-2291", 8)
    assert not hit_at_k([], "DR-2291", 3)
    with pytest.raises(ValueError):
        hit_at_k(texts, "DR-2291", 0)


def test_hit_rates():
    results = [(["a", "MT-1", "c"], "MT-1"), (["MT-2"], "MT-2"), (["x", "y"], "MT-3")]
    r = hit_rates(results, ks=(1, 3))
    assert r == {"n": 3, "hit@1": pytest.approx(1 / 3), "hit@3": pytest.approx(2 / 3)}
    assert hit_rates([]) == {"n": 0, "hit@1": 0.0, "hit@3": 0.0, "hit@8": 0.0}


def test_percentiles_are_nearest_rank():
    xs = list(range(100, 0, -1))          # 1..100, unsorted on purpose
    assert percentiles(xs) == {"n": 100, "p50": 50, "p95": 95, "p99": 99, "max": 100}
    assert percentiles([1.0, 2.0, 3.0, 4.0]) == {"n": 4, "p50": 2.0, "p95": 4.0, "p99": 4.0, "max": 4.0}
    assert percentiles([7.5], ps=(50, 99.9)) == {"n": 1, "p50": 7.5, "p99.9": 7.5, "max": 7.5}
    with pytest.raises(ValueError):
        percentiles([])
    with pytest.raises(ValueError):
        percentiles([1.0], ps=(0,))


def test_turn_recall_counts_distinct_turns_only():
    returned = ["a", "a", "b", "a", "c", "d"]
    assert first_distinct(returned, 3) == ["a", "b", "c"]
    assert turn_recall_at_k(returned, ["c"], 3) == 1.0   # the repeats of "a" do not use up k
    assert turn_recall_at_k(returned, ["c"], 2) == 0.0
    assert turn_recall_at_k(returned, ["b", "z"], 5) == 0.5
    assert turn_recall_at_k(returned, ["b", "b", "d"], 4) == 1.0   # evidence is a set
    assert turn_recall_at_k([], ["b"], 5) == 0.0
    with pytest.raises(ValueError):
        turn_recall_at_k(returned, [], 5)
    with pytest.raises(ValueError):
        turn_recall_at_k(returned, ["a"], 0)


def test_turn_recall_table_per_category_and_overall():
    results = [
        ("single-hop", ["t1", "t2", "t3"], ["t1"]),
        ("single-hop", ["t9", "t9", "t2"], ["t2", "t5"]),
        ("multi-hop", ["x", "y", "z"], ["z"]),
    ]
    t = turn_recall_table(results, ks=(1, 2))
    assert list(t) == ["single-hop", "multi-hop", "ALL"]
    assert t["single-hop"]["n"] == 2 and t["ALL"]["n"] == 3
    assert t["single-hop"]["turn_recall@1"] == pytest.approx(0.5)          # 1.0 and 0.0
    assert t["single-hop"]["turn_recall@2"] == pytest.approx((1.0 + 0.5) / 2)
    assert t["single-hop"]["turn_hit@2"] == pytest.approx(1.0)
    assert t["multi-hop"]["turn_recall@2"] == 0.0
    assert t["ALL"]["turn_recall@2"] == pytest.approx(1.5 / 3)

"""Reranking on, off and automatic, with tiny random cross-encoders of both families (BERT with token
types, XLM-RoBERTa without) behind the real MiniLM embedder:

* rerank=False ranks exactly as an engine without a reranker;
* rerank=True scores each hit sigmoid(cross-encoder logit) (recency off) and orders by it;
* rerank=None reranks only when candidates >= 4 * k;
* rerank=True without a reranker is an InvalidInputError."""

from __future__ import annotations

import math

import pytest

from conftest import write_conversation

pytestmark = pytest.mark.models

CONVERSATIONS = {
    "kiln": [
        ("user", "The kiln K-047 on line 3 overheated twice during the night shift."),
        ("assistant", "Logged it: K-047 over temperature, twice, night shift. I suggest checking the thermocouple."),
        ("user", "We decided to replace the thermocouple on Monday and keep the kiln at reduced load until then."),
        ("assistant", "Noted the decision: new thermocouple Monday, reduced load meanwhile."),
    ],
    "audit": [
        ("user", "Who owns the quarterly safety audit for the Rotterdam site?"),
        ("assistant", "Maria owns the Rotterdam audit; Tomasz covers it when she is away."),
        ("user", "Move the audit to the second week of March."),
        ("assistant", "Done, the Rotterdam audit is now planned for the second week of March."),
    ],
    "scrap": [
        ("user", "Scrap rate on line 2 went from 3.1% to 4.7% after the supplier change."),
        ("assistant", "That is a large jump; the new resin batch is the likely cause."),
        ("user", "Ask the supplier for the certificate of conformity for batch 2291."),
        ("assistant", "Drafted the email asking for the certificate of conformity of batch 2291."),
    ],
}
QUERY = "what did we decide about the kiln thermocouple?"
CHUNKS = sum(len(turns) for turns in CONVERSATIONS.values())


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


@pytest.fixture(scope="module")
def home(tmp_path_factory, models):
    from funes_py import Engine

    root = tmp_path_factory.mktemp("rerank")
    for sid, turns in CONVERSATIONS.items():
        write_conversation(root / "src" / f"{sid}.funes.jsonl", sid, turns)
    report = Engine(root / "memory", models).index(root / "src")
    assert report.chunks_added == CHUNKS
    return root / "memory"


@pytest.fixture(scope="module", params=["bert", "xlm-roberta"])
def reranking(request, tmp_path_factory, home):
    """(engine with the real MiniLM + a tiny cross-encoder of this family, its Models)."""
    from funes_py import Engine, Models
    from funes_py.convert.build import build_model
    from funes_py.convert.random_model import write_random_model

    root = tmp_path_factory.mktemp(f"ce-{request.param}")
    src = write_random_model(root / "src", kind="cross_encoder", family=request.param, seed=3)
    built = build_model(src, out_dir=root / "built", name=f"test/tiny-{request.param}-ce")
    models = Models.load(reranker=str(built))
    assert models.reranker_name == f"test/tiny-{request.param}-ce"
    return Engine(home, models), models


def test_rerank_off_ranks_as_without_a_reranker(reranking, home, models):
    from funes_py import Engine

    eng, _ = reranking
    plain = Engine(home, models).recall(QUERY, k=4, candidates=30, half_life_days=0, neighbors=0)
    off = eng.recall(QUERY, k=4, candidates=30, half_life_days=0, neighbors=0, rerank=False)
    assert off and not any(h.reranked for h in off + plain)
    assert [h.turn_uuid for h in off] == [h.turn_uuid for h in plain]
    assert [h.score for h in off] == pytest.approx([h.score for h in plain], rel=1e-6)


def test_rerank_on_scores_by_the_cross_encoder(reranking):
    eng, models = reranking
    k = 4
    hits = eng.recall(QUERY, k=k, candidates=30, half_life_days=0, neighbors=0, rerank=True)
    assert len(hits) == k and all(h.reranked for h in hits)
    for h in hits:
        assert h.score == pytest.approx(sigmoid(models.rerank_scores(QUERY, [h.text])[0]), abs=1e-5)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    # With candidates above the memory's size the pool is every chunk: the hits are its top k by logit.
    every = [t for turns in CONVERSATIONS.values() for _, t in turns]
    logits = models.rerank_scores(QUERY, every)
    best = sorted(zip(logits, every, strict=True), key=lambda p: p[0], reverse=True)[:k]
    assert [h.text for h in hits] == [t for _, t in best]


def test_rerank_automatic_needs_a_deep_enough_pool(reranking):
    eng, _ = reranking
    k = 2
    deep = eng.recall(QUERY, k=k, candidates=4 * k, half_life_days=0, neighbors=0)
    shallow = eng.recall(QUERY, k=k, candidates=4 * k - 1, half_life_days=0, neighbors=0)
    assert deep and all(h.reranked for h in deep)
    assert shallow and not any(h.reranked for h in shallow)


def test_rerank_on_without_a_reranker_is_invalid(home, models):
    from funes_py import Engine, InvalidInputError

    eng = Engine(home, models)
    assert models.reranker_name is None
    with pytest.raises(InvalidInputError):
        eng.recall(QUERY, k=2, rerank=True)
    assert not any(h.reranked for h in eng.recall(QUERY, k=2, candidates=30))  # automatic: no reranker, off

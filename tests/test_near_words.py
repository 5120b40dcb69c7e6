"""BM25 also asks for the embedder's near words of a question's words (`thesaurus.tsv` beside the model,
`rust/src/thesaurus.rs`), so a question in other words than the stored ones matches a word; on every recall
path, and as the fusion lab computes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import write_conversation

pytestmark = pytest.mark.models


def test_the_default_embedder_has_near_words_and_the_lab_reads_them_as_the_engine_does(models):
    from benches import lexical

    table = Path(models.embedder_dir) / "thesaurus.tsv"
    assert table.is_file(), "the companion model ships its near words"
    words = lexical.read_thesaurus(table)
    assert len(words) > 10_000
    for question in ("What was our choice on the lamps?", "who fixed the dripping tap in the kitchen",
                     "Which desserts did Maria bake for the party?", "MT-4471 status", "서버 상태"):  # fmt: skip
        engine = {term: weight for _, term, weight in models.near_words(question)}
        assert engine == pytest.approx(lexical.near_terms(words, question)), question
    near = {term for _, term, _ in models.near_words("What was our choice on the lamps?")}
    assert {"decis", "light"} <= near, near
    assert models.near_words("MT-4471 and 서버") == []


def test_a_question_in_other_words_finds_the_passage_through_its_near_words(engine, tmp_path):
    src = tmp_path / "src"
    write_conversation(src / "hall.funes.jsonl", "hall", [("user", "Final decision: we replace the lighting in the hall.")])
    write_conversation(src / "other.funes.jsonl", "other", [("user", "The weather was grey all week.")])
    engine.index(src)
    question = "what was our choice about the lamps?"
    ask = {"k": 3, "neighbors": 0, "half_life_days": 0, "legs": "bm25"}
    assert engine.recall(question, **ask, near_words=False) == [], "no word in common"
    assert [h.session_id for h in engine.recall(question, **ask)] == ["hall"]
    # A word of the question itself still outweighs a near word.
    write_conversation(src / "choice.funes.jsonl", "choice", [("user", "Tough choice between the two quotes.")])
    engine.index(src)
    assert [h.session_id for h in engine.recall("our choice", **ask)][0] == "choice"

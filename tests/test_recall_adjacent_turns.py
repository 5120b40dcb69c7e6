"""The turn beside a strong match joins the ranking (issue 36, `search::adjacent`). In a conversation the
answer often follows what matched the question: asked "what is Gina's favourite dance style?", the turn that
matches is Jon's "what is your favorite style of dance?", and the answer, "contemporary is my top pick", shares no word
with the question but sits one turn later. LoCoMo's tuning conversations: turn recall@10 78.3 -> 80.4."""

from __future__ import annotations

import pytest

from conftest import write_conversation

pytestmark = pytest.mark.models

QUESTION = "What is Gina's favorite style of dance?"
ANSWER = "Contemporary is my top pick, it is so expressive and powerful."
FILLER = ("I ask because the community hall on the corner just reopened after the winter repairs, and on Thursday "
          "evenings they rent out the big room with the sprung wooden floor and mirrors for almost nothing, which "
          "could suit a small group of us who want to practise together after work.")


@pytest.fixture(scope="module")
def engine(models, tmp_path_factory):
    from funes_py import Engine

    src = tmp_path_factory.mktemp("src")
    write_conversation(src / "dance.funes.jsonl", "dance", [
        ("user", "Gina: I lost my job, so dancing is how I handle the stress these days."),
        # The match opens a long turn: its words are not in the answer's BM25 context (the previous turn's
        # last 200 characters), which would otherwise find the answer by itself.
        ("assistant", "Jon: Same here! So Gina, what is your favorite style of dance? " + FILLER),
        ("user", ANSWER),
        ("assistant", "Jon: Nice. I rehearsed with a small group after work yesterday."),
    ])  # fmt: skip
    # Passages that share a word or two with the question, each different: without the turn beside the
    # match, each of them outranks the answer, which shares none.
    things = ["coffee", "logo", "jacket", "garden", "recipe", "playlist", "haircut", "kitchen", "novel", "bicycle",
              "painting", "holiday", "sofa", "camera", "teapot", "lamp", "scarf", "poster", "mug", "carpet"]  # fmt: skip
    for i, thing in enumerate(things):
        for j, line in enumerate([f"Gina showed me her new {thing} on Monday.", f"My favorite {thing} broke last week.",
                                  f"The {thing} had a modern style."]):  # fmt: skip
            write_conversation(src / f"other{i}-{j}.funes.jsonl", f"other{i}-{j}",
                               [("user", line), ("assistant", f"Noted about the {thing}.")])  # fmt: skip
    eng = Engine(tmp_path_factory.mktemp("memory") / "memory", models=models)
    eng.index(src)
    return eng


def test_the_answer_one_turn_after_the_match_is_found(engine):
    hits = engine.recall(QUESTION, k=5, half_life_days=0, neighbors=0)
    texts = [h.text for h in hits]
    assert any(ANSWER in t for t in texts), texts
    assert "what is your favorite style of dance?" in texts[0], "the match itself stays first"
    assert len(FILLER) > 200


def test_a_single_leg_comparison_ranks_its_own_passages_only(engine):
    """A comparison of BM25 alone is that leg's own ranking: nothing joins it (the answer shares no word)."""
    hits = engine.recall(QUESTION, k=5, half_life_days=0, neighbors=0, legs="bm25")
    assert not any(ANSWER in h.text for h in hits), [h.text for h in hits]


def test_a_filter_also_holds_for_the_turns_beside(engine):
    hits = engine.recall(QUESTION, k=5, half_life_days=0, neighbors=0, roles=["assistant"])
    assert hits and all(h.role == "assistant" for h in hits)

"""BM25 also asks for the embedder's near words of a question's words (`thesaurus.tsv` beside the model,
`rust/src/thesaurus.rs`), so a question in other words than the stored ones matches a word; on every recall
path, and as the fusion lab computes it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import write_conversation

pytestmark = pytest.mark.models


def test_the_default_embedder_has_near_words_and_the_lab_reads_them_as_the_engine_does(models):
    from benches.lab import lexical

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


def _models_cli(*args, env) -> list[str]:
    p = subprocess.run([sys.executable, "-m", "funes_py.cli", "models", *map(str, args)], capture_output=True,
                       text=True, env=env, timeout=600, check=False)  # fmt: skip
    assert p.returncode == 0, f"exit {p.returncode}\nstdout: {p.stdout}\nstderr: {p.stderr}"
    return p.stdout.strip().splitlines()


def test_a_users_model_gets_its_near_words_and_its_int8_copy_keeps_them(tmp_path):
    """`funes-py models thesaurus` writes the table into a built model (here the fp32 MiniLM, built into a
    fresh model cache), the engine then expands with it, and `models quantize` carries it to the int8 copy."""
    from funes_py import Models

    env = dict(os.environ, FUNES_MODELS_DIR=str(tmp_path / "cache"))
    out = _models_cli("thesaurus", "sentence-transformers/all-MiniLM-L6-v2", env=env)
    table = Path(out[-1])
    assert table.name == "thesaurus.tsv" and table.parent.parent == tmp_path / "cache", out
    listed = int(out[-2].split()[2].replace(",", ""))
    assert listed > 10_000 and listed == len(table.read_text(encoding="utf-8").splitlines())
    near = {term for _, term, _ in Models.load(embedder=str(table.parent)).near_words("our choice on the lamps")}
    assert {"decis", "light"} <= near, near
    int8 = Path(_models_cli("quantize", "sentence-transformers/all-MiniLM-L6-v2", env=env)[-1])
    assert (int8 / "thesaurus.tsv").read_bytes() == table.read_bytes()
    # The shipped int8 model lives in its package: its table is reported, never written over.
    shipped = Path(Models.load().embedder_dir) / "thesaurus.tsv"
    before = shipped.stat().st_mtime_ns
    assert Path(_models_cli("thesaurus", "sentence-transformers/all-MiniLM-L6-v2-int8", env=env)[-1]) == shipped
    assert shipped.stat().st_mtime_ns == before


@pytest.mark.e5
def test_a_model_whose_words_all_embed_alike_gets_no_table(tmp_path):
    """multilingual-e5-small's random word pairs have a median cosine of about 0.87 (MiniLM's: 0.22): at the
    engine's threshold every word would expand, so the table is refused with the reason, and nothing is
    written."""
    env = dict(os.environ, FUNES_MODELS_DIR=str(tmp_path / "cache"))
    p = subprocess.run([sys.executable, "-m", "funes_py.cli", "models", "thesaurus", "intfloat/multilingual-e5-small"],
                       capture_output=True, text=True, env=env, timeout=600, check=False)  # fmt: skip
    assert p.returncode != 0 and "median cosine of 0.8" in p.stderr, p.stderr
    assert not list((tmp_path / "cache").glob("*/thesaurus.tsv"))

"""The engine-core acceptance bar: a 300-conversation synthetic history (one hidden fact each, confusers on
purpose) and 100 paraphrased questions: the right fact in the top 3 for at least 95, in the top 8 for all.
Recency is off (half-life 0): the history is spread over a year and the questions are not about recent
things. Both recall paths must pass: the resident copy (int8 scan, in-memory BM25) and Lance's indexes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benches.history import generate, write_history  # noqa: E402
from benches.metrics import hit_at_k  # noqa: E402

pytestmark = pytest.mark.models


@pytest.fixture(scope="module")
def indexed_300(models, tmp_path_factory):
    from funes_py import Engine

    history = generate(300, seed=7)
    root = write_history(history, tmp_path_factory.mktemp("q300") / "history")
    report = Engine(root / "memory", models=models, resident=False).index(root / "src")
    assert report.bad_lines == [] and report.files == 300
    return history, root / "memory"


@pytest.mark.parametrize("resident", [True, False], ids=["resident", "lance"])
def test_hit_at_3_and_8_on_300_conversations(indexed_300, models, resident):
    from funes_py import Engine

    history, home = indexed_300
    engine = Engine(home, models=models, resident=resident)
    hits3 = hits8 = 0
    misses = []
    for q in history.questions:
        texts = [h.text for h in engine.recall(q["long"], k=8, half_life_days=0, neighbors=0)]
        hits3 += hit_at_k(texts, q["answer"], 3)
        ok8 = hit_at_k(texts, q["answer"], 8)
        hits8 += ok8
        if not ok8:
            misses.append((q["long"], q["answer"]))
    assert hits3 >= 95, f"hit@3 {hits3}/100"
    assert hits8 == 100, f"hit@8 {hits8}/100, misses: {misses[:5]}"

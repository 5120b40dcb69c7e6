"""Many questions at once give the answers each gets alone (issue 37): `Engine.recall_many` returns what as many
`recall` calls return, and recalls from eight threads at once return what the same recalls return one after
the other. The default model quantises its activations per pass, so its queries are never batched with
each other (a batched query's vector moved, and with it the top 3 of 18% of the benchmark's questions); a
model without that is batched, and still answers as alone."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benches.history import generate, write_history  # noqa: E402

pytestmark = pytest.mark.models


@pytest.fixture(scope="module")
def memory(models, tmp_path_factory):
    from funes_py import Engine

    h = generate(150, seed=5)
    eng = Engine(tmp_path_factory.mktemp("many") / "memory", models=models)
    eng.index(write_history(h, tmp_path_factory.mktemp("many-src") / "history"))
    return eng, [q["long"] for q in h.questions][:40] + [q["short"] for q in h.questions][:20]


def _key(hits) -> list[tuple[str, float]]:
    return [(h.turn_uuid, h.score) for h in hits]


def _same(a: list[tuple[str, float]], b: list[tuple[str, float]]) -> bool:
    """The same turns in the same order, and the same scores up to float summation order: a query embedded
    with another intra-op thread count (one caller alone, or eight at once) sums its dot products in another
    order, which moves a score in its seventh digit and nothing else."""
    return [u for u, _ in a] == [u for u, _ in b] and all(
        abs(x - y) <= 1e-5 * max(1.0, abs(x)) for (_, x), (_, y) in zip(a, b, strict=True)
    )


def _differ(got: dict[str, list], want: dict[str, list]) -> dict[str, tuple[list, list]]:
    return {q: (got.get(q, []), w) for q, w in want.items() if not _same(got.get(q, []), w)}


def test_recall_many_answers_each_question_as_recall_does(memory):
    eng, questions = memory
    alone = [_key(eng.recall(q, k=5)) for q in questions]
    together = [_key(hits) for hits in eng.recall_many(questions, k=5)]
    assert len(together) == len(alone)
    assert not _differ(dict(enumerate(together)), dict(enumerate(alone)))


def test_recall_many_refuses_an_empty_question_before_anything_runs(memory):
    from funes_py import InvalidInputError

    eng, questions = memory
    with pytest.raises(InvalidInputError):
        eng.recall_many([questions[0], "   "])


def test_eight_threads_at_once_get_the_answers_of_one_after_another(memory):
    eng, questions = memory
    alone = {q: _key(eng.recall(q, k=5)) for q in questions}
    got: dict[str, list] = {}
    errors: list[BaseException] = []

    def worker(part: list[str]) -> None:
        try:
            for q in part:
                got[q] = _key(eng.recall(q, k=5))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(questions[i::8],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert set(got) == set(alone)
    assert not _differ(got, alone)

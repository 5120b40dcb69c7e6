"""One Engine shared by Python threads and asyncio callers (through threads): results agree with the
sequential ones."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from conftest import write_conversation

pytestmark = pytest.mark.models


@pytest.fixture
def indexed(engine, tmp_path):
    for i in range(6):
        write_conversation(
            tmp_path / "src" / f"c{i}.funes.jsonl",
            f"c{i}",
            [("user", f"How is line L-{i}0 doing?"), ("assistant", f"Line L-{i}0 rejected {i}.5% at final QC.")],
        )
    engine.index(tmp_path / "src")
    return engine


def test_threads_share_an_engine(indexed):
    queries = [f"reject rate of line L-{i}0" for i in range(6)] * 4
    expected = [indexed.recall(q, k=1)[0].session_id for q in queries]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda q: indexed.recall(q, k=1)[0].session_id, queries))
    assert got == expected
    assert expected[:6] == [f"c{i}" for i in range(6)]


def test_asyncio_callers_run_it_in_threads(indexed, tmp_path):
    async def main():
        hits = await asyncio.gather(*(asyncio.to_thread(indexed.recall, f"line L-{i}0 QC", k=1) for i in range(6)))
        write_conversation(tmp_path / "more" / "n.funes.jsonl", "n", [("user", "Kiln K-099 overheated.")])
        rep = await asyncio.to_thread(indexed.index, tmp_path / "more")
        return hits, rep

    hits, rep = asyncio.run(main())
    assert [h[0].session_id for h in hits] == [f"c{i}" for i in range(6)]
    assert rep.chunks_added == 1
    assert indexed.recall("K-099", k=1)[0].session_id == "n"


def test_embeddings_cross_as_numpy(models):
    v = models.embed(["the pump leaks", "the pump is leaking", "quarterly revenue grew"])
    assert v.dtype == np.float32 and v.shape == (3, models.dim)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    assert v[0] @ v[1] > v[0] @ v[2]


def test_mixed_lengths_embed_in_input_order_as_each_text_alone(models):
    # Indexing sorts texts by token count and cuts long ones into small batches (attention grows with the
    # square of the length); each vector must still be its own text's, in the caller's order. Not bit for
    # bit: the int8 model quantises activations per batch, so a text's batch-mates move it slightly.
    words = (
        "the cooling pump on line four leaks after every restart and the valve was replaced twice "
        "quarterly revenue grew while the warehouse in Busan moved its night shift to Tuesdays"
    ).split()
    texts = [" ".join(words[(i * 3) % 20 : (i * 3) % 20 + 4 + i % 9] * (1 + (i * 5) % 40)) for i in range(90)]
    together = models.embed(texts)
    alone = np.stack([models.embed([t])[0] for t in texts])
    assert together.shape == (90, models.dim)
    cos = together @ alone.T
    assert np.diag(cos).min() > 0.98
    assert (cos.argmax(axis=1) == np.arange(90)).all()

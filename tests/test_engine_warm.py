"""`Engine.warm()` does before the first question what the first recall would do: reads the memory into RAM
(the resident copy) and runs the embedder. `funes-py mcp` warms its engine while the agent starts, so that
the first recall of a large memory (13 s at 700,000 passages) is not the user's."""

from __future__ import annotations

import pytest

from conftest import write_conversation

pytestmark = pytest.mark.models


@pytest.fixture
def src(tmp_path):
    out = tmp_path / "src"
    for i in range(3):
        write_conversation(out / f"c{i}.funes.jsonl", f"c{i}",
                           [("user", f"What did line L-{i}0 reject?"), ("assistant", f"Line L-{i}0 rejected {i}.5% at final QC.")])  # fmt: skip
    return out


def test_a_fresh_engine_is_cold_until_warmed(models, tmp_path, src):
    from funes_py import Engine

    Engine(tmp_path / "memory", models=models).index(src)
    eng = Engine(tmp_path / "memory", models=models)  # another handle: nothing read into RAM yet
    assert not eng.is_warm()
    eng.warm()
    assert eng.is_warm()
    assert eng.recall("reject rate of line L-20", k=1)[0].session_id == "c2", "a warmed engine answers as before"


def test_a_recall_warms_too_and_an_empty_memory_warms_without_error(models, tmp_path, src):
    from funes_py import Engine

    empty = Engine(tmp_path / "memory", models=models)
    empty.warm()
    assert not empty.is_warm(), "no data: nothing to hold"
    Engine(tmp_path / "memory", models=models).index(src)
    other = Engine(tmp_path / "memory", models=models)
    assert other.recall("reject rate of line L-10", k=1)
    assert other.is_warm()

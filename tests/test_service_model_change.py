"""A tenant memory embedded with another model than the service's is re-embedded when the service opens it,
and recall keeps working. Real server, real MCP client, real models: the first server uses the packaged
fp32 MiniLM, the second the service default (the same model quantized to int8, another stamp)."""

from __future__ import annotations

import pytest

from funes_py.server.demo_data import ALICE_QUESTIONS
from funes_py.server.passages import UNAVAILABLE
from service_helpers import ALICE, Server, ingest_demo

pytestmark = pytest.mark.models


def test_a_memory_of_another_embedder_is_re_embedded_on_open(tmp_path) -> None:
    data = tmp_path / "data"
    question, markers = ALICE_QUESTIONS[0]
    first = Server(data, env={"FUNES_EMBEDDER": "sentence-transformers/all-MiniLM-L6-v2"}).start()
    try:
        ingest_demo(first)
        first.wait_indexed()
        assert all(m in first.recall(ALICE, question) for m in markers)
    finally:
        first.stop()

    second = Server(data).start()  # the default: int8
    try:
        answer = second.recall(ALICE, question)
        assert answer != UNAVAILABLE and all(m in answer for m in markers), second.log()
        assert "re-embedding" in second.log() and "re-embedded" in second.log()
        # Writes keep working on the re-embedded memory: a new turn is indexed and found.
        body = {"user": "alice", "conversation_id": "after-model-change",
                "turns": [{"role": "user", "text": "The Quillon hangar door code is QH-5531.",
                           "ts": "2026-11-02T09:00:00Z"}]}  # fmt: skip
        assert second.post_turns(body).status_code == 202
        health = second.wait_indexed()
        assert health["index_runs_failed"] == 0
        assert "QH-5531" in second.recall(ALICE, "Quillon hangar door code")
    finally:
        second.stop()

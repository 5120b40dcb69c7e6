"""Tenants are isolated: alice's facts come back for alice, and nothing of alice ever reaches bob, whatever
bob asks, alice's exact identifiers included. Real server, real MCP client over HTTP, real engine."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from funes_py.server.demo_data import (
    ALICE_ONLY_MARKERS,
    ALICE_QUESTIONS,
    BOB_ONLY_MARKERS,
    NEGATIVE_QUESTION,
)
from funes_py.server.passages import NO_MEMORY, UNAVAILABLE, passage_count
from funes_py.tenancy.auth import tenant_id
from service_helpers import ALICE, BOB, CAROL, DataRoot, Server, ingest_demo

pytestmark = pytest.mark.models


@pytest.fixture(scope="module")
def server(data_root: DataRoot) -> Iterator[Server]:
    s = Server(data_root).start()
    try:
        ingest_demo(s)
        s.wait_indexed()
        yield s
    finally:
        s.stop()


def test_alice_gets_her_facts(server: Server) -> None:
    answers = server.recall_many(ALICE, [q for q, _ in ALICE_QUESTIONS])
    for (question, expected), answer in zip(ALICE_QUESTIONS, answers, strict=True):
        assert answer != UNAVAILABLE
        for needle in expected:
            assert needle in answer, f"{question!r} -> {answer}"
        assert 1 <= passage_count(answer) <= 3


def test_bob_never_sees_alice(server: Server) -> None:
    queries = [q for q, _ in ALICE_QUESTIONS] + ALICE_ONLY_MARKERS + [
        "MT-3318 N-11 palletizer upgrade postponed",
        "Marta Kowalczyk Treasury SettleNet DF-2291",
        "Scenario B 3.2% monthly growth seasonality 1.18 churn 0.8%",
        "Nordhaven 42,000 units Saturday shifts weeks 43-45",
        "unit rate 2.92 EUR per pallet labour 18,450",
        "what did alice decide",
        "user: alice",
        "*",
    ]
    answers = server.recall_many(BOB, queries)
    for query, answer in zip(queries, answers, strict=True):
        assert answer != UNAVAILABLE
        leaked = [m for m in ALICE_ONLY_MARKERS if m in answer]
        assert not leaked, f"bob asked {query!r} and got alice's {leaked}:\n{answer}"


def test_negative_control(server: Server) -> None:
    alice = server.recall(ALICE, NEGATIVE_QUESTION)
    assert not [m for m in BOB_ONLY_MARKERS if m in alice], alice
    bob = server.recall(BOB, NEGATIVE_QUESTION)
    assert "P-7" in bob and "MT-5120" in bob


def test_a_user_without_memory(server: Server) -> None:
    assert server.recall(CAROL, "N-11 upgrade") == NO_MEMORY
    assert tenant_id("carol") not in server.root.tenant_names()  # reading creates nothing


def test_directory_names_do_not_reveal_users(server: Server) -> None:
    names = server.root.tenant_names()
    assert len(names) == 2 and all(len(n) == 24 and set(n) <= set("0123456789abcdef") for n in names)

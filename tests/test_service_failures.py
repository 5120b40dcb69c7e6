"""When recall fails, the agent is told to go on without memory and the error goes to the log with the
tenant hash, never to the agent. Real server, real MCP client, real engine; the failure is a timeout."""

from __future__ import annotations

import pytest

from funes_py.server.passages import NO_MEMORY, UNAVAILABLE
from funes_py.tenancy.auth import tenant_id
from service_helpers import ALICE, Server, ingest_demo

pytestmark = pytest.mark.models


def test_a_timed_out_recall_says_unavailable_and_logs_the_tenant(tmp_path) -> None:
    server = Server(tmp_path / "data", env={"FUNES_RECALL_TIMEOUT_S": "0.000001", "FUNES_RECALL_COLD_TIMEOUT_S": "0.000001"}).start()
    try:
        ingest_demo(server)
        server.wait_indexed()
        assert server.recall(ALICE, "N-11 upgrade") == UNAVAILABLE
        assert server.health()["status"] == "ready"  # the service itself carries on
    finally:
        server.stop()
    log = server.log()
    assert f"recall timed out after 0.0 s tenant={tenant_id('alice')}" in log
    assert "alice" not in log  # the log names tenants by hash only


def test_a_cold_tenants_first_recall_has_the_cold_budget_and_later_ones_the_recall_timeout(tmp_path) -> None:
    """The first recall after a tenant's engine opens reads its memory into RAM (13 s at 700,000 passages):
    it is bounded by FUNES_RECALL_COLD_TIMEOUT_S, not by FUNES_RECALL_TIMEOUT_S, which bounds the warm ones."""
    server = Server(tmp_path / "data", env={"FUNES_RECALL_TIMEOUT_S": "0.001"}).start()  # no warm recall fits
    try:
        ingest_demo(server)
        server.wait_indexed()
        first, second = server.recall_many(ALICE, ["N-11 upgrade", "N-11 upgrade"])
        assert first not in (UNAVAILABLE, NO_MEMORY) and "N-11" in first, first
        assert second == UNAVAILABLE
    finally:
        server.stop()
    assert server.log().count("recall timed out after 0.0 s") == 1

"""When recall fails, the agent is told to go on without memory and the error goes to the log with the
tenant hash, never to the agent. Real server, real MCP client, real engine; the failure is a timeout."""

from __future__ import annotations

import pytest

from funes_py.server.passages import UNAVAILABLE
from funes_py.tenancy.auth import tenant_id
from service_helpers import ALICE, Server, ingest_demo

pytestmark = pytest.mark.models


def test_a_timed_out_recall_says_unavailable_and_logs_the_tenant(tmp_path) -> None:
    server = Server(tmp_path / "data", env={"FUNES_RECALL_TIMEOUT_S": "0.000001"}).start()
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

"""Idle MCP event streams (`GET /mcp`) are bounded: at most FUNES_MCP_STREAMS_PER_TOKEN open per token
(429 beyond, other tokens unaffected), and a stream that carried nothing but keep-alive pings for
FUNES_MCP_STREAM_IDLE_S is ended by the server, which frees its slot. Real server, real HTTP streams."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

import httpx
import pytest

from service_helpers import ALICE, BOB, Server

pytestmark = pytest.mark.models

IDLE_S = 3.0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = Server(tmp_path_factory.mktemp("streams") / "data",
               env={"FUNES_MCP_STREAMS_PER_TOKEN": "2", "FUNES_MCP_STREAM_IDLE_S": str(IDLE_S)}).start()
    try:
        yield s
    finally:
        s.stop()


def headers(token: str) -> dict[str, str]:
    return {"Accept": "text/event-stream", "Authorization": f"Bearer {token}"}


def test_streams_are_capped_per_token_and_closed_when_idle(server: Server) -> None:
    with httpx.Client(timeout=httpx.Timeout(30.0, read=IDLE_S + 20)) as http, contextlib.ExitStack() as stack:
        opened = time.monotonic()
        streams = [stack.enter_context(http.stream("GET", server.url + "/mcp", headers=headers(ALICE)))
                   for _ in range(2)]
        assert [s.status_code for s in streams] == [200, 200]
        assert streams[0].headers["content-type"].startswith("text/event-stream")

        third = http.get(server.url + "/mcp", headers=headers(ALICE))
        assert third.status_code == 429 and "2 open streams" in third.json()["error"]["message"]
        with http.stream("GET", server.url + "/mcp", headers=headers(BOB)) as other:
            assert other.status_code == 200  # another token has its own slots

        # Nothing is ever sent on a stateless endpoint's stream: the server ends it after IDLE_S.
        for s in streams:
            for _ in s.iter_bytes():
                pass
        waited = time.monotonic() - opened
        assert IDLE_S - 0.5 <= waited <= IDLE_S + 10, waited

        with http.stream("GET", server.url + "/mcp", headers=headers(ALICE)) as again:
            assert again.status_code == 200  # the slots were freed
    assert "closed an idle MCP stream after 3 s" in server.log()


def test_a_stream_without_a_valid_token_is_401(server: Server) -> None:
    assert httpx.get(server.url + "/mcp", headers=headers("nope")).status_code == 401
    assert httpx.get(server.url + "/mcp", headers={"Accept": "text/event-stream"}).status_code == 401

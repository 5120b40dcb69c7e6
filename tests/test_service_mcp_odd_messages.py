"""The outside reliability round's MCP defects, against the real service:

- S1 an authenticated POST of a JSON-RPC *response* to /mcp is accepted with 202 and logged at DEBUG only
  (was one ERROR line each: any token holder could flood the log at ERROR level);
- S2 a request whose id is neither a string nor an integer (`1e999`, which parses as infinity; `1.5`) gets
  400 with a JSON-RPC invalid-request error (was 202 and no answer at all)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from service_helpers import ALICE, Server

pytestmark = pytest.mark.models

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
           "Authorization": f"Bearer {ALICE}"}  # fmt: skip


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = Server(Path(tmp_path_factory.mktemp("mcp-odd")) / "data").start()
    try:
        yield s
    finally:
        s.stop()


def post(server: Server, raw: bytes) -> httpx.Response:
    return httpx.post(server.url + "/mcp", content=raw, headers=HEADERS, timeout=10.0)


def error_lines(server: Server) -> list[str]:
    return [line for line in server.log().splitlines() if " ERROR " in line]


@pytest.mark.parametrize("raw", [
    b'{"jsonrpc":"2.0","id":5,"result":{}}',
    b'{"jsonrpc":"2.0","id":"x","error":{"code":-32000,"message":"no"}}',
    b'[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}}]',
], ids=["result", "error", "batch"])  # fmt: skip
def test_s1_a_posted_response_is_202_without_an_error_line(server: Server, raw: bytes) -> None:
    before = len(error_lines(server))
    for _ in range(20):
        r = post(server, raw)
        assert r.status_code == 202, r.text
    assert len(error_lines(server)) == before, error_lines(server)[-3:]


@pytest.mark.parametrize("rid", [b"1e999", b"1.5", b"true", b"{}", b"[1]"])
def test_s2_a_request_id_that_is_no_string_or_integer_is_answered_400(server: Server, rid: bytes) -> None:
    raw = (b'{"jsonrpc":"2.0","id":' + rid +
           b',"method":"tools/call","params":{"name":"recall_my_conversations","arguments":{"query":"x"}}}')
    r = post(server, raw)
    assert r.status_code == 400, r.text
    err = r.json()
    assert err["error"]["code"] == -32600 and "body.id" in err["error"]["message"], err
    assert err["id"] is None


def test_a_plain_request_still_reaches_the_sdk(server: Server) -> None:
    raw = (b'{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
           b'"capabilities":{},"clientInfo":{"name":"t","version":"0"}}}')
    r = post(server, raw)
    assert r.status_code == 200, r.text
    assert b'"id":7' in r.content

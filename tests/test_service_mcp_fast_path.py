"""The guard answers plain recall calls itself (server/mcp_fast.py): the same answers as the MCP SDK's own path.

Two real services over the same conversations, one with FUNES_MCP_FAST_PATH off: every call below gets the
same status, content type and JSON body from both. `funes_mcp_posts_total{path=...}` on /metrics tells which
path answered."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from funes_py.server.passages import NO_MEMORY
from service_helpers import ALICE, CAROL, Server, ingest_demo

pytestmark = pytest.mark.models


def headers(token: str = ALICE, **extra: str) -> dict[str, str]:
    return {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
            "Authorization": f"Bearer {token}", "mcp-protocol-version": "2025-06-18", **extra}  # fmt: skip


def call(query: object, rid: object = 1, **params: object) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
            "params": {"name": "recall_my_conversations", "arguments": {"query": query}, **params}}  # fmt: skip


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Server]]:
    root = Path(tmp_path_factory.mktemp("mcp-fast"))
    fast = Server(root / "fast" / "data").start()
    slow = Server(root / "slow" / "data", env={"FUNES_MCP_FAST_PATH": "false"}).start()
    try:
        for s in (fast, slow):
            ingest_demo(s)
            s.wait_indexed()
        yield fast, slow
    finally:
        fast.stop()
        slow.stop()


def both(servers: tuple[Server, Server], body: object, hdrs: dict[str, str] | None = None) -> tuple[httpx.Response, httpx.Response]:
    out = [httpx.post(s.url + "/mcp", json=body, headers=hdrs or headers(), timeout=30.0) for s in servers]
    return out[0], out[1]


def posts(server: Server) -> dict[str, float]:
    """funes_mcp_posts_total by path, from the server's /metrics (loopback needs no token)."""
    text = httpx.get(server.url + "/metrics", timeout=10.0).text
    out = {"fast": 0.0, "sdk": 0.0}
    for line in text.splitlines():
        for path in out:
            if line.startswith(f'funes_mcp_posts_total{{path="{path}"}}'):
                out[path] = float(line.split()[-1])
    return out


@pytest.mark.parametrize("body", [
    call("what did we decide about the upgrade and what blocks it?"),
    call("unit rate per pallet", rid="a-string-id"),
    call("Ünïcode \"quotes\" \\ and\nnewlines 회의 ✓", rid=2**40),
    call(""),
    call("?!.,"),
], ids=["answer", "string-id", "odd-text", "empty", "punctuation"])  # fmt: skip
def test_a_plain_call_is_answered_by_the_guard_with_the_sdks_answer(servers: tuple[Server, Server], body: object) -> None:
    fast, slow = servers
    before = posts(fast), posts(slow)
    a, b = both(servers, body)
    assert (a.status_code, a.headers["content-type"]) == (b.status_code, b.headers["content-type"]) == (200, "application/json")
    assert a.json() == b.json()
    assert a.json()["result"]["content"][0]["text"]  # an answer, not an empty body
    assert posts(fast) == {"fast": before[0]["fast"] + 1, "sdk": before[0]["sdk"]}
    assert posts(slow) == {"fast": 0, "sdk": before[1]["sdk"] + 1}


def test_a_tenant_without_memory_gets_the_same_answer(servers: tuple[Server, Server]) -> None:
    a, b = both(servers, call("anything at all"), headers(CAROL))  # carol never stored anything
    assert a.status_code == b.status_code == 200
    assert a.json() == b.json()
    assert a.json()["result"]["content"][0]["text"] == NO_MEMORY


@pytest.mark.parametrize("body,hdrs", [
    (call("x", _meta={"progressToken": 5}), None),
    ({**call("x"), "params": {"name": "no_such_tool", "arguments": {"query": "x"}}}, None),
    (call(42), None),
    ({**call("x"), "params": {"name": "recall_my_conversations", "arguments": {"query": "x", "k": 3}}}, None),
    ([call("x")], None),
    (call("x"), headers(**{"mcp-protocol-version": "1999-01-01"})),
    (call("x"), headers(host="evil.example")),
], ids=["meta", "unknown-tool", "not-a-string", "extra-argument", "batch", "bad-version", "bad-host"])  # fmt: skip
def test_any_other_call_goes_to_the_sdk_on_both(servers: tuple[Server, Server], body: object,
                                                 hdrs: dict[str, str] | None) -> None:
    before = posts(fast := servers[0])
    a, b = both(servers, body, hdrs)
    assert posts(fast)["fast"] == before["fast"]
    assert a.status_code == b.status_code
    assert a.headers.get("content-type") == b.headers.get("content-type")
    if a.headers.get("content-type") == "application/json":
        assert a.json() == b.json()
    else:
        assert a.content == b.content


def test_the_sdk_client_gets_its_answers_from_the_fast_path(servers: tuple[Server, Server]) -> None:
    fast, slow = servers
    before = posts(fast)
    queries = ["what did we decide about the upgrade and what blocks it?", "unit rate per pallet"]
    assert fast.recall_many(ALICE, queries) == slow.recall_many(ALICE, queries)
    after = posts(fast)
    assert after["fast"] == before["fast"] + 2  # the calls; initialize and its notification went to the SDK
    assert after["sdk"] > before["sdk"]

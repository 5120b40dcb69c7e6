"""Isolation probes: every way a caller might try to name another tenant gets its own tenant's answer or a
401, never alice's memory: extra tool arguments, headers, query strings, two Authorization headers, JWTs
whose claims are near alice (`client_id` beside another `sub`, padding, a NUL, a lone surrogate), the
ingest key as a bearer token. Real server, raw JSON-RPC over HTTP (so the probes are not limited to what a
well-behaved client sends), real engine."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import httpx
import jwt
import pytest

from service_helpers import ALICE, BOB, INGEST_KEY, JWT_SECRET, DataRoot, Server

pytestmark = pytest.mark.models

MARKER = "QV-8812"
TEXT = f"The Lisbon chiller {MARKER} compressor was swapped on Tuesday; the warranty claim is WC-5531."


@pytest.fixture(scope="module")
def server(data_root: DataRoot) -> Iterator[Server]:
    s = Server(data_root).start()
    try:
        body = {"user": "alice", "conversation_id": "chiller", "turns": [
            {"role": "user", "text": TEXT, "ts": "2026-10-05T10:00:00Z"}]}
        assert s.post_turns(body).status_code == 202
        s.wait_indexed()
        yield s
    finally:
        s.stop()


def call(server: Server, headers: list[tuple[str, str]], arguments: dict, path: str = "/mcp") -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "recall_my_conversations", "arguments": arguments}}
    base = [("Accept", "application/json, text/event-stream"), ("Content-Type", "application/json")]
    return httpx.post(server.url + path, content=json.dumps(body), headers=base + headers, timeout=30.0)


def answer(r: httpx.Response) -> str:
    assert r.status_code == 200, r.text
    return "".join(c.get("text", "") for c in r.json()["result"]["content"])


def token(**claims: object) -> str:
    return jwt.encode({"exp": int(time.time()) + 600, **claims}, JWT_SECRET, algorithm="HS256")


def test_alice_finds_it(server: Server) -> None:
    assert MARKER in answer(call(server, [("Authorization", f"Bearer {ALICE}")], {"query": "Lisbon chiller"}))


@pytest.mark.parametrize("headers, arguments, path", [
    ([("Authorization", f"Bearer {BOB}")], {"query": "Lisbon chiller", "user": "alice"}, "/mcp"),
    ([("Authorization", f"Bearer {BOB}")], {"query": "Lisbon chiller", "tenant": "alice", "token": ALICE}, "/mcp"),
    ([("Authorization", f"Bearer {BOB}"), ("X-User", "alice"), ("X-Forwarded-User", "alice")],
     {"query": f"{MARKER} Lisbon chiller"}, "/mcp"),
    ([("Authorization", f"Bearer {BOB}")], {"query": "Lisbon chiller"}, f"/mcp?user=alice&token={ALICE}"),
    ([("Authorization", f"Bearer {BOB}"), ("Authorization", f"Bearer {ALICE}")], {"query": "Lisbon chiller"}, "/mcp"),
    ([("Authorization", f"Bearer {token(sub='bob', client_id='alice')}")], {"query": "Lisbon chiller"}, "/mcp"),
    ([("Authorization", f"Bearer {token(sub='alice ')}")], {"query": "Lisbon chiller"}, "/mcp"),
    ([("Authorization", f"Bearer {token(sub='alice' + chr(0))}")], {"query": "Lisbon chiller"}, "/mcp"),
    ([("Authorization", f"Bearer {token(sub='Alice')}")], {"query": "Lisbon chiller"}, "/mcp"),
])
def test_probes_as_someone_else_never_reach_alice(server: Server, headers, arguments, path) -> None:
    r = call(server, headers, arguments, path)
    if r.status_code == 200:
        assert MARKER not in r.text and "WC-5531" not in r.text, r.text
    else:
        assert r.status_code in (400, 401), r.text


@pytest.mark.parametrize("bearer", [
    token(sub="\ud800alice"),  # a lone surrogate names no tenant
    token(sub=""),
    token(sub=["alice"]),
    INGEST_KEY,
    f"{ALICE}x",
    ALICE.upper(),
])
def test_tokens_that_name_no_tenant_are_401(server: Server, bearer: str) -> None:
    r = call(server, [("Authorization", f"Bearer {bearer}")], {"query": "Lisbon chiller"})
    assert r.status_code == 401, r.text


def test_no_token_in_the_query_string(server: Server) -> None:
    assert call(server, [], {"query": "Lisbon chiller"}, f"/mcp?access_token={ALICE}").status_code == 401

"""No bad request gets a 5xx, and the server lives through them: a seeded, bounded fuzz of 10,000 bodies on
POST /turns, 2,000 on POST /mcp (with a valid token, so the SDK's transport sees them), and a few hundred
on DELETE /conversations/{id} and /healthz, against a real server on loopback (real engine, real models).
Then the cases the issue named, one by one, with the status and error each must get.

Kept fast for CI: small bodies, 16 keep-alive connections at once, a minimal HTTP client, and no index
runs while it lasts (the debounce is longer than the test). Change SEED to explore; a failure prints the
seed, the route and the body that got a 5xx."""

from __future__ import annotations

import asyncio
import json
import random
import urllib.parse
from collections.abc import Callable, Iterator

import httpx
import pytest
from fuzz_bodies import mcp_body, turns_body

from funes_py.server.passages import NO_MEMORY
from service_helpers import ALICE, INGEST_KEY, Server

pytestmark = pytest.mark.models

SEED = 20261011
TURNS_BODIES = 10_000
MCP_BODIES = 2_000
OTHER_REQUESTS = 400
CONNECTIONS = 16

MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
               "Authorization": f"Bearer {ALICE}"}
INGEST_HEADERS = {"x-ingest-key": INGEST_KEY, "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    # Small limits, so the generated bodies reach them without being large.
    s = Server(tmp_path_factory.mktemp("fuzz") / "data",
               env={"FUNES_MAX_TURNS": "3", "FUNES_MAX_TURN_CHARS": "2000", "FUNES_MAX_BODY_BYTES": "200000",
                    "FUNES_MAX_MCP_BODY_BYTES": "200000", "FUNES_INDEX_DEBOUNCE_S": "600",
                    "FUNES_INDEX_MAX_WAIT_S": "600"}).start()
    try:
        yield s
    finally:
        s.stop()


Request = tuple[str, str, dict[str, str], bytes]  # method, path, headers, body


async def send_all(url: str, requests: list[Request]) -> list[tuple[Request, int, str]]:
    """Every request over CONNECTIONS keep-alive connections; (request, status, body) for each.

    A minimal HTTP/1.1 client over asyncio streams rather than httpx: a fuzzer sends bytes as given, and
    httpx spent about 3 ms of CPU a request here, three times what the server spent answering it."""
    host, port = url.removeprefix("http://").split(":")
    out: list[tuple[Request, int, str]] = []
    queue: asyncio.Queue[Request] = asyncio.Queue()
    for r in requests:
        queue.put_nowait(r)

    async def worker() -> None:
        conn: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        while not queue.empty():
            r = queue.get_nowait()
            for attempt in range(2):  # a connection the server closed is reopened once
                if conn is None:
                    conn = await asyncio.open_connection(host, int(port))
                try:
                    status, body, close = await exchange(*conn, host, r)
                    break
                except (ConnectionError, asyncio.IncompleteReadError):
                    conn[1].close()
                    conn = None
                    if attempt:
                        raise
            out.append((r, status, body[:300].decode("utf-8", "replace")))
            if close:
                conn[1].close()
                conn = None
        if conn is not None:
            conn[1].close()

    await asyncio.gather(*(worker() for _ in range(CONNECTIONS)))
    return out


async def exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str,
                   request: Request) -> tuple[int, bytes, bool]:
    """One request and its response: (status, body, whether the server closes the connection)."""
    method, path, headers, body = request
    head = [f"{method} {path} HTTP/1.1", f"Host: {host}", f"Content-Length: {len(body)}",
            *(f"{k}: {v}" for k, v in headers.items())]
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
    await writer.drain()
    lines = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    fields = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:] if x)}
    if fields.get("transfer-encoding") == "chunked":
        data = b""
        while size := int((await reader.readuntil(b"\r\n")).strip(), 16):
            data += (await reader.readexactly(size + 2))[:-2]
        await reader.readuntil(b"\r\n")
    else:
        data = await reader.readexactly(int(fields.get("content-length", "0")))
    return status, data, fields.get("connection", "").lower() == "close"


def generated(n: int, seed: int, make: Callable[[random.Random], Request]) -> list[Request]:
    rnd = random.Random(seed)
    return [make(rnd) for _ in range(n)]


def other_request(rnd: random.Random) -> Request:
    """DELETE /conversations/{id} with odd ids, users and bodies; /healthz with odd methods and bodies."""
    if rnd.random() < 0.2:
        return (rnd.choice(["GET", "POST", "PUT", "DELETE"]), "/healthz", {}, turns_body(rnd))
    cid = rnd.choice(["fz-1", "x" * 129, "a.b", "%ED%A0%80", "%FF", "%00", "..%2F..", "\u00e9", "fz-" + "9" * 50])
    path = "/conversations/" + (cid if "%" in cid else urllib.parse.quote(cid, safe=""))
    kind = rnd.randrange(3)
    if kind == 0:
        user = rnd.choice(["fuzz", "", "%FF", "%ED%A0%80", "%00", "u" * 600])
        return ("DELETE", f"{path}?user={user}", INGEST_HEADERS, b"")
    if kind == 1:
        return ("DELETE", path, INGEST_HEADERS, turns_body(rnd))
    return ("DELETE", path, INGEST_HEADERS, json.dumps({"user": rnd.choice(["fuzz", "\ud800", 5, None])},
                                                        ensure_ascii=False).encode("utf-8", "surrogatepass"))


def test_ten_thousand_bad_bodies_and_no_5xx(server: Server) -> None:
    requests = (
        generated(TURNS_BODIES, SEED, lambda rnd: ("POST", "/turns", INGEST_HEADERS, turns_body(rnd)))
        + generated(MCP_BODIES, SEED + 1, lambda rnd: ("POST", "/mcp", MCP_HEADERS, mcp_body(rnd)))
        + generated(OTHER_REQUESTS, SEED + 2, other_request)
    )
    results = asyncio.run(send_all(server.url, requests))
    assert len(results) == len(requests)
    errors = [(r[0], r[1], r[3][:200], status, text) for r, status, text in results if status >= 500]
    assert not errors, f"seed {SEED}: {len(errors)} answers of 5xx, first ones:\n" + "\n".join(map(repr, errors[:8]))

    by_route: dict[str, dict[int, int]] = {}
    for (method, path, _, _), status, _ in results:
        counts = by_route.setdefault(f"{method} /{path.split('/')[1].split('?')[0]}", {})
        counts[status] = counts.get(status, 0) + 1
    print("statuses by route:", json.dumps(by_route, sort_keys=True))
    assert by_route["POST /turns"].get(400, 0) > TURNS_BODIES // 2  # they were mostly bad, and said so
    assert by_route["POST /mcp"].get(400, 0) > MCP_BODIES // 4

    # Alive and well: health, a real write, a real recall.
    assert server.health()["status"] == "ready"
    good = {"user": "fuzz-after", "conversation_id": "after", "turns": [
        {"role": "user", "text": "After the fuzz: the Antwerp pump P-31 seal was replaced.", "ts": "2026-10-11T09:00:00Z"}]}
    assert server.post_turns(good).status_code == 202
    assert server.recall(ALICE, "Antwerp pump seal") == NO_MEMORY  # MCP end to end: alice stored nothing
    log = server.log()
    assert "Traceback" not in log, log[log.index("Traceback") - 2000: log.index("Traceback") + 3000]


def mcp_post(server: Server, body: bytes, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.post(server.url + "/mcp", content=body, headers=headers or MCP_HEADERS, timeout=30.0)


@pytest.mark.parametrize("body, code", [
    (b"{not json", -32700),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"\xff}', -32700),
    (b"\xff\xfe\x00{", -32700),
    (b"[" * 5_000 + b"]" * 5_000, -32600),
    (b'{"jsonrpc": "2.0", "id": ' + b"9" * 5_000 + b', "method": "tools/list"}', -32600),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "recall_my_conversations", '
     b'"arguments": {"query": "\\ud800"}}}', -32600),
])
def test_mcp_transport_errors_are_jsonrpc_errors_with_400(server: Server, body: bytes, code: int) -> None:
    r = mcp_post(server, body)
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error["code"] == code and error["message"].startswith("Parse error" if code == -32700 else "Invalid Request")


def test_the_sdk_keeps_its_own_answers_to_wrong_headers(server: Server) -> None:
    """A body the SDK would not read (not labelled JSON, or a caller that does not accept JSON) gets the
    SDK's own answer, not a parse error about a body nobody was going to parse."""
    wrong_type = mcp_post(server, b"{not json", {**MCP_HEADERS, "Content-Type": "text/plain"})
    assert wrong_type.status_code == 400 and "Content-Type" in wrong_type.text  # its transport security's 400
    assert mcp_post(server, b"{not json", {**MCP_HEADERS, "Accept": "text/html"}).status_code == 406


def test_mcp_body_over_the_limit_is_413_and_without_a_token_401(server: Server) -> None:
    big = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "recall_my_conversations", "arguments": {"query": "x " * 150_000}}}).encode()
    assert mcp_post(server, big).status_code == 413
    # No token: the SDK's 401 comes first, whatever the body.
    assert mcp_post(server, b"{not json", {**MCP_HEADERS, "Authorization": ""}).status_code == 401
    assert mcp_post(server, b"\xff", {**MCP_HEADERS, "Authorization": "Bearer nope"}).status_code == 401


@pytest.mark.parametrize("name, body, field", [
    ("deep", b'{"user": "fuzz", "turns": ' + b"[" * 100 + b"]" * 100 + b"}", "turns"),
    ("deeper than the parser goes", b'{"user": "fuzz", "turns": ' + b"[" * 50_000 + b"]" * 50_000 + b"}", "body"),
    ("huge int", b'{"user": "fuzz", "conversation_id": "c", "turns": [], "n": ' + b"1" * 4_400 + b"}", "body"),
    ("surrogate text", b'{"user": "fuzz", "conversation_id": "c", "turns": [{"role": "user", "text": "a\\ud800", '
                       b'"ts": "2026-10-01T00:00:00Z"}]}', "turns[0].text"),
    ("surrogate user", b'{"user": "\\udfff", "conversation_id": "c", "turns": []}', "user"),
    ("surrogate id", b'{"user": "fuzz", "conversation_id": "c", "turns": [{"id": "\\ud800", "role": "user", '
                     b'"text": "a", "ts": "2026-10-01T00:00:00Z"}]}', "turns[0].id"),
    ("early ts", b'{"user": "fuzz", "conversation_id": "c", "turns": [{"role": "user", "text": "a", '
                 b'"ts": "0001-01-01T00:00:00+01:00"}]}', "turns[0].ts"),
    ("late ts", b'{"user": "fuzz", "conversation_id": "c", "turns": [{"role": "user", "text": "a", '
                b'"ts": "9999-12-31T23:59:59-01:00"}]}', "turns[0].ts"),
    ("invalid utf-8", b'{"user": "fu\xffzz"}', "body"),
    ("utf-16", '{"user": "fuzz"}'.encode("utf-16"), "body"),
    ("not json", b"{user: fuzz}", "body"),
    ("too many turns", json.dumps({"user": "fuzz", "conversation_id": "c", "turns": [
        {"role": "user", "text": "a", "ts": "2026-10-01T00:00:00Z"}] * 4}).encode(), "turns"),
    ("long text", json.dumps({"user": "fuzz", "conversation_id": "c", "turns": [
        {"role": "user", "text": "a" * 2001, "ts": "2026-10-01T00:00:00Z"}]}).encode(), "turns[0].text"),
])
def test_the_named_cases_on_turns_get_400_naming_the_field(server: Server, name: str, body: bytes, field: str) -> None:
    r = httpx.post(server.url + "/turns", content=body, headers=INGEST_HEADERS, timeout=30.0)
    assert r.status_code == 400, (name, r.text)
    assert r.json()["error"].startswith(field + ":") or r.json()["error"].startswith(field + "["), (name, r.text)

"""The outside reliability round's proxy defects (P1-P6), each replayed against the real `funes-py proxy`:

- P1 a body nested ~1,000 deep is a 400 naming the body (was a 500 that broke the keep-alive connection);
- P2 an upstream answering 200 with a body that is not a completion is a 502 `upstream_bad_response`, streamed
  or not (was a 500 with a traceback, a reset, or a 200 holding only `[DONE]`); a tiny real HTTP upstream;
- P3 a lone surrogate, escaped or as raw bytes, is a 400 and never reaches the archive (was invalid UTF-8 in
  the `.funes.jsonl`);
- P4 `recall(id=…)` keeps to the conversation as `recall(query)` does (was: any of the tenant's messages);
- P5 a message past FUNES_PROXY_MAX_MESSAGE_CHARS is a 400 before anything is archived or embedded;
- P6 `GET /funes/archive/{id}` with a negative offset or limit is a 400 (was a 200 with a wrong slice).

The engine behind the proxy is the scripted test double (proxy_double.py) except for P2."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from proxy_helpers import SYSTEM, TOOLS, Proxy, tool_turn

from funes_py.proxy.config import DEFAULT_MAX_MESSAGE_CHARS, ProxyConfig
from funes_py.tenancy.auth import tenant_id
from proxy_double import Reply, ScriptedEngine, call

pytestmark = pytest.mark.models

MAX_CHARS = 5000
CANARY = "Quillfeather-93"


@pytest.fixture(scope="module")
def engine() -> Iterator[ScriptedEngine]:
    with ScriptedEngine(n_ctx=16384) as e:
        yield e


@pytest.fixture(scope="module")
def proxy(engine: ScriptedEngine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    data = tmp_path_factory.mktemp("hostile") / "data"
    with Proxy(data, engine.url, env={"FUNES_PROXY_MAX_MESSAGE_CHARS": str(MAX_CHARS)}) as p:
        yield p


def archived_bytes(proxy: Proxy) -> bytes:
    src = proxy.data / tenant_id("local") / "src"
    return b"".join(p.read_bytes() for p in sorted(src.glob("*"))) if src.is_dir() else b""


def post_raw(proxy: Proxy, raw: bytes) -> httpx.Response:
    return proxy.client.post("/v1/chat/completions", content=raw, headers={"content-type": "application/json"})


def nested(depth: int) -> bytes:
    return (b'{"model": "m", "messages": [{"role": "user", "content": "hi"}], "x": ' + b"[" * depth + b"]" * depth + b"}")


@pytest.mark.parametrize("depth", [100, 1000, 5000])
def test_p1_a_deep_body_is_400_and_the_connection_still_serves(proxy: Proxy, engine: ScriptedEngine, depth: int) -> None:
    before = len(engine.bodies)
    r = post_raw(proxy, nested(depth))
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert err["type"] == "invalid_request_error" and "nested deeper" in err["message"], err
    assert len(engine.bodies) == before
    # the same keep-alive client goes on working
    ok = proxy.chat([SYSTEM, {"role": "user", "content": f"still there after depth {depth}?"}])
    assert ok.status_code == 200, ok.text


@pytest.mark.parametrize("raw", [
    b'{"model": "m", "messages": [{"role": "user", "content": "a\\ud800 escaped SURROGATE-CANARY"}]}',
    b'{"model": "m", "messages": [{"role": "user", "content": "a\xed\xa0\x80 raw SURROGATE-CANARY"}]}',
], ids=["escaped", "raw-bytes"])  # fmt: skip
def test_p3_a_lone_surrogate_is_400_and_never_archived(proxy: Proxy, engine: ScriptedEngine, raw: bytes) -> None:
    before = len(engine.bodies)
    r = post_raw(proxy, raw)
    assert r.status_code == 400, r.text
    assert r.json()["error"]["type"] == "invalid_request_error"
    assert len(engine.bodies) == before
    assert b"SURROGATE-CANARY" not in archived_bytes(proxy)
    archived_bytes(proxy).decode("utf-8")  # whatever is archived is valid UTF-8


def test_p5_a_message_past_the_limit_is_400_and_nothing_is_archived(proxy: Proxy, engine: ScriptedEngine) -> None:
    assert ProxyConfig.load({"FUNES_PROXY_UPSTREAM": "http://x"}).max_message_chars == DEFAULT_MAX_MESSAGE_CHARS == 4_000_000
    before = len(engine.bodies)
    big = "OVERSIZE-CANARY " * (MAX_CHARS // 16 + 10)
    r = proxy.chat([SYSTEM, {"role": "user", "content": big}])
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert err["code"] == "message_too_large" and err["param"] == "messages[1].content", err
    assert len(engine.bodies) == before
    assert b"OVERSIZE-CANARY" not in archived_bytes(proxy)
    # the limit counts a tool output as well
    history = [SYSTEM, {"role": "user", "content": "run it"}, *tool_turn(0, "bash", {"command": "x"}, big)]
    r = proxy.chat(history, tools=TOOLS)
    assert r.status_code == 400 and r.json()["error"]["param"] == "messages[3].content", r.text
    assert b"OVERSIZE-CANARY" not in archived_bytes(proxy)


def test_p4_and_p6_an_id_keeps_to_its_conversation_and_pages_refuse_negative_bounds(proxy: Proxy, engine: ScriptedEngine) -> None:
    output = f"The kiln log says {CANARY} fired at 1,240 degrees."
    history = [SYSTEM, {"role": "user", "content": "Read the kiln log."}, *tool_turn(0, "bash", {"command": "cat kiln.log"}, output)]
    r = proxy.chat(history, tools=TOOLS, headers={"x-funes-conversation": "alice-A"})
    assert r.status_code == 200, r.text
    rows = [json.loads(line) for p in (proxy.data / tenant_id("local") / "src").glob("alice-A.*") for line in p.read_text().splitlines()]
    (mid,) = [row["turn_uuid"] for row in rows if row["role"] == "tool"]

    def reader(scope: str | None) -> Any:
        args = {"id": mid, **({"scope": scope} if scope else {})}

        def script(body: dict[str, Any], n: int) -> Reply:
            last = body["messages"][-1]
            if last["role"] == "user":
                return Reply(tool_calls=[call("recall", args, "r0")])
            return Reply(text="done")
        return script

    try:
        for scope, readable in ((None, False), ("all", True)):
            engine.script = reader(scope)
            r = proxy.chat([SYSTEM, {"role": "user", "content": f"What did the kiln log say? ({scope})"}],
                           tools=TOOLS, headers={"x-funes-conversation": "alice-A2"})  # fmt: skip
            assert r.status_code == 200, r.text
            (result,) = [m["content"] for m in engine.bodies[-1]["messages"] if m["role"] == "tool"]
            assert (CANARY in result) is readable, (scope, result)
            if not readable:
                assert "another conversation" in result and 'scope="all"' in result, result
    finally:
        engine.script = lambda body, n: Reply(text=f"answer {n}")

    # P6: the archive route pages as the tool does, and refuses what the tool refuses
    page = proxy.client.get(f"/funes/archive/{mid}", params={"offset": 5, "limit": 10})
    assert page.status_code == 200 and "characters 5–15" in page.json()["page"], page.text
    for params, param in (({"offset": -5, "limit": -3}, "offset"), ({"offset": -1}, "offset"),
                          ({"offset": 0, "limit": 0}, "limit"), ({"offset": 0, "limit": -3}, "limit")):  # fmt: skip
        r = proxy.client.get(f"/funes/archive/{mid}", params=params)
        assert r.status_code == 400 and r.json()["error"]["param"] == param, (params, r.text)


# --- P2: a real HTTP upstream that answers 200 with something else than a completion -------------------

class NotAnEngine:
    """A loopback HTTP server answering every POST with 200 and `body` (an HTML page, say), GET with 404."""

    def __init__(self, body: bytes, content_type: str) -> None:
        outer = self
        self.posts = 0

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, data: bytes, ctype: str) -> None:
                self.send_response(status)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                outer.posts += 1
                self._send(200, body, content_type)

            def do_GET(self) -> None:
                self._send(404, b"not found", "text/plain")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.mark.parametrize(("body", "ctype"), [
    (b"<html><body>502 from a captive portal</body></html>", "text/html"),
    (b'data: {"not": "closed"\n\ndata: [DONE]\n\n', "text/event-stream"),
    (b'{"object": "list", "data": []}', "application/json"),
], ids=["html", "sse-of-broken-json", "json-of-another-api"])  # fmt: skip
def test_p2_a_200_that_is_not_a_completion_is_502(tmp_path: Path, body: bytes, ctype: str) -> None:
    upstream = NotAnEngine(body, ctype)
    try:
        with Proxy(tmp_path / "data", upstream.url, window=8192, engine="openai") as proxy:
            for stream in (False, True):
                r = proxy.chat([SYSTEM, {"role": "user", "content": f"hello, stream={stream}"}], stream=stream)
                assert r.status_code == 502, (stream, r.status_code, r.text)
                err = r.json()["error"]
                assert err["type"] == "upstream_error" and err["code"] == "upstream_bad_response", err
            assert upstream.posts >= 2
            assert "Traceback" not in proxy.log(), proxy.log()[-3000:]
            assert proxy.chat([SYSTEM, {"role": "user", "content": "and again"}]).status_code == 502
    finally:
        upstream.close()

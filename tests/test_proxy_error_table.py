"""Every row of the proxy's error table, through the real `funes-py proxy` command and a scripted engine
(the test double in proxy_double.py): each error has the OpenAI shape, names its field, and where the
table says "nothing sent", the engine saw nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import httpx
import pytest
from proxy_helpers import SYSTEM, Proxy, filler, free_port, tool_turn

from funes_py.tenancy.auth import tenant_id
from proxy_double import Reply, ScriptedEngine

pytestmark = pytest.mark.models

USER = [SYSTEM, {"role": "user", "content": "hello"}]


def _error(resp: httpx.Response, status: int) -> dict:
    assert resp.status_code == status, resp.text
    err = resp.json()["error"]
    assert set(err) >= {"message", "type", "param", "code"}
    return err


@pytest.fixture(scope="module")
def engine():
    with ScriptedEngine(n_ctx=8192) as e:
        yield e
    assert e.oversize == [], "a request larger than the window reached the engine"


@pytest.fixture(scope="module")
def proxy(engine, tmp_path_factory):
    data = tmp_path_factory.mktemp("errors") / "data"
    with Proxy(data, engine.url, env={"FUNES_PROXY_MAX_BODY_BYTES": "200000"}) as p:
        yield p


def test_body_not_json_is_400_naming_the_body(proxy, engine):
    before = len(engine.bodies)
    err = _error(proxy.client.post("/v1/chat/completions", content=b"{not json", headers={"content-type": "application/json"}), 400)
    assert err["param"] == "body" and "JSON" in err["message"]
    assert len(engine.bodies) == before


@pytest.mark.parametrize(("messages", "param"), [
    ([{"role": "user", "content": "hi"}, {"role": "wizard", "content": "x"}], "messages[1].role"),
    ([{"role": "user", "content": 42}], "messages[0].content"),
    ([{"role": "user"}], "messages[0].content"),
    ([{"role": "user", "content": "a"}, {"role": "tool", "content": "out"}], "messages[1].tool_call_id"),
    ([{"role": "assistant", "content": None, "tool_calls": [{"id": "c", "function": {}}]}], "messages[0].tool_calls[0].function.name"),
    ("not a list", "messages"),
    ([], "messages"),
])  # fmt: skip
def test_bad_message_is_400_naming_the_field(proxy, engine, messages, param):
    before = len(engine.bodies)
    err = _error(proxy.client.post("/v1/chat/completions", json={"model": "m", "messages": messages}), 400)
    assert err["param"] == param and err["type"] == "invalid_request_error"
    assert len(engine.bodies) == before


def test_n_above_one_is_400(proxy, engine):
    err = _error(proxy.chat(USER, n=2), 400)
    assert err["param"] == "n"


def test_body_too_large_is_413(proxy, engine):
    before = len(engine.bodies)
    big = [*USER, {"role": "user", "content": "x" * 300_000}]
    err = _error(proxy.chat(big), 413)
    assert err["code"] == "body_too_large"
    assert len(engine.bodies) == before


def test_a_conversation_that_cannot_fit_is_400_with_counts_and_nothing_sent(proxy, engine):
    before = len(engine.bodies)
    huge = [*USER, {"role": "user", "content": filler(1, 60_000)}]  # one user message far past 8K tokens
    err = _error(proxy.chat(huge), 400)
    assert err["code"] == "context_window_exceeded"
    assert err["window"] == 8192 and err["prompt_tokens"] > 8192 and err["response_tokens"] > 0
    assert len(engine.bodies) == before, "a refused request must not reach the engine"


def test_upstream_errors_pass_through_unchanged(proxy, engine):
    engine.script = lambda body, n: Reply(status=429, error={"error": {"message": "slow down", "code": 429, "type": "rate"}})
    try:
        resp = proxy.chat([*USER, {"role": "user", "content": "again"}])
    finally:
        engine.script = lambda body, n: Reply(text="ok")
    assert resp.status_code == 429
    assert resp.json() == {"error": {"message": "slow down", "code": 429, "type": "rate"}}


def test_upstream_timeout_is_504(engine, tmp_path):
    engine.script = lambda body, n: Reply(text="late", delay_s=3.0)
    try:
        with Proxy(tmp_path / "data", engine.url, env={"FUNES_PROXY_TIMEOUT_S": "1"}) as p:
            err = _error(p.chat(USER), 504)
    finally:
        engine.script = lambda body, n: Reply(text="ok")
    assert err["code"] == "upstream_timeout"


def test_upstream_unreachable_is_502(tmp_path):
    dead = f"http://127.0.0.1:{free_port()}"
    with Proxy(tmp_path / "data", dead, window=8192, engine="openai") as p:
        err = _error(p.chat(USER), 502)
    assert err["code"] == "upstream_unreachable"


def test_bad_token_is_401_and_a_good_one_is_a_tenant(engine, tmp_path):
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({"tok-alice-123": "alice"}))
    with Proxy(tmp_path / "data", engine.url, env={"FUNES_TOKENS_FILE": str(tokens)}) as p:
        assert _error(p.chat(USER), 401)["type"] == "authentication_error"
        assert _error(p.chat(USER, headers={"authorization": "Bearer nope"}), 401)["code"] == "invalid_api_key"
        ok = p.chat(USER, headers={"authorization": "Bearer tok-alice-123"})
        assert ok.status_code == 200, ok.text
        assert (tmp_path / "data" / tenant_id("alice") / "src").is_dir()
        assert p.client.get("/funes/health").status_code == 200


def test_archive_write_failure_forwards_unmasked_if_it_fits_else_503(engine, tmp_path):
    data = tmp_path / "data"
    with Proxy(data, engine.url) as p:
        history = [*USER]
        for i in range(3):
            history += tool_turn(i, "read", {"path": f"f{i}.py"}, filler(i, 2000))
        assert p.chat(history).status_code == 200
        src = data / tenant_id("local") / "src"
        (archived,) = list(src.glob("*.funes.jsonl"))
        archived.unlink()
        archived.mkdir()  # the conversation's archive file can no longer be written (even by root)
        before = len(engine.bodies)
        small = [*history, {"role": "assistant", "content": "answer"}, {"role": "user", "content": "next"}]
        resp = p.chat(small)
        assert resp.status_code == 200, resp.text
        sent = engine.bodies[before]
        assert sent["messages"] == small, "with no archive nothing may be hidden: the client's messages as sent"
        assert not any(t["function"]["name"] == "recall" for t in sent.get("tools") or [])
        too_big = [*small, {"role": "assistant", "content": "a"}, {"role": "user", "content": filler(9, 40_000)}]
        err = _error(p.chat(too_big), 503)
        assert err["code"] == "archive_unavailable"
        assert len(engine.bodies) == before + 1
        archived.rmdir()
    shutil.rmtree(data)


def test_archive_route_pages_and_404s(proxy, engine):
    history = [*USER, *tool_turn(0, "bash", {"command": "cat notes.txt"}, "line one\r\nline two  \n")]
    assert proxy.chat(history).status_code == 200
    src = next(Path(proxy.data, tenant_id("local"), "src").glob("*.funes.jsonl"))
    rows = [json.loads(line) for line in src.read_text().splitlines()]
    mid = next(r["turn_uuid"] for r in rows if r["role"] == "tool" and "line one" in r["blocks"][0]["text"])
    got = proxy.client.get(f"/funes/archive/{mid}").json()
    assert got["text"] == "line one\r\nline two  \n" and got["tool"] == "bash"
    assert _error(proxy.client.get("/funes/archive/m000000000000"), 404)["code"] == "not_found"


def test_other_paths_pass_through(proxy, engine):
    models = proxy.client.get("/v1/models")
    assert models.status_code == 200 and models.json()["data"][0]["id"] == "scripted"
    with proxy.client.stream("GET", "/echo-stream") as resp:
        body = b"".join(resp.iter_raw())
    assert body == b"data: 0\n\ndata: 1\n\ndata: 2\n\n"
    assert proxy.client.get("/nowhere").status_code == 404


def test_the_upstream_key_comes_from_the_environment_and_the_clients_is_not_forwarded(engine, tmp_path):
    with Proxy(tmp_path / "data", engine.url, env={"FUNES_PROXY_UPSTREAM_API_KEY": "sk-upstream-123"}) as p:
        resp = p.client.post("/v1/echo", json={"x": 1}, headers={"authorization": "Bearer client-secret"})
        assert resp.json() == {"echo": {"x": 1}, "auth": "Bearer sk-upstream-123"}
        assert p.chat(USER).status_code == 200

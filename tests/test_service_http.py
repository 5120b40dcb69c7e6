"""The service's HTTP contract: who may read and write, what a bad request gets, what the tool's answer
looks like, forgetting, secrets and pasted recall at the door, and debounced indexing. Real server in a
subprocess on a free loopback port, real MCP client, real HTTP client (httpx), real engine; the whole module
runs twice, with the tenants on local disk and on a real S3 server (`data_root`)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import httpx
import jwt
import pytest

from funes_py.render import format_passages as render
from funes_py.server.passages import UNAVAILABLE, passage_count
from funes_py.tenancy.auth import tenant_id
from service_helpers import ALICE, BOB, INGEST_KEY, JWT_SECRET, DataRoot, Server, mcp_post_status

pytestmark = pytest.mark.models

CAP = 700


@pytest.fixture(scope="module")
def server(data_root: DataRoot) -> Iterator[Server]:
    s = Server(data_root,
               env={"FUNES_RECALL_MAX_CHARS": str(CAP), "FUNES_MAX_BODY_BYTES": "65536",
                    "FUNES_INDEX_DEBOUNCE_S": "0.8"}).start()
    try:
        yield s
    finally:
        s.stop()


def turns(*texts: str, start: str = "2026-10-12T09:00:") -> list[dict]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "text": t, "ts": f"{start}{i:02d}Z"}
            for i, t in enumerate(texts)]


def body(user: str, cid: str, *texts: str) -> dict:
    return {"user": user, "conversation_id": cid, "turns": turns(*texts)}


# --- who may write ----------------------------------------------------------------------------------

def test_ingest_needs_the_ingest_key(server: Server) -> None:
    b = body("alice", "k-check", "hello")
    assert server.post_turns(b, key=None).status_code == 401
    assert server.post_turns(b, key="wrong-key").status_code == 401
    assert server.post_turns(b, key=INGEST_KEY[:-1]).status_code == 401
    # The agent's bearer token opens nothing here.
    assert server.post_turns(b, key=None, headers={"Authorization": f"Bearer {ALICE}"}).status_code == 401
    assert server.post_turns(b).status_code == 202


def test_bad_requests_say_which_field(server: Server) -> None:
    r = server.post_turns(body("alice", "bad/../id", "x"))
    assert r.status_code in (400, 404)  # a slash never reaches the handler as one id
    for bad, field in [
        (body("alice", "bad.id", "x"), "conversation_id"),
        (body("alice", "", "x"), "conversation_id"),
        (body("", "ok-id", "x"), "user"),
        ({"user": "alice", "conversation_id": "ok-id", "turns": [{"role": "user", "text": "x", "ts": "soon"}]}, "turns[0].ts"),
        ({"user": "alice", "conversation_id": "ok-id", "turns": [{"role": "user", "ts": "2026-10-01T00:00:00Z"}]}, "turns[0].text"),
    ]:
        r = server.post_turns(bad)
        assert r.status_code == 400 and r.json()["error"].startswith(field), (bad, r.text)
    r = httpx.post(server.url + "/turns", content=b"{not json", headers={"x-ingest-key": INGEST_KEY})
    assert r.status_code == 400


def test_oversized_body_is_413(server: Server) -> None:
    big = body("alice", "big-one", "x" * 70_000)
    assert server.post_turns(big).status_code == 413

    def chunks() -> Iterator[bytes]:  # no content-length: the limit is enforced while reading
        data = json.dumps(big).encode()
        for i in range(0, len(data), 8192):
            yield data[i:i + 8192]

    r = httpx.post(server.url + "/turns", content=chunks(), headers={"x-ingest-key": INGEST_KEY})
    assert r.status_code == 413


# --- who may read -----------------------------------------------------------------------------------

def test_mcp_needs_a_valid_token(server: Server) -> None:
    assert mcp_post_status(server.url, None) == 401
    assert mcp_post_status(server.url, "tok-alice-5f1d") == 401  # forged: one character off
    assert mcp_post_status(server.url, INGEST_KEY) == 401  # the ingest key is not a bearer token
    forged = jwt.encode({"sub": "alice"}, "not-the-secret-but-long-enough-0123456789", algorithm="HS256")
    assert mcp_post_status(server.url, forged) == 401
    expired = jwt.encode({"sub": "alice", "exp": int(time.time()) - 60}, JWT_SECRET, algorithm="HS256")
    assert mcp_post_status(server.url, expired) == 401
    unsigned = jwt.encode({"sub": "alice"}, None, algorithm="none")
    assert mcp_post_status(server.url, unsigned) == 401
    with pytest.raises(Exception):  # noqa: B017 - the client raises its own transport error types for a 401; no tool runs
        server.recall("nope", "anything")


def test_jwt_subject_or_client_id_is_the_tenant(server: Server) -> None:
    assert server.post_turns(body("dora", "jwt-conv", "The Antwerp dock door D-14 sensor was replaced.")).status_code == 202
    server.wait_indexed()
    for claims in ({"sub": "dora"}, {"client_id": "dora"}):
        token = jwt.encode({**claims, "exp": int(time.time()) + 600}, JWT_SECRET, algorithm="HS256")
        assert "D-14" in server.recall(token, "dock door sensor D-14")
    other = jwt.encode({"sub": "erin"}, JWT_SECRET, algorithm="HS256")
    assert "D-14" not in server.recall(other, "dock door sensor D-14")


# --- the answer -------------------------------------------------------------------------------------

def test_answers_stay_under_the_cap_without_paths(server: Server) -> None:
    long_turns = [f"Pump curve note {i}: " + " ".join(f"flow{i}x{j} head{j}m" for j in range(120)) for i in range(6)]
    assert server.post_turns(body("alice", "pump-curves", *long_turns)).status_code == 202
    server.wait_indexed()
    for q in ["pump curve note", "flow head", "flow3x7 head7m", "anything at all", "Pump curve note 5"]:
        out = server.recall(ALICE, q)
        assert len(out) <= CAP, len(out)
        assert str(server.data) not in out and ".funes.jsonl" not in out and "pump-curves" not in out
        assert out != UNAVAILABLE


def test_a_query_that_looks_like_flags_is_searched_as_text(server: Server) -> None:
    text = "To widen the search I ran the report with -k 100 and the --since flag set to last Monday."
    assert server.post_turns(body("alice", "flags-conv", text)).status_code == 202
    server.wait_indexed()
    out = server.recall(ALICE, "-k 100")
    assert out != UNAVAILABLE and passage_count(out) <= 3
    assert "-k 100" in out
    for q in ["--help", "-k", "k=100; DROP TABLE turns", "\"unterminated"]:
        assert server.recall(ALICE, q) != UNAVAILABLE


# --- writing, forgetting, what is kept --------------------------------------------------------------

def test_secrets_are_masked_before_storage(server: Server) -> None:
    key = "sk-proj-Q9w8E7r6T5y4U3i2O1pAsDfGhJkL"
    aws = "AKIAZ7QW3ER5TY8UI0PL"
    b = body("alice", "secret-conv", f"Our vendor key is {key} and the AWS id {aws}, db postgres://etl:Hunt3r2x@db:5432/ops")
    assert server.post_turns(b).status_code == 202
    stored = server.root.source(tenant_id("alice"), "secret-conv") or ""
    assert key not in stored and aws not in stored and "Hunt3r2x" not in stored
    assert "[REDACTED api key]" in stored
    server.wait_indexed()
    out = server.recall(ALICE, "vendor key AWS id")
    assert key not in out and aws not in out


def test_pasted_recall_output_is_not_stored(server: Server) -> None:
    from types import SimpleNamespace as NS

    hit = NS(session_id="s", turn_uuid="u", seq=1, ts="2026-10-01T07:43:00Z", role="assistant", block_type="text",
             text="SettleNet switched its export to file format v2.3 at month end.", score=1.0, neighbors=[])
    pasted = "Here is what I found:\n\n" + render([hit], 4000)
    b = {"user": "alice", "conversation_id": "echo-conv", "turns": [
        {"role": "user", "text": "remind me about the bank feed format", "ts": "2026-10-12T10:00:00Z"},
        {"role": "assistant", "text": pasted, "ts": "2026-10-12T10:00:05Z"},
    ]}
    r = server.post_turns(b)
    assert r.status_code == 202 and r.json()["skipped"] == 1
    stored = server.root.source(tenant_id("alice"), "echo-conv") or ""
    assert "SettleNet" not in stored and len(stored.splitlines()) == 1


def test_forget_removes_the_conversation(server: Server) -> None:
    assert server.post_turns(body("bob", "to-forget", "The Bremen kiln K-3 thermocouple reads 40 degrees low.")).status_code == 202
    server.wait_indexed()
    assert "K-3" in server.recall(BOB, "Bremen kiln thermocouple")
    url = server.url + "/conversations/to-forget"
    assert httpx.delete(url, params={"user": "bob"}).status_code == 401
    assert httpx.delete(url, params={"user": "bob"}, headers={"x-ingest-key": "wrong"}).status_code == 401
    assert httpx.delete(url, params={"user": "alice"}, headers={"x-ingest-key": INGEST_KEY}).status_code == 404
    r = httpx.delete(url, params={"user": "bob"}, headers={"x-ingest-key": INGEST_KEY})
    assert r.status_code == 200 and r.json()["rows_removed"] >= 1
    assert server.root.source(tenant_id("bob"), "to-forget") is None
    assert "K-3" not in server.recall(BOB, "Bremen kiln thermocouple")
    r = httpx.request("DELETE", url, json={"user": "bob"}, headers={"x-ingest-key": INGEST_KEY})
    assert r.status_code == 404


def test_a_burst_of_writes_gives_one_index_run(server: Server) -> None:
    server.wait_indexed()
    before = server.health()["index_runs"]
    texts = [f"Burst turn {i}: the Ghent line L-{i} changeover took {20 + i} minutes." for i in range(8)]
    for n in range(1, len(texts) + 1):  # the gateway resends the whole conversation after every turn
        assert server.post_turns(body("alice", "burst-conv", *texts[:n])).status_code == 202
    after = server.wait_indexed()
    assert after["index_runs"] - before == 1
    assert "L-7" in server.recall(ALICE, "Ghent line L-7 changeover")


def test_health_reports_ready(server: Server) -> None:
    h = server.health()
    assert h["status"] == "ready" and h["index_runs_failed"] == 0

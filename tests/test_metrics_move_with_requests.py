"""`GET /metrics` of a real service and a real proxy, in Prometheus' text format: the counts move with the
requests that should move them. The service's ingest bodies are parsed in worker processes, so their parse
histogram reaching /metrics proves the multiprocess directory works; it is a temporary directory the service
made and removes when it stops. Only loopback clients, or a holder of FUNES_METRICS_TOKEN, may scrape."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from proxy_helpers import SYSTEM, TOOLS, Proxy, tool_turn

from funes_py.metrics import allowed
from proxy_double import Reply, ScriptedEngine, call
from service_helpers import ALICE, Server

pytestmark = pytest.mark.models

TOKEN = "metrics-token-3c9e1f"


def scrape(url: str, token: str | None = None) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """{(sample name, sorted labels): value} of one scrape."""
    headers = {"authorization": f"Bearer {token}"} if token else {}
    r = httpx.get(url + "/metrics", headers=headers, timeout=10.0)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/plain")
    out = {}
    for family in text_string_to_metric_families(r.text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def value(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = Server(Path(tmp_path_factory.mktemp("metrics")) / "data").start()
    try:
        yield s
    finally:
        s.stop()


def test_the_service_counts_ingest_index_and_recall(server: Server) -> None:
    before = scrape(server.url)
    body = {"user": "alice", "conversation_id": "metrics-1", "turns": [
        {"role": "user", "text": "The Brightwater pump PX-77 was serviced on Tuesday.", "ts": "2026-10-01T09:00:00Z"},
        {"role": "assistant", "text": "Noted: PX-77 serviced.", "ts": "2026-10-01T09:01:00Z"}]}  # fmt: skip
    r = server.post_turns(body)
    assert r.status_code == 202, r.text
    assert server.post_turns({"user": "alice"}).status_code == 400
    server.wait_indexed()
    assert "PX-77" in server.recall(ALICE, "when was the Brightwater pump PX-77 serviced")
    server.recall(ALICE, "   ")  # an empty query
    after = scrape(server.url)

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert moved("funes_ingest_requests_total", status="202") == 1
    assert moved("funes_ingest_requests_total", status="400") == 1
    assert moved("funes_ingest_turns_total") == 2
    assert moved("funes_ingest_bytes_total") == len(httpx.Request("POST", "http://x", json=body).content)
    assert moved("funes_ingest_parse_seconds_count") == 2, "the worker processes' counts reach /metrics"
    assert moved("funes_index_runs_total", outcome="ok") >= 1
    assert moved("funes_index_run_seconds_count") >= 1
    assert moved("funes_recalls_total", outcome="answered") == 1
    assert moved("funes_recalls_total", outcome="empty_query") == 1
    assert moved("funes_recall_seconds_count") == 2
    assert value(after, "funes_warm_tenants") == 1
    assert value(after, "funes_index_queue_tenants") == 0


def test_the_multiprocess_directory_is_the_services_own_and_goes_with_it(tmp_path: Path) -> None:
    s = Server(tmp_path / "data", env={"FUNES_METRICS_TOKEN": TOKEN}).start()
    try:
        assert httpx.get(s.url + "/metrics", timeout=10.0).status_code == 401  # loopback is not enough now
        assert httpx.get(s.url + "/metrics", headers={"authorization": "Bearer wrong"}, timeout=10.0).status_code == 401
        assert ("funes_warm_tenants", ()) in scrape(s.url, TOKEN)
        m = re.search(r"metrics of every process counted in (\S+)", s.log())
        assert m, s.log()
        where = Path(m.group(1))
        assert where.is_dir() and any(where.glob("*.db"))
    finally:
        s.stop()
    assert not where.exists(), "the service removes the directory it made"


def test_only_loopback_or_the_token_may_scrape() -> None:
    assert allowed("127.0.0.1", None, None) and allowed("::1", None, None)
    assert not allowed("10.0.0.5", None, None) and not allowed(None, None, None)
    assert allowed("10.0.0.5", f"Bearer {TOKEN}", TOKEN)
    assert not allowed("127.0.0.1", None, TOKEN) and not allowed("127.0.0.1", "Bearer nope", TOKEN)


def test_the_proxy_counts_upstream_calls_refusals_and_recall_calls(tmp_path: Path) -> None:
    def script(body: dict[str, Any], n: int) -> Reply:
        last = body["messages"][-1]
        if last["role"] == "user" and "search" in last["content"]:
            return Reply(tool_calls=[call("recall", {"query": "kiln temperature"}, "r0")])
        return Reply(text=f"answer {n}")

    with ScriptedEngine(16384, script=script) as engine, Proxy(tmp_path / "data", engine.url) as proxy:
        before = scrape(proxy.url)
        history = [SYSTEM, {"role": "user", "content": "read the log"},
                   *tool_turn(0, "bash", {"command": "cat kiln.log"}, "kiln temperature 1,240 degrees")]  # fmt: skip
        assert proxy.chat(history, tools=TOOLS).status_code == 200
        proxy.wait_indexed()
        history += [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "search the log"}]
        assert proxy.chat(history, tools=TOOLS).status_code == 200
        r = proxy.client.post("/v1/chat/completions", content=b"{not json", headers={"content-type": "application/json"})
        assert r.status_code == 400
        after = scrape(proxy.url)

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert moved("funes_proxy_upstream_seconds_count") >= 3  # two answers, one after the recall round
    assert moved("funes_proxy_recall_calls_total") == 1
    assert moved("funes_proxy_refusals_total", code="invalid_value") == 1
    assert moved("funes_index_runs_total", outcome="ok") >= 1
    assert value(after, "funes_warm_tenants") == 1

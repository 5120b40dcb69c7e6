"""deploy/haproxy.cfg on the real HAProxy, in front of three trivial replicas (stdlib HTTP servers that answer
/healthz and say who they are): tenant affinity by Authorization header, spread, and failover when a replica
dies and when it comes back. The real `funes-py serve` replicas are not needed for this: what is under test
is the balancer's configuration."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from lb_helpers import HAProxy, render_config

TOKENS = [f"Bearer tenant-{i:03d}-token" for i in range(90)]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as uvicorn: HAProxy reuses its connections to replicas
    server: _Server

    def do_GET(self) -> None:
        self.server.requests[self.path.split("?")[0]] += 1
        body = json.dumps({"server": self.server.name, "authorization": self.headers.get("Authorization")}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET

    def setup(self) -> None:
        super().setup()
        with self.server.lock:
            self.server.open.add(self.connection)

    def finish(self) -> None:
        with self.server.lock:
            self.server.open.discard(self.connection)
        super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    name: str
    requests: Counter[str]
    lock: threading.Lock
    open: set[socket.socket]

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # HAProxy resets idle keep-alive connections (and stop() cuts them): not worth a traceback


class Replica:
    """A stand-in replica on 127.0.0.1:port. stop() is a process death: the listening socket closes and so
    does every open connection; start() again on the same port is a restart."""

    def __init__(self, name: str, port: int = 0) -> None:
        self.name, self.port = name, port
        self.httpd: _Server | None = None

    def start(self) -> Replica:
        httpd = _Server(("127.0.0.1", self.port), _Handler)
        httpd.name, httpd.requests, httpd.lock, httpd.open = self.name, Counter(), threading.Lock(), set()
        self.port = httpd.server_address[1]
        threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.httpd = httpd
        return self

    def stop(self) -> None:
        httpd, self.httpd = self.httpd, None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.server_close()
        with httpd.lock:
            conns = list(httpd.open)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            c.close()

    @property
    def requests(self) -> Counter[str]:
        return self.httpd.requests if self.httpd else Counter()


def ask(lb: HAProxy, authorization: str | None, path: str = "/mcp") -> tuple[int, str | None]:
    """One request on a fresh client connection: (status, the replica that answered)."""
    conn = http.client.HTTPConnection("127.0.0.1", lb.port, timeout=10)
    try:
        conn.request("GET", path, headers={"Authorization": authorization} if authorization else {})
        r = conn.getresponse()
        body = r.read()
        return r.status, json.loads(body)["server"] if r.status == 200 else None
    finally:
        conn.close()


def placement(lb: HAProxy, tokens: list[str] = TOKENS) -> dict[str, str | None]:
    out = {}
    for t in tokens:
        status, server = ask(lb, t)
        assert status == 200, f"{t}: HTTP {status}"
        out[t] = server
    return out


@pytest.fixture
def farm() -> Iterator[tuple[HAProxy, dict[str, Replica]]]:
    replicas = {name: Replica(name).start() for name in ("replica1", "replica2", "replica3")}
    try:
        with HAProxy([r.port for r in replicas.values()]) as lb:
            assert lb.servers == list(replicas)
            lb.wait_states({name: "UP" for name in replicas})
            yield lb, replicas
    finally:
        for r in replicas.values():
            r.stop()


def test_the_deployed_config_is_what_runs() -> None:
    text, servers, var = render_config(5)
    assert servers == [f"replica{i}" for i in range(1, 6)] and var == "FUNES_REPLICA_"
    assert 'server replica5 "${FUNES_REPLICA_5}" id 5' in text
    for line in ("balance hdr(Authorization)", "hash-type consistent", "option httpchk GET /healthz", "option redispatch 1",
                 "on-marked-down shutdown-sessions", "retry-on conn-failure empty-response 503"):  # fmt: skip
        assert line in text


def test_the_same_credential_always_lands_on_the_same_replica(farm: tuple[HAProxy, dict[str, Replica]]) -> None:
    lb, replicas = farm
    first = placement(lb, TOKENS[:30])
    for _ in range(3):
        assert placement(lb, TOKENS[:30]) == first
    # Also within one client connection that carries several tenants: HAProxy balances each request.
    conn = http.client.HTTPConnection("127.0.0.1", lb.port, timeout=10)
    try:
        for t in TOKENS[:30]:
            conn.request("GET", "/mcp", headers={"Authorization": t})
            r = conn.getresponse()
            assert json.loads(r.read())["server"] == first[t]
    finally:
        conn.close()
    # The header reaches the replica unchanged.
    assert ask(lb, TOKENS[0])[0] == 200


def test_different_credentials_spread_over_the_replicas(farm: tuple[HAProxy, dict[str, Replica]]) -> None:
    lb, replicas = farm
    counts = Counter(placement(lb).values())
    print(f"{len(TOKENS)} tenants over 3 replicas: {dict(sorted(counts.items()))}")
    assert set(counts) == set(replicas), counts
    # Consistent hashing is not perfectly even; the placement is deterministic (tokens and server ids fixed).
    assert min(counts.values()) >= len(TOKENS) // 10, counts
    # Requests without the header (ingest, with x-ingest-key) go round robin.
    anonymous = Counter(ask(lb, None, "/turns")[1] for _ in range(30))
    assert set(anonymous) == set(replicas) and min(anonymous.values()) >= 5, anonymous


def test_a_dead_replica_s_tenants_move_and_the_others_stay(farm: tuple[HAProxy, dict[str, Replica]]) -> None:
    lb, replicas = farm
    before = placement(lb)
    victim = "replica2"
    moved = [t for t, s in before.items() if s == victim]
    stayed = [t for t, s in before.items() if s != victim]
    assert moved and stayed

    log_lines = len(lb.log().splitlines())
    t0 = time.monotonic()
    replicas[victim].stop()
    # Before the health checks notice, every request is still answered: the connection to the dead replica
    # is refused and HAProxy retries on another one (its log marks such a request "+1": redispatched).
    during = Counter(ask(lb, t) for t in moved)
    assert all(status == 200 and server != victim for status, server in during), during
    redispatched = [line for line in lb.log().splitlines()[log_lines:] if '"GET /mcp' in line and "/+" in line]
    assert redispatched, "no request was retried on another replica: the health check was faster than the test?"
    lb.wait_states({victim: "DOWN"}, timeout=5.0)
    down_after = time.monotonic() - t0
    after = placement(lb)
    assert all(after[t] == before[t] for t in stayed), "tenants of the live replicas moved"
    assert all(after[t] != victim for t in moved)
    assert placement(lb, moved) == {t: after[t] for t in moved}, "the moved tenants must stick to their new replica"
    print(f"{victim} ({len(moved)} tenants) marked down {down_after:.1f} s after it died; "
          f"its tenants went to {dict(Counter(after[t] for t in moved))}")  # fmt: skip
    assert down_after < 5.0

    # It comes back on the same address: consistent hashing gives it exactly its tenants again.
    replicas[victim] = Replica(victim, replicas[victim].port).start()
    lb.wait_states({victim: "UP"}, timeout=5.0)
    assert placement(lb) == before


def test_a_replica_that_is_not_ready_gets_no_tenants(farm: tuple[HAProxy, dict[str, Replica]]) -> None:
    """A replica whose /healthz answers 503 (funes-py serve while it starts) is taken out like a dead one."""
    lb, replicas = farm
    before = placement(lb)
    victim = replicas["replica3"]
    assert victim.httpd is not None
    orig = _Handler.do_GET

    def starting(self: _Handler) -> None:
        if self.server is victim.httpd:
            self.send_response(503)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        orig(self)

    _Handler.do_GET = starting  # type: ignore[method-assign]
    try:
        lb.wait_states({"replica3": "DOWN"}, timeout=5.0)
        after = placement(lb)
        assert all(s != "replica3" for s in after.values())
        assert all(after[t] == before[t] for t in before if before[t] != "replica3")
    finally:
        _Handler.do_GET = orig  # type: ignore[method-assign]
    lb.wait_states({"replica3": "UP"}, timeout=5.0)
    assert placement(lb) == before

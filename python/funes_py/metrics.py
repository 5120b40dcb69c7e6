"""Prometheus metrics of the recall service and the proxy, and the `GET /metrics` route that serves them.

Every metric is defined here (names `funes_*`, docs/operations.md lists them); the places that count import
the object they count with. Counters and histograms only: what describes the present (warm tenants, the index
queue) is read from the live objects when a scrape comes (`Live`), never kept as a gauge that could go stale.

Processes: the service parses ingest bodies in worker processes (server/ingest_pool.py), which count too.
prometheus_client adds up several processes only in its multiprocess mode, which it chooses from
`PROMETHEUS_MULTIPROC_DIR` when it is first imported, once per process. `metrics_setup.prepare_multiprocess()`
runs before that (serve_main calls it first): it points the variable at a fresh temporary directory, removed at exit, that
the spawned workers inherit; an operator who names a directory keeps it, and its old `*.db` files (a previous
run's counts) are removed at start, as prometheus_client asks. A process that never called it (the proxy, a
test that builds an app in-process) counts in its own memory, which is right for one process.

Access: `/metrics` answers loopback clients; with FUNES_METRICS_TOKEN set it answers only a request carrying
`Authorization: Bearer <token>`, from anywhere (loopback included: a reverse proxy on the same host would make
every client look local). Like the ingest key, the token is compared in constant time.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector

from .metrics_setup import MULTIPROC_ENV

# Recall latency: the service answers in 5-50 ms warm; a cold tenant (opening, re-embedding) takes seconds.
_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_RUN_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0)
_UPSTREAM_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0)

# --- the recall service ---------------------------------------------------------------------------------
RECALLS = Counter("funes_recalls", "Recall tool calls by outcome: answered, nothing_found, no_memory, "
                  "empty_query, refused_query, timeout, failed", ["outcome"])  # fmt: skip
RECALL_SECONDS = Histogram("funes_recall_seconds", "Recall tool calls, request to answer (queueing included)",
                           buckets=_LATENCY_BUCKETS)  # fmt: skip
MCP_POSTS = Counter("funes_mcp_posts", "Authenticated POST /mcp by who answered: fast (a plain recall call, "
                    "server/mcp_fast.py) or sdk (initialize, tools/list, anything else)", ["path"])  # fmt: skip
INGEST_REQUESTS = Counter("funes_ingest_requests", "POST /turns by HTTP status", ["status"])
INGEST_TURNS = Counter("funes_ingest_turns", "Turns stored by POST /turns (resent turns included)")
INGEST_BYTES = Counter("funes_ingest_bytes", "Bytes of the POST /turns bodies that were stored")
INGEST_PARSE_SECONDS = Histogram("funes_ingest_parse_seconds", "Parsing one ingest body in a worker process",
                                 buckets=_LATENCY_BUCKETS)  # fmt: skip

# --- the tenancy (both surfaces) -------------------------------------------------------------------------
INDEX_RUNS = Counter("funes_index_runs", "Index runs by outcome: ok, failed", ["outcome"])
INDEX_RUN_SECONDS = Histogram("funes_index_run_seconds", "Index runs, start to end", buckets=_RUN_BUCKETS)
EVICTIONS = Counter("funes_tenant_evictions", "Warm engines closed, by reason: idle, over_cap", ["reason"])
ERRORS = Counter("funes_errors", "Failures by kind (recall_failed, index_run_failed, ingest_worker_died, "
                 "forget_failed, erase_failed, upstream_unreachable, upstream_timeout, upstream_bad_response, "
                 "archive_write_failed)", ["kind"])  # fmt: skip

# --- the proxy -------------------------------------------------------------------------------------------
UPSTREAM_SECONDS = Histogram("funes_proxy_upstream_seconds", "Proxy requests to the upstream engine, sent to "
                             "response headers", buckets=_UPSTREAM_BUCKETS)  # fmt: skip
REFUSALS = Counter("funes_proxy_refusals", "Proxy requests answered with its own error, by code "
                   "(context_window_exceeded, message_too_large, invalid_value, ...)", ["code"])  # fmt: skip
RECALL_CALLS = Counter("funes_proxy_recall_calls", "Recall tool calls the proxy ran for the model")


class Live:
    """The values of the present, read at each scrape: `read()` returns {name: (help, value)}."""

    def __init__(self, read: Callable[[], Mapping[str, tuple[str, float]]]) -> None:
        self._read = read

    def collect(self) -> Iterator[GaugeMetricFamily]:
        for name, (help_, value) in self._read().items():
            yield GaugeMetricFamily(name, help_, value=value)


def exposition(live: Live | None = None) -> bytes:
    """The text format: every process's counts (multiprocess mode) or this one's, then the live values."""
    if os.environ.get(MULTIPROC_ENV):
        registry = CollectorRegistry()
        MultiProcessCollector(registry)
        body = generate_latest(registry)
    else:
        body = generate_latest(REGISTRY)
    if live is not None:
        now = CollectorRegistry()
        now.register(live)  # type: ignore[arg-type]
        body += generate_latest(now)
    return body


def allowed(client_host: str | None, authorization: str | None, token: str | None) -> bool:
    """Whether a scrape may read the metrics (see the module doc)."""
    if token:
        given = authorization[7:] if authorization and authorization.lower().startswith("bearer ") else ""
        return hmac.compare_digest(token.encode("utf-8"), given.encode("utf-8", "replace"))
    if client_host is None:
        return False
    try:
        return ipaddress.ip_address(client_host).is_loopback
    except ValueError:
        return client_host == "localhost"


def route(live: Callable[[], Mapping[str, tuple[str, float]]], token: str | None) -> Any:
    """`GET /metrics` for a starlette app."""
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    collector = Live(live)

    async def metrics(request: Request) -> Response:
        client = request.client.host if request.client is not None else None
        if not allowed(client, request.headers.get("authorization"), token):
            why = "a bearer token (FUNES_METRICS_TOKEN)" if token else "a loopback client, or FUNES_METRICS_TOKEN set"
            return JSONResponse({"error": f"/metrics needs {why}"}, status_code=401 if token else 403)
        return Response(exposition(collector), media_type=CONTENT_TYPE_LATEST)

    return Route("/metrics", metrics, methods=["GET"])

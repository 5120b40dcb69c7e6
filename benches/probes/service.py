"""Recall service throughput and latency through the MCP endpoint, and resident memory per warm tenant.

    python -m benches.probes.service [--seconds 5] [--clients 1,4,16] [--tenants 1,10,100] [--paths fast,sdk]

What is timed: one `tools/call` of `recall_my_conversations` as a real MCP client sees it (HTTP, auth,
JSON-RPC, engine recall, rendering), with C clients in one asyncio loop, each holding its own session
and token and calling back to back for `--seconds`, spread over T tenants. Every tenant is warm before
timing (one recall each), so this is the warm path; the first call of a cold tenant (engine open) is
reported separately. Excluded: server start-up and indexing.

Paths: `fast` is the service as shipped (a plain recall call answered by the MCP guard, server/mcp_fast.py);
`sdk` the same server with FUNES_MCP_FAST_PATH=false (every call through the MCP SDK's per-request session).
Both run in one invocation, on the same memories, one after the other, so their rows compare.

Memory: server RSS with 1 warm tenant and with all tenants warm; the difference divided by the extra
tenants is the cost of a warm tenant (store handle and caches; the models are shared).

Read the ratios between cells, not the absolute floor: the client runs on the same machine and takes a
share of its two cores. CPU seconds of the server process and of this client process are counted per
cell, so the table also says what one call costs each side (the client's share turned out small, about
3 ms a call against the server's 6-15 ms). Prints a markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import psutil

INGEST_KEY = "bench-ingest-key"
QUERIES = [
    "what did we decide about the upgrade and what blocks it?",
    "why was the column empty at month end and who was it escalated to?",
    "which forecast scenario is the base case and its parameters?",
    "unit rate per pallet",
    "capacity decision Saturday shifts",
    "changeover minutes workshop owner",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def conversations(tenant: int) -> list[dict]:
    """The demo's alice conversations with identifiers made unique per tenant."""
    from funes_py.server.demo_data import ALICE

    out = []
    for cid, turns in ALICE.items():
        tagged = [{**t, "text": t["text"].replace("N-11", f"N-{11 + tenant}").replace("MT-3318", f"MT-{3318 + tenant}")}
                  for t in turns]
        out.append({"user": f"user{tenant}", "conversation_id": cid, "turns": tagged})
    return out


class Server:
    def __init__(self, data: Path, n_tenants: int, max_concurrent: int, env: dict[str, str] | None = None):
        self.data, self.n_tenants, self.max_concurrent = data, n_tenants, max_concurrent
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.tokens = {f"bench-token-{i}": f"user{i}" for i in range(n_tenants)}
        tokens_file = data.parent / "bench-tokens.json"
        tokens_file.write_text(json.dumps(self.tokens))
        env = {**os.environ, "FUNES_PORT": str(self.port), "FUNES_DATA": str(data), "FUNES_TOKENS_FILE": str(tokens_file),
               "FUNES_INGEST_KEY": INGEST_KEY, "FUNES_INDEX_DEBOUNCE_S": "0.2", "FUNES_LOG": "WARNING",
               "FUNES_MAX_OPEN_TENANTS": str(n_tenants + 8), "FUNES_MAX_CONCURRENT_RECALLS": str(max_concurrent),
               **(env or {})}
        self.log = open(data.parent / "bench-server.log", "ab")
        self.proc = subprocess.Popen([sys.executable, "-m", "funes_py.server"], env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(self.url + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("server did not start; see bench-server.log")
            time.sleep(0.1)
        self.ps = psutil.Process(self.proc.pid)

    def rss_mib(self) -> float:
        return self.ps.memory_info().rss / 2**20

    def anon_mib(self) -> float:
        """RSS less its file-backed pages (the extension's code as it is first run, mapped files): the heap,
        the arenas and the stacks, which is where a leak would show."""
        mi = self.ps.memory_info()
        return (mi.rss - mi.shared) / 2**20

    def wait_indexed(self) -> None:
        time.sleep(0.3)
        while httpx.get(self.url + "/healthz").json()["indexing"]:
            time.sleep(0.2)

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=60)
        self.log.close()


async def client(url: str, token: str, stop_at: float, lat: list[float], errors: list[int],
                 max_calls: int | None = None) -> None:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
        async with streamable_http_client(url, http_client=http) as (read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()
                i = 0
                while time.perf_counter() < stop_at and (max_calls is None or i < max_calls):
                    t0 = time.perf_counter()
                    r = await session.call_tool("recall_my_conversations", {"query": QUERIES[i % len(QUERIES)]})
                    lat.append(time.perf_counter() - t0)
                    text = "".join(c.text for c in r.content if c.type == "text")
                    if r.isError or "unavailable" in text:
                        errors.append(1)
                    i += 1


async def cell(server: Server, n_tenants: int, n_clients: int, seconds: float) -> dict:
    tokens = list(server.tokens)[:n_tenants]
    lat: list[float] = []
    errors: list[int] = []
    stop_at = time.perf_counter() + seconds
    server_cpu0, client_cpu0 = sum(server.ps.cpu_times()[:2]), sum(os.times()[:2])
    t0 = time.perf_counter()
    await asyncio.gather(*(client(server.url + "/mcp", tokens[i % n_tenants], stop_at, lat, errors)
                           for i in range(n_clients)))
    wall = time.perf_counter() - t0
    server_cpu, client_cpu = sum(server.ps.cpu_times()[:2]) - server_cpu0, sum(os.times()[:2]) - client_cpu0
    lat.sort()
    n = max(1, len(lat))
    return {"n": len(lat), "rps": len(lat) / wall, "p50": 1000 * statistics.median(lat),
            "p95": 1000 * lat[min(len(lat) - 1, int(0.95 * len(lat)))], "errors": len(errors),
            "server_cpu_ms": 1000 * server_cpu / n, "client_cpu_ms": 1000 * client_cpu / n}


async def warm(server: Server, tokens: list[str]) -> list[float]:
    """One call per tenant, in order; returns each call's latency (the first call opens the engine)."""
    lat: list[float] = []
    for tok in tokens:
        await client(server.url + "/mcp", tok, float("inf"), lat, [], max_calls=1)
    return lat


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--clients", default="1,4,16")
    p.add_argument("--tenants", default="1,10,100")
    p.add_argument("--max-concurrent", type=int, default=4, help="FUNES_MAX_CONCURRENT_RECALLS of the server")
    p.add_argument("--paths", default="fast,sdk", help="fast: as shipped; sdk: FUNES_MCP_FAST_PATH=false")
    args = p.parse_args()
    paths = args.paths.split(",")
    clients = [int(x) for x in args.clients.split(",")]
    tenant_counts = [int(x) for x in args.tenants.split(",")]
    n_max = max(tenant_counts)

    with tempfile.TemporaryDirectory(prefix="funes-bench-") as tmp:
        data = Path(tmp) / "data"
        server = Server(data, n_max, args.max_concurrent)
        try:
            t0 = time.perf_counter()
            with httpx.Client(headers={"x-ingest-key": INGEST_KEY}, timeout=60) as http:
                for t in range(n_max):
                    for body in conversations(t):
                        http.post(server.url + "/turns", json=body).raise_for_status()
            server.wait_indexed()
            print(f"ingested {n_max} tenants x 6 conversations in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
            rows = []
            for i, path in enumerate(paths):
                # Indexing opened every tenant: restart so the memory figures start from a cold registry.
                server.stop()
                server = Server(data, n_max, args.max_concurrent, {"FUNES_MCP_FAST_PATH": str(path == "fast").lower()})
                tokens = list(server.tokens)
                rss_0 = server.rss_mib()
                cold_i = asyncio.run(warm(server, tokens[:1]))
                rss_1 = server.rss_mib()
                rest_i = asyncio.run(warm(server, tokens[1:]))
                rss_n = server.rss_mib()
                if i == 0:  # the memory figures of the first path
                    memory = (rss_0, rss_1, rss_n, cold_i, rest_i)
                for n_t in tenant_counts:
                    for n_c in clients:
                        r = asyncio.run(cell(server, n_t, n_c, args.seconds))
                        rows.append((path, n_t, n_c, r))
                        print(f"path={path} tenants={n_t} clients={n_c}: {r}", file=sys.stderr)
        finally:
            server.stop()

    print(f"## Recall service through MCP (k=3, candidates=8, no reranker; {args.seconds:.0f} s per cell, "
          f"FUNES_MAX_CONCURRENT_RECALLS={args.max_concurrent}, {os.cpu_count()} CPUs)\n")
    print("| path | tenants | clients | recalls/s | p50 ms | p95 ms | calls | errors | server CPU ms/call | client CPU ms/call |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for path, n_t, n_c, r in rows:
        print(f"| {path} | {n_t} | {n_c} | {r['rps']:.1f} | {r['p50']:.1f} | {r['p95']:.1f} | {r['n']} | {r['errors']} "
              f"| {r['server_cpu_ms']:.1f} | {r['client_cpu_ms']:.1f} |")
    for path in paths:
        busiest = max((x for x in rows if x[0] == path), key=lambda x: x[3]["rps"])[3]
        print(f"\n{path}: CPU per call at the busiest cell: server {busiest['server_cpu_ms']:.1f} ms, client (same machine) "
              f"{busiest['client_cpu_ms']:.1f} ms. With the client elsewhere, {os.cpu_count()} cores would serve about "
              f"{1000 * (os.cpu_count() or 1) / busiest['server_cpu_ms']:.0f} recalls/s (CPU bound, derived, not measured).")
    rss_0, rss_1, rss_n, cold, rest = memory
    per_tenant = (rss_n - rss_1) / max(1, n_max - 1)
    print(f"\nResident memory: {rss_1:.0f} MiB with 1 warm tenant, {rss_n:.0f} MiB with {n_max} "
          f"({rss_0:.0f} MiB at start, models loaded); about {per_tenant:.1f} MiB per extra warm tenant.")
    print(f"First call of a cold tenant (engine open included): {1000 * cold[0]:.0f} ms for the first, "
          f"median {1000 * statistics.median(rest or cold):.0f} ms for the others.")
    return 0


if __name__ == "__main__":
    sys.exit(main())

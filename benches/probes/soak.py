"""Soak: the recall service under mixed load for minutes, with its memory watched (issue 11).

    python -m benches.probes.soak [--minutes 5] [--recall-clients 8] [--ingest-interval 0.5] [--warmup 1]
    python -m benches.probes.soak --minutes 30          # the RSS-flat check (growth after warm-up < 50 MB)

Load, against a real server (`funes-py serve` in a subprocess, loopback, the service's defaults):
- ingest: a new conversation every `--ingest-interval` s, round robin over the recall clients' tenants,
  each 4 turns carrying a canary (`SK<tenant>-<n>`) no other conversation holds, so index runs go on
  all the time in the same tenants that are being recalled;
- recall: `--recall-clients` MCP clients, one tenant each, calling back to back: the benchmark's usual
  questions, every 5th call a canary of its own tenant, every 10th a canary of another tenant (an answer
  holding it would be a cross-tenant leak).
Recorded per minute: recalls and their rate, p50/p99, errors (transport errors, tool errors, the
"unavailable" answer), ingests and their errors, index runs, the server's RSS at the minute's end. Every
10 s an RSS sample of the server and of its ingest worker processes; the slope after `--warmup` minutes
(least squares, MiB/min) is the memory growth. The server's RSS is also sampled without its file-backed
pages (`anon`): the extension's code is mapped from its file and paged in as code paths first run, which
grows RSS for a while without any allocation.
At the end, after the last index run: every canary asked by its own tenant (must be found).
Writes benches/out/soak-<minutes>m.json and prints markdown for benches/RESULTS.md. Client and server
share the machine's cores: read rates as a floor.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from benches.paths import OUT
from benches.probes.service import INGEST_KEY, QUERIES, Server, conversations

UNAVAILABLE = "unavailable right now"


@dataclass
class Minute:
    recalls: list[float] = field(default_factory=list)  # latencies, ms
    recall_errors: int = 0
    leaks: int = 0
    ingests: int = 0
    ingest_errors: int = 0
    rss_mib: float = 0.0
    index_runs: int = 0


@dataclass
class Soak:
    start: float
    minutes: list[Minute]
    canaries: dict[int, list[str]]  # tenant -> canaries acknowledged
    rss: list[tuple[float, float]] = field(default_factory=list)  # (minutes since start, MiB): the server
    rss_workers: list[tuple[float, float]] = field(default_factory=list)  # its worker processes, together
    anon: list[tuple[float, float]] = field(default_factory=list)  # the server's RSS less file-backed pages

    def now(self) -> Minute:
        i = min(int((time.perf_counter() - self.start) // 60), len(self.minutes) - 1)
        return self.minutes[i]


def canary_body(tenant: int, n: int) -> tuple[dict, str]:
    canary = f"SK{tenant}-{n:05d}"
    turns = [{"role": "user" if i % 2 == 0 else "assistant",
              "text": f"Soak note {n}.{i}: meter {canary} at the Ghent site read {100 + i * 13} kWh; "
                      f"the crew logged it and scheduled the next reading in {i + 2} days.",
              "ts": f"2026-10-{1 + n % 28:02d}T{8 + i:02d}:00:00Z"} for i in range(4)]
    return {"user": f"user{tenant}", "conversation_id": f"soak-{n}", "turns": turns}, canary


async def ingest_loop(server: Server, soak: Soak, tenants: int, interval: float, stop_at: float) -> None:
    n = 0
    start = time.perf_counter()
    async with httpx.AsyncClient(headers={"x-ingest-key": INGEST_KEY}, timeout=60) as http:
        while time.perf_counter() < stop_at:
            await asyncio.sleep(max(0.0, start + n * interval - time.perf_counter()))  # a fixed schedule
            tenant = n % tenants
            body, canary = canary_body(tenant, n)
            minute = soak.now()
            try:
                r = await http.post(server.url + "/turns", json=body)
                if r.status_code == 202:
                    minute.ingests += 1
                    soak.canaries[tenant].append(canary)
                else:
                    minute.ingest_errors += 1
            except httpx.HTTPError:
                minute.ingest_errors += 1
            n += 1


async def recall_client(server: Server, soak: Soak, tenant: int, tenants: int, stop_at: float) -> None:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    token = list(server.tokens)[tenant]
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
        async with streamable_http_client(server.url + "/mcp", http_client=http) as (read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()
                i = 0
                while time.perf_counter() < stop_at:
                    other = soak.canaries[(tenant + 1 + i % (tenants - 1)) % tenants] if tenants > 1 else []
                    foreign = other[-1] if i % 10 == 9 and other else None
                    own = soak.canaries[tenant]
                    if foreign:
                        query = f"meter {foreign} reading"
                    elif i % 5 == 4 and own:
                        query = f"meter {own[i % len(own)]} reading"
                    else:
                        query = QUERIES[i % len(QUERIES)]
                    t0 = time.perf_counter()
                    minute = soak.now()
                    try:
                        r = await session.call_tool("recall_my_conversations", {"query": query})
                        text = "".join(c.text for c in r.content if c.type == "text")
                        minute.recalls.append(1000 * (time.perf_counter() - t0))
                        if r.isError or UNAVAILABLE in text:
                            minute.recall_errors += 1
                        if foreign and foreign in text:
                            minute.leaks += 1
                    except Exception:
                        minute.recall_errors += 1
                    i += 1


async def sampler(server: Server, soak: Soak, stop_at: float) -> None:
    while time.perf_counter() < stop_at:
        at = (time.perf_counter() - soak.start) / 60
        soak.rss.append((at, server.rss_mib()))
        soak.anon.append((at, server.anon_mib()))
        soak.rss_workers.append((at, workers_rss_mib(server)))
        minute = soak.now()
        minute.rss_mib = soak.rss[-1][1]
        async with httpx.AsyncClient(timeout=10) as http:
            minute.index_runs = (await http.get(server.url + "/healthz")).json()["index_runs"]
        await asyncio.sleep(10)


async def final_check(server: Server, soak: Soak) -> tuple[int, int]:
    """Every acknowledged canary, asked by its own tenant: (found, asked)."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    found = asked = 0
    for tenant, canaries in soak.canaries.items():
        token = list(server.tokens)[tenant]
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
            async with streamable_http_client(server.url + "/mcp", http_client=http) as (read, write, _):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    for c in canaries:
                        r = await session.call_tool("recall_my_conversations", {"query": f"meter {c} reading"})
                        asked += 1
                        found += c in "".join(x.text for x in r.content if x.type == "text")
    return found, asked


def workers_rss_mib(server: Server) -> float:
    """The server's child processes (the ingest workers, multiprocessing's resource tracker)."""
    return sum(c.memory_info().rss for c in server.ps.children(recursive=True)) / 2**20


def slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (x, y), in y per x."""
    if len(points) < 2:
        return 0.0
    mx = statistics.fmean(x for x, _ in points)
    my = statistics.fmean(y for _, y in points)
    var = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / var if var else 0.0


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))] if s else 0.0


async def run(server: Server, args: argparse.Namespace) -> Soak:
    soak = Soak(time.perf_counter(), [Minute() for _ in range(args.minutes)], {t: [] for t in range(args.recall_clients)})
    stop_at = soak.start + 60 * args.minutes
    await asyncio.gather(
        ingest_loop(server, soak, args.recall_clients, args.ingest_interval, stop_at),
        sampler(server, soak, stop_at),
        *(recall_client(server, soak, t, args.recall_clients, stop_at) for t in range(args.recall_clients)),
    )
    soak.rss.append((args.minutes, server.rss_mib()))
    return soak


def report(soak: Soak, args: argparse.Namespace, started: str, found: int, asked: int, rss_start: float,
           server_threads: int) -> dict:
    def after_warmup(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
        return [(x, y) for x, y in points if x >= args.warmup]

    after = after_warmup(soak.rss)
    every = [v for m in soak.minutes for v in m.recalls]
    summary = {
        "command": f"python -m benches.probes.soak --minutes {args.minutes} --recall-clients {args.recall_clients} "
                   f"--ingest-interval {args.ingest_interval} --warmup {args.warmup}",
        "started": started, "rss_start_mib": rss_start,
        "recalls": len(every), "recalls_per_s": len(every) / (60 * args.minutes),
        "p50_ms": pct(every, 0.5), "p99_ms": pct(every, 0.99),
        "recall_errors": sum(m.recall_errors for m in soak.minutes), "leaks": sum(m.leaks for m in soak.minutes),
        "ingests": sum(m.ingests for m in soak.minutes), "ingest_errors": sum(m.ingest_errors for m in soak.minutes),
        "index_runs": soak.minutes[-1].index_runs, "canaries_found": found, "canaries_asked": asked,
        "rss_slope_mib_per_min": slope(after),
        "rss_growth_after_warmup_mib": (after[-1][1] - after[0][1]) if after else 0.0,
        "rss_samples": soak.rss,
        "anon_slope_mib_per_min": slope(after_warmup(soak.anon)),
        "anon_samples": soak.anon,
        "threads_at_end": server_threads,
        "workers_rss_slope_mib_per_min": slope(after_warmup(soak.rss_workers)),
        "workers_rss_samples": soak.rss_workers,
        "minutes": [{"recalls": len(m.recalls), "p50_ms": pct(m.recalls, 0.5), "p99_ms": pct(m.recalls, 0.99),
                     "recall_errors": m.recall_errors, "leaks": m.leaks, "ingests": m.ingests,
                     "ingest_errors": m.ingest_errors, "index_runs": m.index_runs, "rss_mib": m.rss_mib}
                    for m in soak.minutes],
    }
    return summary


def markdown(s: dict, args: argparse.Namespace) -> str:
    lines = [f"Command: `{s['command']}`; run {s['started']}.", "",
             "| minute | recalls/s | p50 ms | p99 ms | recall errors | cross-tenant | ingests | ingest errors "
             "| index runs (total) | RSS MiB |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for i, m in enumerate(s["minutes"], 1):
        lines.append(f"| {i} | {m['recalls'] / 60:.1f} | {m['p50_ms']:.1f} | {m['p99_ms']:.1f} | {m['recall_errors']} "
                     f"| {m['leaks']} | {m['ingests']} | {m['ingest_errors']} | {m['index_runs']} | {m['rss_mib']:.0f} |")
    lines += ["", f"Total: {s['recalls']} recalls ({s['recalls_per_s']:.1f}/s, p50 {s['p50_ms']:.1f} ms, p99 "
              f"{s['p99_ms']:.1f} ms), {s['recall_errors']} errors, {s['leaks']} cross-tenant answers; {s['ingests']} "
              f"ingests, {s['ingest_errors']} errors, {s['index_runs']} index runs; canaries recalled afterwards "
              f"{s['canaries_found']}/{s['canaries_asked']}. RSS {s['rss_start_mib']:.0f} MiB at the start, "
              f"{s['rss_samples'][-1][1]:.0f} MiB at the end; after {args.warmup} min of warm-up "
              f"{s['rss_growth_after_warmup_mib']:+.0f} MiB, slope {s['rss_slope_mib_per_min']:+.1f} MiB/min, of which "
              f"anonymous memory (RSS less the file-backed pages: the extension's code as it is first run) "
              f"{s['anon_slope_mib_per_min']:+.1f} MiB/min; {s['threads_at_end']} threads at the end (its ingest worker "
              f"processes together: {s['workers_rss_samples'][-1][1]:.0f} MiB at the end, slope "
              f"{s['workers_rss_slope_mib_per_min']:+.1f} MiB/min)."]
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--minutes", type=int, default=5)
    p.add_argument("--recall-clients", type=int, default=8)
    p.add_argument("--ingest-interval", type=float, default=0.5)
    p.add_argument("--warmup", type=float, default=1.0, help="minutes left out of the RSS slope")
    args = p.parse_args()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    with tempfile.TemporaryDirectory(prefix="funes-soak-") as tmp:
        server = Server(Path(tmp) / "data", args.recall_clients, 4)
        try:
            with httpx.Client(headers={"x-ingest-key": INGEST_KEY}, timeout=60) as http:
                for t in range(args.recall_clients):
                    for b in conversations(t):
                        http.post(server.url + "/turns", json=b).raise_for_status()
            server.wait_indexed()
            rss_start = server.rss_mib()
            soak = asyncio.run(run(server, args))
            server.wait_indexed()
            server_threads = server.ps.num_threads()
            found, asked = asyncio.run(final_check(server, soak))
        finally:
            server.stop()
    summary = report(soak, args, started, found, asked, rss_start, server_threads)
    out = OUT
    out.mkdir(exist_ok=True)
    (out / f"soak-{args.minutes}m.json").write_text(json.dumps(summary, indent=1))
    print(markdown(summary, args))
    print(json.dumps({k: v for k, v in summary.items() if not k.endswith("samples") and k != "minutes"}),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

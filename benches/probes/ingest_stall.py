"""A large turn is stored quickly and never stalls another tenant's recall (issue 11).

    python -m benches.probes.ingest_stall [--sizes 200000,1000000] [--kinds eyJ,char,base64,jsonlog,prose] [--repeat 3]
                                   [--index-kinds prose,base64]

What is timed, against a real server (`funes-py serve` in a subprocess, loopback, the service's defaults):
- store: one `POST /turns` carrying one turn of the given kind and size, sent by another process, until its
  202: reading the body, JSON, limits, secret masking, the pasted-recall rule, the atomic write. This server
  indexes nothing while the stores are measured (its debounce outlasts the benchmark).
- recall during store: meanwhile another tenant's MCP client calls `recall_my_conversations` back to back;
  every call that overlaps the POST counts. Median and max over `--repeat` stores of each kind and size,
  beside the same client's on the idle server (baseline).
- recall during indexing (`--index-kinds`, 200 KB each, on a second server that indexes 1 s after a
  write): the same client until the large turn's index run is over.
- recall during an import (`--import-turns`, 2,000 by default): one `POST /turns` carrying a conversation of
  that many ordinary turns (about 400 characters each, as a history import sends), on the indexing server:
  the same client until that import's index run is over.
The kinds are the inputs that once stalled the service (a turn of `-eyJ` repeated took 18.8 s at 200 KB and
held every other tenant's recall as long): one repeated character, base64, a long JSON log line without a
newline, and ordinary prose. Targets: a 200 KB turn stored in under 1 s, another tenant's recall during it
under 50 ms. The client runs on the same machine: read the ratio to the baseline, not the floor.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

from benches.paths import OUT
from benches.probes.service import INGEST_KEY, QUERIES, Server, conversations

POST_SCRIPT = f"""
import json, sys, time, urllib.request
body = open(sys.argv[2], "rb").read()
req = urllib.request.Request(sys.argv[1] + "/turns", data=body, method="POST",
                             headers={{"x-ingest-key": "{INGEST_KEY}", "content-type": "application/json"}})
t0 = time.perf_counter()
with urllib.request.urlopen(req, timeout=120) as r:
    status = r.status
print(json.dumps([t0, time.perf_counter(), status]))
"""


def turn_text(kind: str, size: int) -> str:
    rnd = random.Random(size)
    if kind == "eyJ":
        return ("-eyJ" * (size // 4 + 1))[:size]
    if kind == "char":
        return "a" * size
    if kind == "base64":
        return base64.b64encode(rnd.randbytes(size * 3 // 4 + 3)).decode()[:size]
    if kind == "jsonlog":
        records, n = [], 0
        while n < size:
            r = json.dumps({"ts": f"2026-10-01T00:{n % 60:02d}:00Z", "level": "info", "path": f"/api/items/{n}",
                            "auth": "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlLXBhcnQ",
                            "dur_ms": n % 97})
            records.append(r)
            n += len(r)
        return "".join(records)[:size]
    words = ["pump", "curve", "valve", "torque", "the", "seal", "was", "checked", "Ghent", "line", "L-7", "at"]
    return " ".join(rnd.choice(words) for _ in range(size // 5))[:size]


async def recall_loop(url: str, token: str, stop: asyncio.Event, calls: list[tuple[float, float]]) -> None:
    """Back-to-back recalls in one MCP session; (start, end) of each call, perf_counter seconds."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
        async with streamable_http_client(url, http_client=http) as (read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()
                i = 0
                while not stop.is_set():
                    t0 = time.perf_counter()
                    await session.call_tool("recall_my_conversations", {"query": QUERIES[i % len(QUERIES)]})
                    calls.append((t0, time.perf_counter()))
                    i += 1


def overlapping(calls: list[tuple[float, float]], start: float, end: float) -> list[float]:
    return [1000 * (b - a) for a, b in calls if b >= start and a <= end]


async def one_case(server: Server, token: str, kind: str, size: int, case: int, index: bool) -> dict:
    """One store of one turn while the other tenant recalls; with `index`, also the index run after it."""
    if kind == "import":  # `size` turns of prose, alternating roles, a minute apart
        turns = [{"role": ("user", "assistant")[i % 2], "text": f"{turn_text('prose', 400 + i)} (item {i})",
                  "ts": f"2026-10-{11 + i // 1440:02d}T{i // 60 % 24:02d}:{i % 60:02d}:00Z"} for i in range(size)]
    else:
        turns = [{"role": "user", "text": turn_text(kind, size), "ts": "2026-10-11T09:00:00Z"}]
    body = {"user": "user1", "conversation_id": f"big-{case}", "turns": turns}
    body_file = server.data.parent / f"big-{case}.json"
    body_file.write_bytes(json.dumps(body).encode())
    stop, calls = asyncio.Event(), list[tuple[float, float]]()
    loop_task = asyncio.create_task(recall_loop(server.url + "/mcp", token, stop, calls))
    await asyncio.sleep(1.0)  # the client is warm and calling
    # The POST comes from its own process, as a gateway's would: in this one it would share the GIL with
    # the recall client and time that client's work too. perf_counter is CLOCK_MONOTONIC, one clock for both.
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", POST_SCRIPT, server.url, str(body_file),
                                                stdout=asyncio.subprocess.PIPE)
    out, _ = await proc.communicate()
    t0, t1, status = json.loads(out)
    await asyncio.sleep(0.5)
    while index and httpx.get(server.url + "/healthz").json()["indexing"]:  # the debounced run, to its end
        await asyncio.sleep(0.1)
    t_end = time.perf_counter()
    stop.set()
    await loop_task
    return {"kind": kind, "size": size, "status": status, "store_s": t1 - t0,
            "during": overlapping(calls, t0, t1), "indexing": overlapping(calls, t1 + 0.5, t_end) if index else [],
            "index_s": t_end - t1 if index else 0.0}


async def baseline(server: Server, token: str, seconds: float) -> list[float]:
    stop, calls = asyncio.Event(), list[tuple[float, float]]()
    task = asyncio.create_task(recall_loop(server.url + "/mcp", token, stop, calls))
    await asyncio.sleep(seconds)
    stop.set()
    await task
    return [1000 * (b - a) for a, b in calls[3:]]


def measure(data: Path, debounce_s: str, cases: list[tuple[int, str]], index: bool) -> tuple[list[float], list[dict]]:
    # The recalling tenant's conversations are indexed first, by a server with a short debounce (a server
    # whose debounce outlasts the benchmark would only index them after it).
    seeder = Server(data, 2, 4)
    try:
        with httpx.Client(headers={"x-ingest-key": INGEST_KEY}, timeout=60) as http:
            for b in conversations(0):
                http.post(seeder.url + "/turns", json=b).raise_for_status()
        seeder.wait_indexed()
    finally:
        seeder.stop()
    server = Server(data, 2, 4, env={"FUNES_INDEX_DEBOUNCE_S": debounce_s, "FUNES_INDEX_MAX_WAIT_S": debounce_s})
    try:
        token = next(iter(server.tokens))  # user0: the tenant that recalls
        base = asyncio.run(baseline(server, token, 3.0))
        rows = [asyncio.run(one_case(server, token, kind, size, i, index)) for i, (size, kind) in enumerate(cases)]
    finally:
        server.stop()
    assert all(r["status"] == 202 for r in rows), rows
    return base, rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="200000,1000000")
    p.add_argument("--kinds", default="eyJ,char,base64,jsonlog,prose")
    p.add_argument("--repeat", type=int, default=3, help="stores of each kind and size")
    p.add_argument("--index-kinds", default="prose,base64", help="200 KB turns whose index run is watched too")
    p.add_argument("--import-turns", type=int, default=2000, help="an import of this many turns, its index run watched (0: none)")
    args = p.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    kinds = args.kinds.split(",")
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    with tempfile.TemporaryDirectory(prefix="funes-stall-") as tmp:
        # Stores: no index run at all while they are measured (the debounce outlasts the benchmark).
        cases = [(size, kind) for size in sizes for kind in kinds for _ in range(args.repeat)]
        base, rows = measure(Path(tmp) / "stores", "600", cases, index=False)
        # Index runs: a server that indexes 1 s after the write, watched to the end of the run.
        index_cases = [(200_000, kind) for kind in args.index_kinds.split(",") if kind]
        index_cases += [(args.import_turns, "import")] if args.import_turns else []
        index_base, index_rows = measure(Path(tmp) / "index", "1", index_cases, index=True) if index_cases else ([], [])

    print(f"Command: `python -m benches.probes.ingest_stall --sizes {args.sizes} --kinds {args.kinds} --repeat {args.repeat}"
          f" --index-kinds {args.index_kinds} --import-turns {args.import_turns}`; run {started}.\n")
    print(f"Baseline, the other tenant's recall on the idle server: median {statistics.median(base):.1f} ms, "
          f"max {max(base):.1f} ms ({len(base)} calls).\n")
    print("| turn | size | stored (202) in, each store | recalls during the stores | their median / max ms |")
    print("|---|---:|---:|---:|---:|")
    for size in sizes:
        for kind in kinds:
            mine = [r for r in rows if r["kind"] == kind and r["size"] == size]
            during = [v for r in mine for v in r["during"]]
            stores = ", ".join(f"{r['store_s'] * 1000:.0f}" for r in mine)
            print(f"| {kind} | {size // 1000} KB | {stores} ms | {len(during)} "
                  f"| {statistics.median(during):.1f} / {max(during):.1f} |" if during else
                  f"| {kind} | {size // 1000} KB | {stores} ms | 0 | - |")
    if index_rows:
        print(f"\nDuring the index run that follows (baseline on that server: median "
              f"{statistics.median(index_base):.1f} ms, max {max(index_base):.1f} ms):\n")
        print("| turn | size | index run | recalls during it | their median / p99 / max ms |")
        print("|---|---:|---:|---:|---:|")
        for r in index_rows:
            v = sorted(r["indexing"])
            size = f"{r['size']:,} turns" if r["kind"] == "import" else f"{r['size'] // 1000} KB"
            print(f"| {r['kind']} | {size} | {r['index_s']:.1f} s | {len(v)} | {statistics.median(v):.1f} / "
                  f"{v[min(len(v) - 1, int(0.99 * len(v)))]:.1f} / {v[-1]:.1f} |")
    out = OUT
    out.mkdir(exist_ok=True)
    (out / "ingest-stall.json").write_text(json.dumps({"started": started, "baseline": base, "rows": rows,
                                                       "index_baseline": index_base, "index_rows": index_rows}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

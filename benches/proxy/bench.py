"""The agent-archive proxy's benchmark, one command:

    python -m benches.proxy.bench             # the 9-turn experiment at a 32K window + probe + freshness + performance
    python -m benches.proxy.bench --quick     # the same at an 8K window (performance and probe identical)

Parts (each timed on this machine, 2 cores, everything on loopback):
* experiment: the 9 turns of `scenario` under four conditions: proxy with auto-recall `hint`, proxy
  with `inject`, direct (no proxy), client-side truncation. The model is the scripted engine (the tests'
  test double, answering at once with the `reader` policy). Reported per condition: refused requests,
  tokens sent vs the history's size, switches, mask batches, recall calls, the answers (not gated).
* probe (model-free): the rank of the turn-1 output among the proxy's recall hits for four turn-8 queries
  (one a paraphrase), hybrid vs legs="bm25", on the memory the hint run left.
* performance: proxy overhead per request (client-observed latency minus a direct replay of the very body
  the engine received) at 30K and 120K tokens of history, steady state (requests with no new decision);
  added time to the first streamed byte; archive write on the request path (Archive.append); a new 10 KB
  tool output found by recall(query); recall(query) on a 2,000-message conversation and recall(id) (the
  tool's own functions, in process); RSS of the proxy process with one warm tenant.

Results: `benches/out/proxy[-quick].json` and the "proxy" section of benches/RESULTS.md.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from benches.paths import REPO as ROOT

sys.path.insert(0, str(ROOT / "tests"))  # the scripted engine is the tests' test double; one copy of it

from proxy_helpers import Proxy, filler  # noqa: E402

from benches.proxy import scenario as sc  # noqa: E402
from benches.results import write_section  # noqa: E402
from proxy_double import Reply, ScriptedEngine, call, tokens  # noqa: E402

OUT = ROOT / "benches" / "out"


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


# --- the experiment ---------------------------------------------------------------------------------------
def truncated(history: list[dict[str, Any]], window: int) -> list[dict[str, Any]]:
    """What a client that truncates does: the system message and the newest messages that fit."""
    budget = window - window // 8 - 64
    keep: list[dict[str, Any]] = []
    for m in reversed(history[1:]):
        if tokens({"messages": [history[0], *keep, m], "tools": sc.TOOLS}) > budget:
            break
        keep.insert(0, m)
    while keep and keep[0]["role"] == "tool":  # never open on an output whose call was cut
        keep.pop(0)
    return [history[0], *keep]


def experiment(quick: bool, work: Path) -> dict[str, Any]:
    window = 8192 if quick else 32768
    results = {}
    probe_source = None
    for cond in ("proxy+hint", "proxy+inject", "direct", "truncation"):
        with ScriptedEngine(window, script=sc.reader) as engine:
            count = lambda h: tokens({"messages": h, "tools": sc.TOOLS})  # noqa: E731
            if cond.startswith("proxy"):
                data = work / cond
                env = {"FUNES_PROXY_AUTO_RECALL": cond.split("+")[1], "FUNES_LOG": "WARNING"}
                with Proxy(data, engine.url, env=env) as proxy:
                    def send(h: list[dict[str, Any]]) -> Any:
                        r = proxy.chat(h, tools=sc.TOOLS)
                        msg = r.json()["choices"][0]["message"] if r.status_code == 200 else None
                        if r.status_code == 200:
                            proxy.wait_indexed()  # as a real model's seconds per turn would allow
                        return r.status_code, msg, r.headers

                    out = sc.play(cond, quick, send, count)
                if cond == "proxy+hint":
                    probe_source = (data, out.conversation)
            else:
                def send(h: list[dict[str, Any]], cond: str = cond) -> Any:
                    body = {"model": "m", "messages": h if cond == "direct" else truncated(h, window), "tools": sc.TOOLS,
                            "max_tokens": window // 8}  # fmt: skip
                    r = httpx.post(engine.url + "/v1/chat/completions", json=body, timeout=60)
                    return r.status_code, r.json()["choices"][0]["message"] if r.status_code == 200 else None, {}

                out = sc.play(cond, quick, send, count)
            sent = [tokens(b) for b in engine.bodies if tokens(b) < window]
            results[cond] = {
                "refused": out.refused, "requests": out.requests, "engine_requests": len(engine.bodies),
                "tokens_sent": sum(sent), "history_tokens": sum(out.history_tokens),
                "max_prompt": max(sent, default=0), "final_history": out.history_tokens[-1],
                "switches": out.switches, "mask_batches": out.mask_batches, "recall_calls": out.recall_calls,
                "answers": out.answers, "oversize": len(engine.oversize) if cond.startswith("proxy") else None,
            }  # fmt: skip
    return {"window": window, "conditions": results, "probe": probe(*probe_source) if probe_source else None}


def probe(data: Path, conv: str | None) -> dict[str, Any]:
    """Rank (1-based, None = not in the top 20) of the turn-1 output for the four turn-8 queries."""
    from funes_py import Engine, Models
    from funes_py.tenancy.auth import tenant_id

    root = data / tenant_id("local")
    src = next((root / "src").glob("*.funes.jsonl"))
    rows = [json.loads(line) for line in src.read_text(encoding="utf-8").splitlines()]
    target = next(r["turn_uuid"] for r in rows if r["role"] == "tool" and "BLD-7Q2XK9" in r["blocks"][0]["text"])
    asked = next(r["proxy"]["pos"] for r in rows if r["role"] == "user" and sc.QUESTION in r["blocks"][0]["text"])
    before = {r["turn_uuid"] for r in rows if r["proxy"].get("pos") is not None and r["proxy"]["pos"] < asked}
    eng = Engine(root / "memory", Models.load(), resident=False)
    out = {}
    for q in sc.PROBE_QUERIES:
        ranks = {}
        for legs in ("hybrid", "bm25"):  # ranked among what the archive held when turn 8 was asked
            hits = eng.recall(q, k=40, neighbors=0, legs=legs, sessions=[conv] if conv else None)
            ids = list(dict.fromkeys(h.turn_uuid for h in hits if h.turn_uuid in before))
            ranks[legs] = ids.index(target) + 1 if target in ids else None
        out[q] = ranks
    return out


# --- performance ------------------------------------------------------------------------------------------
def overhead(work: Path, targets: tuple[int, ...] = (30_000, 120_000), steady: int = 100) -> dict[str, Any]:
    """Client-observed latency through the proxy minus a direct replay of the body the engine got."""
    window = 131072
    out: dict[str, Any] = {}
    with ScriptedEngine(window, script=lambda b, n: Reply(text="ok")) as engine:
        with Proxy(work / "overhead", engine.url, env={"FUNES_LOG": "WARNING"}) as proxy:
            history = [sc.SYSTEM, {"role": "user", "content": "Read the whole package."}]
            sources = [sc.module_source(p, n)[1] for p, n in sc.FULL_MODULES + sc.QUICK_MODULES]
            chunks = [s[i : i + 3000] for s in sources for i in range(0, len(s), 3000)]
            k = 0
            client = httpx.Client(timeout=60)
            for target in targets:
                while tokens({"messages": history}) < target:  # grow to the size, unmeasured
                    history += [sc.call_msg(f"c{k}", "read", {"path": f"f{k}.py"}),
                                {"role": "tool", "tool_call_id": f"c{k}", "content": chunks[k % len(chunks)]}]  # fmt: skip
                    k += 1
                    assert proxy.chat(history, tools=sc.TOOLS).status_code == 200
                    history.append({"role": "assistant", "content": "ok"})
                proxy.wait_indexed(timeout=600)  # steady state: no index run left from growing the history
                deltas, ttfb, own, masked = [], [], [], 0
                stream_phases: dict[str, list[float]] = {}
                # This process is the client and the engine, and holds every body the engine got: its own
                # full collections (tens of ms) would land on either side of a pair at random. Off while
                # timing, as timeit does.
                gc.collect()
                gc.disable()
                for i in range(steady):  # small outputs (a directory listing): the history stays near its size
                    history += [sc.call_msg(f"c{k}", "bash", {"command": f"ls src/part{k}"}),
                                {"role": "tool", "tool_call_id": f"c{k}", "content": f"part{k}/__init__.py\npart{k}/core.py\n"}]  # fmt: skip
                    k += 1
                    stream = i % 2 == 1
                    # The client's body, encoded before the clock starts; the baseline is that same body sent
                    # straight to the engine (what the agent would do without the proxy).
                    cb = json.dumps({"model": "m", "messages": history, "tools": sc.TOOLS, "stream": stream}).encode()
                    t_proxy, t_first, events, timing = timed(client, proxy.url, cb, stream)
                    t_direct, d_first, _, _ = timed(client, engine.url, cb, stream)
                    history.append({"role": "assistant", "content": "ok"})
                    if "events=none" not in events:
                        masked += 1
                        continue  # a new decision (a mask batch): not steady state
                    if stream:
                        ttfb.append((t_first - d_first) * 1000)
                        for k2, v in timing.items():
                            stream_phases.setdefault(k2, []).append(v)
                    else:
                        deltas.append((t_proxy - t_direct) * 1000)
                        own.append(sum(v for k2, v in timing.items() if k2 != "upstream"))
                gc.enable()
                out[str(target)] = {
                    "history_tokens": tokens({"messages": history}), "sent_tokens": tokens(json.loads(engine.raw[-2])),
                    "p50_ms": round(pct(deltas, 0.5), 2), "p95_ms": round(pct(deltas, 0.95), 2), "n": len(deltas),
                    "own_p50_ms": round(pct(own, 0.5), 2), "own_p95_ms": round(pct(own, 0.95), 2),
                    "ttfb_p50_ms": round(pct(ttfb, 0.5), 2), "ttfb_p95_ms": round(pct(ttfb, 0.95), 2),
                    "requests_with_new_decisions": masked,
                    "stream_phases_p50_ms": {k2: round(pct(v, 0.5), 2) for k2, v in stream_phases.items()},
                    "stream_phases_p95_ms": {k2: round(pct(v, 0.95), 2) for k2, v in stream_phases.items()},
                }  # fmt: skip
            out["found_within_s"] = freshness(proxy, engine, history)
            out["rss_mb"] = round(rss_mb(proxy), 1)
    return out


def timed(client: httpx.Client, base: str, body: bytes, stream: bool) -> tuple[float, float, str, dict[str, float]]:
    """(seconds to the whole answer, seconds to its first byte, x-funes-proxy, server-timing phases in ms)."""
    t0 = time.perf_counter()
    with client.stream("POST", base + "/v1/chat/completions", content=body, headers={"content-type": "application/json"}) as r:
        parts = r.iter_raw()
        next(parts, None)
        first = time.perf_counter() - t0
        for _ in parts:
            pass
    total = time.perf_counter() - t0
    phases = {}
    for part in filter(None, r.headers.get("server-timing", "").split(", ")):
        name, dur = part.split(";dur=")
        phases[name] = float(dur)
    return total, first, r.headers.get("x-funes-proxy", ""), phases


def freshness(proxy: Proxy, engine: ScriptedEngine, history: list[dict[str, Any]]) -> float | None:
    """Seconds from the answer to a request carrying a new 10 KB output until recall(query) finds it."""
    secret = "The ingest worker evicts its cache least-frequently-used first, with a budget of 512 MiB."
    # A 10 KB output that reads like a real one (a service's log and notes), the answer in its middle.
    lines = [f"2026-11-30T10:{i // 60:02d}:{i % 60:02d}Z ingest worker shard {i % 7}: batch {i} committed, "
             f"{(i * 37) % 900 + 100} records, queue depth {(i * 13) % 40}" for i in range(60)]  # fmt: skip
    output = "\n".join(lines[:30]) + "\n" + secret + "\n" + "\n".join(lines[30:]) + "\n"
    history = [*history, sc.call_msg("fresh", "read", {"path": "ingest/worker.md"}),
               {"role": "tool", "tool_call_id": "fresh", "content": output}]  # fmt: skip

    def script(body: dict[str, Any], n: int) -> Reply:
        last = body["messages"][-1]
        if last["role"] == "user" and last["content"] == "probe":
            return Reply(tool_calls=[call("recall", {"query": "ingest worker cache eviction policy"}, f"p{n}")])
        return Reply(text="ok")

    engine.script = script
    assert proxy.chat(history, tools=sc.TOOLS).status_code == 200
    t0 = time.perf_counter()
    probe_history = [*history, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "probe"}]
    while time.perf_counter() - t0 < 30:
        proxy.chat(probe_history, tools=sc.TOOLS)
        last = engine.bodies[-1]["messages"][-1]
        if last["role"] == "tool" and "least-frequently-used" in last["content"]:
            return round(time.perf_counter() - t0, 2)
        time.sleep(0.05)
    return None


def freshness_part(work: Path) -> dict[str, Any]:
    """The freshness target alone, on a fresh proxy and a short history (defaults: debounce 0.2 s)."""
    with ScriptedEngine(32768, script=lambda b, n: Reply(text="ok")) as engine:
        with Proxy(work / "fresh", engine.url, env={"FUNES_LOG": "WARNING"}) as proxy:
            history = [sc.SYSTEM, {"role": "user", "content": "Look at the ingest service."}]
            for i, (pkg, name) in enumerate(sc.QUICK_MODULES[:3]):
                history += [sc.call_msg(f"r{i}", "read", {"path": name}),
                            {"role": "tool", "tool_call_id": f"r{i}", "content": sc.module_source(pkg, name)[1]}]  # fmt: skip
            assert proxy.chat(history, tools=sc.TOOLS).status_code == 200
            history.append({"role": "assistant", "content": "ok"})
            proxy.wait_indexed(timeout=600)
            return {"found_within_s": freshness(proxy, engine, history)}


def rss_mb(proxy: Proxy) -> float:
    import psutil

    assert proxy.proc is not None
    return float(psutil.Process(proxy.proc.pid).memory_info().rss) / 2**20


def archive_writes(work: Path, n: int = 300) -> dict[str, Any]:
    """Archive.append of one request's new messages (a tool call and a 3 KB output), on this disk."""
    from funes_py.proxy.archive import Archive
    from funes_py.proxy.records import record

    archive = Archive(work / "archive-bench" / "src")
    archive.open()
    times, synced = [], []
    for i in range(n):
        recs = [record(sc.call_msg(f"c{i}", "read", {"path": f"f{i}.py"}), f"a{i:012x}", {}, position=2 * i),
                record({"role": "tool", "tool_call_id": f"c{i}", "content": filler(i, 3000)}, f"b{i:012x}", {}, position=2 * i + 1)]  # fmt: skip
        t0 = time.perf_counter()
        archive.append("bench", recs)
        times.append((time.perf_counter() - t0) * 1000)
        if i % 10 == 0:
            t0 = time.perf_counter()
            archive.sync("bench")
            synced.append((time.perf_counter() - t0) * 1000)
    return {"append_p50_ms": round(pct(times, 0.5), 3), "append_p95_ms": round(pct(times, 0.95), 3),
            "fsync_p50_ms": round(pct(synced, 0.5), 2), "fsync_p95_ms": round(pct(synced, 0.95), 2)}  # fmt: skip


def recall_timing(work: Path, messages: int = 2000) -> dict[str, Any]:
    """The recall tool's own functions on a 2,000-message conversation: query and id."""
    from funes_py import Engine, Models
    from funes_py.proxy.archive import Archive
    from funes_py.proxy.recall_tool import page, render_hits
    from funes_py.proxy.records import record

    root = work / "recall-bench"
    archive = Archive(root / "src")
    archive.open()
    sources = [sc.module_source(p, n)[1] for p, n in sc.FULL_MODULES + sc.QUICK_MODULES]
    chunks = [s[i : i + 1500] for s in sources for i in range(0, len(s), 1500)]
    rng = random.Random(7)
    recs = []
    for i in range(messages):
        role = ("user", "assistant", "tool")[i % 3]
        text = chunks[rng.randrange(len(chunks))] if role == "tool" else f"Step {i}: " + rng.choice(chunks)[:300]
        recs.append(record({"role": role, "content": text, "tool_call_id": f"c{i}"}, f"m{i:012x}", {}, position=i))
    archive.append("conv2000", recs)
    archive.sync("conv2000")
    eng = Engine(root / "memory", Models.load(), resident=True)
    t0 = time.perf_counter()
    eng.index(archive.path("conv2000"))
    index_s = time.perf_counter() - t0
    queries = ["how are redirects followed", "cookie persistence between requests", "route matching with path params",
               "streaming response body", "timeout configuration", "form data parsing of multipart uploads",
               "websocket close codes", "static files cache headers", "url query string encoding", "ASGI lifespan"]  # fmt: skip
    eng.recall(queries[0], sessions=["conv2000"], k=5, neighbors=0)  # builds the resident copy
    q_times = []
    for _ in range(5):
        for q in queries:
            t0 = time.perf_counter()
            hits = eng.recall(q, sessions=["conv2000"], k=5, neighbors=0, identifier_guard=True, min_similarity=0.2)
            render_hits(hits, archive, q, "conversation", 14000)
            q_times.append((time.perf_counter() - t0) * 1000)
    id_times = []
    for i in rng.sample(range(messages), 200):
        t0 = time.perf_counter()
        page(archive, f"m{i:012x}", 0, 14000, "recall")
        id_times.append((time.perf_counter() - t0) * 1000)
    return {"messages": messages, "chunks": eng.status().rows, "index_s": round(index_s, 1),
            "query_p50_ms": round(pct(q_times, 0.5), 2), "query_p95_ms": round(pct(q_times, 0.95), 2),
            "id_p50_ms": round(pct(id_times, 0.5), 3), "id_p95_ms": round(pct(id_times, 0.95), 3)}  # fmt: skip


# --- report -------------------------------------------------------------------------------------------
def render(res: dict[str, Any]) -> str:
    from benches.proxy.report import render as _render

    return _render(res)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benches.proxy.bench")
    ap.add_argument("--quick", action="store_true", help="the 8K-window variant of the experiment")
    ap.add_argument("--parts", default="experiment,freshness,performance", help="experiment,freshness,performance")
    args = ap.parse_args(argv)
    parts = set(args.parts.split(","))
    t0 = time.time()
    res: dict[str, Any] = {"meta": {
        "command": "python -m benches.proxy.bench" + (" --quick" if args.quick else ""),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "git": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
    }}  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="proxy-bench-") as tmp:
        work = Path(tmp)
        if "experiment" in parts:
            res["experiment"] = experiment(args.quick, work)
            print(json.dumps(res["experiment"], indent=1), file=sys.stderr)
        if "freshness" in parts:
            res["freshness"] = freshness_part(work)
            print(json.dumps(res["freshness"]), file=sys.stderr)
        if "performance" in parts:
            res["archive"] = archive_writes(work)
            print(json.dumps(res["archive"]), file=sys.stderr)
            res["overhead"] = overhead(work)
            print(json.dumps(res["overhead"]), file=sys.stderr)
            res["recall"] = recall_timing(work)
            print(json.dumps({k: res[k] for k in ("archive", "recall", "overhead")}, indent=1), file=sys.stderr)
    res["meta"]["seconds"] = round(time.time() - t0)
    res["meta"]["loadavg"] = os.getloadavg()
    OUT.mkdir(parents=True, exist_ok=True)
    out_file = OUT / f"proxy{'-quick' if args.quick else ''}.json"
    if out_file.exists() and parts != {"experiment", "freshness", "performance"}:  # a part rerun: keep the rest
        previous = json.loads(out_file.read_text())
        res = {**previous, **res, "meta": {**res["meta"], "command": res["meta"]["command"] + f" --parts {args.parts}",
                                           "earlier": previous.get("meta")}}  # fmt: skip
    out_file.write_text(json.dumps(res, indent=1))
    write_section("proxy-quick" if args.quick else "proxy", render(res))
    print(render(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())

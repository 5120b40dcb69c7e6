"""How fast: recall latency as the history grows, backfill (indexing a history from scratch), re-indexing an
unchanged history, and freshness (a new conversation arriving until a recall finds it).

* latency: `benches.latency.bench(n, calls, process_calls)` run in a child process per history size, so the
  in-process peak RSS is that of an engine answering recalls, not of this harness (ru_maxrss is a lifetime
  peak, and the harness has opened other memories before).
* backfill: the record `benches.latency.ensure_indexed` wrote when it built the memory (a child process:
  model load, then `Engine.index(src)` of every file; index time excludes the model load; peak RSS of that
  child), the memory's size on disk (`status().disk_bytes`), and an in-process re-index of the unchanged
  history (only size and mtime stamps are read: `chunks_added` must be 0).
* fresh: a scratch copy of the largest memory whose source directory links every file of the history (the
  engine keys its stamps by canonical path, so the links count as unchanged); then, one after another, a new
  conversation with a unique fact is written there and the clock runs from the file's close to a default
  recall (recency on, k=8, neighbours 1) that returns the fact: `Engine.index(src)` (a directory walk over
  every file, stamps, parse, embed, append, index refresh) plus the recall.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import shutil
import sys
import time
from pathlib import Path

from .harness import REPO
from .latency import OUT, run_child
from .metrics import answer_pattern, percentiles

FRESH_THINGS = ("forklift battery swap", "canteen coffee machine lease", "roof drainage repair",
                "badge reader upgrade", "sprinkler inspection contract", "car park resurfacing",
                "first aid kit restock", "compressed air audit")  # fmt: skip
FRESH_TARGET_S = 2.0


# ---------------------------------------------------------------------------------------------------
# latency

def latency(ns: list[int], calls: int, process_calls: int) -> dict:
    code = ("import json,sys\nfrom benches.latency import bench\n"
            "print(json.dumps(bench(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))))\n")
    rows = []
    for n in ns:
        _, _, out = run_child([sys.executable, "-c", code, str(n), str(calls), str(process_calls)], env=_env())
        rows.append(json.loads(out.strip().splitlines()[-1]))
    return {"rows": rows}


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def render_latency(data: dict) -> str:
    from .latency import table

    rows = data["rows"]
    calls = f"{rows[0]['calls']} warm calls and {rows[0]['process_calls']} processes per size" if rows else ""
    return table(rows) + (f"\n{calls}; `Engine.recall(q, k=8)` with the defaults (candidates 30, neighbours 1, "
                          "recency on), long questions in turn. Peak RSS in MB.\n")


# ---------------------------------------------------------------------------------------------------
# backfill

def backfill(eng_for, histories: list[tuple[int, object]]) -> dict:
    rows = []
    for n, (root, home, info) in histories:
        eng = eng_for(home)
        st = eng.status()
        rep = eng.index(root / "src")
        rows.append({
            "n": n, "chunks": st.rows, "index_s": info["index_s"], "model_load_s": info["model_load_s"],
            "peak_rss_mb": info["peak_rss_mb"], "chunks_per_s": info["chunks"] / info["index_s"],
            "measured_at": dt.datetime.fromtimestamp((root / "index-run.json").stat().st_mtime, dt.UTC)
            .strftime("%Y-%m-%d %H:%M UTC"),
            "disk_bytes": st.disk_bytes, "disk_bytes_per_conversation": st.disk_bytes / n,
            "fts_indexed": st.fts_indexed, "vector_indexed": st.vector_indexed,
            "reindex_s": rep.seconds, "reindex_files_unchanged": rep.files_unchanged,
            "reindex_chunks_added": rep.chunks_added, "reindex_turns_parsed": rep.turns,
        })  # fmt: skip
    return {"rows": rows}


def render_backfill(data: dict) -> str:
    head = ("| conversations | chunks | index from scratch s | chunks/s | peak RSS MB | disk MB | disk KB per "
            "conversation | unchanged re-index s | re-index chunks added | measured |\n"
            "|---|---|---|---|---|---|---|---|---|---|\n")  # fmt: skip
    body = "".join(
        f"| {r['n']:,} | {r['chunks']:,} | {r['index_s']:.1f} | {r['chunks_per_s']:.0f} | {r['peak_rss_mb']} | "
        f"{r['disk_bytes'] / 2**20:.1f} | {r['disk_bytes_per_conversation'] / 1024:.1f} | {r['reindex_s']:.3f} | "
        f"{r['reindex_chunks_added']} ({r['reindex_files_unchanged']:,} files unchanged) | {r['measured_at']} |\n"
        for r in data["rows"]
    )
    return head + body + ("\nIndex time: `Engine.index(src)` in a fresh child process after the model load "
                          "(model load excluded, reported in the JSON); peak RSS is that child's. The unchanged "
                          "re-index runs in-process on the warm engine.\n")


# ---------------------------------------------------------------------------------------------------
# fresh

def new_conversation(i: int, rng: random.Random, when: dt.datetime) -> tuple[list[dict], str, str]:
    """Six messages stating one unique fact (a vendor contract reference), the question that asks for it and
    the answer. The reference prefix VC- never occurs in the synthetic history."""
    thing = FRESH_THINGS[i % len(FRESH_THINGS)]
    ref = f"VC-{rng.randrange(100000, 999999)}"
    session = f"fresh-{i:02d}-{ref}"
    texts = [
        ("user", "Morning. Quick one before the shift meeting, the coffee machine is broken again."),
        ("assistant", "Morning! Happy to help. What do you need before the meeting?"),
        ("user", f"For the record: the {thing} goes through vendor contract {ref}, signed off this morning."),
        ("assistant", f"Noted: {ref} covers the {thing}."),
        ("user", "Thanks. Back to the agenda then."),
        ("assistant", "Sure, let me know what else should go on it."),
    ]
    msgs = []
    for seq, (role, text) in enumerate(texts):
        ts = (when + dt.timedelta(seconds=20 * seq)).strftime("%Y-%m-%dT%H:%M:%SZ")
        msgs.append({"session_id": session, "turn_uuid": f"{session}-{seq}", "seq": seq, "ts": ts, "role": role,
                     "harness": "bench", "blocks": [{"block_type": "text", "text": text}]})
    return msgs, f"Which vendor contract reference did we settle on for the {thing}?", ref


def _scratch(n: int, root: Path, home: Path) -> tuple[Path, Path]:
    scratch = OUT / f"fresh-{n}"
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(home, scratch / "memory")
    src = scratch / "src"
    src.mkdir(parents=True)
    for f in (root / "src").iterdir():
        (src / f.name).symlink_to(f.resolve())
    return scratch / "memory", src


def fresh(models, n: int, history, runs: int = 5) -> dict:
    from funes_py import Engine

    root, home, _ = history
    t0 = time.perf_counter()
    mem, src = _scratch(n, root, home)
    copy_s = time.perf_counter() - t0
    eng = Engine(mem, models)
    eng.recall("warm-up: what did we say about the weekend?", k=8)
    noop = eng.index(src)   # proves the links count as unchanged (files_unchanged == n)
    rng = random.Random(11)
    out = []
    for i in range(runs):
        msgs, question, ref = new_conversation(i, rng, dt.datetime.now(dt.UTC).replace(microsecond=0))
        path = src / f"fresh-{i:02d}.funes.jsonl"
        path.write_text("".join(json.dumps(m) + "\n" for m in msgs), encoding="utf-8")
        t = time.perf_counter()
        rep = eng.index(src)
        t_index = time.perf_counter() - t
        hits = eng.recall(question)
        total = time.perf_counter() - t
        pattern = answer_pattern(ref)
        rank = next((j + 1 for j, h in enumerate(hits) if pattern.search(h.text)), None)
        out.append({"index_s": t_index, "recall_s": total - t_index, "total_s": total, "rank": rank,
                    "chunks_added": rep.chunks_added, "files_unchanged": rep.files_unchanged})
    totals = [r["total_s"] for r in out]
    return {"n": n, "copy_s": copy_s, "noop_index_s": noop.seconds, "noop_files_unchanged": noop.files_unchanged,
            "noop_chunks_added": noop.chunks_added, "runs": out,
            "total_s": percentiles([x * 1000 for x in totals], ps=(50,)) | {"unit": "ms"},
            "found": sum(r["rank"] is not None for r in out), "target_s": FRESH_TARGET_S,
            "met": all(r["rank"] is not None for r in out) and max(totals) < FRESH_TARGET_S}  # fmt: skip


def render_fresh(data: dict) -> str:
    head = "| run | index s | recall s | total s | chunks added | found at rank |\n|---|---|---|---|---|---|\n"
    body = "".join(f"| {i + 1} | {r['index_s']:.3f} | {r['recall_s']:.3f} | {r['total_s']:.3f} | {r['chunks_added']} | "
                   f"{r['rank'] if r['rank'] is not None else 'not found'} |\n" for i, r in enumerate(data["runs"]))  # fmt: skip
    t = data["total_s"]
    return (f"N={data['n']:,} conversations already indexed; each new conversation (6 messages) written as a file "
            f"into the indexed directory, then `Engine.index(dir)` and a default recall for its fact.\n\n" + head + body
            + f"\nMedian {t['p50'] / 1000:.3f} s, worst {t['max'] / 1000:.3f} s (target < {data['target_s']:.0f} s: "
            f"{'met' if data['met'] else 'NOT met'}); found {data['found']}/{len(data['runs'])}. "
            f"The walk of an unchanged directory alone: {data['noop_index_s']:.3f} s "
            f"({data['noop_files_unchanged']:,} files unchanged, {data['noop_chunks_added']} chunks added).\n")

"""The first recall of a warm engine after another process indexed, against its steady recalls: what the
recall service's tenants pay after each ingest (its ingest workers write, the server recalls).

    python -m benches.probes.catch_up [--conversations 2000] [--appends 8]

On a copy of the benchmark history's memory (built once, `benches.latency.ensure_indexed`): a warm engine
recalls once (its resident copy is built), then, `--appends` times, another handle indexes one new
conversation, and after Lance's read-consistency interval the warm engine is asked about it (timed, and the
new conversation must be among the hits), followed by five steady recalls. Prints one JSON line. The
writer compacts every 32 appends (`store::COMPACT_FRAGMENTS`), so `--appends 40` includes a compaction: the
copy then reads the rewritten fragments' ids and only the rows it lacks (`after_max_ms`).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from benches.latency import ensure_indexed

# Lance's read-consistency interval (`store::READ_CONSISTENCY`) plus a margin: a handle sees another's
# commit after it.
SETTLE_S = 1.3


def write_conversation(path: Path, session: str, turns: list[tuple[str, str]]) -> Path:
    rows = [{"session_id": session, "turn_uuid": f"{session}-t{i}", "seq": i, "ts": f"2026-11-0{i + 1}T09:00:00Z",
             "role": role, "harness": "bench", "blocks": [{"block_type": "text", "text": text}]}
            for i, (role, text) in enumerate(turns)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--conversations", type=int, default=2000)
    ap.add_argument("--appends", type=int, default=8)
    args = ap.parse_args(argv)
    from funes_py import Engine, Models

    _, home, _ = ensure_indexed(args.conversations)
    models = Models.load()
    with tempfile.TemporaryDirectory(prefix="funes-catch-up-") as tmp:
        memory = Path(tmp) / "memory"
        shutil.copytree(home, memory)
        reader = Engine(memory, models)
        writer = Engine(memory, models, resident=False)
        t = time.perf_counter()
        reader.recall("what did we decide about the pump", k=8)
        first_ms = (time.perf_counter() - t) * 1000
        after, steady = [], []
        for i in range(args.appends):
            src = write_conversation(Path(tmp) / f"new{i}.funes.jsonl", f"catch-up-{i}",
                                     [("user", f"The zebrafish tank number {i} needs a new heater."),
                                      ("assistant", "Noted, ordering one today.")])
            writer.index(src)
            time.sleep(SETTLE_S)
            t = time.perf_counter()
            hits = reader.recall(f"zebrafish tank number {i} heater", k=3)
            after.append((time.perf_counter() - t) * 1000)
            if f"catch-up-{i}" not in {h.session_id for h in hits}:
                raise SystemExit(f"append {i} not recalled: {[h.session_id for h in hits]}")
            for _ in range(5):
                t = time.perf_counter()
                reader.recall("what did we decide about the pump", k=8)
                steady.append((time.perf_counter() - t) * 1000)
        chunks = reader.status().rows
    print(json.dumps({"conversations": args.conversations, "chunks": chunks, "first_recall_ms": round(first_ms),
                      "after_foreign_append_ms": [round(a, 1) for a in after],
                      "after_median_ms": round(statistics.median(after), 1), "after_max_ms": round(max(after), 1),
                      "steady_median_ms": round(statistics.median(steady), 1)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

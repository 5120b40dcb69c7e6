"""Memory per index run of one warm engine, without the service (issue 11).

    python -m benches.probes.index_memory [--runs 400] [--warmup 100]

One `Engine` on a fresh home; each run indexes one new 4-turn conversation from its own file, then recalls
its canary (so the resident copy is built and kept in step, as in the service). Every 50 runs: RSS
(anonymous and file-backed), threads, seconds. At the end: KB of RSS per run after `--warmup` runs (least
squares). The data itself adds a few KB a run (4 chunks in the resident copy, one stamp in the index state);
anything above that is memory kept per run. Try allocator settings from outside: `MALLOC_ARENA_MAX=2 python
-m benches.probes.index_memory`, or `LD_PRELOAD=.../libjemalloc.so.2`.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from benches.probes.soak import slope
from funes_py import Engine


def status() -> dict[str, int]:
    """RssAnon, RssFile (KiB) and Threads of this process."""
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("RssAnon", "RssFile", "Threads"):
            out[key] = int(value.split()[0])
    return out


def conversation(src: Path, i: int) -> Path:
    f = src / f"c{i}.funes.jsonl"
    turns = [{"session_id": f"c{i}", "turn_uuid": f"c{i}-{t}", "seq": t, "ts": "2026-11-01T10:00:00Z",
              "role": "user" if t % 2 == 0 else "assistant", "harness": "bench",
              "blocks": [{"block_type": "text",
                          "text": f"turn {t} of conversation {i}: the canary SK{i}-{t}, and the gateway N-{i} deploy"}]}
             for t in range(4)]  # fmt: skip
    f.write_text("".join(json.dumps(t) + "\n" for t in turns))
    return f


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=400)
    p.add_argument("--warmup", type=int, default=100, help="runs left out of the slope")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="funes-index-memory-") as tmp:
        src = Path(tmp) / "src"
        src.mkdir()
        engine = Engine(Path(tmp) / "memory")
        start = time.perf_counter()
        samples: list[tuple[float, float]] = []
        for i in range(args.runs):
            engine.index(conversation(src, i))
            assert engine.recall(f"canary SK{i}-1", k=3), "the new conversation was not found"
            if i % 50 == 0 or i == args.runs - 1:
                s = status()
                rss_kib = s["RssAnon"] + s["RssFile"]
                samples.append((i, rss_kib))
                print(f"run {i:4d}: RSS {rss_kib / 1024:6.1f} MiB (anon {s['RssAnon'] / 1024:.1f}), "
                      f"{s['Threads']} threads, {time.perf_counter() - start:.0f} s", flush=True)  # fmt: skip
    after = [(x, y) for x, y in samples if x >= args.warmup]
    print(f"{args.runs} runs in {time.perf_counter() - start:.0f} s; after run {args.warmup}: "
          f"{slope(after):.1f} KB of RSS per index run")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

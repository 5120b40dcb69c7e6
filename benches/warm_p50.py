"""Warm recall latency of one memory in this process: p50 / p95 / p99 of `recall(q, k=8)` with the defaults
over questions in turn, after one warm-up query. Small on purpose, so two builds (the CI `release` wheel and
the `dist` wheel) or two models can be measured back to back by whichever Python has them installed:

    python -m benches.warm_p50 --memory benches/out/history-10000-s7/memory \\
        --questions benches/out/history-10000-s7/questions.jsonl [--embedder NAME] [--calls 300]
"""

from __future__ import annotations

import argparse
import json
import os
import time


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memory", required=True)
    ap.add_argument("--questions", required=True, help="a questions.jsonl with a 'long' field per line")
    ap.add_argument("--embedder", default=None)
    ap.add_argument("--calls", type=int, default=300)
    args = ap.parse_args(argv)
    import funes_py
    from funes_py import Engine, Models

    qs = [json.loads(line)["long"] for line in open(args.questions, encoding="utf-8") if line.strip()]
    eng = Engine(args.memory, Models.load(embedder=args.embedder))
    eng.recall(qs[0], k=8)
    ms = []
    for i in range(args.calls):
        t = time.perf_counter()
        eng.recall(qs[i % len(qs)], k=8)
        ms.append((time.perf_counter() - t) * 1000)
    ms.sort()
    pick = lambda p: round(ms[min(len(ms) - 1, int(p * len(ms)))], 2)  # noqa: E731
    print(json.dumps({"funes_py": os.path.dirname(funes_py.__file__), "embedder": eng.models.embedder_name,
                      "calls": args.calls, "p50": pick(0.5), "p95": pick(0.95), "p99": pick(0.99), "load": os.getloadavg()[0]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

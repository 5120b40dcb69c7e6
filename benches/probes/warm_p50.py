"""Warm recall latency of one memory in this process: p50 / p95 / p99 of `recall(q, k=8)` with the defaults
over questions in turn, after one warm-up query. Small on purpose, so two builds (the CI `release` wheel and
the `dist` wheel) or two models can be measured back to back by whichever Python has them installed:

    python -m benches.probes.warm_p50 --memory benches/out/history-10000-s7/memory \\
        --questions benches/out/history-10000-s7/questions.jsonl [--embedder NAME] [--calls 300] [--dated 2026]

`--dated YEAR` also asks each question with " in <month> YEAR" appended (months in turn), alternating with the
question as asked, and reports both: what naming a month and a year costs (BM25 indexes each passage with its
turn's month and year, and a year's postings hold most passages). `--near-words` also asks each question with
`near_words=False`, alternated: what BM25's near words cost (`thesaurus`; the embedder must have a table).
"""

from __future__ import annotations

import argparse
import calendar
import json
import os
import time


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memory", required=True)
    ap.add_argument("--questions", required=True, help="a questions.jsonl with a 'long' field per line")
    ap.add_argument("--embedder", default=None)
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--dated", type=int, metavar="YEAR", help="also ask each question naming a month of YEAR")
    ap.add_argument("--near-words", action="store_true", help="also ask each question without BM25's near words")
    args = ap.parse_args(argv)
    import funes_py
    from funes_py import Engine, Models

    qs = [json.loads(line)["long"] for line in open(args.questions, encoding="utf-8") if line.strip()]
    sets = {"as asked": (qs, {})}
    if args.dated:
        sets["naming a month"] = ([f"{q.rstrip('?')} in {calendar.month_name[i % 12 + 1]} {args.dated}?" for i, q in enumerate(qs)], {})
    if args.near_words:
        sets["without near words"] = (qs, {"near_words": False})
    eng = Engine(args.memory, Models.load(embedder=args.embedder))
    eng.recall(qs[0], k=8)
    ms: dict[str, list[float]] = {name: [] for name in sets}
    for i in range(args.calls):
        for name, (asked, opts) in sets.items():   # alternated, so both see the same machine
            t = time.perf_counter()
            eng.recall(asked[i % len(asked)], k=8, **opts)
            ms[name].append((time.perf_counter() - t) * 1000)
    for name, xs in ms.items():
        xs.sort()
        pick = lambda p: round(xs[min(len(xs) - 1, int(p * len(xs)))], 2)  # noqa: E731, B023
        print(json.dumps({"funes_py": os.path.dirname(funes_py.__file__), "embedder": eng.models.embedder_name,
                          "questions": name, "calls": args.calls, "p50": pick(0.5), "p95": pick(0.95), "p99": pick(0.99),
                          "load": os.getloadavg()[0]}))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

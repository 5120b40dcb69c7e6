"""One harness for every recall benchmark: results to benches/out/run-<part>.json, markdown tables on stdout,
and benches/RESULTS.md rewritten from them (see benches/README.md for what each part times and excludes).

    python -m benches.run                                  # everything at 1,000 / 3,000 / 10,000 conversations
    python -m benches.run --quick                          # under two minutes: 1,000 conversations, 2 LoCoMo ones
    python -m benches.run --parts quality,floor --n 1000   # some parts, some sizes

Parts: quality, latency, backfill, fresh, locomo, floor, meaning, charts; and korean (Korean, mixed and English
histories per embedder and BM25 analyser, LoCoMo with e5; long, so only when asked). Histories are generated and indexed once
(`benches.latency.ensure_indexed`, cached under benches/out/history-N-s7) and rebuilt when the engine build
changes; `--keep-index` trusts an old cache, `--reindex` rebuilds regardless (fresh backfill figures).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time

from . import charts, floor, locomo_recall, meaning, quality, speed, targets
from .harness import indexed_history, load_result, meta, results_dir, save_result
from .results import OPTIONAL_PARTS, PARTS, render_part, write

FULL_N = (1_000, 3_000, 10_000)
QUICK_N = (1_000,)
FLOOR_N = 1_000


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m benches.run", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes and few calls (under two minutes)")
    ap.add_argument("--parts", default=",".join(PARTS),
                    help=f"comma-separated subset of {','.join(PARTS + OPTIONAL_PARTS)} (default: {','.join(PARTS)})")
    ap.add_argument("--n", type=int, nargs="+", help=f"history sizes (default {FULL_N}, quick {QUICK_N})")
    ap.add_argument("--calls", type=int, help="warm in-process recalls per size (default 300, quick 100)")
    ap.add_argument("--process-calls", type=int, help="process-per-call recalls per size (default 20, quick 5)")
    ap.add_argument("--fresh-runs", type=int, default=5, help="new conversations, one after another (default 5)")
    ap.add_argument("--locomo-conversations", type=int, help="first K LoCoMo conversations (default 10, quick 2)")
    ap.add_argument("--keep-index", action="store_true", help="reuse cached memories built by another engine build")
    ap.add_argument("--reindex", type=int, nargs="*", metavar="N",
                    help="rebuild these history memories, or all of them without N (fresh backfill figures)")
    ap.add_argument("--embedder", help="the meaning part's embedder (default: the service's, funes_py.config.DEFAULT_EMBEDDER)")
    ap.add_argument("--no-results-md", action="store_true", help="do not rewrite RESULTS.md")
    args = ap.parse_args(argv)
    args.parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = set(args.parts) - set(PARTS + OPTIONAL_PARTS)
    if unknown:
        ap.error(f"unknown parts {sorted(unknown)}; choose from {','.join(PARTS + OPTIONAL_PARTS)}")
    args.n = sorted(set(args.n or (QUICK_N if args.quick else FULL_N)))
    args.calls = args.calls or (100 if args.quick else 300)
    args.process_calls = args.process_calls or (5 if args.quick else 20)
    args.locomo_conversations = args.locomo_conversations or (2 if args.quick else 10)
    return args


def floor_sizes(ns: list[int], quick: bool) -> list[int]:
    """1,000 conversations (or the smallest size asked for), plus the largest in a full run."""
    base = FLOOR_N if FLOOR_N in ns else min(ns)
    return sorted({base} | (set() if quick else {max(ns)}))


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    argv = sys.argv[1:] if argv is None else argv
    command = "python -m benches.run" + "".join(" " + shlex.quote(a) for a in argv)
    started = time.perf_counter()

    from funes_py import Engine, Models

    models = Models.load()
    engines: dict = {}

    def eng_for(home):
        if str(home) not in engines:
            engines[str(home)] = Engine(home, models)
        return engines[str(home)]

    need = set()
    if {"quality", "latency", "backfill"} & set(args.parts):
        need |= set(args.n)
    if "fresh" in args.parts:
        need.add(max(args.n))
    if "floor" in args.parts:
        need |= set(floor_sizes(args.n, args.quick))
    histories = {}
    for n in sorted(need):
        t = time.perf_counter()
        reindex = args.reindex is not None and (not args.reindex or n in args.reindex)
        histories[n] = indexed_history(n, keep_index=args.keep_index, reindex=reindex)
        print(f"history {n:,}: ready in {time.perf_counter() - t:.1f} s "
              f"(index run {histories[n][2]['index_s']:.1f} s)", file=sys.stderr, flush=True)

    results: dict = {}

    def done(part: str, data: dict, t0: float) -> None:
        data["meta"] = meta(part, command, args.quick, time.perf_counter() - t0)
        path = save_result(part, args.quick, data)
        results[part] = data
        print(render_part(part, data, "." if args.quick else "charts") + f"\n({path})\n", flush=True)

    for part in args.parts:
        t0 = time.perf_counter()
        print(f"--- {part} ---", file=sys.stderr, flush=True)
        if part == "quality":
            done(part, quality.run(eng_for, [(n, histories[n]) for n in args.n]), t0)
        elif part == "floor":
            done(part, floor.run(eng_for, [(n, histories[n]) for n in floor_sizes(args.n, args.quick)]), t0)
        elif part == "backfill":
            done(part, speed.backfill(eng_for, [(n, histories[n]) for n in args.n]), t0)
        elif part == "fresh":
            n = max(args.n)
            done(part, speed.fresh(models, n, histories[n], runs=args.fresh_runs), t0)
        elif part == "locomo":
            done(part, locomo_recall.run(models, args.locomo_conversations, keep_index=args.keep_index), t0)
        elif part == "meaning":
            done(part, meaning.run(args.n, args.embedder, keep_index=args.keep_index), t0)
        elif part == "latency":
            done(part, speed.latency(args.n, args.calls, args.process_calls), t0)
        elif part == "korean":
            from . import multilingual

            sizes = [n for n in args.n if n in multilingual.SIZES] or args.n
            def progress(data: dict, part: str = part, t0: float = t0) -> None:  # a stopped run keeps its rows
                save_result(part, args.quick, data | {"meta": meta(part, command, args.quick, time.perf_counter() - t0)})

            done(part, multilingual.run(sizes, keep_index=args.keep_index, previous=load_result(part, args.quick),
                                        locomo_conversations=args.locomo_conversations, on_progress=progress), t0)  # fmt: skip
        elif part == "charts":
            have = {p: results.get(p) or load_result(p, args.quick) for p in ("latency", "quality")}
            out_dir = results_dir(True) if args.quick else charts.CHART_DIR
            done(part, {"files": charts.run(have, out_dir)}, t0)

    if "locomo" in results:
        print(locomo_recall.render_misses(results["locomo"]))
    print(f"## Targets\n\n{targets.render(targets.evaluate(results))}")
    if not args.no_results_md:
        print(f"results: {write(args.quick, parts=args.parts)}")
    print(f"total {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""One harness for every recall benchmark: results to benches/out/run-<part>.json, markdown tables on stdout,
and benches/RESULTS.md rewritten from them (see benches/README.md for what each part times and excludes).

    python -m benches.run                                  # everything at 1,000 / 3,000 / 10,000 conversations
    python -m benches.run --quick                          # under two minutes: 1,000 conversations, 2 LoCoMo ones
    python -m benches.run --parts quality,floor --n 1000   # some parts, some sizes

Parts (`benches.registry.PARTS`, the one table of them): quality, latency, backfill, fresh, locomo, floor,
meaning, charts; and korean (Korean, mixed and English histories per embedder and BM25 analyser, LoCoMo with e5;
long, so only when asked). Histories are generated and indexed once (`benches.latency.ensure_indexed`, cached
under benches/out/history-N-s7) and rebuilt when the engine build changes; `--keep-index` trusts an old cache,
`--reindex` rebuilds regardless (fresh backfill figures).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time

from . import locomo_recall, targets
from .harness import indexed_history, meta, save_result
from .registry import DEFAULT_PARTS, OPTIONAL_PARTS, PARTS, Context
from .results import render_part, write

FULL_N = (1_000, 3_000, 10_000)
QUICK_N = (1_000,)


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m benches.run", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes and few calls (under two minutes)")
    ap.add_argument("--parts", default=",".join(DEFAULT_PARTS),
                    help=f"comma-separated subset of {','.join(DEFAULT_PARTS + OPTIONAL_PARTS)} (default: {','.join(DEFAULT_PARTS)})")
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
    ap.add_argument("--scale-domains", default="home,ops",
                    help="the scale part's histories: home (household, held out), ops (tuning); sizes not asked keep their earlier figures")
    ap.add_argument("--baseline", metavar="DIR", help="the cost part: another build's package directory, measured beside this one")
    args = ap.parse_args(argv)
    args.parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = set(args.parts) - set(PARTS)
    if unknown:
        ap.error(f"unknown parts {sorted(unknown)}; choose from {','.join(DEFAULT_PARTS + OPTIONAL_PARTS)}")
    args.n = sorted(set(args.n or (QUICK_N if args.quick else FULL_N)))
    args.calls = args.calls or (100 if args.quick else 300)
    args.process_calls = args.process_calls or (5 if args.quick else 20)
    args.locomo_conversations = args.locomo_conversations or (2 if args.quick else 10)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    argv = sys.argv[1:] if argv is None else argv
    ctx = Context(args, "python -m benches.run" + "".join(" " + shlex.quote(a) for a in argv))
    started = time.perf_counter()
    parts = [PARTS[name] for name in args.parts]
    if any(p.uses_models for p in parts):
        ctx.load_models()   # before the first part, so no part's seconds include the model load

    for n in sorted(set().union(*(p.sizes(args) for p in parts))):
        t = time.perf_counter()
        reindex = args.reindex is not None and (not args.reindex or n in args.reindex)
        ctx.histories[n] = indexed_history(n, keep_index=args.keep_index, reindex=reindex)
        print(f"history {n:,}: ready in {time.perf_counter() - t:.1f} s "
              f"(index run {ctx.histories[n][2]['index_s']:.1f} s)", file=sys.stderr, flush=True)

    for part in parts:
        t0 = time.perf_counter()
        print(f"--- {part.name} ---", file=sys.stderr, flush=True)
        data = part.measure(ctx)
        data["meta"] = meta(part.name, ctx.command, args.quick, time.perf_counter() - t0)
        path = save_result(part.name, args.quick, data)
        ctx.results[part.name] = data
        print(render_part(part.name, data, "." if args.quick else "charts") + f"\n({path})\n", flush=True)

    if "locomo" in ctx.results:
        print(locomo_recall.render_misses(ctx.results["locomo"]))
    print(f"## Targets\n\n{targets.render(targets.evaluate(ctx.results))}")
    if not args.no_results_md:
        print(f"results: {write(args.quick, parts=args.parts)}")
    print(f"total {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

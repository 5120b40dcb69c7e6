"""The MCP tool's relevance floor, calibrated in the fusion lab (issue 13): the engine's ranking (score fusion,
`fusion_lab.proposal`) through the service's defaults (candidates 8, k 3, identifier guard, recency) with a
floor on cosine.

    python -m benches.lab.floor_lab --n 1000 3000 [--embedder NAME]

Two floors: `min_similarity` on every passage, and an answer-level floor (nothing when no passage's cosine
reaches it; queries naming identifiers exempt: `answers_nothing`), which this lab chose and the engine has had
since as `answer_floor` (the service's calibrated values: `funes_py.convert.floors`). For every floor of a
grid: hit@3 on the close and reworded questions, turn recall@3 on LoCoMo, and the share of out-of-domain and
unanswerable questions answered with nothing. The floor is chosen on the tuning sets
only (operations history, LoCoMo 1-5): the highest floor that costs at most `MAX_COST` of hit@3 (turn recall@3
on LoCoMo) on every tuning set, against the same ranking without a floor. The held-out sets (household
history, LoCoMo 6-10) are then read at that floor. Pools come from the engine's memories (`--source engine`,
the default here: nothing but the queries is embedded); the default embedder is the service's.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace

from ..metrics import answer_pattern
from .corpus import LAB_OUT, Corpus
from .fusion import Pool
from .fusion_lab import Config, evaluate, load, proposal, rank
from .sets import QuerySet, corpus_of

GRID = tuple(round(0.025 * i, 3) for i in range(0, 21))   # 0 (no floor) to 0.5
ANSWER_GRID = (0.0, 0.35, 0.375, 0.4, 0.4125, 0.425, 0.4375, 0.45, 0.4625, 0.475)
MAX_COST = 0.01


def service(floor: float | None, spares_ids: bool = False) -> Config:
    """The proposal as the MCP service runs it, with a floor (None or 0: none); `spares_ids`: rows naming an
    identifier the query names pass the floor (the guard is their relevance test)."""
    return replace(proposal(k=3, guard=True, candidates=8, floor=floor or None), name=f"service floor {floor}",
                   floor_spares_ids=spares_ids)  # fmt: skip


def figure(qs: QuerySet, corpora: dict[str, Corpus], cfg: Config) -> float:
    """hit@3, the share answered nothing, or LoCoMo turn recall@3 (k is 3: nothing more comes back)."""
    r = evaluate(qs, corpora, cfg)
    if qs.corpus == "locomo":
        return float(r["ALL"]["turn_recall@5"])
    return float(r.get("hit@3", r.get("nothing", 0.0)))


def answers_nothing(pool: Pool, answer_floor: float) -> bool:
    """The answer-level floor: a recall answers nothing when the best cosine of any passage (the dense leg's
    first) is below `answer_floor`, unless the query names identifiers (the identifier guard is then the
    relevance test, and an identifier barely moves a cosine)."""
    best = pool.dense[0][1] if pool.dense else float("-inf")
    return not pool.wanted and best < answer_floor


def answer_figure(qs: QuerySet, corpora: dict[str, Corpus], answer_floor: float) -> float:
    """`figure` for the service's defaults (no per-passage floor) with the answer-level floor."""
    cfg = service(None)
    kept = [(q, p) for q, p in zip(qs.queries, qs.pools, strict=True) if not answers_nothing(p, answer_floor)]
    if qs.queries[0].negative:
        return 1.0 - sum(bool(rank(qs, p, cfg, corpora[corpus_of(qs, q)])) for q, p in kept) / len(qs.pools)
    if qs.corpus == "locomo":
        got = 0.0
        for q, p in kept:
            c = corpora[corpus_of(qs, q)]
            turns = {c.rows[r].turn_uuid for r in rank(qs, p, cfg, c)}
            got += len(set(q.evidence) & turns) / len(q.evidence) if q.evidence else 0.0
        return got / len(qs.pools)
    c = corpora[qs.corpus]
    return sum(any(answer_pattern(q.answer or "").search(c.rows[r].text) for r in rank(qs, p, cfg, c)[:3])
               for q, p in kept) / len(qs.pools)  # fmt: skip


def sweep(sets: list[QuerySet], corpora: dict[str, Corpus], grid: tuple[float, ...] = GRID,
          spares_ids: bool = False) -> dict[str, dict[float, float]]:  # fmt: skip
    return {qs.name: {f: figure(qs, corpora, service(f, spares_ids)) for f in grid} for qs in sets}


def choose(sets: list[QuerySet], table: dict[str, dict[float, float]], max_cost: float = MAX_COST) -> float:
    """The highest floor of the grid costing at most `max_cost` on every tuning set with answers (below it,
    every lower floor must pass too: the cost is not assumed monotonic)."""
    answered = [s.name for s in sets if s.split == "tuning" and not s.queries[0].negative]
    best = 0.0
    for f in sorted(next(iter(table.values()))):
        if all(table[n][0.0] - table[n][f] <= max_cost + 1e-9 for n in answered):
            best = f
        else:
            break
    return best


def render(sets: list[QuerySet], table: dict[str, dict[float, float]], chosen: float, shown: tuple[float, ...]) -> str:
    head = "| set | split | " + " | ".join("none" if f == 0 else f"{f:g}" for f in shown) + " |\n"
    out = head + "|---|---|" + "---|" * len(shown) + "\n"
    for qs in sets:
        unit = "nothing" if qs.queries[0].negative else ("R@3" if qs.corpus == "locomo" else "hit@3")
        cells = [f"{100 * table[qs.name][f]:.0f}" if qs.corpus != "locomo" else f"{100 * table[qs.name][f]:.1f}" for f in shown]
        cells = [f"**{c}**" if f == chosen else c for c, f in zip(cells, shown, strict=True)]
        out += f"| {qs.name} ({unit}) | {qs.split} | " + " | ".join(cells) + " |\n"
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benches.lab.floor_lab", description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[1000])
    ap.add_argument("--embedder", help="default: the service's (funes_py.config.DEFAULT_EMBEDDER)")
    ap.add_argument("--source", choices=("lab", "engine"), default="engine")
    args = ap.parse_args(argv)
    from funes_py import Models
    from funes_py.config import DEFAULT_EMBEDDER

    t = time.perf_counter()
    models = Models.load(embedder=args.embedder or DEFAULT_EMBEDDER)
    sets, corpora = load(args.n, models, source=args.source)
    loaded = time.perf_counter() - t
    shown = tuple(f for f in GRID if f == 0 or 0.15 <= f <= 0.45)
    out = {"embedder": models.embedder_stamp}
    for spares in (False, True):
        table = sweep(sets, corpora, spares_ids=spares)
        chosen = choose(sets, table)
        print(f"### Floor on every row{' but those naming a queried identifier' if spares else ''}\n\n"
              f"embedder {models.embedder_stamp}; chosen {chosen:g} (at most {100 * MAX_COST:g} pt of hit@3 / R@3 "
              f"on every tuning set)\n\n{render(sets, table, chosen, shown)}")  # fmt: skip
        out["spares_ids" if spares else "plain"] = {"chosen": chosen, "table": table}
    table = {qs.name: {f: answer_figure(qs, corpora, f) for f in ANSWER_GRID} for qs in sets}
    chosen = choose(sets, table)
    print(f"### Answer-level floor: nothing when no passage's cosine reaches it (queries naming identifiers "
          f"exempt)\n\nchosen on cost alone {chosen:g}\n\n{render(sets, table, chosen, ANSWER_GRID)}")  # fmt: skip
    out["answer"] = {"chosen": chosen, "table": table}
    LAB_OUT.mkdir(parents=True, exist_ok=True)
    (LAB_OUT / "floor-results.json").write_text(json.dumps(out, indent=1))
    print(f"pools {loaded:.0f} s, sweep {time.perf_counter() - t - loaded:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

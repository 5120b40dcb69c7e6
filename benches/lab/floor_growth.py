"""How the best cosine of a recall grows with the memory's size: the evidence behind the answer floor's rise
(`answer_floor_per_decade`, `funes_py.convert.floors`).

    python -m benches.lab.floor_growth [--n 1000 3000 10000] [--embedder NAME]

For each synthetic history and size (the memories of `benches.run --parts meaning`, indexed if missing): the
best cosine of the memory for every out-of-domain question (`benches.reworded`'s negatives: about things never
discussed) and for every close or reworded question whose answer the service's ranking without a floor puts
in its top 3. An answer floor says "nothing" to a question whose best cosine is under it, so the first column
is what a floor must stay above and the second what it must stay under. The "floor" column is the service's
calibrated floor at that size (`RecallOptions.answer_floor_at`).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from ..harness import read_jsonl
from ..meaning import DOMAINS, configs, indexed_household, indexed_ops
from ..metrics import answer_pattern


def best_cosines(eng, root, domain: str, models) -> tuple[list[float], list[float]]:
    """(best cosine of each out-of-domain question, best cosine of each answered one)."""
    bare = configs(DOMAINS[domain][1], models)["service, no floor"]
    qs = read_jsonl(root / "questions.jsonl")
    worded = read_jsonl(root / "reworded.jsonl") if domain == "ops" else qs
    answerable = [(q["long"], q["answer"]) for q in qs] + [(q["reworded"], q["answer"]) for q in worded]

    def best(text: str) -> float:
        hits = eng.recall(text, legs="dense", k=1, neighbors=0, half_life_days=0.0)
        return hits[0].similarity if hits else float("-inf")

    ood = [best(o["question"]) for o in read_jsonl(root / "ood.jsonl")]
    answered = [best(t) for t, a in answerable
                if any(answer_pattern(a).search(h.text) for h in eng.recall(t, **bare)[:3])]  # fmt: skip
    return ood, answered


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benches.lab.floor_growth", description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[1000, 3000, 10000])
    ap.add_argument("--embedder", help="default: the service's (funes_py.config.DEFAULT_EMBEDDER)")
    args = ap.parse_args(argv)
    from funes_py import Engine, Models
    from funes_py.config import DEFAULT_EMBEDDER
    from funes_py.convert.floors import calibrated_floors
    from funes_py.options import RecallOptions

    models = Models.load(embedder=args.embedder or DEFAULT_EMBEDDER)
    floors = calibrated_floors(str(models.embedder_stamp).split("@")[0])
    print(f"embedder {models.embedder_stamp}; calibrated {floors}\n")
    print("| history | conversations | passages | out-of-domain best cosine: median / q80 / q90 | answered best "
          "cosine: min / q01 / q05 | floor |\n|---|---|---|---|---|---|")  # fmt: skip
    medians: dict[str, list[tuple[int, float]]] = {}
    for domain, indexed in (("ops", indexed_ops), ("home", indexed_household)):
        for n in args.n:
            root, home = indexed(n, models, keep_index=True)
            eng = Engine(home, models)
            rows = eng.status().rows
            ood, answered = best_cosines(eng, root, domain, models)
            o, a = np.quantile(ood, [0.5, 0.8, 0.9]), np.quantile(answered, [0.01, 0.05])
            floor = "–"
            at = RecallOptions(answer_floor=floors.answer_floor,
                               answer_floor_per_decade=floors.answer_floor_per_decade).answer_floor_at(rows)  # fmt: skip
            if at is not None:
                floor = f"{at:.3f}"
            print(f"| {domain} | {n:,} | {rows:,} | {o[0]:.3f} / {o[1]:.3f} / {o[2]:.3f} | {min(answered):.3f} / "
                  f"{a[0]:.3f} / {a[1]:.3f} | {floor} |", flush=True)  # fmt: skip
            medians.setdefault(domain, []).append((rows, float(o[0])))
    print("\nRise of the out-of-domain median per tenfold passages (least squares on log10 passages):")
    for domain, pts in medians.items():
        if len(pts) > 1:
            x, y = np.log10([p[0] for p in pts]), np.array([p[1] for p in pts])
            print(f"- {domain}: {np.polyfit(x, y, 1)[0]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

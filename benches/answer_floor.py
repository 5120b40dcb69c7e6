"""What the answer floor costs on LoCoMo through the recall service's defaults: turn recall@3 and the share of
questions answered with nothing, without the floor and at a few values. LoCoMo's questions all have an answer
in their conversation, so every "nothing" here is a loss.

    python -m benches.answer_floor [--floors 0.35 0.4 0.425 0.45]

Uses (or makes) the LoCoMo memories of the `locomo` part of `benches.run` (`benches/out/locomo/<conv>`).
"""

from __future__ import annotations

import argparse
import json

from .latency import OUT
from .locomo import load
from .metrics import first_distinct, turn_recall_table


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--floors", type=float, nargs="+", default=[0.35, 0.4, 0.425, 0.45])
    args = ap.parse_args(argv)
    from funes_py import Models
    from funes_py.server.config import ServiceConfig

    from .locomo_recall import _memory

    models = Models.load()
    base = ServiceConfig().recall_options()  # k 3, candidates 8, identifier guard; no floor of any kind
    settings = [None, *args.floors]
    rows: dict[str | float, list] = {str(f): [] for f in settings}
    nothing = {str(f): 0 for f in settings}
    total = 0
    for conv in load():
        eng, _ = _memory(models, conv, keep_index=True)
        for q in conv.questions:
            total += 1
            for f in settings:
                hits = eng.recall(q.question, base, answer_floor=f, half_life_days=0.0, neighbors=0)
                nothing[str(f)] += not hits
                rows[str(f)].append((q.category_name, first_distinct([h.turn_uuid for h in hits], 3), q.evidence_turns))
    out = {"options": str(base), "questions": total, "results": {}}
    print(f"LoCoMo, {total} questions, service options {base}")
    print("| answer floor | turn recall@1 / @3 | answered nothing |\n|---|---|---|")
    for f in settings:
        t = turn_recall_table(rows[str(f)], ks=(1, 3))["ALL"]
        out["results"][str(f)] = {"recall@1": t["turn_recall@1"], "recall@3": t["turn_recall@3"], "nothing": nothing[str(f)] / total}
        print(f"| {f or 'off'} | {100 * t['turn_recall@1']:.1f} / {100 * t['turn_recall@3']:.1f} | {100 * nothing[str(f)] / total:.1f}% |")
    (OUT / "answer-floor-locomo.json").write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

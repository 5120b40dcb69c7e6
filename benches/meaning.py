"""Recall by meaning (issue 13): close and reworded questions, out-of-domain negatives and LoCoMo, each through
the library's defaults and the recall service's, on a tuning domain and a held-out one.

    python -m benches.run --parts meaning --n 1000 3000

Sets (see `lab_sets` for the split): the operations history (`benches.history`) with its close questions
(`long`) and `benches.reworded`'s reworded ones and out-of-domain negatives: the tuning domain; the household
history (`benches.household`): held out. LoCoMo: conversations 1-5 tuning, 6-10 held out.
What each row asks of the engine (recency's `now` pinned to the history's last day):
* `library`: `recall(q, k=8, now=END)`, everything else the library's defaults (hybrid, candidates 30,
  recency 30 days, neighbours 1); `library dense` / `library bm25`: the same with one leg;
* `service`: the MCP service's recall arguments (`server.service._recall_kwargs(ServiceConfig())`: k 3,
  candidates 8, identifier guard, no floor unless one is configured), `now=END`. The service loads the
  int8 embedder; these memories are indexed with the library's (fp32), so this row isolates the recall
  arguments (the int8 model's own effect is measured in `benches.int8`).
A hit is the answer as a whole token in a returned passage's own text; "nothing" is an empty answer.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

from . import household
from .harness import cache_is_current, indexed_history, mark_current, pct, read_jsonl
from .history import HISTORY_END
from .latency import run_child
from .locomo import CATEGORY_ORDER
from .locomo import load as load_locomo
from .locomo_recall import returned_turns
from .metrics import answer_pattern, turn_recall_table
from .synthetic import synthetic_root

DOMAINS = {"ops": ("tuning", HISTORY_END), "home": ("held-out", household.HISTORY_END)}
LOCOMO_SPLIT = 5   # conversations 1-5 tune, the rest are held out


def service_kwargs() -> dict:
    """What the MCP service passes to `Engine.recall` with its default configuration."""
    from funes_py.server.config import ServiceConfig
    from funes_py.server.service import _recall_kwargs

    return _recall_kwargs(ServiceConfig())


def configs(now) -> dict[str, dict]:
    return {"library": {"k": 8, "now": now}, "library dense": {"k": 8, "now": now, "legs": "dense"},
            "library bm25": {"k": 8, "now": now, "legs": "bm25"}, "service": {**service_kwargs(), "now": now}}


def indexed_household(n: int, keep_index: bool = False, seed: int = 7) -> tuple[Path, Path]:
    """The household history of n conversations and its memory, indexed once in a child process (niced)
    and reused while the engine build is unchanged (as `harness.indexed_history` does for the other)."""
    root = synthetic_root("household", n, seed)
    home = root / "memory"
    if (root / "index-run.json").exists() and (keep_index or cache_is_current(root)):
        return root, home
    shutil.rmtree(home, ignore_errors=True)
    code = ("import json,sys,time\nfrom funes_py import Engine, Models\n"
            "t=time.perf_counter(); r=Engine(sys.argv[1], Models.load()).index(sys.argv[2])\n"
            "print(json.dumps({'index_s':time.perf_counter()-t,'chunks':r.chunks_added}))\n")  # fmt: skip
    _, _, out = run_child(["nice", "-n", "10", sys.executable, "-c", code, str(home), str(root / "src")])
    (root / "index-run.json").write_text(out.strip().splitlines()[-1])
    mark_current(root)
    return root, home


def _ask(eng, text: str, answer: str | None, kwargs: dict) -> tuple[int | None, bool]:
    """(rank of the first passage holding the answer or None, whether nothing came back)."""
    hits = eng.recall(text, **kwargs)
    if answer is None:
        return None, not hits
    pat = answer_pattern(answer)
    return next((i + 1 for i, h in enumerate(hits) if pat.search(h.text)), None), not hits


def measure_history(eng, root: Path, domain: str, n: int) -> list[dict]:
    split, now = DOMAINS[domain]
    qs = read_jsonl(root / "questions.jsonl")
    sets = {"close": [(q["long"], q["answer"]) for q in qs]}
    if domain == "ops":
        sets["reworded"] = [(q["reworded"], q["answer"]) for q in read_jsonl(root / "reworded.jsonl")]
    else:
        sets["reworded"] = [(q["reworded"], q["answer"]) for q in qs]
    sets["ood"] = [(o["question"], None) for o in read_jsonl(root / "ood.jsonl")]
    sets["unanswerable"] = [(u["long"], None) for u in read_jsonl(root / "unanswerable.jsonl")]
    rows = []
    for name, kwargs in configs(now).items():
        for set_name, questions in sets.items():
            if set_name in ("ood", "unanswerable") and name in ("library dense", "library bm25"):
                continue
            ranks, empty = zip(*(_ask(eng, t, a, kwargs) for t, a in questions), strict=True)
            row = {"domain": domain, "split": split, "n": n, "set": set_name, "config": name, "questions": len(questions)}
            if questions[0][1] is None:
                row["nothing"] = sum(empty) / len(empty)
            else:
                row |= {f"hit@{k}": sum(r is not None and r <= k for r in ranks) / len(ranks) for k in (1, 3, 8)}
            rows.append(row)
    return rows


def measure_locomo(models, keep_index: bool) -> dict:
    from .locomo_recall import _memory

    convs = load_locomo()
    out = {}
    for split, part in (("tuning", convs[:LOCOMO_SPLIT]), ("held-out", convs[LOCOMO_SPLIT:])):
        results: dict[str, list] = {"hybrid": [], "dense": [], "bm25": []}
        for conv in part:
            eng, _ = _memory(models, conv, keep_index)
            for q in conv.questions:
                for legs in results:
                    results[legs].append((q.category_name, returned_turns(eng, q.question, legs), q.evidence_turns))
        out[split] = {"conversations": [c.name for c in part],
                      "tables": {legs: turn_recall_table(rows, ks=(1, 5, 10)) for legs, rows in results.items()}}
    return out


def run(eng_for, models, ns: list[int], keep_index: bool = False) -> dict:
    rows = []
    for n in ns:
        t = time.perf_counter()
        root, home, _ = indexed_history(n, keep_index=keep_index)
        if not (root / "reworded.jsonl").exists():
            synthetic_root("ops", n)
        rows += measure_history(eng_for(home), root, "ops", n)
        hroot, hhome = indexed_household(n, keep_index=keep_index)
        rows += measure_history(eng_for(hhome), hroot, "home", n)
        print(f"meaning: {n:,} conversations measured in {time.perf_counter() - t:.0f} s", file=sys.stderr, flush=True)
    return {"rows": rows, "locomo": measure_locomo(models, keep_index), "service_kwargs": json.loads(
        json.dumps(service_kwargs(), default=str))}


def render(data: dict) -> str:
    rows = data["rows"]
    names = ["library", "library dense", "library bm25", "service"]
    out = ("hit@1 / @3 / @8 in % of 100 questions (service: k=3, read @1 / @3); \"nothing\": share of the "
           "negatives answered with no passage. ops = the operations history (tuning domain), home = the "
           "household history (held out).\n\n")
    out += "| domain | conversations | questions | " + " | ".join(names) + " |\n|---|---|---|" + "---|" * len(names) + "\n"
    by = {(r["domain"], r["n"], r["set"], r["config"]): r for r in rows}
    for domain in DOMAINS:
        for n in sorted({r["n"] for r in rows}):
            for s in ("close", "reworded", "ood", "unanswerable"):
                cells = []
                for c in names:
                    r = by.get((domain, n, s, c))
                    if r is None:
                        cells.append("–")
                    elif "nothing" in r:
                        cells.append(f"{pct(r['nothing'])}% nothing")
                    elif c == "service":
                        cells.append(f"{pct(r['hit@1'])} / {pct(r['hit@3'])}")
                    else:
                        cells.append(f"{pct(r['hit@1'])} / {pct(r['hit@3'])} / {pct(r['hit@8'])}")
                out += f"| {domain} ({DOMAINS[domain][0]}) | {n:,} | {s} | " + " | ".join(cells) + " |\n"
    out += f"\nService recall arguments: `{data.get('service_kwargs')}`.\n"
    for split, part in data.get("locomo", {}).items():
        t = part["tables"]
        out += (f"\nLoCoMo {split} ({', '.join(part['conversations'])}), turn recall@5 / @10 in % "
                f"(k=10, recency off, neighbours 0):\n\n| category | n | hybrid | dense | bm25 |\n|---|---|---|---|---|\n")
        for cat in [*CATEGORY_ORDER, "ALL"]:
            if cat in t["hybrid"]:
                cells = [f"{pct(t[lg][cat]['turn_recall@5'], 1)} / {pct(t[lg][cat]['turn_recall@10'], 1)}"
                         for lg in ("hybrid", "dense", "bm25")]
                out += f"| {cat} | {t['hybrid'][cat]['n']} | " + " | ".join(cells) + " |\n"
    return out

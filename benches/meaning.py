"""Recall by meaning (issue 13): close and reworded questions, out-of-domain negatives and LoCoMo, each through
the library's defaults and the recall service's, on a tuning domain and a held-out one.

    python -m benches.run --parts meaning --n 1000 3000 [--embedder NAME] [--keep-index]

Sets (see `benches.lab.sets` for the split): the operations history (`benches.history`) with its close questions
(`long`) and `benches.reworded`'s reworded ones and out-of-domain negatives: the tuning domain; the household
history (`benches.household`): held out. LoCoMo: conversations 1-5 tuning, 6-10 held out.
What each row asks of the engine (recency's `now` pinned to the history's last day):
* `library`: `recall(q, k=8, now=END)`, everything else the library's defaults (hybrid, candidates 30,
  recency 30 days, neighbours 1); `library dense` / `library bm25`: the same with one leg;
* `service`: the MCP service's recall options with its default configuration and this embedder
  (`ServiceConfig().recall_options(calibrated_floors(model))`: k 3, candidates 8, identifier guard, the
  model's calibrated floors: for the int8 MiniLM the answer floor 0.425 rising 0.03 per tenfold passages
  above 6,000, and no passage floor), `now=END`; `service, no floor`: the same without either floor
  (`min_similarity`, `answer_floor`);
* `service, fixed answer floor`: `service, no floor` with the engine's `answer_floor` at `ANSWER_FLOOR`
  whatever the memory's size (`benches/fusion_spec.md`, "Relevance floor"), whatever the model's
  calibration: the service's floor before it grew with the memory, or for another embedder what that floor
  would do.
Every row uses one embedder (default: the service's int8 MiniLM, where the library's default is heading);
its memories are cached per model under `<history>/meaning-<model>/` and `benches/out/locomo-<model>/`.
A hit is the answer as a whole token in a returned passage's own text; "nothing" is an empty answer.
Time: 12 min 16 s cold on 2 shared cores (load 10-14), every memory indexed (LoCoMo too); 134 s cold on a
quiet machine (2026-12-01).
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

from . import household
from .harness import cache_is_current, mark_current, pct, read_jsonl
from .history import HISTORY_END
from .latency import OUT, run_child
from .locomo import CATEGORY_ORDER
from .locomo import load as load_locomo
from .locomo_recall import returned_turns
from .metrics import answer_pattern, turn_recall_table
from .synthetic import synthetic_root

DOMAINS = {"ops": ("tuning", HISTORY_END), "home": ("held-out", household.HISTORY_END)}
LOCOMO_SPLIT = 5   # conversations 1-5 tune, the rest are held out
# The answer-level floor of the int8 MiniLM (nothing when no passage reaches it; queries naming identifiers
# exempt): the engine's `answer_floor`, the service's calibrated default for that model.
ANSWER_FLOOR = 0.425


def service_kwargs(models=None) -> dict:
    """What the MCP service passes to `Engine.recall` with its default configuration and `models`' embedder
    (its calibrated floors, `convert.floors.calibrated_floors`): the fields of its `RecallOptions` that differ
    from the library's."""
    import dataclasses

    from funes_py import RecallOptions
    from funes_py.convert.floors import calibrated_floors
    from funes_py.server.config import ServiceConfig

    floors = calibrated_floors(models.embedder_name) if models is not None else None
    opts, base = ServiceConfig().recall_options(floors), RecallOptions()
    return {f.name: getattr(opts, f.name) for f in dataclasses.fields(opts) if getattr(opts, f.name) != getattr(base, f.name)}


def configs(now, models=None) -> dict[str, dict]:
    service = {**service_kwargs(models), "now": now}
    bare = {key: v for key, v in service.items() if key not in ("min_similarity", "answer_floor", "answer_floor_per_decade")}
    return {"library": {"k": 8, "now": now}, "library dense": {"k": 8, "now": now, "legs": "dense"},
            "library bm25": {"k": 8, "now": now, "legs": "bm25"}, "service": service,
            "service, no floor": bare, "service, fixed answer floor": {**bare, "answer_floor": ANSWER_FLOOR}}


def model_slug(stamp: str) -> str:
    """A directory-safe name for an embedder's stamp ("sentence-transformers/all-MiniLM-L6-v2-int8@c92c..." ->
    "all-minilm-l6-v2-int8-c92c..."), so each model build's memories are cached apart (a memory refuses
    another model, even one of the same name with other weights)."""
    return "".join(ch if ch.isalnum() or ch in "-." else "-" for ch in Path(stamp).name.lower().replace("@", "-"))


def indexed_memory(root: Path, embedder: str, keep_index: bool = False, stamp: str | None = None) -> Path:
    """The memory of the history under `root/src` indexed with `embedder`, at `root/meaning-<model>/memory`:
    indexed once in a child process (niced) and reused while the engine build is unchanged (`--keep-index`:
    whatever build wrote it). The child's timing is kept in `index-run.json` beside it."""
    cache = root / f"meaning-{model_slug(stamp or embedder)}"
    home = cache / "memory"
    if (cache / "index-run.json").exists() and (keep_index or cache_is_current(cache)):
        return home
    shutil.rmtree(cache, ignore_errors=True)
    cache.mkdir(parents=True)
    code = ("import json,sys,time\nfrom funes_py import Engine, Models\n"
            "m=Models.load(embedder=sys.argv[3])\n"
            "t=time.perf_counter(); r=Engine(sys.argv[1], m).index(sys.argv[2])\n"
            "print(json.dumps({'index_s':time.perf_counter()-t,'chunks':r.chunks_added}))\n")  # fmt: skip
    t = time.perf_counter()
    _, _, out = run_child(["nice", "-n", "10", sys.executable, "-c", code, str(home), str(root / "src"), embedder])
    (cache / "index-run.json").write_text(out.strip().splitlines()[-1])
    mark_current(cache)
    print(f"meaning: indexed {root.name} with {embedder} in {time.perf_counter() - t:.0f} s", file=sys.stderr, flush=True)
    return home


def embedder_of(models) -> str:
    """The name `Models.load(embedder=...)` loads `models` by (its stamp without the digest)."""
    return str(models.embedder_stamp).split("@")[0]


def indexed_household(n: int, models, keep_index: bool = False, seed: int = 7) -> tuple[Path, Path]:
    root = synthetic_root("household", n, seed)
    return root, indexed_memory(root, embedder_of(models), keep_index, models.embedder_stamp)


def indexed_ops(n: int, models, keep_index: bool = False, seed: int = 7) -> tuple[Path, Path]:
    root = synthetic_root("ops", n, seed)
    return root, indexed_memory(root, embedder_of(models), keep_index, models.embedder_stamp)


def locomo_memory(models, conv, keep_index: bool = False):
    """One LoCoMo conversation's memory with `models`' embedder (`benches/out/locomo-<model>/<conv>`)."""
    from funes_py import Engine

    cache = OUT / f"locomo-{model_slug(models.embedder_stamp)}" / conv.name
    if not (keep_index or cache_is_current(cache)):
        shutil.rmtree(cache, ignore_errors=True)
    eng = Engine(cache / "memory", models)
    eng.index(conv.src)
    mark_current(cache)
    return eng


def _ask(eng, text: str, answer: str | None, kwargs: dict) -> tuple[int | None, bool]:
    """(rank of the first passage holding the answer or None, whether nothing came back)."""
    hits = eng.recall(text, **kwargs)
    if answer is None:
        return None, not hits
    pat = answer_pattern(answer)
    return next((i + 1 for i, h in enumerate(hits) if pat.search(h.text)), None), not hits


def measure_history(eng, root: Path, domain: str, n: int, models=None) -> list[dict]:
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
    for name, kwargs in configs(now, models).items():
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
    convs = load_locomo()
    out = {}
    for split, part in (("tuning", convs[:LOCOMO_SPLIT]), ("held-out", convs[LOCOMO_SPLIT:])):
        results: dict[str, list] = {"hybrid": [], "dense": [], "bm25": []}
        for conv in part:
            eng = locomo_memory(models, conv, keep_index)
            for q in conv.questions:
                for legs in results:
                    results[legs].append((q.category_name, returned_turns(eng, q.question, legs), q.evidence_turns))
        out[split] = {"conversations": [c.name for c in part],
                      "tables": {legs: turn_recall_table(rows, ks=(1, 5, 10)) for legs, rows in results.items()}}
    return out


def run(ns: list[int], embedder: str | None = None, keep_index: bool = False, locomo: bool = True) -> dict:
    """Every set at every size through the real engine, with `embedder` (default: the service's,
    `funes_py.config.DEFAULT_EMBEDDER`, where the library's default is heading); memories indexed when
    missing or written by another engine build. Times each phase."""
    from funes_py import Engine, Models
    from funes_py.config import DEFAULT_EMBEDDER

    embedder = embedder or DEFAULT_EMBEDDER
    models = Models.load(embedder=embedder)
    rows, seconds = [], {}
    for n in ns:
        for domain, indexed in (("ops", indexed_ops), ("home", indexed_household)):
            t = time.perf_counter()
            root, home = indexed(n, models, keep_index)
            seconds[f"{domain}-{n} index"] = round(time.perf_counter() - t, 1)
            t = time.perf_counter()
            rows += measure_history(Engine(home, models), root, domain, n, models)
            seconds[f"{domain}-{n} recall"] = round(time.perf_counter() - t, 1)
            print(f"meaning: {domain}-{n} measured in {seconds[f'{domain}-{n} recall']:.0f} s", file=sys.stderr, flush=True)
    t = time.perf_counter()
    loco = measure_locomo(models, keep_index) if locomo else {}
    seconds["locomo"] = round(time.perf_counter() - t, 1)
    return {"rows": rows, "locomo": loco, "embedder": models.embedder_stamp, "seconds": seconds, "answer_floor": ANSWER_FLOOR,
            "service_kwargs": json.loads(json.dumps(service_kwargs(models), default=str))}


def render(data: dict) -> str:
    rows = data["rows"]
    names = ["library", "library dense", "library bm25", "service", "service, no floor", "service, fixed answer floor"]
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
                    elif c.startswith("service"):
                        cells.append(f"{pct(r['hit@1'])} / {pct(r['hit@3'])}")
                    else:
                        cells.append(f"{pct(r['hit@1'])} / {pct(r['hit@3'])} / {pct(r['hit@8'])}")
                out += f"| {domain} ({DOMAINS[domain][0]}) | {n:,} | {s} | " + " | ".join(cells) + " |\n"
    out += (f"\nEmbedder `{data.get('embedder')}`. Service recall arguments: `{data.get('service_kwargs')}`; "
            f"`service, no floor` leaves out both floors (`min_similarity`, `answer_floor`); `service, fixed answer floor` "
            f"is that row with the engine's answer floor at {data.get('answer_floor', ANSWER_FLOOR)} whatever the memory's "
            f"size: nothing when the query names no identifier and no passage reaches that cosine. Seconds per phase: "
            f"`{data.get('seconds')}`.\n")
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

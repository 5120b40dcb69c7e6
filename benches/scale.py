"""Recall as memories grow (issue 36): quality and cost of the same engine from 1,000 to 100,000 conversations
(about 6,000 to 700,000 passages), LoCoMo asked inside a haystack, and the curves in one chart.

    python -m benches.run --parts scale --n 1000 10000 100000 [--keep-index]

At each size N, on the held-out household history (`benches.household`, its memory cached by
`benches.meaning.indexed_household`; 100,000 conversations take about 40 minutes to index on 2 cores) and
the tuning ops history (`benches.history`):
* quality: close and reworded questions through the library's defaults and the service's (`meaning.configs`),
  hit@1/3/8, and the out-of-domain "nothing" rate of the service;
* LoCoMo in a haystack: a copy of the household memory (made once per size), each LoCoMo conversation
  indexed into it, its questions asked (turn recall@5/@10, k=10, recency off, as `locomo_recall`), the
  conversation forgotten again before the next;
* cost: `benches.cost.child` on the household memory: time to open, the first recall (the resident copy is
  read), RSS after it, one caller's p50/p99 and CPU per recall, recalls/s with 4 threads.
`charts/scale.png` draws each figure against the number of passages.
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

from .harness import pct
from .locomo import CATEGORY_ORDER
from .locomo import load as load_locomo
from .locomo_recall import returned_turns
from .meaning import indexed_household, indexed_ops, measure_history
from .metrics import turn_recall_table
from .paths import OUT

CHART = Path(__file__).resolve().parent / "charts" / "scale.png"
QUALITY_CONFIGS = ("library", "service")


def _quality(eng, root: Path, domain: str, n: int, models) -> list[dict]:
    rows = measure_history(eng, root, domain, n, models)
    return [r for r in rows if r["config"] in QUALITY_CONFIGS]


def _haystack(models, home: Path, n: int, convs) -> dict:
    """LoCoMo's conversations asked one at a time, each inside a fresh copy of `home` (copying the memory is
    far quicker than forgetting a conversation's sessions one by one, each a rewrite of the memory's files)."""
    from funes_py import Engine

    work = OUT / f"haystack-{n}"
    rows: list = []
    copies: list[float] = []
    for conv in convs:
        shutil.rmtree(work, ignore_errors=True)
        t = time.perf_counter()
        shutil.copytree(home, work)
        copies.append(time.perf_counter() - t)
        eng = Engine(work, models)
        eng.index(conv.src)
        for q in conv.questions:
            rows.append((q.category_name, returned_turns(eng, q.question, "hybrid"), q.evidence_turns))
        eng.close()
        print(f"scale: LoCoMo {conv.name} asked inside {n:,} conversations", file=sys.stderr, flush=True)
    shutil.rmtree(work, ignore_errors=True)
    return {"table": turn_recall_table(rows, ks=(5, 10)), "copy_s": max(copies, default=0.0),
            "conversations": [c.name for c in convs]}


def run(ns: list[int], keep_index: bool = True, locomo_conversations: int | None = None, seconds: float = 4.0,
        previous: dict | None = None, domains: tuple[str, ...] = ("home", "ops")) -> dict:
    """Every size in `ns`; `previous` (an earlier run's data) keeps its sizes that `ns` does not measure again,
    so 100,000 conversations (hours to index) can be measured apart from the small sizes. `domains`: the
    household history ("home", held out) and the ops history ("ops", tuning); the largest size may take
    the held-out one alone."""
    from funes_py import Engine, Models

    from . import cost

    models = Models.load()
    convs = load_locomo()[: locomo_conversations or None]
    prev = previous or {}
    out: dict = {"sizes": [s for s in prev.get("sizes", []) if s["n"] not in ns],
                 "quality": [r for r in prev.get("quality", []) if r["n"] not in ns],
                 "haystack": {k: v for k, v in prev.get("haystack", {}).items() if int(k) not in ns},
                 "cost": {k: v for k, v in prev.get("cost", {}).items() if int(k) not in ns}}
    kept = [s["n"] for s in out["sizes"]]
    if kept:  # where the kept sizes were measured: the earlier run's own note, else its provenance
        meta = prev.get("meta", {})
        out["earlier"] = prev.get("earlier") or {k: meta.get(k) for k in ("command", "date", "git", "machine", "loadavg")}
        out["earlier"]["sizes"] = kept
    for n in ns:
        t = time.perf_counter()
        home_root, home = indexed_household(n, models, keep_index)
        eng = Engine(home, models)
        rows = eng.status().rows
        out["sizes"].append({"n": n, "rows": rows, "index_s": round(time.perf_counter() - t, 1)})
        out["quality"] += _quality(eng, home_root, "home", n, models)
        eng.close()
        if "ops" in domains:
            ops_root, ops_home = indexed_ops(n, models, keep_index)
            ops = Engine(ops_home, models)
            out["quality"] += _quality(ops, ops_root, "ops", n, models)
            ops.close()
        out["cost"][str(n)] = cost.child(None, home, home_root / "questions.jsonl", 300, (1, 4), seconds)
        if n >= 10_000 and convs:
            out["haystack"][str(n)] = _haystack(models, home, n, convs)
        print(f"scale: {n:,} conversations measured", file=sys.stderr, flush=True)
    out["sizes"].sort(key=lambda s: s["n"])
    return out


def render(data: dict) -> str:
    sizes = data["sizes"]
    q = {(r["domain"], r["n"], r["set"], r["config"]): r for r in data["quality"]}
    out = ("hit@1 / @3 / @8 in % (library: k 8; service: k 3, its floors), the service's out-of-domain \"nothing\" rate; "
           "home = the household history (held out), ops = the operations history (tuning). LoCoMo R@5 / R@10: "
           "turn recall of its questions with their conversation indexed inside that memory.\n\n")  # fmt: skip
    earlier = data.get("earlier")
    if earlier:
        load = earlier.get("loadavg")
        out += (f"Rows of {', '.join(f'{n:,}' for n in earlier['sizes'])} conversations: an earlier run, `{earlier['command']}`, "
                f"{earlier['date']}, git {earlier['git']}, {earlier['machine']}"
                + (f", load average {load[0]:.1f} at the end" if load else "") + ".\n\n")  # fmt: skip
    out += ("| conversations | passages | home close library | home close service | home reworded library | "
            "home reworded service | home ood nothing | ops close library | ops reworded library | LoCoMo R@5 / R@10 |\n"
            "|---|---|---|---|---|---|---|---|---|---|\n")  # fmt: skip

    def cell(domain, n, s, c):
        r = q.get((domain, n, s, c))
        if r is None:
            return "–"
        if "nothing" in r:
            return f"{pct(r['nothing'])}%"
        return f"{pct(r['hit@1'])} / {pct(r['hit@3'])} / {pct(r['hit@8'])}"

    for s in sizes:
        n = s["n"]
        hay = data["haystack"].get(str(n))
        loco = "–" if not hay else f"{pct(hay['table']['ALL']['turn_recall@5'], 1)} / {pct(hay['table']['ALL']['turn_recall@10'], 1)}"
        out += (f"| {n:,} | {s['rows']:,} | {cell('home', n, 'close', 'library')} | {cell('home', n, 'close', 'service')} | "
                f"{cell('home', n, 'reworded', 'library')} | {cell('home', n, 'reworded', 'service')} | "
                f"{cell('home', n, 'ood', 'service')} | {cell('ops', n, 'close', 'library')} | "
                f"{cell('ops', n, 'reworded', 'library')} | {loco} |\n")  # fmt: skip
    out += ("\nCost on the household memory (`benches.cost`): open, the first recall (reads the resident copy), RSS after "
            "it, one caller's warm p50 / p99 and CPU per recall (`recall(q, k=8)`, library defaults), recalls/s with 4 "
            "threads. RSS per 100,000 passages: what the memory adds over the smallest size measured (the models and the "
            "runtime are the same at every size).\n\n| conversations | passages | open s | first recall s | RSS MB | "
            "RSS MB per 100,000 passages | "
            "p50 / p99 ms | CPU ms | 4 threads/s |\n|---|---|---|---|---|---|---|---|---|\n")  # fmt: skip
    first = next((data["cost"][str(s["n"])] for s in sizes if str(s["n"]) in data["cost"]), None)
    for s in sizes:
        c = data["cost"].get(str(s["n"]))
        if not c or first is None:
            continue
        grown = c["rows"] - first["rows"]
        per = f"{(c['rss_mb'] - first['rss_mb']) / grown * 100_000:.0f}" if grown > 0 else "–"
        four = next((p["recalls_per_s"] for p in c["parallel"] if p["threads"] == 4), 0)
        out += (f"| {s['n']:,} | {c['rows']:,} | {c['open_s']:.2f} | {c['first_s']:.2f} | {c['rss_mb']:.0f} | "
                f"{per} | {c['p50_ms']:.2f} / {c['p99_ms']:.2f} | {c['cpu_ms']:.2f} | "
                f"{four:.0f} |\n")  # fmt: skip
    for n, hay in data["haystack"].items():
        t = hay["table"]
        out += (f"\nLoCoMo inside {int(n):,} household conversations ({', '.join(hay['conversations'])}), turn recall@5 / "
                f"@10 in %:\n\n| category | n | hybrid |\n|---|---|---|\n")  # fmt: skip
        for cat in [*CATEGORY_ORDER, "ALL"]:
            if cat in t:
                out += f"| {cat} | {t[cat]['n']} | {pct(t[cat]['turn_recall@5'], 1)} / {pct(t[cat]['turn_recall@10'], 1)} |\n"
    if CHART.exists():
        out += f"\n![scale](charts/{CHART.name})\n"
    return out


def chart(data: dict) -> Path | None:
    """hit@k, LoCoMo, latency and RSS per passage against the number of passages, one figure."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    sizes = data["sizes"]
    rows = [s["rows"] for s in sizes]
    q = {(r["domain"], r["n"], r["set"], r["config"]): r for r in data["quality"]}
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for (domain, s, c, k), style in {("home", "close", "library", 1): "o-", ("home", "reworded", "library", 3): "s-",
                                      ("ops", "close", "library", 1): "o--", ("ops", "reworded", "library", 3): "s--"}.items():
        ys = [100 * q[(domain, x["n"], s, c)][f"hit@{k}"] for x in sizes if (domain, x["n"], s, c) in q]
        axes[0].plot(rows[: len(ys)], ys, style, label=f"{domain} {s} hit@{k}")  # fmt: skip
    hay = [(s["rows"], 100 * data["haystack"][str(s["n"])]["table"]["ALL"]["turn_recall@10"]) for s in sizes if str(s["n"]) in data["haystack"]]
    if hay:
        axes[0].plot(*zip(*hay, strict=True), "^-", label="LoCoMo R@10 in a haystack")
    axes[0].set(xscale="log", xlabel="passages", ylabel="%", title="quality")
    axes[0].legend(fontsize=8)
    cost = [(s["rows"], data["cost"][str(s["n"])]) for s in sizes if str(s["n"]) in data["cost"]]
    axes[1].plot([r for r, _ in cost], [c["p50_ms"] for _, c in cost], "o-", label="p50")
    axes[1].plot([r for r, _ in cost], [c["p99_ms"] for _, c in cost], "s-", label="p99")
    axes[1].plot([r for r, _ in cost], [c["cpu_ms"] for _, c in cost], "^-", label="CPU per recall")
    axes[1].set(xscale="log", xlabel="passages", ylabel="ms", title="one warm recall")
    axes[1].legend(fontsize=8)
    axes[2].plot([r for r, _ in cost], [c["rss_mb"] for _, c in cost], "o-", label="RSS MB")
    axes[2].plot([r for r, _ in cost], [c["first_s"] * 100 for _, c in cost], "s-", label="first recall, 1/100 s")
    axes[2].set(xscale="log", xlabel="passages", title="memory held")
    axes[2].legend(fontsize=8)
    fig.tight_layout()
    CHART.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(CHART, dpi=90)
    return CHART

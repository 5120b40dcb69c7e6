"""The relevance floor: which `min_similarity` (and whether `identifier_guard`) lets recall say "nothing" to a
question about something never discussed, without losing the answers to real questions.

Measured once per question, simulated per threshold. The engine fuses the two legs, keeps the best
`candidates` (30 distinct texts, `search::repeats`), then drops passages under the floor (and, with the guard,
passages naming none of the query's identifiers), then ranks what is left, one copy of each text. So one recall with k = candidates and no floor returns the whole
pool in rank order, each passage with its cosine `similarity`, and the floored top 3 for any threshold is the
pool filtered by similarity, in the same order: `curve` computes it without asking the engine again.
`check` asks the engine with the recommended setting to confirm the simulation.

Recency is off (half_life_days=0), as in the quality rows. Questions: the history's 100 answerable and 100
unanswerable questions, long and short phrasings (400 queries per history).
"""

from __future__ import annotations

from collections.abc import Sequence

from .harness import pct, read_jsonl
from .metrics import answer_pattern

THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(19))   # 0.00 .. 0.90
POOL = 30          # = the default candidates: k=POOL returns the whole fused pool
MIN_NOTHING = 0.80  # share of unanswerable queries that must get "nothing"
MAX_LOSS = 0.01     # hit@3 the floor may cost on answerable queries (one point)
STYLES = ("long", "short")


# ---------------------------------------------------------------------------------------------------
# Pure: records -> curve -> recommendation

def floored(sims: Sequence[float], threshold: float | None) -> list[int]:
    """Indices of the pool entries that survive the floor, in rank order (None: no floor)."""
    return [i for i, s in enumerate(sims) if threshold is None or s >= threshold]


def curve_point(answerable: Sequence[dict], unanswerable: Sequence[dict], threshold: float | None) -> dict:
    """One threshold. `answerable`: [{"sims": [...], "hits": [bool, ...]}] per query, the pool in rank order
    (hits: the passage holds the answer); `unanswerable`: [{"sims": [...]}].
    Returns hit@3 and the share answered "nothing" for both kinds of query."""
    hit3 = empty_a = 0
    for rec in answerable:
        kept = floored(rec["sims"], threshold)
        hit3 += any(rec["hits"][i] for i in kept[:3])
        empty_a += not kept
    nothing = sum(1 for rec in unanswerable if not floored(rec["sims"], threshold))
    na, nu = len(answerable), len(unanswerable)
    return {"threshold": threshold, "hit@3": hit3 / na if na else 0.0,
            "answerable_nothing": empty_a / na if na else 0.0, "unanswerable_nothing": nothing / nu if nu else 0.0}


def curve(answerable: Sequence[dict], unanswerable: Sequence[dict], thresholds=THRESHOLDS) -> dict:
    """{"baseline": point without floor, "points": [point per threshold]}."""
    return {"baseline": curve_point(answerable, unanswerable, None),
            "points": [curve_point(answerable, unanswerable, t) for t in thresholds]}


def recommend(curves: dict[str, dict[str, dict]], baseline_hit3: dict[str, float],
              min_nothing: float = MIN_NOTHING, max_loss: float = MAX_LOSS) -> dict:
    """Pick (guard, threshold) from `curves[guard][n]` (guard "off"/"on"; each a `curve`) so that at every
    history size the unanswerable queries get "nothing" at least `min_nothing` of the time while hit@3 stays
    within `max_loss` of `baseline_hit3[n]` (no floor, no guard). Among the settings that qualify, the most
    protective (highest worst-case "nothing" share), then the smallest loss, then the higher floor (it also
    guards queries that name no identifier, which the guard cannot), guard off before on. When none qualifies, the best "nothing" share within the loss budget, with met=False."""
    options = []
    for guard, by_n in curves.items():
        if not by_n:
            continue
        thresholds = [p["threshold"] for p in next(iter(by_n.values()))["points"]]
        for i, t in enumerate(thresholds):
            pts = {n: c["points"][i] for n, c in by_n.items()}
            nothing = min(p["unanswerable_nothing"] for p in pts.values())
            loss = max(baseline_hit3[n] - p["hit@3"] for n, p in pts.items())
            options.append({"guard": guard == "on", "threshold": t, "nothing": nothing, "loss": loss,
                            "qualifies": nothing >= min_nothing and loss <= max_loss + 1e-9})
    within = [o for o in options if o["loss"] <= max_loss + 1e-9]
    if not within:
        return {"met": False, "reason": "every setting loses more than the hit@3 budget", "options": options}
    best = max(within, key=lambda o: (o["nothing"], -o["loss"], o["threshold"], not o["guard"]))
    off = [o for o in within if not o["guard"]]
    best_off = max(off, key=lambda o: (o["nothing"], -o["loss"], o["threshold"])) if off else None
    qualifying = [o for o in options if o["qualifies"]]
    ranges = {}
    for g in (False, True):
        ts = [o["threshold"] for o in qualifying if o["guard"] == g]
        ranges["on" if g else "off"] = [min(ts), max(ts)] if ts else None
    return {"met": best["qualifies"], "min_similarity": best["threshold"], "identifier_guard": best["guard"],
            "nothing": best["nothing"], "loss": best["loss"], "qualifying_range": ranges, "best_without_guard": best_off,
            "criteria": {"min_nothing": min_nothing, "max_loss": max_loss}}


# ---------------------------------------------------------------------------------------------------
# Measuring

def _records(eng, queries: list[dict], style: str, guard: bool, answerable: bool) -> list[dict]:
    out = []
    for q in queries:
        hits = eng.recall(q[style], k=POOL, candidates=POOL, half_life_days=0.0, neighbors=0, identifier_guard=guard)
        sims = [round(h.similarity, 4) for h in hits]
        rec = {"qid": q["qid"], "top": sims[0] if sims else None, "sims": sims}
        if answerable:
            pattern = answer_pattern(q["answer"])
            rec["hits"] = [bool(pattern.search(h.text)) for h in hits]
        out.append(rec)
    return out


def measure(eng, root) -> dict:
    """Per style and guard setting, the pool records of every answerable and unanswerable query."""
    real, absent = read_jsonl(root / "questions.jsonl"), read_jsonl(root / "unanswerable.jsonl")
    return {("on" if g else "off") + ":" + s: {"answerable": _records(eng, real, s, g, True),
                                             "unanswerable": _records(eng, absent, s, g, False)}
            for g in (False, True) for s in STYLES}  # fmt: skip


def _pooled(records: dict, guard: str) -> tuple[list, list]:
    a = [r for s in STYLES for r in records[f"{guard}:{s}"]["answerable"]]
    u = [r for s in STYLES for r in records[f"{guard}:{s}"]["unanswerable"]]
    return a, u


def check(eng, root, threshold: float, guard: bool) -> dict:
    """The recommended setting asked of the engine itself (k=8): hit@3 and "nothing" share, pooled styles."""
    real, absent = read_jsonl(root / "questions.jsonl"), read_jsonl(root / "unanswerable.jsonl")
    kw = {"k": 8, "half_life_days": 0.0, "neighbors": 0, "min_similarity": threshold, "identifier_guard": guard}
    hit3 = sum(any(answer_pattern(q["answer"]).search(h.text) for h in eng.recall(q[s], **kw)[:3]) for s in STYLES for q in real)
    nothing = sum(not eng.recall(q[s], **kw) for s in STYLES for q in absent)
    return {"threshold": threshold, "identifier_guard": guard, "hit@3": hit3 / (2 * len(real)),
            "unanswerable_nothing": nothing / (2 * len(absent))}


def run(eng_for, histories: list[tuple[int, object]]) -> dict:
    per_n, curves, baseline = {}, {"off": {}, "on": {}}, {}
    engines = {}
    for n, (root, home, _) in histories:
        eng = engines[n] = eng_for(home)
        records = measure(eng, root)
        entry = {"records": records, "curves": {}}
        for guard in ("off", "on"):
            a, u = _pooled(records, guard)
            curves[guard][str(n)] = entry["curves"][guard] = curve(a, u)
            for s in STYLES:
                r = records[f"{guard}:{s}"]
                entry["curves"][f"{guard}:{s}"] = curve(r["answerable"], r["unanswerable"])
        baseline[str(n)] = entry["curves"]["off"]["baseline"]["hit@3"]
        per_n[str(n)] = entry
    rec = recommend(curves, baseline)
    checks = {}
    if "min_similarity" in rec:
        for n, (root, _, _) in histories:
            checks[str(n)] = check(engines[n], root, rec["min_similarity"], rec["identifier_guard"])
    return {"per_n": per_n, "baseline_hit@3": baseline, "recommendation": rec, "check": checks}


# ---------------------------------------------------------------------------------------------------
# Rendering

def render(data: dict) -> str:
    out = ""
    for n, entry in data["per_n"].items():
        c = entry["curves"]
        out += (f"\nN={int(n):,}: 100 answerable and 100 unanswerable questions, long / short phrasing. "
                f"Without floor or guard: hit@3 {pct(c['off:long']['baseline']['hit@3'])} / "
                f"{pct(c['off:short']['baseline']['hit@3'])}.\n\n")
        out += ("| min_similarity | unanswerable → nothing | hit@3 | answerable → nothing | "
                "with identifier_guard: unanswerable → nothing | hit@3 |\n|---|---|---|---|---|---|\n")
        for i, t in enumerate(THRESHOLDS):
            cell = {}
            for g in ("off", "on"):
                lo, sh = c[f"{g}:long"]["points"][i], c[f"{g}:short"]["points"][i]
                cell[g] = (f"{pct(lo['unanswerable_nothing'])} / {pct(sh['unanswerable_nothing'])}",
                           f"{pct(lo['hit@3'])} / {pct(sh['hit@3'])}",
                           f"{pct(lo['answerable_nothing'])} / {pct(sh['answerable_nothing'])}")
            out += f"| {t:.2f} | {cell['off'][0]} | {cell['off'][1]} | {cell['off'][2]} | {cell['on'][0]} | {cell['on'][1]} |\n"
    rec = data["recommendation"]
    if "min_similarity" in rec:
        verdict = "meets" if rec["met"] else "does NOT meet"
        out += (f"\n**Recommended default: min_similarity={rec['min_similarity']:.2f}, identifier_guard="
                f"{'on' if rec['identifier_guard'] else 'off'}** ({verdict} the bar: unanswerable → nothing ≥ "
                f"{pct(rec['criteria']['min_nothing'])}% while hit@3 drops ≤ {pct(rec['criteria']['max_loss'])} point, "
                f"at every N, long and short pooled): worst-case nothing {pct(rec['nothing'], 1)}%, "
                f"worst-case hit@3 change {0.0 - 100 * rec['loss']:+.1f} points against no floor and no guard. Floors that qualify: guard off "
                f"{_range(rec['qualifying_range']['off'])}, guard on {_range(rec['qualifying_range']['on'])}.\n")
        off = rec.get("best_without_guard")
        if off and rec["identifier_guard"]:
            out += (f"- without the guard the best floor within the hit@3 budget is {off['threshold']:.2f}: "
                    f"unanswerable → nothing {pct(off['nothing'], 1)}% (worst N).\n")
        for n, ch in data.get("check", {}).items():
            out += (f"- checked on the engine at N={int(n):,} (k=8, the setting above): hit@3 {pct(ch['hit@3'], 1)}%, "
                    f"unanswerable → nothing {pct(ch['unanswerable_nothing'], 1)}%\n")
    else:
        out += f"\nNo setting stays within the hit@3 budget: {rec.get('reason')}\n"
    return out


def _range(r) -> str:
    return "none" if not r else (f"{r[0]:.2f}" if r[0] == r[1] else f"{r[0]:.2f}–{r[1]:.2f}")

"""LoCoMo turn-level recall: each of the ten conversations indexed as its own memory
(`benches/out/locomo/<conv>/memory`, cached while the engine is unchanged), its own questions asked.

Each question: `recall(question, k=10, half_life_days=0, neighbors=0, legs=...)`; the hits' `turn_uuid`s in
rank order are the returned turns, scored on the first 10 distinct turns (`metrics.turn_recall_table`; when
two passages share a turn and fewer than 10 distinct turns come back, the question is asked again with k=20).
Recency is off: LoCoMo questions are about any session, and its timestamps are the conversation's own.
Baselines beside the rows: plain BM25 over turns (`locomo.bm25_reference()`) and the LoCoMo paper's
DRAGON dense retriever (recall@5 56.7, recall@10 66.2; no @1 published).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from .harness import cache_is_current, mark_current, pct, short
from .latency import OUT
from .locomo import CATEGORY_ORDER, bm25_reference, load
from .metrics import first_distinct, turn_recall_table

LEGS = ("hybrid", "dense", "bm25")
KS = (1, 5, 10)
DRAGON = {"turn_recall@5": 0.567, "turn_recall@10": 0.662}


def returned_turns(eng, question: str, legs: str, k: int = 10) -> list[str]:
    hits = eng.recall(question, k=k, half_life_days=0.0, neighbors=0, legs=legs)
    turns = [h.turn_uuid for h in hits]
    if len(hits) == k and len(first_distinct(turns, k)) < k:
        turns = [h.turn_uuid for h in eng.recall(question, k=2 * k, half_life_days=0.0, neighbors=0, legs=legs)]
    return first_distinct(turns, k)


def _memory(models, conv, keep_index: bool, cache_root: Path | None = None):
    from funes_py import Engine

    cache = (cache_root or OUT / "locomo") / conv.name
    if not (keep_index or cache_is_current(cache)):
        shutil.rmtree(cache, ignore_errors=True)
    eng = Engine(cache / "memory", models)
    t = time.perf_counter()
    rep = eng.index(conv.src)
    info = {"turns_parsed": rep.turns, "chunks_added": rep.chunks_added, "files": rep.files,
            "seconds": time.perf_counter() - t, "rows": eng.status().rows}
    mark_current(cache)
    return eng, info


def _miss(eng, q) -> dict:
    """A question whose evidence is not in the hybrid top 10: the evidence text and the top 3 passages."""
    evidence = []
    for turn in q.evidence_turns[:2]:
        session = turn.rsplit("-", 1)[0]
        try:
            evidence += [short(t.text, 200) for t in eng.get(session, turn, window=0) if t.turn_uuid == turn]
        except Exception as e:  # noqa: BLE001 - error analysis only; a missing turn is worth seeing
            evidence.append(f"<{type(e).__name__}: {e}>")
    top = eng.recall(q.question, k=3, half_life_days=0.0, neighbors=0)
    return {"qid": q.qid, "category": q.category_name, "question": q.question, "answer": q.answer,
            "evidence_turns": list(q.evidence_turns), "evidence": evidence,
            "top3": [{"turn_uuid": h.turn_uuid, "similarity": round(h.similarity, 3), "text": short(h.text, 200)}
                     for h in top]}


def run(models, conversations: int | None = None, keep_index: bool = False, cache_root: Path | None = None) -> dict:
    """`cache_root`: where the memories live (default benches/out/locomo; another embedder needs its own)."""
    convs = load()[:conversations] if conversations else load()
    results: dict[str, list] = {legs: [] for legs in LEGS}
    index, misses = {}, []
    for conv in convs:
        eng, index[conv.name] = _memory(models, conv, keep_index, cache_root)
        for q in conv.questions:
            for legs in LEGS:
                turns = returned_turns(eng, q.question, legs)
                results[legs].append((q.category_name, turns, q.evidence_turns))
                if legs == "hybrid" and not set(turns) & set(q.evidence_turns) and len(misses) < 40:
                    misses.append(_miss(eng, q))
    tables = {legs: turn_recall_table(rows, ks=KS) for legs, rows in results.items()}
    try:
        ref = bm25_reference()
    except OSError:
        ref = {}
    return {"conversations": [c.name for c in convs], "questions": len(results["hybrid"]), "tables": tables,
            "bm25_reference": ref, "dragon": DRAGON, "index": index, "misses": misses,
            "settings": {"k": 10, "half_life_days": 0.0, "neighbors": 0, "candidates": "default (30)"}}


def render(data: dict) -> str:
    t, ref = data["tables"], data.get("bm25_reference", {})
    all10 = len(data["conversations"]) == 10
    out = (f"{data['questions']:,} questions over {len(data['conversations'])} conversation(s)"
           f"{'' if all10 else ' (a subset: the published baselines are over all 10)'}; turn recall in %.\n\n")
    out += "| retriever | recall@1 | recall@5 | recall@10 | hit@10 |\n|---|---|---|---|---|\n"
    for legs in LEGS:
        a = t[legs]["ALL"]
        out += (f"| funes_py {legs} | {pct(a['turn_recall@1'], 1)} | {pct(a['turn_recall@5'], 1)} | "
                f"{pct(a['turn_recall@10'], 1)} | {pct(a['turn_hit@10'], 1)} |\n")
    if ref:
        out += (f"| plain BM25 over turns (reference) | {pct(ref['turn_recall@1']['ALL'], 1)} | "
                f"{pct(ref['turn_recall@5']['ALL'], 1)} | {pct(ref['turn_recall@10']['ALL'], 1)} | "
                f"{pct(ref['turn_hit@10']['ALL'], 1)} |\n")
    out += f"| DRAGON (LoCoMo paper) | – | {pct(DRAGON['turn_recall@5'], 1)} | {pct(DRAGON['turn_recall@10'], 1)} | – |\n"
    out += "\nPer category, recall@5 / recall@10:\n\n| category | n | " + " | ".join(LEGS) + " | BM25 reference |\n"
    out += "|---|---|" + "---|" * (len(LEGS) + 1) + "\n"
    for cat in [*CATEGORY_ORDER, "ALL"]:
        if cat not in t["hybrid"]:
            continue
        cells = [f"{pct(t[lg][cat]['turn_recall@5'], 1)} / {pct(t[lg][cat]['turn_recall@10'], 1)}" for lg in LEGS]
        r = (f"{pct(ref['turn_recall@5'][cat], 1)} / {pct(ref['turn_recall@10'][cat], 1)}"
             if ref and cat in ref.get("turn_recall@5", {}) else "–")
        out += f"| {cat} | {t['hybrid'][cat]['n']} | " + " | ".join(cells) + f" | {r} |\n"
    return out


def render_misses(data: dict, limit: int = 4) -> str:
    ms = data.get("misses", [])[:limit]
    if not ms:
        return ""
    out = "LoCoMo hybrid misses (no evidence turn among the first 10), first few:\n\n"
    for m in ms:
        out += f"- {m['qid']} ({m['category']}): \"{short(m['question'], 120)}\" → {short(str(m['answer']), 60)!r}\n"
        out += "".join(f"  evidence: {e}\n" for e in m["evidence"])
        out += "".join(f"  top {i}: sim {t['similarity']:.3f}: {t['text']}\n" for i, t in enumerate(m["top3"], 1))
    return out

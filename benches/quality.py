"""Quality on the synthetic history: hit@1/3/8 for each leg alone and fused, long and short questions.

Historical benchmark: recency is off (half_life_days=0) in the main rows, because the questions ask about
facts spread evenly over a year and none is "recent". One extra row turns recency on as a user would have it
(half-life 30 days, `now` pinned to the history's last day) to show what the default costs here, and one
more is what the MCP service answers with its defaults (candidates 8, identifier guard, recency on).
Each recall: k=8, candidates 30 (the default), neighbours 0; a hit is the answer as a whole token in a
returned passage's own text (`metrics.hit_at_k`).
"""

from __future__ import annotations

from funes_py.server.config import DEFAULT_RECALL_CANDIDATES, DEFAULT_RECALL_IDENTIFIER_GUARD

from .harness import pct, read_jsonl, short
from .history import HISTORY_END
from .metrics import answer_pattern, hit_rates

STYLES = ("long", "short")
# name -> recall keyword arguments (besides the query); order = table columns.
CONFIGS = {
    "dense": {"legs": "dense", "half_life_days": 0.0},
    "bm25": {"legs": "bm25", "half_life_days": 0.0},
    "hybrid": {"legs": "hybrid", "half_life_days": 0.0},
    "hybrid+recency": {"legs": "hybrid", "half_life_days": 30.0, "now": HISTORY_END},
    # What the MCP service answers with its defaults (it returns k=3: read @1 and @3).
    "service": {"candidates": DEFAULT_RECALL_CANDIDATES, "identifier_guard": DEFAULT_RECALL_IDENTIFIER_GUARD,
                "half_life_days": 30.0, "now": HISTORY_END},  # fmt: skip
}
K = 8


def first_rank(texts: list[str], answer: str) -> int | None:
    """1-based rank of the first passage holding the answer, None when none of them does."""
    pattern = answer_pattern(answer)
    return next((i + 1 for i, t in enumerate(texts) if pattern.search(t)), None)


def hit_at_k_curve(ranks: list[int | None], ks=range(1, K + 1)) -> list[float]:
    """Share of questions whose first hit is within k, for each k (the hit@k-against-k chart)."""
    n = len(ranks)
    return [sum(1 for r in ranks if r is not None and r <= k) / n if n else 0.0 for k in ks]


def measure(eng, root, n: int) -> tuple[list[dict], list[dict]]:
    """Rows (one per style and config) and the hybrid misses (hit@3) with their top 3, for one history."""
    questions = read_jsonl(root / "questions.jsonl")
    rows, misses = [], []
    for style in STYLES:
        for name, kwargs in CONFIGS.items():
            pairs, ranks = [], []
            for q in questions:
                hits = eng.recall(q[style], k=K, neighbors=0, **kwargs)
                texts = [h.text for h in hits]
                pairs.append((texts, q["answer"]))
                rank = first_rank(texts, q["answer"])
                ranks.append(rank)
                if name == "hybrid" and (rank is None or rank > 3):
                    misses.append({"n": n, "style": style, "qid": q["qid"], "kind": q["kind"], "question": q[style],
                                   "answer": q["answer"], "rank": rank,
                                   "top3": [{"text": short(h.text, 240), "similarity": round(h.similarity, 3),
                                             "score": round(h.score, 5), "session_id": h.session_id,
                                             "right_session": h.session_id == q["session_id"]} for h in hits[:3]]})  # fmt: skip
            rates = hit_rates(pairs, ks=(1, 3, 8))
            rates["questions"] = rates.pop("n")
            rows.append({"n": n, "style": style, "config": name, **rates, "ranks": ranks})
    return rows, misses


def run(eng_for, histories: list[tuple[int, object]]) -> dict:
    """`eng_for(home)` opens an engine; `histories` is [(n, (root, home, index_info)), ...]."""
    rows, misses = [], []
    for n, (root, home, _) in histories:
        r, m = measure(eng_for(home), root, n)
        rows += r
        misses += m
    return {"half_life_days": 0.0, "k": K, "candidates": "default (30)", "neighbors": 0, "rows": rows, "misses": misses}


def render(data: dict) -> str:
    cols = list(CONFIGS)
    head = "| conversations | questions | " + " | ".join(f"{c} @1 / @3 / @8" for c in cols) + " |\n"
    head += "|---|---|" + "---|" * len(cols) + "\n"
    by = {(r["n"], r["style"], r["config"]): r for r in data["rows"]}
    body = ""
    for n in sorted({r["n"] for r in data["rows"]}):
        for style in STYLES:
            cells = []
            for c in cols:
                r = by.get((n, style, c))
                cells.append("–" if r is None else f"{pct(r['hit@1'])} / {pct(r['hit@3'])} / {pct(r['hit@8'])}")
            body += f"| {n:,} | {style} | " + " | ".join(cells) + " |\n"
    note = ("\nhit@k in % of 100 questions. dense / bm25 / hybrid: half_life_days=0 (historical benchmark: the "
            "facts are spread over a year, recency would only add noise); hybrid+recency: the default half-life "
            "of 30 days (recency takes at most RECENCY_SHARE, 2%, of a score), `now` pinned to the history's end "
            "(2026-11-20); service: the MCP service's defaults, candidates 8 per leg and the identifier guard, "
            "recency as in hybrid+recency (the service returns 3 passages: read @1 and @3). k=8, candidates 30 "
            "unless said, neighbours 0.\n")  # fmt: skip
    return head + body + note


def render_misses(data: dict, limit: int = 5) -> str:
    """A few hybrid misses at the largest N, long questions first: question, answer, where it ranked, top 3."""
    misses = data.get("misses", [])
    if not misses:
        return "No hybrid misses at hit@3.\n"
    top_n = max(m["n"] for m in misses)
    chosen = sorted((m for m in misses if m["n"] == top_n), key=lambda m: (m["style"] != "long", m["qid"]))[:limit]
    out = f"Hybrid misses at hit@3, N={top_n:,} ({sum(m['n'] == top_n for m in misses)} in all; first {len(chosen)}):\n\n"
    for m in chosen:
        rank = "not in top 8" if m["rank"] is None else f"rank {m['rank']}"
        out += f"- {m['qid']} ({m['kind']}, {m['style']}): \"{m['question']}\" → `{m['answer']}`, {rank}\n"
        for i, t in enumerate(m["top3"], 1):
            mark = "same conversation" if t["right_session"] else "other conversation"
            out += f"  {i}. sim {t['similarity']:.3f}, {mark}: {t['text']}\n"
    return out

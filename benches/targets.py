"""The issue's targets checked against the result files (pure: dicts in, rows out).

A target is judged only at the scale it names: a quick run at 1,000 conversations reports its figure with
`met` None ("not measured at that size") rather than claiming a target that was set for 10,000.
"""

from __future__ import annotations

TARGET_N = 10_000


def _row(target: str, observed: str, met: bool | None) -> dict:
    return {"target": target, "observed": observed, "met": met}


def _at(n: int, ok: bool) -> bool | None:
    return ok if n >= TARGET_N else None


def evaluate(results: dict) -> list[dict]:
    """`results`: {part: data} as written by benches.run (any subset). Returns [{target, observed, met}]."""
    out: list[dict] = []
    q = results.get("quality")
    if q and q.get("rows"):
        hyb = [r for r in q["rows"] if r["config"] == "hybrid"]
        long_rows = [r for r in hyb if r["style"] == "long"]
        if long_rows:
            r = max(long_rows, key=lambda r: r["n"])
            at = f"{r['n']:,} long, hybrid, no reranker"
            out.append(_row("hit@3 ≥ 99% at 10,000 (long questions)", f"{100 * r['hit@3']:.0f}% ({at})",
                            _at(r["n"], r["hit@3"] >= 0.99)))
            out.append(_row("hit@1 ≥ 90% at 10,000 (long questions)", f"{100 * r['hit@1']:.0f}% ({at})",
                            _at(r["n"], r["hit@1"] >= 0.90)))
        worst = min(hyb, key=lambda r: (r["hit@8"], -r["n"]))
        top_n = max(r["n"] for r in hyb)
        out.append(_row("hit@8 = 100% (hybrid, every size and phrasing)",
                        f"worst {100 * worst['hit@8']:.0f}% ({worst['n']:,} {worst['style']})",
                        _at(top_n, all(r["hit@8"] >= 1.0 for r in hyb))))
    lo = results.get("locomo")
    if lo and lo.get("tables"):
        a = lo["tables"]["hybrid"]["ALL"]
        full = len(lo.get("conversations", [])) == 10
        sub = "" if full else f" ({len(lo.get('conversations', []))} of 10 conversations)"
        out.append(_row("LoCoMo turn recall@5 ≥ 65%", f"{100 * a['turn_recall@5']:.1f}%{sub}",
                        a["turn_recall@5"] >= 0.65 if full else None))
        out.append(_row("LoCoMo turn recall@10 ≥ 75%", f"{100 * a['turn_recall@10']:.1f}%{sub}",
                        a["turn_recall@10"] >= 0.75 if full else None))
    lat = results.get("latency")
    if lat and lat.get("rows"):
        r = max(lat["rows"], key=lambda r: r["n"])
        w = r["in_process_ms"]
        at = f" at {r['n']:,}"
        out.append(_row("in-process p50 < 10 ms at 10,000", f"{w['p50']:.1f} ms{at}", _at(r["n"], w["p50"] < 10)))
        out.append(_row("in-process p99 < 40 ms at 10,000", f"{w['p99']:.1f} ms{at}", _at(r["n"], w["p99"] < 40)))
        out.append(_row("≥ 20x faster than a process per call (p50)", f"{r['ratio_p50']:.0f}x{at}",
                        _at(r["n"], r["ratio_p50"] >= 20)))
    b = results.get("backfill")
    if b and b.get("rows"):
        r = max(b["rows"], key=lambda r: r["n"])
        out.append(_row("backfill of 10,000 conversations < 5 min", f"{r['index_s']:.0f} s for {r['n']:,}",
                        _at(r["n"], r["index_s"] < 300)))
        added = sum(x["reindex_chunks_added"] for x in b["rows"])
        out.append(_row("re-index of an unchanged history adds nothing", f"{added} chunks added", added == 0))
    f = results.get("fresh")
    if f and f.get("runs"):
        worst = max(x["total_s"] for x in f["runs"])
        found = all(x["rank"] is not None for x in f["runs"])
        out.append(_row("new conversation searchable < 2 s at 10,000",
                        f"worst {worst:.2f} s of {len(f['runs'])} at {f['n']:,}{'' if found else ', NOT all found'}",
                        _at(f["n"], worst < 2.0 and found)))
    fl = results.get("floor")
    if fl and fl.get("recommendation", {}).get("min_similarity") is not None:
        rec = fl["recommendation"]
        out.append(_row("a floor that says nothing to ≥ 80% of unanswerable, ≤ 1 point of hit@3",
                        f"min_similarity {rec['min_similarity']:.2f}, guard {'on' if rec['identifier_guard'] else 'off'}: "
                        f"{100 * rec['nothing']:.0f}% nothing, hit@3 {0.0 - 100 * rec['loss']:+.1f} pt",
                        rec["met"]))
    out += _korean(results.get("korean"))
    return out


def _hybrid_long(runs: list[dict], lang: str, config: str) -> dict | None:
    """The hybrid, long-question row of the largest history of `lang` measured with `config`."""
    rows = [r for run in runs if run["lang"] == lang and run["model_config"] == config for r in run["rows"]
            if r["config"] == "hybrid" and r["style"] == "long"]  # fmt: skip
    return max(rows, key=lambda r: r["n"]) if rows else None


def _korean(k: dict | None) -> list[dict]:
    """Issue 14: Korean with e5 + bigram BM25, English with e5 against MiniLM, e5 int8 recall latency."""
    if not k or not k.get("runs"):
        return []
    runs, out = k["runs"], []
    ko = _hybrid_long(runs, "ko", "e5-bigram")
    if ko:
        at = f"{ko['n']:,} Korean long, e5 + bigram, hybrid"
        out.append(_row("Korean hit@3 ≥ 95% at 10,000 (e5 + bigram BM25)", f"{100 * ko['hit@3']:.0f}% ({at})",
                        _at(ko["n"], ko["hit@3"] >= 0.95)))
        out.append(_row("Korean hit@8 ≥ 99% at 10,000 (e5 + bigram BM25)", f"{100 * ko['hit@8']:.0f}% ({at})",
                        _at(ko["n"], ko["hit@8"] >= 0.99)))
    e5, mini = _hybrid_long(runs, "en", "e5-bigram"), _hybrid_long(runs, "en", "minilm-bigram")
    if e5 and mini and e5["n"] == mini["n"]:
        gap = 100 * (mini["hit@3"] - e5["hit@3"])
        out.append(_row("English with e5: hit@3 at most 2 points below MiniLM at 10,000",
                        f"e5 {100 * e5['hit@3']:.0f}% vs MiniLM {100 * mini['hit@3']:.0f}% ({e5['n']:,} long)",
                        _at(e5["n"], gap <= 2.0)))
    costs = [run for run in runs if run["lang"] == "ko" and run["model_config"] == "e5-bigram"]
    if costs:
        r = max(costs, key=lambda r: r["n"])
        p50 = r["cost"]["recall_ms"]["p50"]
        out.append(_row("e5 (int8) warm recall p50 ≤ 12 ms at 10,000", f"{p50:.1f} ms at {r['n']:,} (Korean)",
                        _at(r["n"], p50 <= 12.0)))
        out.append(_row("e5 backfill time reported", f"{r['index']['index_s']:.0f} s for {r['n']:,} Korean",
                        True))
    return out


def render(rows: list[dict]) -> str:
    mark = {True: "met", False: "**missed**", None: "not measured at that size"}
    return "| target | observed | |\n|---|---|---|\n" + "".join(
        f"| {r['target']} | {r['observed']} | {mark[r['met']]} |\n" for r in rows)

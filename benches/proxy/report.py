"""The proxy benchmark's section of benches/RESULTS.md, from its result JSON (pure)."""

from __future__ import annotations

from typing import Any

TARGETS = (
    # (label, getter, limit, unit)
    ("overhead p50 at 30K history", lambda r: r["overhead"]["30000"]["p50_ms"], 10, "ms"),
    ("overhead p95 at 30K history", lambda r: r["overhead"]["30000"]["p95_ms"], 25, "ms"),
    ("overhead p50 at 120K history", lambda r: r["overhead"]["120000"]["p50_ms"], 20, "ms"),
    ("added time to first streamed byte p95", lambda r: r["overhead"]["30000"]["ttfb_p95_ms"], 5, "ms"),
    ("archive write on the request path p95", lambda r: r["archive"]["append_p95_ms"], 5, "ms"),
    ("new 10 KB output found by recall(query)", lambda r: (r.get("freshness") or r["overhead"])["found_within_s"], 1.5, "s"),
    ("recall(query) p50, 2,000-message conversation", lambda r: r["recall"]["query_p50_ms"], 15, "ms"),
    ("recall(id) p50", lambda r: r["recall"]["id_p50_ms"], 3, "ms"),
    ("RSS, one warm tenant", lambda r: r["overhead"]["rss_mb"], 500, "MB"),
)


def _rank(r: int | None) -> str:
    return "-" if r is None else str(r)


def render(res: dict[str, Any]) -> str:
    m = res["meta"]
    runs, e = [], m
    while e:  # a part rerun keeps the others' figures: name every command that made the section
        runs.append(f"`{e['command']}` ({e['date']})")
        e = e.get("earlier")
    out = [f"## Agent-archive proxy{' (quick, 8K window)' if 'quick' in m['command'] else ''}", "",
           "Commands: " + "; ".join(reversed(runs)) + "  ", f"Machine: {m['machine']}  ",
           f"Run: {m['date']}, git {m['git']}, {m.get('seconds', 0)} s. Load average at the end: "
           + " / ".join(f"{x:.1f}" for x in m.get("loadavg", [])) + ".", ""]  # fmt: skip
    exp = res.get("experiment")
    if exp:
        out += [f"### The 9-turn experiment at a {exp['window'] // 1024}K window (scripted model)", "",
                "The model is the scripted engine (the tests' test double) with the `reader` policy: it answers from "
                "its prompt, follows an auto-recall hint by calling recall, and never searches the archive "
                "unprompted. Token counts are the double's (a quarter of the characters, plus 5 a message).", "",
                "| condition | refused | engine requests | tokens sent | history (sum over requests) | largest prompt | final history | mask batches | switches | recall calls | turn 8 answer |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]  # fmt: skip
        for cond, c in exp["conditions"].items():
            out.append(f"| {cond} | {c['refused']} | {c['engine_requests']} | {c['tokens_sent']:,} | {c['history_tokens']:,} | "
                       f"{c['max_prompt']:,} | {c['final_history']:,} | {c['mask_batches']} | {c['switches']} | "
                       f"{c['recall_calls']} | {c['answers'].get('turn 8', '')[:90]} |")  # fmt: skip
        out += ["", "Turn 9 answers: " + "; ".join(f"{k}: \"{c['answers'].get('turn 9', '')[:80]}\"" for k, c in exp["conditions"].items()), ""]
        if exp.get("probe"):
            out += ["Model-free probe: rank of the turn-1 output among the engine's recall hits (engine defaults, this conversation, among the messages archived before turn 8; "
                    "`-` = not found):", "", "| turn-8 query | hybrid | bm25 |", "|---|---:|---:|"]  # fmt: skip
            for q, r in exp["probe"].items():
                out.append(f"| {q} | {_rank(r['hybrid'])} | {_rank(r['bm25'])} |")
            top3 = sum(1 for r in exp["probe"].values() if r["hybrid"] is not None and r["hybrid"] <= 3)
            out += ["", f"Hybrid puts the turn-1 output in the top 3 for {top3} of {len(exp['probe'])} queries.", ""]
    if "overhead" in res:
        ov, rc, ar = res["overhead"], res["recall"], res["archive"]
        out += ["### Performance (scripted engine answering at once)", "", "| target | measured | limit | |", "|---|---:|---:|---|"]
        for label, get, limit, unit in TARGETS:
            try:
                v = get(res)
            except (KeyError, TypeError):
                v = None
            ok = v is not None and v <= limit
            out.append(f"| {label} | {'-' if v is None else v} {unit} | {limit} {unit} | {'met' if ok else 'MISSED'} |")
        out += ["", "Overhead = latency through the proxy minus the same client body sent straight to the engine "
                "(both with the body encoded before the clock starts); the proxy's own work per request (its "
                f"`server-timing` phases without the upstream call): p50 {ov['30000']['own_p50_ms']} ms at 30K, "
                f"{ov['120000']['own_p50_ms']} ms at 120K." + _phases(ov["30000"]),
                "", f"Histories: {ov['30000']['history_tokens']:,} tokens sent as {ov['30000']['sent_tokens']:,}; "
                f"{ov['120000']['history_tokens']:,} sent as {ov['120000']['sent_tokens']:,} (hidden outputs). "
                f"Steady-state requests measured: {ov['30000']['n']} and {ov['120000']['n']} (half of them streamed, for "
                f"the first-byte figure); requests that carried a new mask batch are left out. Archive append p50 "
                f"{ar['append_p50_ms']} ms; the fsync it is followed by when something is hidden costs "
                f"{ar['fsync_p50_ms']} ms p50 on this disk. recall(query): {rc['messages']:,} messages, "
                f"{rc['chunks']:,} chunks, indexed in {rc['index_s']} s; p95 {rc['query_p95_ms']} ms; recall(id) p95 "
                f"{rc['id_p95_ms']} ms.", ""]  # fmt: skip
    return "\n".join(out)


def _phases(row: dict[str, Any]) -> str:
    """The streamed requests' phases at 30K (p50), where the first-byte figure comes from."""
    phases = row.get("stream_phases_p50_ms")
    if not phases:
        return ""
    return " Streamed requests at 30K, p50 per phase up to the upstream's answer headers: " + ", ".join(
        f"{k} {v} ms" for k, v in phases.items()) + "."

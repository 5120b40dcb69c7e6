"""The RESULTS.md section writer and the target verdicts, on hand-made results. Pure Python: no engine."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benches.quality import first_rank, hit_at_k_curve  # noqa: E402
from benches.results import provenance, replace_section  # noqa: E402
from benches.targets import evaluate, render  # noqa: E402


def test_a_missing_section_is_appended_with_its_markers():
    doc = replace_section("# Results\n", "quality", "| a |\n")
    assert doc == "# Results\n\n<!-- bench:quality -->\n| a |\n<!-- /bench:quality -->\n"


def test_a_section_is_replaced_in_place_and_the_rest_is_kept():
    doc = "# R\n\nprose by hand\n\n<!-- bench:quality -->\nold\n<!-- /bench:quality -->\n\nmore prose\n"
    new = replace_section(doc, "quality", "new")
    assert new == "# R\n\nprose by hand\n\n<!-- bench:quality -->\nnew\n<!-- /bench:quality -->\n\nmore prose\n"
    assert replace_section(new, "quality", "new") == new          # idempotent


def test_sections_do_not_touch_each_other():
    doc = replace_section(replace_section("", "a", "one"), "b", "two")
    doc = replace_section(doc, "a", "uno")
    assert "uno" in doc and "two" in doc and "one" not in doc
    assert doc.index("bench:a") < doc.index("bench:b")


def test_a_body_with_backslashes_is_written_verbatim():
    doc = replace_section("<!-- bench:x -->\n<!-- /bench:x -->\n", "x", r"C:\new \1 path")
    assert r"C:\new \1 path" in doc


def test_provenance_names_command_and_machine():
    text = provenance({"command": "python -m benches.run --quick", "machine": "2 cores", "date": "2026-01-01 00:00 UTC",
                       "git": "abc123", "engine": "0.1.0+deadbeef", "seconds": 90.4, "quick": True})
    assert "`python -m benches.run --quick`" in text and "2 cores" in text and "quick mode" in text


def test_first_rank_and_the_hit_at_k_curve():
    assert first_rank(["nothing", "ticket MT-1040 open", "MT-1040"], "MT-1040") == 2
    assert first_rank(["MT-10400"], "MT-1040") is None
    assert hit_at_k_curve([1, 2, None, 8], ks=[1, 2, 8]) == [0.25, 0.5, 0.75]


def _quality_row(n, style, config, h1, h3, h8):
    return {"n": n, "style": style, "config": config, "hit@1": h1, "hit@3": h3, "hit@8": h8, "ranks": []}


def test_targets_are_judged_only_at_the_size_they_name():
    small = {"quality": {"rows": [_quality_row(1000, "long", "hybrid", 0.95, 1.0, 1.0)]}}
    rows = {r["target"]: r for r in evaluate(small)}
    assert rows["hit@3 ≥ 99% at 10,000 (long questions)"]["met"] is None
    big = {"quality": {"rows": [_quality_row(1000, "long", "hybrid", 0.95, 1.0, 1.0),
                                _quality_row(10000, "long", "hybrid", 0.85, 0.99, 1.0),
                                _quality_row(10000, "short", "hybrid", 0.9, 0.95, 0.98)]}}
    rows = {r["target"]: r for r in evaluate(big)}
    assert rows["hit@3 ≥ 99% at 10,000 (long questions)"]["met"] is True
    assert rows["hit@1 ≥ 90% at 10,000 (long questions)"]["met"] is False
    assert rows["hit@8 = 100% (hybrid, every size and phrasing)"]["met"] is False
    assert "98% (10,000 short)" in rows["hit@8 = 100% (hybrid, every size and phrasing)"]["observed"]
    assert "**missed**" in render(list(rows.values()))


def test_latency_and_fresh_targets():
    lat = {"rows": [{"n": 10000, "in_process_ms": {"p50": 8.0, "p99": 45.0}, "ratio_p50": 30.0}]}
    fresh = {"n": 10000, "runs": [{"total_s": 0.5, "rank": 1}, {"total_s": 1.2, "rank": None}]}
    rows = {r["target"]: r["met"] for r in evaluate({"latency": lat, "fresh": fresh})}
    assert rows["in-process p50 < 10 ms at 10,000"] is True
    assert rows["in-process p99 < 40 ms at 10,000"] is False
    assert rows["≥ 20x faster than a process per call (p50)"] is True
    assert rows["new conversation searchable < 2 s at 10,000"] is False    # one was never found

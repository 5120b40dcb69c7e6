"""The `korean` benchmark part renders its runs side by side and judges issue 14's targets only at the size
they name (pure: dicts in, text and verdicts out; no engine)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benches import multilingual, targets  # noqa: E402


def _run(lang, n, config, hit3, hit8=1.0, p50=9.0):
    rows = [{"n": n, "lang": lang, "model_config": config, "style": style, "config": legs,
             "hit@1": hit3 - 0.05, "hit@3": hit3, "hit@8": hit8}
            for style in ("long", "short") for legs in ("hybrid", "bm25", "dense")]  # fmt: skip
    return {"key": f"{lang}-{n}-{config}", "lang": lang, "n": n, "model_config": config, "engine": "0.1.0+abc",
            "rows": rows, "misses": [], "index": {"index_s": 512.0, "peak_rss_mb": 900},
            "cost": {"recall_ms": {"p50": p50, "p95": 2 * p50}, "rss_mb": 700}}  # fmt: skip


def test_targets_are_judged_at_ten_thousand_only():
    small = {"runs": [_run("ko", 1_000, "e5-bigram", 0.97), _run("en", 1_000, "e5-bigram", 0.97),
                      _run("en", 1_000, "minilm-bigram", 0.99)]}  # fmt: skip
    rows = targets._korean(small)
    assert [r["met"] for r in rows] == [None, None, None, None, True]
    big = {"runs": [_run("ko", 10_000, "e5-bigram", 0.94, 0.995, p50=13.0), _run("en", 10_000, "e5-bigram", 0.97),
                    _run("en", 10_000, "minilm-bigram", 0.995)]}  # fmt: skip
    verdicts = {r["target"]: r["met"] for r in targets.evaluate({"korean": big})}
    assert verdicts["Korean hit@3 ≥ 95% at 10,000 (e5 + bigram BM25)"] is False
    assert verdicts["Korean hit@8 ≥ 99% at 10,000 (e5 + bigram BM25)"] is True
    assert verdicts["English with e5: hit@3 at most 2 points below MiniLM at 10,000"] is False  # 97 vs 99.5
    assert verdicts["e5 (int8) warm recall p50 ≤ 12 ms at 10,000"] is False


def test_render_puts_configs_side_by_side():
    data = {"runs": [_run("ko", 1_000, "minilm-whitespace", 0.40), _run("ko", 1_000, "e5-bigram", 0.97)]}
    text = multilingual.render(data)
    assert "| MiniLM + whitespace BM25 | e5 (int8) + bigram BM25 |" in text
    assert "| 1,000 | long | hybrid | 35 / 40 / 100 | 92 / 97 / 100 |" in text
    assert "| e5 (int8) + bigram BM25 | ko 1,000 | 512 | 900 | 9.0 / 18.0 | 700 | – | 0.1.0+abc |" in text
    assert "Mixed" not in text  # no mixed runs, no mixed table


def test_render_names_a_memory_re_tokenised_by_a_newer_build():
    run = _run("ko", 10_000, "e5-bigram", 0.97)
    run["index"] |= {"engine": "0.1.0+old", "retokenised": {"retokenise_s": 41.6, "engine": "0.1.0+new"}}
    text = multilingual.render({"runs": [run]})
    assert "| e5 (int8) + bigram BM25 | ko 10,000 | 512 (+ 42 re-tokenising) | 900 |" in text
    assert "indexed (embedded) by build 0.1.0+old" in text and "re-tokenised by build 0.1.0+new" in text


def test_locomo_puts_minilm_of_the_same_build_beside_e5():
    def lo(config, r5):
        return {"model_config": config, "engine": "0.1.0+abc", "questions": 1986, "conversations": ["c"] * 10,
                "tables": {"hybrid": {"ALL": {"turn_recall@1": 0.3, "turn_recall@5": r5, "turn_recall@10": 0.8}}}}  # fmt: skip

    text = multilingual.render({"runs": [_run("ko", 1_000, "e5-bigram", 0.97)], "locomo": lo("e5-bigram", 0.65),
                                "locomo_minilm": lo("minilm-bigram", 0.6)})  # fmt: skip
    assert "| legs | e5 | MiniLM (same build) |" in text
    assert "| hybrid | 30.0 / 65.0 / 80.0 | 30.0 / 60.0 / 80.0 |" in text


def test_render_names_the_command_of_each_row():
    a, b = _run("ko", 1_000, "e5-bigram", 0.97), _run("ko", 1_000, "minilm-whitespace", 0.4)
    a["command"], a["cost"]["loadavg"] = "python -m benches.multilingual --n 1000", [8.7, 9.0, 9.1]
    text = multilingual.render({"runs": [a, b]})
    assert "- `python -m benches.multilingual --n 1000`: ko 1,000 e5-bigram\n" in text
    assert "- (command not recorded): ko 1,000 minilm-whitespace\n" in text
    assert "| 9.0 / 18.0 | 700 | 8.7 | 0.1.0+abc |" in text

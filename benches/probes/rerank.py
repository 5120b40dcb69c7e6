"""Cross-encoder rerank latency and memory: pools of 12 and 30 passages, MiniLM-sized and bge-reranker-base-sized.

    python -m benches.probes.rerank                 # all configurations, markdown table on stdout
    python -m benches.probes.rerank --calls 10      # fewer timed calls
    python -m benches.probes.rerank --no-int8       # skip the int8 rows (quantizing the base model takes ~1 min)

What is timed: `Models.rerank_scores(query, pool)` (tokenise the pairs, one pair per forward pass, ONNX Runtime, one
logit each), warm, in process, wall time per call; each call a different query and pool of 300-600-character
passages cut from the benchmark history. Excluded: the rest of a recall (search, fusion, neighbours: see
benches/latency.py) and the model load. Each configuration runs in its own process, so its peak RSS
(VmHWM) is that configuration's: Python, numpy, the MiniLM embedder every recall process holds, and the
cross-encoder with its default session pool (FUNES_MODEL_SESSIONS, 2).

The cross-encoders are random weights with the real shapes (`random_bert_like`): latency depends on the
shape and the token count, not the values. Both get a real tokenizer, MiniLM's bert-base-uncased WordPiece
(the one ms-marco-MiniLM-L-6-v2 uses), because the random models' toy vocabulary spells most English words
letter by letter and so triples the tokens per passage (a first run measured 2.3 s for pool 12 that way).
bge-reranker-base's SentencePiece splits English into a similar number of pieces; the table reports the mean
tokens per pair. The base-sized model gets the real XLM-R vocabulary size (250,002 rows, ~770 MB of
embedding table) so that its memory is the real model's. The int8 rows are those models after
`funes-py models quantize` (onnxruntime dynamic quantisation, per channel).

Beside: the reference funes CLI reranks a pool of 30 with bge-reranker-base in about 3 s and 1.6 GB per call
(a process per call). Targets: pool 12 MiniLM-sized under 150 ms; pool 30 base-sized under 1.5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import sys
import time
from pathlib import Path

from ..harness import child_json
from ..latency import report
from ..metrics import percentiles
from ..paths import OUT

MODELS = OUT / "rerank-models"
SHAPES = {"minilm": ("MiniLM-sized (6×384, like ms-marco-MiniLM-L-6-v2)", None),
          "bge-reranker-base": ("base-sized (12×768, like bge-reranker-base)", 250_002)}  # fmt: skip
POOLS = (12, 30)
RERANK_BATCH = 1  # rust/src/inference/cross_encoder.rs
DISABLED_OPTIMIZERS = "SkipLayerNormFusion"  # rust/src/inference/onnx.rs
CALLS = {"minilm": 20, "bge-reranker-base": 5}  # base-sized calls take seconds each
TARGETS_MS = {("minilm", 12): 150, ("bge-reranker-base", 30): 1500}
REFERENCE = "reference funes CLI, bge-reranker-base, pool 30: ~3 s and ~1.6 GB per call"
PASSAGE_CHARS = (300, 600)


def peak_rss_mb() -> int:
    """This process's peak resident memory (VmHWM). Not ru_maxrss: Linux carries the parent's high-water mark
    across fork+exec into the child's ru_maxrss, so a child of a parent that built a 1.1 GB model reported the
    parent's 4-5 GB."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) // 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


def model_dir(shape: str, int8: bool) -> Path:
    """The converted (and, for int8, quantized) random cross-encoder of `shape`, built once under benches/out."""
    from funes_py.convert.build import build_model
    from funes_py.convert.manifest import is_complete
    from funes_py.convert.random_model import random_bert_like

    built, marker = MODELS / f"{shape}-fp32", MODELS / f"{shape}-int8.path"
    if not is_complete(built):  # never built, or built by an older converter (another graph): build again
        from funes_py.convert.registry import default_embedder_dir

        shutil.rmtree(built, ignore_errors=True)
        marker.unlink(missing_ok=True)

        src = random_bert_like(MODELS / f"{shape}-src", shape=shape, vocab=SHAPES[shape][1])
        shutil.copyfile(default_embedder_dir() / "tokenizer.json", src / "tokenizer.json")  # real token counts
        build_model(src, out_dir=built, name=f"bench/{shape}-sized")
    if not int8:
        return built
    if not (marker.exists() and Path(marker.read_text()).is_dir()):
        from funes_py.convert.quantize import quantize_model

        saved = os.environ.get("FUNES_MODELS_DIR")
        os.environ["FUNES_MODELS_DIR"] = str(MODELS / "cache")  # keep benchmark models out of the user's cache
        try:
            marker.write_text(str(quantize_model(built)))
        finally:
            if saved is None:
                del os.environ["FUNES_MODELS_DIR"]
            else:
                os.environ["FUNES_MODELS_DIR"] = saved
    return Path(marker.read_text())


def workload(calls: int, pool: int, seed: int = 11) -> list[tuple[str, list[str]]]:
    """`calls` (query, passages) pairs: questions and message text from the benchmark history."""
    from ..history import generate

    h = generate(120, seed=seed)
    rng = random.Random(seed)
    texts = [m["blocks"][0]["text"] for conv in h.conversations for m in conv if m.get("blocks")]
    out = []
    for c in range(calls):
        passages = []
        for _ in range(pool):
            target, start = rng.randint(*PASSAGE_CHARS), rng.randrange(len(texts))
            words: list[str] = []
            i = start
            while len(" ".join(words)) < target:
                words += texts[i % len(texts)].split()
                i += 1
            passages.append(" ".join(words)[:target].rsplit(" ", 1)[0])
        out.append((h.questions[c % len(h.questions)]["long"], passages))
    return out


def onnxruntime_ms(model: Path, work: list[tuple[str, list[str]]], threads: int) -> dict:
    """The same reranks through onnxruntime's Python API, batched as the engine does (RERANK_BATCH pairs a pass)
    and with its session options: what ONNX Runtime itself costs with `threads` intra-op threads. The
    yardstick for the engine's overhead and for what more threads would buy."""
    import numpy as np
    import onnxruntime as ort
    from tokenizers import Tokenizer

    manifest = json.loads((model / "funes_model.json").read_text())
    tok = Tokenizer.from_file(str(model / "tokenizer.json"))
    tok.enable_truncation(manifest["max_length"])
    tok.enable_padding(pad_id=tok.token_to_id("[PAD]") or 0)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.add_session_config_entry("optimization.disable_specified_optimizers", DISABLED_OPTIMIZERS)
    sess = ort.InferenceSession(str(model / "model.onnx"), opts, providers=["CPUExecutionProvider"])

    def rerank(q: str, ps: list[str]) -> None:
        for i in range(0, len(ps), RERANK_BATCH):
            enc = tok.encode_batch([(q, p) for p in ps[i : i + RERANK_BATCH]])
            feeds = {"input_ids": np.array([e.ids for e in enc], np.int64),
                     "attention_mask": np.array([e.attention_mask for e in enc], np.int64)}  # fmt: skip
            if manifest["token_type_ids"]:
                feeds["token_type_ids"] = np.array([e.type_ids for e in enc], np.int64)
            sess.run(None, feeds)

    for q, ps in work[:2]:
        rerank(q, ps)
    ms = []
    for q, ps in work[2:]:
        t = time.perf_counter()
        rerank(q, ps)
        ms.append((time.perf_counter() - t) * 1000)
    return percentiles(ms, (50,))["p50"]


def child(shape: str, pool: int, int8: bool, calls: int, calibrate: bool) -> dict:
    """One configuration, in this process: load, warm up, time `calls` reranks."""
    from funes_py import Models

    d = model_dir(shape, int8)
    t0 = time.perf_counter()
    models = Models.load(reranker=str(d))
    load_s = time.perf_counter() - t0
    work = workload(calls + 2, pool)
    for q, ps in work[:2]:  # warm-up: first runs allocate ONNX Runtime's arenas
        models.rerank_scores(q, ps)
    ms = []
    for q, ps in work[2:]:
        t = time.perf_counter()
        scores = models.rerank_scores(q, ps)
        ms.append((time.perf_counter() - t) * 1000)
        assert len(scores) == pool
    p = percentiles(ms, (50, 95))
    peak_mb = peak_rss_mb()  # before the yardstick's own sessions
    if calibrate:
        ort_ms = {f"ort_{n}t_p50_ms": onnxruntime_ms(d, work, n) for n in sorted({1, os.cpu_count() or 1})}
    else:
        ort_ms = {}
    return {
        **ort_ms,
        "tokens_per_pair": _tokens_per_pair(d, work),
        "shape": shape,
        "int8": int8,
        "pool": pool,
        "calls": calls,
        "p50_ms": p["p50"],
        "p95_ms": p["p95"],
        "load_s": load_s,
        "peak_rss_mb": peak_mb,
        "model_mb": (d / "model.onnx").stat().st_size / 1e6,
        "passage_chars": sum(len(p) for _, ps in work for p in ps) / (len(work) * pool),
    }


def _tokens_per_pair(model: Path, work: list[tuple[str, list[str]]]) -> float:
    """Mean length of the encoded (query, passage) pairs, truncated as the engine truncates them."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(model / "tokenizer.json"))
    tok.enable_truncation(json.loads((model / "funes_model.json").read_text())["max_length"])
    lens = [len(tok.encode(q, p).ids) for q, ps in work for p in ps]
    return sum(lens) / len(lens)


def table(rows: list[dict]) -> str:
    threads = sorted({int(k.split("_")[1][:-1]) for r in rows for k in r if k.startswith("ort_")})
    ort_head = "".join(f" onnxruntime {n} thread{'s' if n > 1 else ''} p50 ms |" for n in threads)
    head = (f"| cross-encoder | weights | pool | tokens/pair | p50 ms | p95 ms |{ort_head} peak RSS MB | model MB "
            f"| target |\n|{'---|' * (9 + len(threads))}\n")  # fmt: skip
    body = ""
    for r in rows:
        target = TARGETS_MS.get((r["shape"], r["pool"]))
        verdict = "" if target is None else f"< {target} ms: {'met' if r['p50_ms'] < target else 'missed'}"
        ort_cells = "".join(f" {r[f'ort_{n}t_p50_ms']:.0f} |" if f"ort_{n}t_p50_ms" in r else " |" for n in threads)
        body += (
            f"| {SHAPES[r['shape']][0]} | {'int8' if r['int8'] else 'fp32'} | {r['pool']} | "
            f"{r['tokens_per_pair']:.0f} | {r['p50_ms']:.0f} | {r['p95_ms']:.0f} |{ort_cells} "
            f"{r['peak_rss_mb']} | {r['model_mb']:.0f} | {verdict} |\n"
        )
    return head + body


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benches.probes.rerank", description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, help=f"timed calls per configuration (default {CALLS})")
    ap.add_argument("--no-onnxruntime", action="store_true", help="skip the onnxruntime Python yardstick")
    ap.add_argument("--shape", choices=sorted(SHAPES), action="append", help="default: both")
    ap.add_argument("--no-int8", action="store_true")
    ap.add_argument("--child", nargs=3, metavar=("SHAPE", "POOL", "INT8"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        shape, pool, int8 = args.child
        print(json.dumps(child(shape, int(pool), int8 == "1", args.calls or CALLS[shape], not args.no_onnxruntime)))
        return 0
    MODELS.mkdir(parents=True, exist_ok=True)
    rows = []
    for shape in args.shape or list(SHAPES):
        for int8 in (False,) if args.no_int8 else (False, True):
            model_dir(shape, int8)  # build outside the measured processes
            for pool in POOLS:
                cmd = [sys.executable, "-m", "benches.probes.rerank", "--calls", str(args.calls or CALLS[shape]),
                       "--child", shape, str(pool), "1" if int8 else "0"]  # fmt: skip
                if args.no_onnxruntime or int8:  # the yardstick is for the fp32 rows
                    cmd.append("--no-onnxruntime")
                rows.append(child_json(cmd))
    report("rerank", rows, table(rows), f"beside: {REFERENCE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

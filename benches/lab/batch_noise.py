"""How much a passage's vector depends on the other texts embedded with it: the same passages embedded each
alone, all in one call (the engine batches them by length), and in one call with as many other passages.

    python -m benches.lab.batch_noise [--n 400] [--embedder NAME ...]

An int8 model quantises its activations with one scale per batch, so its vectors move with their batch-mates;
a float32 model's do not. Prints, per embedder, the cosine between the forms (lowest and median) and the
seconds each form took.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ..synthetic import synthetic_root
from .corpus import read_rows

EMBEDDERS = ("sentence-transformers/all-MiniLM-L6-v2-int8", "sentence-transformers/all-MiniLM-L6-v2")


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benches.lab.batch_noise", description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=400, help="passages of the 1,000-conversation operations history")
    ap.add_argument("--embedder", nargs="+", default=list(EMBEDDERS))
    args = ap.parse_args(argv)
    from funes_py import Models

    rows = read_rows(synthetic_root("ops", 1000) / "src")
    texts = [r.text for r in rows[: args.n]]
    others = [r.text for r in rows[len(rows) // 2: len(rows) // 2 + args.n]]
    print("| embedder | alone ~ batched: lowest / median | batched ~ other batch: lowest / median | alone s | batched s |")
    print("|---|---|---|---|---|")
    for name in args.embedder:
        m = Models.load(embedder=name)
        t = time.perf_counter()
        alone = np.stack([m.embed([x])[0] for x in texts])
        t_alone = time.perf_counter() - t
        t = time.perf_counter()
        batched = m.embed(texts)
        t_batched = time.perf_counter() - t
        mixed = m.embed(texts + others)[: len(texts)]
        a, b = cosines(alone, batched), cosines(batched, mixed)
        print(f"| {name} | {a.min():.3f} / {np.median(a):.3f} | {b.min():.3f} / {np.median(b):.3f} | "
              f"{t_alone:.1f} | {t_batched:.1f} |")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Where the generated histories live: the operations history (with its reworded and out-of-domain question
files) and the household history, each written once under benches/out/ and reused."""

from __future__ import annotations

from pathlib import Path

from . import household, reworded
from .history import generate, write_history
from .latency import OUT


def synthetic_root(domain: str, n: int, seed: int = 7) -> Path:
    """The history's directory, written when missing: `benches/out/history-N-sSEED` (the one
    `benches.latency.ensure_indexed` indexes; reworded.jsonl and ood.jsonl are added beside it) or
    `benches/out/household-N-sSEED`."""
    if domain == "ops":
        root = OUT / f"history-{n}-s{seed}"
        if not (root / "src").is_dir():
            write_history(generate(n, seed=seed), root)
        if not (root / "reworded.jsonl").exists():
            reworded.write(reworded.build(generate(n, seed=seed)), root)
        return root
    root = OUT / f"household-{n}-s{seed}"
    if not (root / "src").is_dir():
        household.write_history(household.generate(n, seed=seed), root)
    return root

"""Calibrated relevance floors: per embedder, the cosine below which the recall service drops a passage.

A cosine is on its model's own scale, so a floor is a property of the model: one chosen for int8 MiniLM means
nothing for e5. Each floor here was chosen on tuning sets and checked on held-out ones
(`python -m benches.floor_lab`, `benches/fusion_spec.md`, "Relevance floor"): the highest floor whose cost on
every tuning set with answers stays within one point of hit@3 (LoCoMo turn recall@3 decided it), with the
demo's questions still answered. A model not listed has no calibrated floor: the service then uses none.
"""

from __future__ import annotations

FLOORS: dict[str, float] = {
    # 0.25: hit@3 unchanged on every synthetic set, LoCoMo recall@3 -0.7; out-of-domain questions answered
    # "nothing" 28-38% (held out). 0.30 drops the demo's own answer (cosines 0.26 and 0.28).
    "sentence-transformers/all-MiniLM-L6-v2-int8": 0.25,
}


def calibrated_floor(model_name: str) -> float | None:
    """The calibrated floor of the embedder named `model_name` (its manifest name), or None."""
    return FLOORS.get(model_name)

"""Calibrated relevance floors: per embedder, the cosines below which the recall service says "nothing".

A cosine is on its model's own scale, so a floor is a property of the model: one chosen for int8 MiniLM means
nothing for e5. Each value here was chosen on tuning sets and checked on held-out ones
(`python -m benches.lab.floor_lab`, `benches/lab/fusion_spec.md`, "Relevance floor"): the highest value whose cost on
every tuning set with answers stays within one point (hit@3; LoCoMo turn recall@3), with the demo's questions
still answered. A model not listed has no calibrated floor: the service then uses none.

Two kinds: `answer_floor` reads the best passage a recall found (none reaches it: the question is about
something never discussed, answer nothing; a query naming an identifier is left to the identifier guard);
`min_similarity` reads each passage. For int8 MiniLM the answer floor alone says "nothing" to 92-94% of
held-out out-of-domain questions at no hit@3 cost; a per-passage floor (0.25 was the best) reached 28-38% and
cost LoCoMo 0.7 points, so it is left off.

The best cosine of passages that do not answer a question grows with how many there are: at 10,000 synthetic
conversations (60,000 passages) the fixed 0.425 said "nothing" to 72% of out-of-domain questions, not 90%.
`answer_floor_per_decade` raises the answer floor per tenfold passages above `ANSWER_FLOOR_BASE_ROWS` (the
engine's `RecallOptions.answer_floor_at`). Its value is how far the median best cosine of the out-of-domain
questions rose per tenfold passages, measured on both synthetic domains (`benches/RESULTS.md`, "An answer
floor that grows with the memory").
"""

from __future__ import annotations

from typing import NamedTuple


class Floors(NamedTuple):
    min_similarity: float | None = None
    answer_floor: float | None = None
    answer_floor_per_decade: float = 0.0


CALIBRATED: dict[str, Floors] = {
    # answer_floor 0.425: hit@3 unchanged on every synthetic set (tuning and held out), LoCoMo held-out R@3
    # -0.2; the demo's tightest question has its best passage at 0.443. Per decade 0.03: the out-of-domain
    # median best cosine rose 0.027 (operations) and 0.029 (household) from 6,000 to 60,000 passages.
    "sentence-transformers/all-MiniLM-L6-v2-int8": Floors(answer_floor=0.425, answer_floor_per_decade=0.03),
}


def calibrated_floors(model_name: str) -> Floors:
    """The calibrated floors of the embedder named `model_name` (its manifest name); none when unknown."""
    return CALIBRATED.get(model_name, Floors())

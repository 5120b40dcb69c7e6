"""The MCP tool's relevance floor is the loaded embedder's calibrated one unless FUNES_RECALL_MIN_SIMILARITY
says otherwise; a model without a calibrated floor gets none (a cosine floor is on its model's scale)."""

from __future__ import annotations

from funes_py.config import load
from funes_py.convert.floors import calibrated_floor
from funes_py.server.config import DEFAULT_EMBEDDER, ServiceConfig


def _floor(env: dict[str, str], model: str) -> float | None:
    return load(ServiceConfig, env).recall_options(calibrated_floor(model)).min_similarity


def test_the_default_embedder_has_a_calibrated_floor():
    assert calibrated_floor(DEFAULT_EMBEDDER) == 0.25
    assert _floor({}, DEFAULT_EMBEDDER) == 0.25


def test_a_model_without_a_calibrated_floor_gets_none():
    assert calibrated_floor("sentence-transformers/all-MiniLM-L6-v2") is None
    assert _floor({}, "intfloat/multilingual-e5-small") is None


def test_the_variable_overrides_and_zero_turns_it_off():
    assert _floor({"FUNES_RECALL_MIN_SIMILARITY": "0.4"}, DEFAULT_EMBEDDER) == 0.4
    assert _floor({"FUNES_RECALL_MIN_SIMILARITY": "0.3"}, "intfloat/multilingual-e5-small") == 0.3
    assert _floor({"FUNES_RECALL_MIN_SIMILARITY": "0"}, DEFAULT_EMBEDDER) is None

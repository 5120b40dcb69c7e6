"""The MCP tool's floors are the loaded embedder's calibrated ones unless FUNES_RECALL_MIN_SIMILARITY /
FUNES_RECALL_ANSWER_FLOOR / FUNES_RECALL_ANSWER_FLOOR_PER_DECADE say otherwise; a model without calibrated
floors gets none (a cosine floor is on its model's scale)."""

from __future__ import annotations

import pytest

from funes_py.config import load
from funes_py.convert.floors import Floors, calibrated_floors
from funes_py.options import ANSWER_FLOOR_BASE_ROWS
from funes_py.server.config import DEFAULT_EMBEDDER, ServiceConfig


def _floors(env: dict[str, str], model: str) -> Floors:
    opts = load(ServiceConfig, env).recall_options(calibrated_floors(model))
    return Floors(opts.min_similarity, opts.answer_floor, opts.answer_floor_per_decade)


def test_the_default_embedder_has_a_calibrated_answer_floor_that_rises_with_the_memory():
    assert calibrated_floors(DEFAULT_EMBEDDER) == Floors(min_similarity=None, answer_floor=0.425, answer_floor_per_decade=0.03)
    assert _floors({}, DEFAULT_EMBEDDER) == Floors(None, 0.425, 0.03)


def test_the_service_floor_at_a_memory_size_is_the_engines_formula():
    opts = load(ServiceConfig, {}).recall_options(calibrated_floors(DEFAULT_EMBEDDER))
    assert opts.answer_floor_at(100) == opts.answer_floor_at(ANSWER_FLOOR_BASE_ROWS) == pytest.approx(0.425)
    assert opts.answer_floor_at(10 * ANSWER_FLOOR_BASE_ROWS) == pytest.approx(0.455)
    assert opts.answer_floor_at(100 * ANSWER_FLOOR_BASE_ROWS) == pytest.approx(0.485)
    assert opts.replace(answer_floor=None).answer_floor_at(10**9) is None


def test_a_model_without_calibrated_floors_gets_none():
    assert calibrated_floors("sentence-transformers/all-MiniLM-L6-v2") == Floors()
    assert _floors({}, "intfloat/multilingual-e5-small") == Floors()


def test_the_variables_override_and_zero_turns_a_floor_off():
    env = {"FUNES_RECALL_MIN_SIMILARITY": "0.3", "FUNES_RECALL_ANSWER_FLOOR": "0.5"}
    assert _floors(env, DEFAULT_EMBEDDER) == Floors(0.3, 0.5, 0.03)
    assert _floors(env, "intfloat/multilingual-e5-small") == Floors(0.3, 0.5)
    assert _floors({**env, "FUNES_RECALL_ANSWER_FLOOR_PER_DECADE": "0"}, DEFAULT_EMBEDDER) == Floors(0.3, 0.5, 0.0)
    assert _floors({"FUNES_RECALL_ANSWER_FLOOR_PER_DECADE": "0.05"}, "intfloat/multilingual-e5-small") == Floors(None, None, 0.05)
    assert _floors({"FUNES_RECALL_ANSWER_FLOOR": "0"}, DEFAULT_EMBEDDER) == Floors(None, None, 0.03)


def test_a_floor_that_falls_as_the_memory_grows_is_refused():
    with pytest.raises(ValueError, match="answer_floor_per_decade"):
        _floors({"FUNES_RECALL_ANSWER_FLOOR_PER_DECADE": "-0.01"}, DEFAULT_EMBEDDER)

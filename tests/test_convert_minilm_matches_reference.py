"""The ONNX graph built from the real all-MiniLM-L6-v2 weights computes what the weights mean.

Checked against `reference.py`, an independent float64 numpy forward pass over the safetensors tensors,
on real sentences tokenised with the model's own tokenizer.json (pure-Python WordPiece).
"""

from __future__ import annotations

import json

import numpy as np
import onnxruntime as ort
import pytest
from safetensors.numpy import load_file

from funes_py.convert import build_model, default_embedder_dir
from funes_py.convert.reference import Reference, pool
from funes_py.convert.spec import canonical_weights, spec_from_config
from funes_py.convert.wordpiece import WordPiece

pytestmark = pytest.mark.models

SENTENCES = [
    "The cat sits on the mat.",
    "A cat is sitting on a rug.",
    "Quarterly tax filings are due in April.",
    "How do I reset my router's password?",
]


@pytest.fixture(scope="module")
def minilm(tmp_path_factory):
    src = default_embedder_dir()
    out = build_model(src, out_dir=tmp_path_factory.mktemp("minilm") / "model")
    weights = canonical_weights(load_file(str(src / "model.safetensors")))
    spec = spec_from_config(json.loads((src / "config.json").read_text()))
    batch = WordPiece(out / "tokenizer.json").batch(SENTENCES)
    return out, Reference(weights, spec).encode(**batch), batch


def _session(model_dir, level):
    opts = ort.SessionOptions()
    opts.graph_optimization_level = level
    opts.intra_op_num_threads = 1
    return ort.InferenceSession(str(model_dir / "model.onnx"), opts, providers=["CPUExecutionProvider"])


@pytest.mark.parametrize(
    "level",
    [ort.GraphOptimizationLevel.ORT_DISABLE_ALL, ort.GraphOptimizationLevel.ORT_ENABLE_ALL],
    ids=["unoptimised", "ort-fused"],
)
def test_last_hidden_state_matches_numpy_reference(minilm, level):
    out, want, batch = minilm
    assert batch["attention_mask"].min() == 0, "the batch should contain padding"
    (got,) = _session(out, level).run(["last_hidden_state"], batch)
    assert got.shape == (len(SENTENCES), batch["input_ids"].shape[1], 384)
    assert got.dtype == np.float32
    # Observed: about 2e-6 (float32 graph vs float64 reference).
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-5)


def test_mean_pooled_embeddings_rank_paraphrase_above_unrelated(minilm):
    out, _, batch = minilm
    manifest = json.loads((out / "funes_model.json").read_text())
    (hidden,) = _session(out, ort.GraphOptimizationLevel.ORT_ENABLE_ALL).run(["last_hidden_state"], batch)
    vecs = pool(hidden, batch["attention_mask"], manifest["pooling"], manifest["normalize"])
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    cos = vecs @ vecs.T
    paraphrase, unrelated = cos[0, 1], max(cos[0, 2], cos[0, 3])
    assert paraphrase > 0.5
    assert paraphrase > unrelated + 0.3, cos.round(3)

"""Tiny random BERT and XLM-RoBERTa models: the ONNX graph agrees with the numpy reference, padding does
not change a row's result, XLM-R positions are offset by the padding index, and the check can fail."""

from __future__ import annotations

import json

import numpy as np
import onnxruntime as ort
import pytest
from safetensors.numpy import load_file

from funes_py.convert.graph import build_graph
from funes_py.convert.random_model import write_random_model
from funes_py.convert.reference import Reference, position_ids
from funes_py.convert.spec import BERT, XLM_ROBERTA, EncoderSpec, canonical_weights, spec_from_config

FAMILIES = [BERT, XLM_ROBERTA]
KINDS = ["embedder", "cross_encoder"]


def _load(tmp_path, family, kind):
    src = write_random_model(tmp_path / f"{family}-{kind}", kind=kind, family=family)
    spec = spec_from_config(json.loads((src / "config.json").read_text()))
    return spec, canonical_weights(load_file(str(src / "model.safetensors")))


def _run(weights, spec: EncoderSpec, ids, mask, token_types=None):
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(
        build_graph(weights, spec).SerializeToString(), opts, providers=["CPUExecutionProvider"]
    )
    feed = {"input_ids": ids, "attention_mask": mask}
    if spec.token_type_ids:
        feed["token_type_ids"] = np.zeros_like(ids) if token_types is None else token_types
    return sess.run(None, feed)[0]


def _batch(spec: EncoderSpec, vocab: int, lengths=(9, 5, 7), seed=1):
    """Right-padded random ids (never the pad id inside a row), first token 0 as a stand-in for CLS/<s>."""
    rng = np.random.default_rng(seed)
    ids = np.full((len(lengths), max(lengths)), spec.pad_token_id, dtype=np.int64)
    mask = np.zeros_like(ids)
    for i, n in enumerate(lengths):
        ids[i, :n] = rng.integers(5, vocab, n)
        ids[i, 0] = 0 if spec.family == XLM_ROBERTA else 2
        mask[i, :n] = 1
    return ids, mask


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("family", FAMILIES)
def test_onnx_output_matches_numpy_reference(tmp_path, family, kind):
    spec, w = _load(tmp_path, family, kind)
    ids, mask = _batch(spec, w["embeddings.word_embeddings.weight"].shape[0])
    got = _run(w, spec, ids, mask)
    want = Reference(w, spec).forward(ids, mask)
    assert got.shape == ((3, 1) if kind == "cross_encoder" else (3, ids.shape[1], spec.hidden))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)  # observed ~1e-6
    if kind == "cross_encoder":
        assert np.ptp(got) > 0.05, "rows should score differently, or the comparison proves little"


@pytest.mark.parametrize("family", FAMILIES)
def test_padded_batch_gives_each_row_its_unpadded_logit(tmp_path, family):
    spec, w = _load(tmp_path, family, "cross_encoder")
    ids, mask = _batch(spec, w["embeddings.word_embeddings.weight"].shape[0])
    padded = _run(w, spec, ids, mask)[:, 0]
    alone = [_run(w, spec, ids[i : i + 1, :n], mask[i : i + 1, :n])[0, 0] for i, n in enumerate(mask.sum(1))]
    np.testing.assert_allclose(padded, alone, rtol=0, atol=1e-5)


def test_xlmr_positions_start_after_the_padding_index(tmp_path):
    spec, w = _load(tmp_path, XLM_ROBERTA, "embedder")
    assert spec.pad_token_id == 1
    ids = np.array([[0, 50, 60, 2, 1, 1], [1, 1, 0, 50, 60, 2]])  # right- and left-padded copies of one row
    np.testing.assert_array_equal(position_ids(ids, spec), [[2, 3, 4, 5, 1, 1], [1, 1, 2, 3, 4, 5]])
    mask = (ids != 1).astype(np.int64)
    hidden = _run(w, spec, ids, mask)
    np.testing.assert_allclose(hidden, Reference(w, spec).forward(ids, mask), rtol=0, atol=1e-5)
    # RoBERTa positions follow the real tokens, so even left padding leaves the token vectors unchanged
    # (the graph computes them from the ids; a 0..s-1 Range would shift the left-padded row)...
    np.testing.assert_allclose(hidden[0, :4], hidden[1, 2:], rtol=0, atol=1e-5)
    # ...and positions counted from 0 (the BERT rule) would give other vectors: the offset matters.
    as_bert = Reference(w, EncoderSpec(**{**spec.__dict__, "family": BERT}))
    assert np.abs(as_bert.forward(ids[:1, :4], mask[:1, :4])[0] - hidden[0, :4]).max() > 1e-2


def test_bert_token_type_ids_reach_the_output(tmp_path):
    spec, w = _load(tmp_path, BERT, "cross_encoder")
    ids, mask = _batch(spec, w["embeddings.word_embeddings.weight"].shape[0], lengths=(8,))
    types = np.zeros_like(ids)
    types[:, 4:] = 1
    got = _run(w, spec, ids, mask, types)
    np.testing.assert_allclose(got, Reference(w, spec).forward(ids, mask, types), rtol=0, atol=1e-5)
    assert abs(got[0, 0] - _run(w, spec, ids, mask)[0, 0]) > 1e-3


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize(
    "tensor", ["encoder.layer.1.intermediate.dense.weight", "embeddings.position_embeddings.weight"]
)
def test_a_perturbed_weight_breaks_the_agreement(tmp_path, family, tensor):
    """The agreement above is not vacuous: the graph really uses every tensor it is given."""
    spec, w = _load(tmp_path, family, "cross_encoder")
    ids, mask = _batch(spec, w["embeddings.word_embeddings.weight"].shape[0])
    want = Reference(w, spec).forward(ids, mask)
    changed = dict(w)
    changed[tensor] = w[tensor] + np.float32(0.05) * np.sign(w[tensor])
    assert np.abs(_run(changed, spec, ids, mask) - want).max() > 1e-3

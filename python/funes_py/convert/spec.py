"""What a Hugging Face config and weight file say about the encoder to build.

`EncoderSpec` is the one place that reads `config.json`; both the ONNX graph builder (`graph.py`) and the
numpy reference forward pass (`reference.py`) take it, so a config field is interpreted once.
`canonical_weights` strips the head-model prefix (`bert.`, `roberta.`, ...) so both see the same names.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

EMBEDDER = "embedder"
CROSS_ENCODER = "cross_encoder"
BERT = "bert"
XLM_ROBERTA = "xlm-roberta"

# The encoder of a *ForSequenceClassification checkpoint sits under one of these; the head ("classifier.")
# does not. Sentence-transformers checkpoints have no prefix at all.
_PREFIXES = ("bert.", "roberta.", "xlm_roberta.", "model.")
# Checkpoints converted from the original TF BERT still name LayerNorm parameters gamma/beta.
_ALIASES = {".gamma": ".weight", ".beta": ".bias"}
# Activations whose formula the graph implements exactly (0.5 x (1 + erf(x / sqrt 2))). The tanh
# approximations ("gelu_new", "gelu_pytorch_tanh") are refused rather than silently mismatched.
_GELU_ERF = ("gelu",)


@dataclass(frozen=True)
class EncoderSpec:
    family: str  # BERT or XLM_ROBERTA
    kind: str  # EMBEDDER or CROSS_ENCODER
    layers: int
    hidden: int
    heads: int
    intermediate: int
    eps: float
    pad_token_id: int
    max_position_embeddings: int

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    @property
    def token_type_ids(self) -> bool:
        """BERT takes a token-type input; XLM-R has a single token type and no such input."""
        return self.family == BERT

    @property
    def position_offset(self) -> int:
        """RoBERTa positions start at pad_token_id + 1, so that many rows of the table are never used."""
        return self.pad_token_id + 1 if self.family == XLM_ROBERTA else 0


def family_of(config: Mapping) -> str:
    model_type = config.get("model_type")
    if model_type == "bert":
        return BERT
    if model_type == "xlm-roberta":
        return XLM_ROBERTA
    raise ValueError(f"unsupported model_type {model_type!r}: the converter builds 'bert' and 'xlm-roberta'")


def kind_of(config: Mapping) -> str:
    archs = config.get("architectures") or []
    return CROSS_ENCODER if any(a.endswith("ForSequenceClassification") for a in archs) else EMBEDDER


def spec_from_config(config: Mapping) -> EncoderSpec:
    family = family_of(config)
    act = config.get("hidden_act", "gelu")
    if act not in _GELU_ERF:
        raise ValueError(f"unsupported hidden_act {act!r}: the graph implements the erf GELU ('gelu') only")
    pos_type = config.get("position_embedding_type", "absolute")
    if pos_type != "absolute":
        raise ValueError(f"unsupported position_embedding_type {pos_type!r}: only 'absolute' is built")
    hidden, heads = int(config["hidden_size"]), int(config["num_attention_heads"])
    if hidden % heads:
        raise ValueError(f"hidden_size {hidden} is not a multiple of num_attention_heads {heads}")
    default_pad = 1 if family == XLM_ROBERTA else 0
    pad = config.get("pad_token_id")
    return EncoderSpec(
        family=family,
        kind=kind_of(config),
        layers=int(config["num_hidden_layers"]),
        hidden=hidden,
        heads=heads,
        intermediate=int(config["intermediate_size"]),
        eps=float(config.get("layer_norm_eps", 1e-12)),
        pad_token_id=int(default_pad if pad is None else pad),
        max_position_embeddings=int(config.get("max_position_embeddings", 512)),
    )


def canonical_name(name: str) -> str:
    for prefix in _PREFIXES:
        if name.startswith(prefix):
            name = name[len(prefix) :]
            break
    for old, new in _ALIASES.items():
        if name.endswith(old):
            name = name[: -len(old)] + new
    return name


def canonical_weights(weights: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """HF tensors under prefix-free names, as float32 (fp16 checkpoints are widened; int buffers dropped)."""
    out: dict[str, np.ndarray] = {}
    for name, arr in weights.items():
        if not np.issubdtype(arr.dtype, np.floating):
            continue  # e.g. embeddings.position_ids, a buffer the graph recomputes
        key = canonical_name(name)
        if key in out:
            raise ValueError(f"two tensors map to {key!r}; is {name!r} from a second model?")
        out[key] = np.asarray(arr, dtype=np.float32)
    return out


def require(weights: Mapping[str, np.ndarray], name: str, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """The tensor `name`, with a clear error when it is missing or has the wrong shape."""
    try:
        arr = weights[name]
    except KeyError:
        raise ValueError(f"weight {name!r} not found (have e.g. {sorted(weights)[:5]})") from None
    if shape is not None and tuple(arr.shape) != shape:
        raise ValueError(f"weight {name!r} has shape {tuple(arr.shape)}, expected {shape}")
    return arr


def num_labels(weights: Mapping[str, np.ndarray], spec: EncoderSpec) -> int:
    out = "classifier.out_proj.weight" if spec.family == XLM_ROBERTA else "classifier.weight"
    return int(require(weights, out).shape[0])

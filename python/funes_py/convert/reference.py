"""An independent numpy forward pass of the same HF weights, the yardstick the ONNX graph is tested against.

It reads the safetensors tensors (not the ONNX initializers), follows the Hugging Face modelling code
rather than `graph.py` (weights used as [out, in] with `x @ W.T`, positions made with numpy, heads split
with reshape/swapaxes), and computes in float64 so that its own rounding is far below the graph's.
It is slow and for tests only; the engine runs the ONNX graph.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from .spec import BERT, CROSS_ENCODER, EncoderSpec, require

_erf = np.frompyfunc(math.erf, 1, 1)


def gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.asarray(_erf(x / math.sqrt(2.0)), dtype=np.float64))


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def position_ids(input_ids: np.ndarray, spec: EncoderSpec) -> np.ndarray:
    """BERT: 0..s-1. RoBERTa (`create_position_ids_from_input_ids`): pad + running count of real tokens."""
    if spec.family == BERT:
        return np.broadcast_to(np.arange(input_ids.shape[1]), input_ids.shape)
    real = (input_ids != spec.pad_token_id).astype(np.int64)
    return np.cumsum(real, axis=1) * real + spec.pad_token_id


class Reference:
    """forward(ids, mask[, token types]) → last_hidden_state [b,s,h] or logits [b,labels], in float64."""

    def __init__(self, weights: Mapping[str, np.ndarray], spec: EncoderSpec) -> None:
        self.w = {k: np.asarray(v, dtype=np.float64) for k, v in weights.items()}
        self.spec = spec

    def _dense(self, x: np.ndarray, prefix: str) -> np.ndarray:
        w = require(self.w, f"{prefix}.weight")
        # As a 2-D product: numpy's batched matmul with a transposed operand skips BLAS and is ~50x slower.
        y = x.reshape(-1, x.shape[-1]) @ w.T + require(self.w, f"{prefix}.bias")
        return y.reshape(*x.shape[:-1], w.shape[0])

    def _ln(self, x: np.ndarray, prefix: str) -> np.ndarray:
        return layer_norm(x, self.w[f"{prefix}.weight"], self.w[f"{prefix}.bias"], self.spec.eps)

    def embed(self, input_ids: np.ndarray, token_type_ids: np.ndarray | None) -> np.ndarray:
        w = self.w
        if token_type_ids is None or self.spec.family != BERT:
            token_type_ids = np.zeros_like(input_ids)
        x = (
            w["embeddings.word_embeddings.weight"][input_ids]
            + w["embeddings.position_embeddings.weight"][position_ids(input_ids, self.spec)]
            + w["embeddings.token_type_embeddings.weight"][token_type_ids]
        )
        return self._ln(x, "embeddings.LayerNorm")

    def _attention(self, x: np.ndarray, additive_mask: np.ndarray, p: str) -> np.ndarray:
        b, s, _ = x.shape
        nh, d = self.spec.heads, self.spec.head_dim

        def split(t: np.ndarray) -> np.ndarray:  # [b, s, h] -> [b, heads, s, d]
            return t.reshape(b, s, nh, d).swapaxes(1, 2)

        q = split(self._dense(x, f"{p}.attention.self.query"))
        k = split(self._dense(x, f"{p}.attention.self.key"))
        v = split(self._dense(x, f"{p}.attention.self.value"))
        probs = softmax(q @ k.swapaxes(-1, -2) / math.sqrt(d) + additive_mask)
        ctx = (probs @ v).swapaxes(1, 2).reshape(b, s, nh * d)
        return self._dense(ctx, f"{p}.attention.output.dense")

    def encode(self, input_ids, attention_mask, token_type_ids=None) -> np.ndarray:
        ids = np.asarray(input_ids, dtype=np.int64)
        mask = np.asarray(attention_mask, dtype=np.float64)
        # Padded keys get -inf-like scores; finfo(float64).min would overflow when added, so use a large finite.
        additive = ((1.0 - mask) * -1e30)[:, None, None, :]
        x = self.embed(ids, None if token_type_ids is None else np.asarray(token_type_ids, dtype=np.int64))
        for i in range(self.spec.layers):
            p = f"encoder.layer.{i}"
            x = self._ln(self._attention(x, additive, p) + x, f"{p}.attention.output.LayerNorm")
            y = self._dense(gelu(self._dense(x, f"{p}.intermediate.dense")), f"{p}.output.dense")
            x = self._ln(y + x, f"{p}.output.LayerNorm")
        return x

    def logits(self, input_ids, attention_mask, token_type_ids=None) -> np.ndarray:
        cls = self.encode(input_ids, attention_mask, token_type_ids)[:, 0]
        if self.spec.family == BERT:
            return self._dense(np.tanh(self._dense(cls, "pooler.dense")), "classifier")
        return self._dense(np.tanh(self._dense(cls, "classifier.dense")), "classifier.out_proj")

    def forward(self, input_ids, attention_mask, token_type_ids=None) -> np.ndarray:
        if self.spec.kind == CROSS_ENCODER:
            return self.logits(input_ids, attention_mask, token_type_ids)
        return self.encode(input_ids, attention_mask, token_type_ids)


def mean_pool(hidden: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
    """Average of the token vectors where the mask is 1 (sentence-transformers' mean pooling)."""
    m = np.asarray(attention_mask, dtype=hidden.dtype)[..., None]
    return (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)


def cls_pool(hidden: np.ndarray, attention_mask: np.ndarray | None = None) -> np.ndarray:
    return hidden[:, 0]


def l2_normalize(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


def pool(hidden: np.ndarray, attention_mask: np.ndarray, pooling: str, normalize: bool) -> np.ndarray:
    """Sentence vectors as funes_model.json describes them ("mean" | "cls", optional L2 normalisation)."""
    vecs = mean_pool(hidden, attention_mask) if pooling == "mean" else cls_pool(hidden)
    return l2_normalize(vecs) if normalize else vecs

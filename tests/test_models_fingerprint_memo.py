"""Resolving a model remembers its weights' fingerprint per file, so a fresh process finds the cache entry
with a stat instead of a hash; a changed file (even with its old mtime put back) gets a new fingerprint."""

from __future__ import annotations

import json
import os

import pytest

from funes_py.convert import fingerprints, resolve
from funes_py.convert.random_model import write_random_model


@pytest.fixture(autouse=True)
def models_dir(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("FUNES_MODELS_DIR", str(cache))
    return cache


@pytest.fixture
def hashes(monkeypatch):
    """Counts the files actually hashed by fingerprints.py."""
    seen: list[str] = []
    real = fingerprints.fingerprint

    def counting(files):
        files = list(files)
        seen.extend(f.name for f in files)
        return real(files)

    monkeypatch.setattr(fingerprints, "fingerprint", counting)
    return seen


def test_second_resolve_does_not_hash(tmp_path, models_dir, hashes):
    src = write_random_model(tmp_path / "src", family="bert")
    first = resolve(src)
    assert hashes == ["model.safetensors"]
    memo = json.loads((models_dir / fingerprints.SIDECAR).read_text())
    assert [m["fingerprint"] for m in memo.values()] == [
        json.loads((first / "funes_model.json").read_text())["fingerprint"]
    ]
    assert resolve(src) == first
    assert hashes == ["model.safetensors"], "the unchanged file was hashed again"


def test_changed_weights_get_a_new_fingerprint_even_with_the_old_mtime(tmp_path, hashes):
    src = write_random_model(tmp_path / "src", family="bert")
    weights = src / "model.safetensors"
    first = resolve(src)
    st = weights.stat()
    write_random_model(src, family="bert", seed=1)  # same shapes: same size
    assert weights.stat().st_size == st.st_size
    os.utime(weights, ns=(st.st_atime_ns, st.st_mtime_ns))  # mtime put back, as `cp -p` or `touch -d` would
    second = resolve(src)
    assert second != first and len(hashes) == 2


def test_a_corrupt_or_foreign_sidecar_is_only_a_cache(tmp_path, models_dir, hashes):
    src = write_random_model(tmp_path / "src", family="xlm-roberta")
    models_dir.mkdir(parents=True)
    (models_dir / fingerprints.SIDECAR).write_text("{not json")
    first = resolve(src, kind="embedder")
    (models_dir / fingerprints.SIDECAR).write_text(json.dumps({str((src / "model.safetensors").resolve()): "junk"}))
    assert resolve(src, kind="embedder") == first
    assert resolve(src, kind="embedder") == first
    assert len(hashes) == 2  # once for the corrupt sidecar, once for the junk entry, then remembered

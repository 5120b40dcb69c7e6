"""The service's default embedder is the packaged all-MiniLM-L6-v2 quantized to int8, built on first use."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.models


def test_the_service_default_embedder_is_the_quantized_packaged_model(tmp_path, monkeypatch):
    from funes_py.convert import registry
    from funes_py.convert.manifest import read_manifest
    from funes_py.server.config import DEFAULT_EMBEDDER

    assert DEFAULT_EMBEDDER == registry.QUANTIZED_DEFAULT_NAME
    monkeypatch.setenv("FUNES_MODELS_DIR", str(tmp_path / "models"))
    built = registry.resolve(DEFAULT_EMBEDDER)
    manifest = read_manifest(built)
    assert manifest["name"] == DEFAULT_EMBEDDER
    assert manifest["quantized_from"].startswith(registry.DEFAULT_EMBEDDER_NAME + "@")
    # Second resolve: the cached entry, not a new quantization.
    assert registry.resolve(DEFAULT_EMBEDDER) == built
    assert built.parent == tmp_path / "models"

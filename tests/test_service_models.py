"""The default embedder (library, CLI and service) is the packaged all-MiniLM-L6-v2 quantized to int8: ready to
load from the companion wheel, or built on first use from the fp32 weights, the same model either way."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.models


def test_the_default_embedder_is_the_quantized_packaged_model(tmp_path, monkeypatch):
    from funes_py.convert import registry
    from funes_py.convert.manifest import read_manifest
    from funes_py.server.config import DEFAULT_EMBEDDER

    assert DEFAULT_EMBEDDER == registry.QUANTIZED_DEFAULT_NAME == registry.DEFAULT_NAME
    monkeypatch.setenv("FUNES_MODELS_DIR", str(tmp_path / "models"))
    shipped = registry.resolve(None)
    assert registry.resolve(DEFAULT_EMBEDDER) == shipped
    assert shipped.name == "model" and shipped.parent.name == registry.COMPANION_MODULE, shipped
    assert not (tmp_path / "models").exists(), "nothing built: the companion wheel holds it ready"

    # Without the companion wheel, the same model is quantised from the fp32 weights on first use.
    real_root = registry.package_root
    monkeypatch.setattr(registry, "package_root", lambda m: None if m == registry.COMPANION_MODULE else real_root(m))
    built = registry.resolve(None)
    assert built.parent == tmp_path / "models"
    manifest, companion = read_manifest(built), read_manifest(shipped)
    assert manifest["name"] == DEFAULT_EMBEDDER
    assert manifest["quantized_from"].startswith(registry.DEFAULT_EMBEDDER_NAME + "@")
    assert manifest["fingerprint"] == companion["fingerprint"], "a memory indexed with either opens with the other"
    assert (built / "model.onnx").read_bytes() == (shipped / "model.onnx").read_bytes()
    # Second resolve: the cached entry, not a new quantization.
    assert registry.resolve(DEFAULT_EMBEDDER) == built

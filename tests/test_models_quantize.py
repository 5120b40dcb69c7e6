"""`funes-py models quantize`: int8 dynamic quantisation into a cache entry of its own (name + "-int8",
fingerprint = hash of the source weights' fingerprint and the recipe), with its agreement to the fp32 model measured in the engine:
all-MiniLM-L6-v2 int8 keeps a cosine above 0.95 on every sentence of the fixed set."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from funes_py.convert.build import weight_files
from funes_py.convert.manifest import fingerprint, transformer_dir
from funes_py.convert.quantize import RECIPE
from funes_py.convert.registry import default_embedder_dir

pytestmark = pytest.mark.models


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    return dict(os.environ, FUNES_MODELS_DIR=str(tmp_path_factory.mktemp("models-cache")))


def models_cli(*args, env):
    p = subprocess.run([sys.executable, "-m", "funes_py.cli", *map(str, args)], capture_output=True, text=True,
                       env=env, timeout=300, check=False)  # fmt: skip
    assert p.returncode == 0, f"exit {p.returncode}\nstdout: {p.stdout}\nstderr: {p.stderr}"
    return p.stdout


def _manifest(d: Path) -> dict:
    return json.loads((d / "funes_model.json").read_text())


def test_quantize_minilm_agrees_with_fp32(env):
    out = models_cli("models", "quantize", "sentence-transformers/all-MiniLM-L6-v2", env=env)
    m = re.search(r"on (\d+) sentences: min cosine ([0-9.]+), mean cosine ([0-9.]+)", out)
    assert m, out
    n, lo, mean = int(m[1]), float(m[2]), float(m[3])
    assert n >= 20 and 0.95 < lo <= mean <= 1.0001
    int8 = Path(out.strip().splitlines()[-1])
    assert int8.parent == Path(env["FUNES_MODELS_DIR"])
    q = _manifest(int8)
    assert q["name"] == "sentence-transformers/all-MiniLM-L6-v2-int8"
    source_fp = fingerprint(weight_files(transformer_dir(default_embedder_dir())))  # the shipped safetensors
    assert q["quantized_from"] == f"sentence-transformers/all-MiniLM-L6-v2@{source_fp}"
    # Named by the source weights and the recipe, not by the bytes of the graph file around them.
    assert q["fingerprint"] == hashlib.sha256(f"{source_fp}|{RECIPE}".encode()).hexdigest()[:16] != source_fp
    # Quantizing again reuses the entry without rewriting it.
    before = (int8 / "model.onnx").stat().st_mtime_ns
    again = models_cli("models", "quantize", "sentence-transformers/all-MiniLM-L6-v2", env=env)
    assert Path(again.strip().splitlines()[-1]) == int8
    assert (int8 / "model.onnx").stat().st_mtime_ns == before
    assert (int8 / "model.onnx").stat().st_size < 30e6  # int8 weights: about a quarter of 90 MB
    listed = models_cli("models", "list", env=env)
    assert any(line.startswith(q["name"]) and " cached " in line for line in listed.splitlines())


def test_quantize_a_cross_encoder_reports_logit_agreement(tmp_path, env):
    from funes_py.convert.build import build_model
    from funes_py.convert.random_model import write_random_model

    emb = build_model(write_random_model(tmp_path / "emb", family="bert"), out_dir=tmp_path / "emb-built")
    src = write_random_model(tmp_path / "ce", kind="cross_encoder", family="xlm-roberta", hidden=64, std=0.05)
    out = models_cli("--embedder", emb, "models", "quantize", src, "--name", "test/ce-q8", env=env)
    assert re.search(r"on 20 pairs: max \|logit diff\| [0-9.]+, rank correlation -?[0-9.]+", out), out
    q = Path(out.strip().splitlines()[-1])
    assert _manifest(q)["name"] == "test/ce-q8" and _manifest(q)["kind"] == "cross_encoder"

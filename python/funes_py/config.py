"""The one reader of ``FUNES_*`` environment variables for the engine, the CLI and the model loader.

Every variable is listed in ``VARIABLES`` (name, default, meaning); the README's configuration table is
this list. The service has its own settings (``funes_py.server.config``) built the same way.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

VARIABLES: dict[str, tuple[str, str]] = {
    "FUNES_HOME": ("~/.funes-py", "the memory directory used by the CLI when --home is not given"),
    "FUNES_EMBEDDER": ("(packaged all-MiniLM-L6-v2)", "embedding model: a model directory or a cached model name"),
    "FUNES_RERANKER": ("(none)", "cross-encoder model directory or cached name; enables reranking"),
    "FUNES_MODELS_DIR": ("~/.cache/funes_py/models", "where converted ONNX models are cached"),
    "FUNES_ORT_LIB": ("(from the onnxruntime wheel)", "path of libonnxruntime.so to load"),
    "FUNES_MODEL_SESSIONS": ("2", "ONNX sessions per model (concurrent forward passes)"),
    "FUNES_QUERY_THREADS": (
        "2 (1 in `funes-py serve`)",
        "threads for one query's embedding: 2 is fastest on an idle machine, 1 gives a busy server more recalls/s",
    ),
    "FUNES_ASYNC_WORKERS": ("4", "threads of the executor behind the async methods (arecall, aindex, ...)"),
    "FUNES_LOG": ("WARNING", "log level; logs go to stderr"),
}


def _get(name: str) -> str | None:
    v = os.environ.get(name)
    return v if v not in (None, "") else None


@dataclass(frozen=True)
class Settings:
    home: Path
    embedder: str | None
    reranker: str | None
    models_dir: Path
    ort_lib: str | None
    model_sessions: int
    query_threads: int | None  # None: the caller's default (the library's 2, the server's 1)
    async_workers: int
    log_level: str


def settings() -> Settings:
    """Reads the environment now (not at import), so tests and callers can set variables first."""
    return Settings(
        home=Path(_get("FUNES_HOME") or "~/.funes-py").expanduser(),
        embedder=_get("FUNES_EMBEDDER"),
        reranker=_get("FUNES_RERANKER"),
        models_dir=Path(_get("FUNES_MODELS_DIR") or "~/.cache/funes_py/models").expanduser(),
        ort_lib=_get("FUNES_ORT_LIB"),
        model_sessions=int(_get("FUNES_MODEL_SESSIONS") or 2),
        query_threads=int(q) if (q := _get("FUNES_QUERY_THREADS")) else None,
        async_workers=int(_get("FUNES_ASYNC_WORKERS") or 4),
        log_level=(_get("FUNES_LOG") or "WARNING").upper(),
    )


def configure_logging() -> None:
    """Logs to stderr (stdout may be a protocol channel), level from FUNES_LOG."""
    logging.basicConfig(level=settings().log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")

"""Every setting of the recall service, in one dataclass with named defaults.

`ServiceConfig.load(env, **flags)` is the one place that reads `FUNES_*` variables for the service:
flags given on the command line win over the environment, the environment wins over the defaults.
The table in `server/README.md` lists each variable; keep the two in step.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# --- named defaults -------------------------------------------------------------------------------
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_DATA_DIR = Path.home() / ".local" / "share" / "funes-py" / "service"

# Read path. k=3, candidates=8, reranker off: the reference deployment's numbers, small enough that a
# recall costs one embedding and two short searches, and three passages fit the output cap.
DEFAULT_RECALL_K = 3
DEFAULT_RECALL_CANDIDATES = 8
DEFAULT_RECALL_RERANK = False
DEFAULT_RECALL_MIN_SIMILARITY: float | None = None  # no floor until one is measured
# A query naming identifiers (P-7, MT-5120) gets only passages containing one of them: "did we ever talk
# about motor P-7?" answers nothing rather than the nearest fact about another motor.
DEFAULT_RECALL_IDENTIFIER_GUARD = True
DEFAULT_RECALL_MAX_CHARS = 4000
DEFAULT_RECALL_MAX_QUERY_CHARS = 1000
DEFAULT_MAX_CONCURRENT_RECALLS = 4
# The embedder (FUNES_EMBEDDER overrides): the packaged all-MiniLM-L6-v2 quantized to int8 on first start
# (about 3 s, then cached). Same hit@k as fp32 on the 10,000-conversation benchmark, half the CPU per query:
# about 200 recalls/s at 16 clients on 2 cores instead of 140.
DEFAULT_EMBEDDER = "sentence-transformers/all-MiniLM-L6-v2-int8"
# Threads per query embedding (FUNES_QUERY_THREADS overrides): recalls run concurrently here, and one thread
# each is the most recalls per core (the library's default of 2 is for the lowest latency on an idle machine).
DEFAULT_QUERY_THREADS = 1
DEFAULT_RECALL_TIMEOUT_S = 10.0

# Tenants.
DEFAULT_MAX_OPEN_TENANTS = 64
DEFAULT_TENANT_IDLE_S = 1800.0

# Write path.
DEFAULT_INDEX_DEBOUNCE_S = 2.0
DEFAULT_INDEX_MAX_WAIT_S = 10.0  # a steady stream of writes still gets indexed this often
DEFAULT_INDEX_WORKERS = 2
DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024
DEFAULT_MASK_SECRETS = True

# Request limits (every route). Each one answers 400/413 naming the field; none is near what a real client
# sends: the ingest body nests 3 levels deep and carries no numbers at all, a tool call nests 4.
DEFAULT_MAX_JSON_DEPTH = 32
MAX_JSON_DEPTH_CEILING = 500
DEFAULT_MAX_JSON_NUMBER_CHARS = 40  # a 128-bit integer has 39 digits; Python refuses ints past 4,300 digits
DEFAULT_MAX_TURNS = 10_000  # per POST /turns (the whole conversation so far)
DEFAULT_MAX_TURN_CHARS = 4_000_000  # per turn: a pasted log file fits, the body limit still applies
# A tool call is a few hundred bytes; a 1 MB query still fits and is cut to FUNES_RECALL_MAX_QUERY_CHARS.
DEFAULT_MAX_MCP_BODY_BYTES = 1024 * 1024

# Idle MCP streams (`GET /mcp`). The endpoint is stateless, so such a stream never carries a message: it
# only holds a connection. A few per token, closed after this long without a message (keep-alive pings
# do not count).
DEFAULT_MCP_STREAMS_PER_TOKEN = 2
DEFAULT_MCP_STREAM_IDLE_S = 60.0

DEFAULT_LOG_LEVEL = "INFO"


@dataclasses.dataclass(frozen=True)
class ServiceConfig:
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    data_dir: Path = DEFAULT_DATA_DIR

    # Auth. The read path takes a bearer token (a static token or an HS256 JWT); the write path takes
    # only the ingest key, so an agent's token can never write or delete.
    tokens_file: Path | None = None
    jwt_secret: str | None = dataclasses.field(default=None, repr=False)
    jwt_audience: str | None = None
    ingest_key: str | None = dataclasses.field(default=None, repr=False)

    recall_k: int = DEFAULT_RECALL_K
    recall_candidates: int = DEFAULT_RECALL_CANDIDATES
    recall_rerank: bool = DEFAULT_RECALL_RERANK
    # The relevance floor (cosine similarity to the query) below which a passage is not returned.
    recall_min_similarity: float | None = DEFAULT_RECALL_MIN_SIMILARITY
    recall_identifier_guard: bool = DEFAULT_RECALL_IDENTIFIER_GUARD
    # None leaves the engine's own default in force, so this file does not repeat the engine's numbers.
    recall_neighbors: int | None = None
    recall_half_life_days: float | None = None
    recall_max_chars: int = DEFAULT_RECALL_MAX_CHARS
    recall_max_query_chars: int = DEFAULT_RECALL_MAX_QUERY_CHARS
    max_concurrent_recalls: int = DEFAULT_MAX_CONCURRENT_RECALLS
    recall_timeout_s: float = DEFAULT_RECALL_TIMEOUT_S

    max_open_tenants: int = DEFAULT_MAX_OPEN_TENANTS
    tenant_idle_s: float = DEFAULT_TENANT_IDLE_S

    index_debounce_s: float = DEFAULT_INDEX_DEBOUNCE_S
    index_max_wait_s: float = DEFAULT_INDEX_MAX_WAIT_S
    index_workers: int = DEFAULT_INDEX_WORKERS
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    mask_secrets: bool = DEFAULT_MASK_SECRETS

    max_json_depth: int = DEFAULT_MAX_JSON_DEPTH
    max_json_number_chars: int = DEFAULT_MAX_JSON_NUMBER_CHARS
    max_turns: int = DEFAULT_MAX_TURNS
    max_turn_chars: int = DEFAULT_MAX_TURN_CHARS
    max_mcp_body_bytes: int = DEFAULT_MAX_MCP_BODY_BYTES
    mcp_streams_per_token: int = DEFAULT_MCP_STREAMS_PER_TOKEN
    mcp_stream_idle_s: float = DEFAULT_MCP_STREAM_IDLE_S

    log_level: str = DEFAULT_LOG_LEVEL

    @classmethod
    def load(cls, env: Mapping[str, str] | None = None, **flags: Any) -> ServiceConfig:
        """Defaults, then `FUNES_*` from `env` (os.environ when None), then `flags` that are not None."""
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        for field in dataclasses.fields(cls):
            var = ENV_VARS.get(field.name)
            if var is not None and env.get(var, "") != "":
                values[field.name] = _parse(field.name, var, env[var])
        for name, value in flags.items():
            if value is not None:
                values[name] = Path(value).expanduser() if "Path" in str(_TYPES[name]) else value
        cfg = cls(**values)
        cfg.validate()
        return cfg

    def validate(self) -> None:
        positive = {
            "recall_k": self.recall_k,
            "recall_candidates": self.recall_candidates,
            "recall_max_chars": self.recall_max_chars,
            "max_concurrent_recalls": self.max_concurrent_recalls,
            "recall_timeout_s": self.recall_timeout_s,
            "max_open_tenants": self.max_open_tenants,
            "index_workers": self.index_workers,
            "max_body_bytes": self.max_body_bytes,
            "recall_max_query_chars": self.recall_max_query_chars,
            "max_json_depth": self.max_json_depth,
            "max_json_number_chars": self.max_json_number_chars,
            "max_turns": self.max_turns,
            "max_turn_chars": self.max_turn_chars,
            "max_mcp_body_bytes": self.max_mcp_body_bytes,
            "mcp_streams_per_token": self.mcp_streams_per_token,
            "mcp_stream_idle_s": self.mcp_stream_idle_s,
        }
        for name, value in positive.items():
            if value <= 0:
                raise ValueError(f"{ENV_VARS[name]} must be positive, got {value}")
        if self.index_debounce_s < 0 or self.index_max_wait_s < self.index_debounce_s:
            raise ValueError("FUNES_INDEX_DEBOUNCE_S must be >= 0 and <= FUNES_INDEX_MAX_WAIT_S")
        if self.max_json_depth > MAX_JSON_DEPTH_CEILING:
            # Python's JSON parser recurses: past about 1,000 levels it fails on its own, before our check.
            raise ValueError(f"FUNES_MAX_JSON_DEPTH must be at most {MAX_JSON_DEPTH_CEILING}, got {self.max_json_depth}")
        if not 0 < self.port < 65536:
            raise ValueError(f"FUNES_PORT must be a TCP port, got {self.port}")


# Field name -> variable. README.md has the same table, with what each one does.
ENV_VARS: dict[str, str] = {
    "host": "FUNES_HOST",
    "port": "FUNES_PORT",
    "data_dir": "FUNES_DATA",
    "tokens_file": "FUNES_TOKENS_FILE",
    "jwt_secret": "FUNES_JWT_SECRET",
    "jwt_audience": "FUNES_JWT_AUDIENCE",
    "ingest_key": "FUNES_INGEST_KEY",
    "recall_k": "FUNES_RECALL_K",
    "recall_candidates": "FUNES_RECALL_CANDIDATES",
    "recall_rerank": "FUNES_RECALL_RERANK",
    "recall_min_similarity": "FUNES_RECALL_MIN_SIMILARITY",
    "recall_identifier_guard": "FUNES_RECALL_IDENTIFIER_GUARD",
    "recall_neighbors": "FUNES_RECALL_NEIGHBORS",
    "recall_half_life_days": "FUNES_RECALL_HALF_LIFE_DAYS",
    "recall_max_chars": "FUNES_RECALL_MAX_CHARS",
    "recall_max_query_chars": "FUNES_RECALL_MAX_QUERY_CHARS",
    "max_concurrent_recalls": "FUNES_MAX_CONCURRENT_RECALLS",
    "recall_timeout_s": "FUNES_RECALL_TIMEOUT_S",
    "max_open_tenants": "FUNES_MAX_OPEN_TENANTS",
    "tenant_idle_s": "FUNES_TENANT_IDLE_S",
    "index_debounce_s": "FUNES_INDEX_DEBOUNCE_S",
    "index_max_wait_s": "FUNES_INDEX_MAX_WAIT_S",
    "index_workers": "FUNES_INDEX_WORKERS",
    "max_body_bytes": "FUNES_MAX_BODY_BYTES",
    "mask_secrets": "FUNES_MASK_SECRETS",
    "max_json_depth": "FUNES_MAX_JSON_DEPTH",
    "max_json_number_chars": "FUNES_MAX_JSON_NUMBER_CHARS",
    "max_turns": "FUNES_MAX_TURNS",
    "max_turn_chars": "FUNES_MAX_TURN_CHARS",
    "max_mcp_body_bytes": "FUNES_MAX_MCP_BODY_BYTES",
    "mcp_streams_per_token": "FUNES_MCP_STREAMS_PER_TOKEN",
    "mcp_stream_idle_s": "FUNES_MCP_STREAM_IDLE_S",
    # FUNES_LOG is shared with the engine and the CLI (funes_py.config); the service defaults to INFO.
    "log_level": "FUNES_LOG",
}

_TYPES: dict[str, type] = {f.name: f.type for f in dataclasses.fields(ServiceConfig)}  # type: ignore[misc]


def _parse(name: str, var: str, raw: str) -> Any:
    kind = str(_TYPES[name])
    try:
        if "bool" in kind:
            low = raw.strip().lower()
            if low in ("1", "true", "yes", "on"):
                return True
            if low in ("0", "false", "no", "off"):
                return False
            raise ValueError(raw)
        if "Path" in kind:
            return Path(raw).expanduser()
        if "float" in kind:
            return None if raw.strip().lower() == "none" else float(raw)
        if "int" in kind:
            return None if raw.strip().lower() == "none" else int(raw)
        return raw
    except ValueError:
        raise ValueError(f"{var}={raw!r} is not a valid {kind}") from None

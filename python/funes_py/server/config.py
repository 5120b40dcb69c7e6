"""Every setting of the recall service, in one dataclass with named defaults.

Each field carries its variable (`funes_py.config.env_field`) and is read by the one reader,
`funes_py.config.load`: flags given on the command line win over the environment, the environment wins
over the defaults. The README's configuration table lists each variable.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..config import DEFAULT_EMBEDDER, ConfigError, env_field, load
from ..convert.floors import Floors

# --- named defaults -------------------------------------------------------------------------------
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_DATA_DIR = str(Path.home() / ".local" / "share" / "funes-py" / "service")

# Read path. k=3, candidates=8, reranker off: the reference deployment's numbers, small enough that a
# recall costs one embedding and two short searches, and three passages fit the output cap.
DEFAULT_RECALL_K = 3
DEFAULT_RECALL_CANDIDATES = 8
DEFAULT_RECALL_RERANK = False
# None: the embedder's calibrated floors (funes_py.convert.floors: for the default int8 MiniLM an answer floor
# that rises with the memory's size, no per-passage floor), or none for a model that has none. 0 turns a
# floor off.
DEFAULT_RECALL_MIN_SIMILARITY: float | None = None
DEFAULT_RECALL_ANSWER_FLOOR: float | None = None
DEFAULT_RECALL_ANSWER_FLOOR_PER_DECADE: float | None = None
# A query naming identifiers (P-7, MT-5120) gets only passages containing one of them: "did we ever talk
# about motor P-7?" answers nothing rather than the nearest fact about another motor.
DEFAULT_RECALL_IDENTIFIER_GUARD = True
DEFAULT_RECALL_MAX_CHARS = 4000
DEFAULT_RECALL_MAX_QUERY_CHARS = 1000
DEFAULT_MAX_CONCURRENT_RECALLS = 4
# The embedder is the library's default (funes_py.config.DEFAULT_EMBEDDER, int8 MiniLM): half the CPU per
# query of fp32, about 200 recalls/s at 16 clients on 2 cores instead of 140.
# Threads per query embedding (FUNES_QUERY_THREADS overrides): recalls run concurrently here, and one thread
# each is the most recalls per core (the library's default of 2 is for the lowest latency on an idle machine).
DEFAULT_QUERY_THREADS = 1
DEFAULT_RECALL_TIMEOUT_S = 10.0
# A tenant's first recall after its engine opens reads the memory into RAM (the resident copy): 2 s at 70,000
# passages, 13 s at 700,000 (benches/RESULTS.md, "Recall as memories grow"). Under FUNES_RECALL_TIMEOUT_S a
# large memory's first call answered "unavailable" while the copy went on loading; it gets this long instead.
DEFAULT_RECALL_COLD_TIMEOUT_S = 120.0

# Tenants.
DEFAULT_MAX_OPEN_TENANTS = 64
DEFAULT_TENANT_IDLE_S = 1800.0
# Replicas sharing a bucket: how often one looks for writes that another acknowledged and never indexed
# (it died), in the tenants it holds open (one LIST request per open tenant each time). funes_py/tenancy/storage.py.
DEFAULT_RECONCILE_S = 30.0

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

# Plain `tools/call`s of the recall tool answered by the guard rather than the SDK's per-request session
# (server/mcp_fast.py): the same JSON, about 2 ms less server CPU a call (5.4 -> 3.3 ms at 16 clients, RESULTS
# "Recall service through MCP"). Off only to compare the two.
DEFAULT_MCP_FAST_PATH = True

DEFAULT_LOG_LEVEL = "INFO"


@dataclasses.dataclass(frozen=True)
class ServiceConfig:
    host: str = env_field("FUNES_HOST", DEFAULT_HOST, "interface to bind (`--host`); the container uses `0.0.0.0`")
    port: int = env_field("FUNES_PORT", DEFAULT_PORT, "TCP port (`--port`)")
    # A path, or `s3://bucket/prefix` shared by every replica (funes_py/tenancy/storage.py; AWS_* variables as for Lance).
    data_dir: str = env_field(
        "FUNES_DATA", DEFAULT_DATA_DIR, "where tenants live (`--data`): a directory, or `s3://bucket/prefix` shared by replicas"
    )

    # Auth. The read path takes a bearer token (a static token or an HS256 JWT); the write path takes
    # only the ingest key, so an agent's token can never write or delete.
    tokens_file: Path | None = env_field(
        "FUNES_TOKENS_FILE", None, 'JSON `{"<token>": "<user>"}` of static bearer tokens (`--tokens-file`); read at start-up'
    )
    jwt_secret: str | None = dataclasses.field(
        default=None, repr=False, metadata={"env": "FUNES_JWT_SECRET", "help": "HS256 secret; a JWT's user is `sub`, else `client_id`"}
    )
    jwt_audience: str | None = env_field("FUNES_JWT_AUDIENCE", None, "when set, a JWT must carry this `aud`")
    ingest_key: str | None = dataclasses.field(
        default=None, repr=False, metadata={"env": "FUNES_INGEST_KEY", "help": "the key the gateway sends in `x-ingest-key`"}
    )
    metrics_token: str | None = dataclasses.field(
        default=None, repr=False,
        metadata={"env": "FUNES_METRICS_TOKEN", "help": "bearer token `GET /metrics` requires; unset: loopback clients only"},
    )

    # Models: the service's own, so this object is its whole configuration.
    embedder: str = env_field("FUNES_EMBEDDER", DEFAULT_EMBEDDER, "embedding model")
    reranker: str | None = env_field("FUNES_RERANKER", None, "cross-encoder for FUNES_RECALL_RERANK")
    query_threads: int = env_field("FUNES_QUERY_THREADS", DEFAULT_QUERY_THREADS, "threads per query embedding")

    recall_k: int = env_field("FUNES_RECALL_K", DEFAULT_RECALL_K, "passages per answer")
    recall_candidates: int = env_field("FUNES_RECALL_CANDIDATES", DEFAULT_RECALL_CANDIDATES, "candidates per retriever before fusion")
    recall_rerank: bool = env_field("FUNES_RECALL_RERANK", DEFAULT_RECALL_RERANK, "rerank with the cross-encoder")
    # The relevance floor (cosine similarity to the query) below which a passage is not returned.
    recall_min_similarity: float | None = env_field(
        "FUNES_RECALL_MIN_SIMILARITY",
        DEFAULT_RECALL_MIN_SIMILARITY,
        "relevance floor: passages whose cosine to the query is lower are dropped; unset: the embedder's calibrated one, 0: off",
    )
    recall_answer_floor: float | None = env_field(
        "FUNES_RECALL_ANSWER_FLOOR",
        DEFAULT_RECALL_ANSWER_FLOOR,
        "answer nothing when the query names no identifier and no passage reaches this cosine; unset: the embedder's calibrated one, 0: off",
    )
    recall_answer_floor_per_decade: float | None = env_field(
        "FUNES_RECALL_ANSWER_FLOOR_PER_DECADE",
        DEFAULT_RECALL_ANSWER_FLOOR_PER_DECADE,
        "how much the answer floor rises per tenfold passages above the engine's ANSWER_FLOOR_BASE_ROWS; unset: the embedder's calibrated one, 0: fixed",
    )
    recall_identifier_guard: bool = env_field(
        "FUNES_RECALL_IDENTIFIER_GUARD", DEFAULT_RECALL_IDENTIFIER_GUARD, "identifier guard"
    )
    # None leaves the engine's own default in force, so this file does not repeat the engine's numbers.
    recall_neighbors: int | None = env_field("FUNES_RECALL_NEIGHBORS", None, "turns shown before and after each hit")
    recall_half_life_days: float | None = env_field("FUNES_RECALL_HALF_LIFE_DAYS", None, "recency half-life")
    recall_max_chars: int = env_field("FUNES_RECALL_MAX_CHARS", DEFAULT_RECALL_MAX_CHARS, "cap on one answer")
    recall_max_query_chars: int = env_field(
        "FUNES_RECALL_MAX_QUERY_CHARS", DEFAULT_RECALL_MAX_QUERY_CHARS, "longer queries are truncated"
    )
    max_concurrent_recalls: int = env_field(
        "FUNES_MAX_CONCURRENT_RECALLS", DEFAULT_MAX_CONCURRENT_RECALLS, "recalls running at once (threads)"
    )
    recall_timeout_s: float = env_field("FUNES_RECALL_TIMEOUT_S", DEFAULT_RECALL_TIMEOUT_S, "per call, queueing included")
    recall_cold_timeout_s: float = env_field(
        "FUNES_RECALL_COLD_TIMEOUT_S", DEFAULT_RECALL_COLD_TIMEOUT_S, "a tenant's first recall after its engine opens (reads the memory)"
    )

    max_open_tenants: int = env_field("FUNES_MAX_OPEN_TENANTS", DEFAULT_MAX_OPEN_TENANTS, "warm engines kept")
    tenant_idle_s: float = env_field("FUNES_TENANT_IDLE_S", DEFAULT_TENANT_IDLE_S, "an engine unused this long is closed")
    reconcile_s: float = env_field(
        "FUNES_RECONCILE_S", DEFAULT_RECONCILE_S,
        "on s3://, how often a replica looks for writes that another acknowledged and never indexed, in the tenants it holds",
    )

    index_debounce_s: float = env_field("FUNES_INDEX_DEBOUNCE_S", DEFAULT_INDEX_DEBOUNCE_S, "quiet time before an index run")
    index_max_wait_s: float = env_field("FUNES_INDEX_MAX_WAIT_S", DEFAULT_INDEX_MAX_WAIT_S, "longest wait for an index run")
    index_workers: int = env_field("FUNES_INDEX_WORKERS", DEFAULT_INDEX_WORKERS, "index runs at once")
    max_body_bytes: int = env_field("FUNES_MAX_BODY_BYTES", DEFAULT_MAX_BODY_BYTES, "larger ingest bodies get 413")
    mask_secrets: bool = env_field("FUNES_MASK_SECRETS", DEFAULT_MASK_SECRETS, "mask credential shapes before storing")

    max_json_depth: int = env_field(
        "FUNES_MAX_JSON_DEPTH", DEFAULT_MAX_JSON_DEPTH, f"request bodies nested deeper get 400 (at most {MAX_JSON_DEPTH_CEILING})"
    )
    max_json_number_chars: int = env_field(
        "FUNES_MAX_JSON_NUMBER_CHARS", DEFAULT_MAX_JSON_NUMBER_CHARS, "a longer number literal in a request body gets 400"
    )
    max_turns: int = env_field("FUNES_MAX_TURNS", DEFAULT_MAX_TURNS, "turns in one `POST /turns`; more get 400")
    max_turn_chars: int = env_field("FUNES_MAX_TURN_CHARS", DEFAULT_MAX_TURN_CHARS, "characters in one turn's text; more get 400")
    max_mcp_body_bytes: int = env_field("FUNES_MAX_MCP_BODY_BYTES", DEFAULT_MAX_MCP_BODY_BYTES, "larger `POST /mcp` bodies get 413")
    mcp_streams_per_token: int = env_field(
        "FUNES_MCP_STREAMS_PER_TOKEN", DEFAULT_MCP_STREAMS_PER_TOKEN, "open `GET /mcp` event streams per bearer token; more get 429"
    )
    mcp_stream_idle_s: float = env_field(
        "FUNES_MCP_STREAM_IDLE_S", DEFAULT_MCP_STREAM_IDLE_S, "a `GET /mcp` stream with nothing but keep-alive pings this long is closed"
    )

    mcp_fast_path: bool = env_field(
        "FUNES_MCP_FAST_PATH", DEFAULT_MCP_FAST_PATH, "plain recall calls answered without the MCP SDK's per-request session"
    )

    # FUNES_LOG is shared with the library and the CLI; the service defaults to INFO.
    log_level: str = env_field("FUNES_LOG", DEFAULT_LOG_LEVEL, "log level")

    @classmethod
    def load(cls, env: Mapping[str, str] | None = None, **flags: Any) -> ServiceConfig:
        """Defaults, then `FUNES_*` from `env` (os.environ when None), then `flags` that are not None."""
        return load(cls, env, **flags)

    def validate(self) -> None:
        positive = {
            "FUNES_RECALL_K": self.recall_k,
            "FUNES_RECALL_CANDIDATES": self.recall_candidates,
            "FUNES_RECALL_MAX_CHARS": self.recall_max_chars,
            "FUNES_MAX_CONCURRENT_RECALLS": self.max_concurrent_recalls,
            "FUNES_RECALL_TIMEOUT_S": self.recall_timeout_s,
            "FUNES_RECALL_COLD_TIMEOUT_S": self.recall_cold_timeout_s,
            "FUNES_MAX_OPEN_TENANTS": self.max_open_tenants,
            "FUNES_INDEX_WORKERS": self.index_workers,
            "FUNES_MAX_BODY_BYTES": self.max_body_bytes,
            "FUNES_QUERY_THREADS": self.query_threads,
            "FUNES_RECALL_MAX_QUERY_CHARS": self.recall_max_query_chars,
            "FUNES_MAX_JSON_DEPTH": self.max_json_depth,
            "FUNES_MAX_JSON_NUMBER_CHARS": self.max_json_number_chars,
            "FUNES_MAX_TURNS": self.max_turns,
            "FUNES_MAX_TURN_CHARS": self.max_turn_chars,
            "FUNES_MAX_MCP_BODY_BYTES": self.max_mcp_body_bytes,
            "FUNES_MCP_STREAMS_PER_TOKEN": self.mcp_streams_per_token,
            "FUNES_MCP_STREAM_IDLE_S": self.mcp_stream_idle_s,
            "FUNES_RECONCILE_S": self.reconcile_s,
        }
        for var, value in positive.items():
            if value <= 0:
                raise ConfigError(f"{var} must be positive, got {value}")
        if self.index_debounce_s < 0 or self.index_max_wait_s < self.index_debounce_s:
            raise ConfigError("FUNES_INDEX_DEBOUNCE_S must be >= 0 and <= FUNES_INDEX_MAX_WAIT_S")
        if self.max_json_depth > MAX_JSON_DEPTH_CEILING:
            # Python's JSON parser recurses: past about 1,000 levels it fails on its own, before our check.
            raise ConfigError(f"FUNES_MAX_JSON_DEPTH must be at most {MAX_JSON_DEPTH_CEILING}, got {self.max_json_depth}")
        if not 0 < self.port < 65536:
            raise ConfigError(f"FUNES_PORT must be a TCP port, got {self.port}")

    def recall_options(self, calibrated: Floors | None = None) -> Any:
        """The `RecallOptions` of every tool call: the service's numbers, the engine's defaults elsewhere.
        `calibrated`: the loaded embedder's floors, used where FUNES_RECALL_MIN_SIMILARITY,
        FUNES_RECALL_ANSWER_FLOOR or FUNES_RECALL_ANSWER_FLOOR_PER_DECADE is unset."""
        from ..options import RecallOptions

        calibrated = calibrated or Floors()
        floor = self.recall_min_similarity if self.recall_min_similarity is not None else calibrated.min_similarity
        answer = self.recall_answer_floor if self.recall_answer_floor is not None else calibrated.answer_floor
        rise = self.recall_answer_floor_per_decade
        rise = calibrated.answer_floor_per_decade if rise is None else rise
        overrides: dict[str, Any] = {
            "k": self.recall_k,
            "candidates": self.recall_candidates,
            "rerank": self.recall_rerank,
            "identifier_guard": self.recall_identifier_guard,
            "min_similarity": floor if floor else None,
            "answer_floor": answer if answer else None,
            "answer_floor_per_decade": rise,
            "neighbors": self.recall_neighbors,
            "half_life_days": self.recall_half_life_days,
        }
        return RecallOptions().replace(**{k: v for k, v in overrides.items() if v is not None})

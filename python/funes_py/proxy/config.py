"""Every setting of the proxy, in one frozen dataclass with named defaults. Each field carries its variable
(`funes_py.config.env_field`); `ProxyConfig.load(env, **flags)` reads them with the package's one reader:
defaults, then the environment, then command-line flags that are not None.
"""

from __future__ import annotations

import dataclasses
import ipaddress
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..config import env_field, load

# --- named defaults -------------------------------------------------------------------------------
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8096
DEFAULT_DATA_DIR = Path.home() / ".local" / "share" / "funes-py" / "proxy"
ENGINES = ("auto", "llama.cpp", "openai")

# Masking: past TRIGGER x window the oldest eligible tool outputs are hidden down to TARGET x window, in one
# batch that must free at least MIN_BATCH x window (small batches would break the engine's prefix cache for
# little gain). Eligible: at least MIN_MASK_TOKENS long, at least MIN_AGE_TURNS assistant turns old, never the
# newest tool output.
DEFAULT_MASK_TRIGGER = 0.6
DEFAULT_MASK_TARGET = 0.35
DEFAULT_MIN_BATCH = 0.1
DEFAULT_MIN_MASK_TOKENS = 200
DEFAULT_MIN_AGE_TURNS = 2
# Room kept for the answer when the client names no max_tokens: 0 means window / 8 (mnemonic's 16K of 128K).
DEFAULT_RESPONSE_TOKENS = 0
# A new segment keeps at most this share of the window as its verbatim tail.
DEFAULT_TAIL_SHARE = 0.3
DEFAULT_NOTES_TOKENS = 0  # 0: window / 8, at least 256

# The recall tool.
DEFAULT_MAX_RECALL_ROUNDS = 3
DEFAULT_RECALL_K = 5
DEFAULT_RECALL_MAX_TOKENS = 0  # 0: window / 16, between 256 and 4,000
# MiniLM cosine similarity below which a passage is not worth the model's window. Tool output (logs, code)
# scores low even for its own question (a release-check log: 0.29 for "what were the build id, the p95
# latency and the skipped migrations ..."), so the floor is low and the identifier guard does the sharper
# work. Auto-recall uses the same floor: a hint costs one line. Not tuned on a held-out set yet.
DEFAULT_RECALL_MIN_SIMILARITY = 0.2
AUTO_RECALL_MODES = ("hint", "inject", "off")
DEFAULT_AUTO_RECALL = "hint"
DEFAULT_AUTO_RECALL_MIN_SIMILARITY = 0.2

# llama-server's KV state: save the pinned slot after a conversation has been idle this long.
DEFAULT_AUTOSAVE_IDLE_S = 30.0
DEFAULT_AUTOSAVE_MIN_TOKENS = 512
DEFAULT_SLOT_ID = 0

# The archive's engine: a new output is indexed this long after the last write (or at most MAX_WAIT after
# the first), so recall finds it within about a second and a burst of writes costs one index run.
DEFAULT_INDEX_DEBOUNCE_S = 0.2
DEFAULT_INDEX_MAX_WAIT_S = 1.0
DEFAULT_MASK_SECRETS = False  # the archive is verbatim by default: recall(id) returns the exact bytes

DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024
# Per message, as the recall service caps a turn (FUNES_MAX_TURN_CHARS): a pasted log fits, a 60 MB paste is
# refused before it is archived and embedded (72,088 chunks for one message no window could hold).
DEFAULT_MAX_MESSAGE_CHARS = 4_000_000
# Request bodies nest: a tool's JSON Schema a dozen levels. Deeper is refused with 400 before Python's parser
# recurses (it gives up near 1,000 levels with a RecursionError, which was a 500).
DEFAULT_MAX_JSON_DEPTH = 64
MAX_JSON_NUMBER_CHARS = 40  # as the service: a 128-bit integer has 39 digits
DEFAULT_CONNECT_TIMEOUT_S = 5.0
DEFAULT_TIMEOUT_S = 600.0  # a cold 32K prompt on a small GPU takes minutes
DEFAULT_LOG_LEVEL = "INFO"


@dataclasses.dataclass(frozen=True)
class ProxyConfig:
    upstream: str = env_field("FUNES_PROXY_UPSTREAM", "", "the OpenAI-compatible engine behind the proxy (`--upstream`)")
    host: str = env_field("FUNES_PROXY_HOST", DEFAULT_HOST, "interface to bind (`--host`); loopback only unless a tokens file is set")
    port: int = env_field("FUNES_PROXY_PORT", DEFAULT_PORT, "TCP port (`--port`)")
    data_dir: Path = env_field("FUNES_PROXY_DATA", DEFAULT_DATA_DIR, "archive, decisions and memories (`--data`)")
    # None: read from the engine (llama.cpp /props)
    window: int | None = env_field("FUNES_PROXY_WINDOW", None, "context window in tokens (`--window`)")
    engine: str = env_field("FUNES_PROXY_ENGINE", "auto", "auto, llama.cpp or openai (`--engine`)")
    upstream_api_key: str | None = dataclasses.field(default=None, repr=False, metadata={"env": "FUNES_PROXY_UPSTREAM_API_KEY", "help": "bearer key sent to the upstream"})
    tokens_file: Path | None = env_field("FUNES_TOKENS_FILE", None, "JSON {token: user}: each user is a tenant")

    mask_trigger: float = env_field("FUNES_PROXY_MASK_TRIGGER", DEFAULT_MASK_TRIGGER, "share of the window past which old tool outputs are hidden")
    mask_target: float = env_field("FUNES_PROXY_MASK_TARGET", DEFAULT_MASK_TARGET, "share of the window a mask batch aims for")
    min_batch: float = env_field("FUNES_PROXY_MIN_BATCH", DEFAULT_MIN_BATCH, "smallest share of the window a batch must free")
    min_mask_tokens: int = env_field("FUNES_PROXY_MIN_MASK_TOKENS", DEFAULT_MIN_MASK_TOKENS, "shorter outputs are never hidden")
    min_age_turns: int = env_field("FUNES_PROXY_MIN_AGE_TURNS", DEFAULT_MIN_AGE_TURNS, "assistant turns an output must be old")
    response_tokens: int = env_field("FUNES_PROXY_RESPONSE_TOKENS", DEFAULT_RESPONSE_TOKENS, "room kept for an answer without max_tokens")
    tail_share: float = env_field("FUNES_PROXY_TAIL_SHARE", DEFAULT_TAIL_SHARE, "largest verbatim tail of a new segment")
    notes_tokens: int = env_field("FUNES_PROXY_NOTES_TOKENS", DEFAULT_NOTES_TOKENS, "max_tokens of the handoff-notes request")

    max_recall_rounds: int = env_field("FUNES_PROXY_MAX_RECALL_ROUNDS", DEFAULT_MAX_RECALL_ROUNDS, "internal recall rounds per request")
    recall_k: int = env_field("FUNES_PROXY_RECALL_K", DEFAULT_RECALL_K, "passages per recall(query)")
    recall_max_tokens: int = env_field("FUNES_PROXY_RECALL_MAX_TOKENS", DEFAULT_RECALL_MAX_TOKENS, "cap on one recall answer")
    recall_min_similarity: float = env_field("FUNES_PROXY_RECALL_MIN_SIMILARITY", DEFAULT_RECALL_MIN_SIMILARITY, "relevance floor of recall(query)")
    auto_recall: str = env_field("FUNES_PROXY_AUTO_RECALL", DEFAULT_AUTO_RECALL, "hint, inject or off: what a new user message gets from the hidden outputs")
    auto_recall_min_similarity: float = env_field("FUNES_PROXY_AUTO_RECALL_MIN_SIMILARITY", DEFAULT_AUTO_RECALL_MIN_SIMILARITY, "floor of auto-recall")

    slot_id: int = env_field("FUNES_PROXY_SLOT_ID", DEFAULT_SLOT_ID, "llama-server slot the proxy pins")
    slot_dir: Path | None = env_field("FUNES_PROXY_SLOT_DIR", None, "llama-server's --slot-save-path, so forgetting a conversation deletes its slot files")
    autosave_idle_s: float = env_field("FUNES_PROXY_AUTOSAVE_IDLE_S", DEFAULT_AUTOSAVE_IDLE_S, "idle seconds before the slot is saved")
    autosave_min_tokens: int = env_field("FUNES_PROXY_AUTOSAVE_MIN_TOKENS", DEFAULT_AUTOSAVE_MIN_TOKENS, "smaller prompts are not saved")

    index_debounce_s: float = env_field("FUNES_PROXY_INDEX_DEBOUNCE_S", DEFAULT_INDEX_DEBOUNCE_S, "quiet time before an archive index run")
    index_max_wait_s: float = env_field("FUNES_PROXY_INDEX_MAX_WAIT_S", DEFAULT_INDEX_MAX_WAIT_S, "longest wait for an index run")
    mask_secrets: bool = env_field("FUNES_PROXY_MASK_SECRETS", DEFAULT_MASK_SECRETS, "mask credential shapes before archiving")
    max_body_bytes: int = env_field("FUNES_PROXY_MAX_BODY_BYTES", DEFAULT_MAX_BODY_BYTES, "larger request bodies get 413")
    max_message_chars: int = env_field("FUNES_PROXY_MAX_MESSAGE_CHARS", DEFAULT_MAX_MESSAGE_CHARS, "characters in one message; more get 400 and nothing is archived")
    max_json_depth: int = env_field("FUNES_PROXY_MAX_JSON_DEPTH", DEFAULT_MAX_JSON_DEPTH, "request bodies nested deeper get 400")
    metrics_token: str | None = dataclasses.field(default=None, repr=False, metadata={"env": "FUNES_METRICS_TOKEN", "help": "bearer token for `GET /metrics`; unset: loopback clients only"})
    connect_timeout_s: float = env_field("FUNES_PROXY_CONNECT_TIMEOUT_S", DEFAULT_CONNECT_TIMEOUT_S, "upstream connect timeout (then 502)")
    timeout_s: float = env_field("FUNES_PROXY_TIMEOUT_S", DEFAULT_TIMEOUT_S, "upstream read timeout (then 504)")
    log_level: str = env_field("FUNES_LOG", DEFAULT_LOG_LEVEL, "log level; logs go to stderr")

    @classmethod
    def load(cls, env: Mapping[str, str] | None = None, **flags: Any) -> ProxyConfig:
        """Defaults, then the variables in `env` (os.environ when None), then `flags` that are not None."""
        return load(cls, env, **flags)

    def validate(self) -> None:
        if not self.upstream.startswith(("http://", "https://")):
            raise ValueError(f"--upstream (FUNES_PROXY_UPSTREAM) must be an http(s) URL, got {self.upstream!r}")
        if self.engine not in ENGINES:
            raise ValueError(f"--engine must be one of {', '.join(ENGINES)}, got {self.engine!r}")
        if self.auto_recall not in AUTO_RECALL_MODES:
            raise ValueError(f"FUNES_PROXY_AUTO_RECALL must be one of {', '.join(AUTO_RECALL_MODES)}")
        if self.window is not None and self.window < 1024:
            raise ValueError(f"--window must be at least 1024 tokens, got {self.window}")
        if not 0 < self.mask_target < self.mask_trigger < 1:
            raise ValueError("need 0 < FUNES_PROXY_MASK_TARGET < FUNES_PROXY_MASK_TRIGGER < 1")
        if not 0 <= self.min_batch < 1 or not 0 < self.tail_share < 1:
            raise ValueError("FUNES_PROXY_MIN_BATCH and FUNES_PROXY_TAIL_SHARE are shares of the window, below 1")
        if not 0 < self.port < 65536:
            raise ValueError(f"--port must be a TCP port, got {self.port}")
        for name in ("max_body_bytes", "max_message_chars", "max_json_depth", "max_recall_rounds", "recall_k", "timeout_s", "connect_timeout_s"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{_VAR_OF[name]} must be positive")
        if self.engine == "openai" and self.window is None:
            raise ValueError("--window is required with --engine openai (the engine does not report its window)")

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# Field -> its variable, for messages.
_VAR_OF = {f.name: f.metadata["env"] for f in dataclasses.fields(ProxyConfig) if "env" in f.metadata}

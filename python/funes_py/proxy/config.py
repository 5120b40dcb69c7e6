"""Every setting of the proxy, in one frozen dataclass with named defaults; the one reader of its variables.

`ProxyConfig.load(env, **flags)`: defaults, then the environment, then command-line flags that are not None.
`VARIABLES` (variable -> field, default, meaning) is what the README's Configuration table lists.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

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
DEFAULT_CONNECT_TIMEOUT_S = 5.0
DEFAULT_TIMEOUT_S = 600.0  # a cold 32K prompt on a small GPU takes minutes
DEFAULT_LOG_LEVEL = "INFO"


@dataclasses.dataclass(frozen=True)
class ProxyConfig:
    upstream: str = ""
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    data_dir: Path = DEFAULT_DATA_DIR
    window: int | None = None  # None: read from the engine (llama.cpp /props)
    engine: str = "auto"
    upstream_api_key: str | None = dataclasses.field(default=None, repr=False)
    tokens_file: Path | None = None

    mask_trigger: float = DEFAULT_MASK_TRIGGER
    mask_target: float = DEFAULT_MASK_TARGET
    min_batch: float = DEFAULT_MIN_BATCH
    min_mask_tokens: int = DEFAULT_MIN_MASK_TOKENS
    min_age_turns: int = DEFAULT_MIN_AGE_TURNS
    response_tokens: int = DEFAULT_RESPONSE_TOKENS
    tail_share: float = DEFAULT_TAIL_SHARE
    notes_tokens: int = DEFAULT_NOTES_TOKENS

    max_recall_rounds: int = DEFAULT_MAX_RECALL_ROUNDS
    recall_k: int = DEFAULT_RECALL_K
    recall_max_tokens: int = DEFAULT_RECALL_MAX_TOKENS
    recall_min_similarity: float = DEFAULT_RECALL_MIN_SIMILARITY
    auto_recall: str = DEFAULT_AUTO_RECALL
    auto_recall_min_similarity: float = DEFAULT_AUTO_RECALL_MIN_SIMILARITY

    slot_id: int = DEFAULT_SLOT_ID
    slot_dir: Path | None = None
    autosave_idle_s: float = DEFAULT_AUTOSAVE_IDLE_S
    autosave_min_tokens: int = DEFAULT_AUTOSAVE_MIN_TOKENS

    index_debounce_s: float = DEFAULT_INDEX_DEBOUNCE_S
    index_max_wait_s: float = DEFAULT_INDEX_MAX_WAIT_S
    mask_secrets: bool = DEFAULT_MASK_SECRETS
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S
    timeout_s: float = DEFAULT_TIMEOUT_S
    log_level: str = DEFAULT_LOG_LEVEL

    @classmethod
    def load(cls, env: Mapping[str, str] | None = None, **flags: Any) -> ProxyConfig:
        """Defaults, then the variables in `env` (os.environ when None), then `flags` that are not None."""
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        for var, (name, _, _) in VARIABLES.items():
            raw = env.get(var, "")
            if raw.strip() != "":
                values[name] = _parse(name, var, raw)
        for name, value in flags.items():
            if value is not None:
                values[name] = Path(value).expanduser() if _kind(name) == "Path" else value
        cfg = cls(**values)
        cfg.validate()
        return cfg

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
        for name in ("max_body_bytes", "max_recall_rounds", "recall_k", "timeout_s", "connect_timeout_s"):
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


# Variable -> (field, default as documented, meaning). The README's Configuration table repeats this.
VARIABLES: dict[str, tuple[str, str, str]] = {
    "FUNES_PROXY_UPSTREAM": ("upstream", "(none)", "the OpenAI-compatible engine behind the proxy (`--upstream`)"),
    "FUNES_PROXY_HOST": ("host", DEFAULT_HOST, "interface to bind (`--host`); loopback only unless a tokens file is set"),
    "FUNES_PROXY_PORT": ("port", str(DEFAULT_PORT), "TCP port (`--port`)"),
    "FUNES_PROXY_DATA": ("data_dir", "~/.local/share/funes-py/proxy", "archive, decisions and memories (`--data`)"),
    "FUNES_PROXY_WINDOW": ("window", "(from the engine)", "context window in tokens (`--window`)"),
    "FUNES_PROXY_ENGINE": ("engine", "auto", "auto, llama.cpp or openai (`--engine`)"),
    "FUNES_PROXY_UPSTREAM_API_KEY": ("upstream_api_key", "(none)", "bearer key sent to the upstream"),
    "FUNES_TOKENS_FILE": ("tokens_file", "(none)", "JSON {token: user}: each user is a tenant"),
    "FUNES_PROXY_MASK_TRIGGER": ("mask_trigger", str(DEFAULT_MASK_TRIGGER), "share of the window past which old tool outputs are hidden"),
    "FUNES_PROXY_MASK_TARGET": ("mask_target", str(DEFAULT_MASK_TARGET), "share of the window a mask batch aims for"),
    "FUNES_PROXY_MIN_BATCH": ("min_batch", str(DEFAULT_MIN_BATCH), "smallest share of the window a batch must free"),
    "FUNES_PROXY_MIN_MASK_TOKENS": ("min_mask_tokens", str(DEFAULT_MIN_MASK_TOKENS), "shorter outputs are never hidden"),
    "FUNES_PROXY_MIN_AGE_TURNS": ("min_age_turns", str(DEFAULT_MIN_AGE_TURNS), "assistant turns an output must be old"),
    "FUNES_PROXY_RESPONSE_TOKENS": ("response_tokens", "window / 8", "room kept for an answer without max_tokens"),
    "FUNES_PROXY_TAIL_SHARE": ("tail_share", str(DEFAULT_TAIL_SHARE), "largest verbatim tail of a new segment"),
    "FUNES_PROXY_NOTES_TOKENS": ("notes_tokens", "window / 8", "max_tokens of the handoff-notes request"),
    "FUNES_PROXY_MAX_RECALL_ROUNDS": ("max_recall_rounds", str(DEFAULT_MAX_RECALL_ROUNDS), "internal recall rounds per request"),
    "FUNES_PROXY_RECALL_K": ("recall_k", str(DEFAULT_RECALL_K), "passages per recall(query)"),
    "FUNES_PROXY_RECALL_MAX_TOKENS": ("recall_max_tokens", "window / 16", "cap on one recall answer"),
    "FUNES_PROXY_RECALL_MIN_SIMILARITY": ("recall_min_similarity", str(DEFAULT_RECALL_MIN_SIMILARITY), "relevance floor of recall(query)"),
    "FUNES_PROXY_AUTO_RECALL": ("auto_recall", DEFAULT_AUTO_RECALL, "hint, inject or off: what a new user message gets from the hidden outputs"),
    "FUNES_PROXY_AUTO_RECALL_MIN_SIMILARITY": ("auto_recall_min_similarity", str(DEFAULT_AUTO_RECALL_MIN_SIMILARITY), "floor of auto-recall"),
    "FUNES_PROXY_SLOT_ID": ("slot_id", str(DEFAULT_SLOT_ID), "llama-server slot the proxy pins"),
    "FUNES_PROXY_SLOT_DIR": ("slot_dir", "(none)", "llama-server's --slot-save-path, so forgetting a conversation deletes its slot files"),
    "FUNES_PROXY_AUTOSAVE_IDLE_S": ("autosave_idle_s", str(DEFAULT_AUTOSAVE_IDLE_S), "idle seconds before the slot is saved"),
    "FUNES_PROXY_AUTOSAVE_MIN_TOKENS": ("autosave_min_tokens", str(DEFAULT_AUTOSAVE_MIN_TOKENS), "smaller prompts are not saved"),
    "FUNES_PROXY_INDEX_DEBOUNCE_S": ("index_debounce_s", str(DEFAULT_INDEX_DEBOUNCE_S), "quiet time before an archive index run"),
    "FUNES_PROXY_INDEX_MAX_WAIT_S": ("index_max_wait_s", str(DEFAULT_INDEX_MAX_WAIT_S), "longest wait for an index run"),
    "FUNES_PROXY_MASK_SECRETS": ("mask_secrets", "false", "mask credential shapes before archiving"),
    "FUNES_PROXY_MAX_BODY_BYTES": ("max_body_bytes", str(DEFAULT_MAX_BODY_BYTES), "larger request bodies get 413"),
    "FUNES_PROXY_CONNECT_TIMEOUT_S": ("connect_timeout_s", str(DEFAULT_CONNECT_TIMEOUT_S), "upstream connect timeout (then 502)"),
    "FUNES_PROXY_TIMEOUT_S": ("timeout_s", str(DEFAULT_TIMEOUT_S), "upstream read timeout (then 504)"),
    "FUNES_LOG": ("log_level", DEFAULT_LOG_LEVEL, "log level; logs go to stderr"),
}
_VAR_OF = {name: var for var, (name, _, _) in VARIABLES.items()}


def _kind(name: str) -> str:
    t = str({f.name: f.type for f in dataclasses.fields(ProxyConfig)}[name])
    for kind in ("Path", "bool", "float", "int"):
        if kind in t:
            return kind
    return "str"


def _parse(name: str, var: str, raw: str) -> Any:
    kind = _kind(name)
    raw = raw.strip()
    try:
        if kind == "bool":
            if raw.lower() in ("1", "true", "yes", "on"):
                return True
            if raw.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(raw)
        if kind == "Path":
            return Path(raw).expanduser()
        if kind == "float":
            return float(raw)
        if kind == "int":
            return int(raw)
        return raw
    except ValueError:
        raise ValueError(f"{var}={raw!r} is not a valid {kind}") from None

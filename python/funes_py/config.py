"""The one reader of ``FUNES_*`` environment variables.

A configuration is a frozen dataclass whose fields carry their variable (``env_field``); ``load`` fills one
from defaults, then the environment, then explicit values (command-line flags), parsing each by the field's
type. ``Settings`` is the library's and the CLI's; the service's (``funes_py.server.config.ServiceConfig``)
and the proxy's are built the same way. The README's configuration table lists every variable
(``tests/test_readme_configuration.py`` keeps it complete).

Stdlib only: ``funes_py.convert`` reads its cache directory from here without loading the engine.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

C = TypeVar("C")

# The service's default embedder: all-MiniLM-L6-v2 quantized to int8 (built from the packaged fp32 weights on
# first use). Same hit@k as fp32 on the benchmarks, half the CPU per embedding.
DEFAULT_EMBEDDER = "sentence-transformers/all-MiniLM-L6-v2-int8"


def env_field(var: str, default: Any, help: str) -> Any:
    """A dataclass field read from the environment variable ``var`` (``help`` is its README text)."""
    return dataclasses.field(default=default, metadata={"env": var, "help": help})


class ConfigError(ValueError):
    """A variable's value cannot be parsed; the message names the variable."""


def load(cls: type[C], env: Mapping[str, str] | None = None, **explicit: Any) -> C:
    """``cls`` from its defaults, then ``env`` (``os.environ`` when None; empty values are unset), then the
    ``explicit`` values that are not None."""
    env = os.environ if env is None else env
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        var = f.metadata.get("env")
        if var and env.get(var, "") != "":
            values[f.name] = parse(hints[f.name], env[var], var)
    for name, value in explicit.items():
        if value is not None:
            values[name] = Path(value).expanduser() if _base(hints[name]) is Path else value
    cfg = cls(**values)
    validate = getattr(cfg, "validate", None)
    if validate is not None:
        validate()
    return cfg


def variables(cls: type) -> dict[str, str]:
    """``{variable: help}`` of a configuration class."""
    return {f.metadata["env"]: f.metadata["help"] for f in dataclasses.fields(cls) if "env" in f.metadata}


def _base(hint: Any) -> Any:
    """``Path | None`` → ``Path``."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        return args[0] if len(args) == 1 else hint
    return hint


def parse(hint: Any, raw: str, var: str) -> Any:
    """A variable's text as the field's type; ``none`` unsets an optional number."""
    kind = _base(hint)
    text = raw.strip()
    optional = kind is not hint
    try:
        if optional and text.lower() == "none":
            return None
        if kind is bool:
            if text.lower() in ("1", "true", "yes", "on"):
                return True
            if text.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(raw)
        if kind is Path:
            return Path(text).expanduser()
        if kind is int:
            return int(text)
        if kind is float:
            return float(text)
        return raw
    except ValueError:
        name = getattr(kind, "__name__", str(kind))
        raise ConfigError(f"{var}={raw!r} is not a valid {name}") from None


@dataclasses.dataclass(frozen=True)
class Settings:
    """The library's and the CLI's settings."""

    # Text, not a Path: it may be an s3://bucket/prefix URI (a Path would fold its "//"); `~` is expanded at use.
    home: str = env_field("FUNES_HOME", "~/.funes-py", "the memory the CLI uses when --home is not given (a directory or s3://bucket/prefix)")
    # None: the default embedder (all-MiniLM-L6-v2 int8, funes_py.convert.registry.DEFAULT_NAME).
    embedder: str | None = env_field("FUNES_EMBEDDER", None, "embedding model: a model directory or a model name")
    reranker: str | None = env_field("FUNES_RERANKER", None, "cross-encoder model directory or name; enables reranking")
    models_dir: Path = env_field(
        "FUNES_MODELS_DIR", Path("~/.cache/funes_py/models").expanduser(), "where converted ONNX models are cached"
    )
    ort_lib: str | None = env_field("FUNES_ORT_LIB", None, "path of libonnxruntime.so to load (default: the onnxruntime wheel's)")
    model_sessions: int = env_field("FUNES_MODEL_SESSIONS", 2, "ONNX sessions per model (concurrent forward passes)")
    # None: the caller's default (1: see inference::embedder::DEFAULT_QUERY_THREADS).
    query_threads: int | None = env_field(
        "FUNES_QUERY_THREADS",
        None,
        "threads for one query's embedding (default 1: as fast as two that do not spin, half the CPU of two that do)",
    )
    log_level: str = env_field("FUNES_LOG", "WARNING", "log level; logs go to stderr")
    # 8 bytes per character of the service's largest turn (FUNES_MAX_TURN_CHARS, 4,000,000): room for a turn at
    # that cap in the widest UTF-8 plus a second copy (Claude Code repeats a tool's output in `toolUseResult`).
    max_record_bytes: int = env_field(
        "FUNES_MAX_RECORD_BYTES",
        32 << 20,
        "`index`: the most one record may hold (a JSONL line, in bytes; an export's conversation, in characters); "
        "a longer one is skipped and reported with its place, and never read into memory whole",
    )
    # 4x the largest export measured (1.07 GB): refuses a zip bomb before it inflates, not a real export.
    max_member_bytes: int = env_field(
        "FUNES_MAX_MEMBER_BYTES", 4 << 30, "`index`: the most one zip member may inflate to; a larger one is reported and not read"
    )

    def validate(self) -> None:
        if self.model_sessions <= 0:
            raise ConfigError(f"FUNES_MODEL_SESSIONS must be positive, got {self.model_sessions}")
        if self.query_threads is not None and self.query_threads <= 0:
            raise ConfigError(f"FUNES_QUERY_THREADS must be positive, got {self.query_threads}")
        for var, value in (("FUNES_MAX_RECORD_BYTES", self.max_record_bytes), ("FUNES_MAX_MEMBER_BYTES", self.max_member_bytes)):
            if value <= 0:
                raise ConfigError(f"{var} must be positive, got {value}")


def settings(env: Mapping[str, str] | None = None) -> Settings:
    """Reads the environment now (not at import), so tests and callers can set variables first."""
    return load(Settings, env)


def configure_logging(level: str | None = None) -> None:
    """Logs to stderr (stdout may be a protocol channel), level from FUNES_LOG unless given."""
    logging.basicConfig(level=(level or settings().log_level).upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")

"""What the one-person mode reads and leaves out: ``<home>/personal.toml`` over named defaults.

One memory, one file beside it (a memory's sync belongs to the memory, so two homes never share cursors or
exclusions). Every key is optional; a missing file means the defaults::

    sources = ["~/work/exports"]          # read besides the formats' default locations
    default_sources = true                # ~/.claude/projects, ~/.codex/sessions, Cursor's transcripts
    exclude = ["**/subagents/**", "*/scheduled-*/*"]   # globs on a file's full path; these replace the defaults
    skip_marker = "funes:skip"            # a session holding it anywhere is never stored (and forgotten if it was)
    private_tag = "private"               # <private>...</private> spans are cut before storing
    debounce_ms = 300                     # the watcher waits this long for a burst of writes to end
    batch_mb = 16                         # new bytes per index run: a kill loses at most the run under way

Stdlib only (``tomllib``): the CLI, the stdio server and the page read it without the engine.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import os
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..config import ConfigError, settings

CONFIG_NAME = "personal.toml"
# Sub-agent transcripts repeat what their Task call and result already hold in the main session, and are most
# of some users' files; Claude Code writes them under <session>/subagents/.
DEFAULT_EXCLUDE = ("**/subagents/**",)
DEFAULT_SKIP_MARKER = "funes:skip"
DEFAULT_PRIVATE_TAG = "private"
DEFAULT_DEBOUNCE_MS = 300
# About 30 s of embedding on two cores for chat-like text; the cursors move after each run.
DEFAULT_BATCH_MB = 16
_KEYS = {"sources", "default_sources", "exclude", "skip_marker", "private_tag", "debounce_ms", "batch_mb"}


@dataclasses.dataclass(frozen=True)
class PersonalConfig:
    """The one-person mode's settings for the memory at ``home``."""

    home: Path
    sources: tuple[Path, ...] = ()
    default_sources: bool = True
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    skip_marker: str = DEFAULT_SKIP_MARKER
    private_tag: str = DEFAULT_PRIVATE_TAG
    debounce_ms: int = DEFAULT_DEBOUNCE_MS
    batch_mb: float = DEFAULT_BATCH_MB

    @property
    def file(self) -> Path:
        return self.home / CONFIG_NAME

    def roots(self) -> list[Path]:
        """The directories and files a sync reads: the given sources, then each format's default location
        that exists on this machine (a location with a ``*`` segment is expanded)."""
        return list(dict.fromkeys([*self.sources, *(default_locations() if self.default_sources else ())]))

    def excluded(self, path: str | os.PathLike[str]) -> str | None:
        """The exclude glob that matches ``path`` (its full path, ``~`` expanded), or None."""
        text = os.fspath(path)
        for pattern in self.exclude:
            if _glob_match(text, os.path.expanduser(pattern)):
                return pattern
        return None


def default_locations() -> list[Path]:
    """The agent formats' default locations that exist here (``sources.registry``; no export formats)."""
    from ..sources.registry import FORMATS

    out: list[Path] = []
    for fmt in FORMATS.values():
        for loc in fmt.locations:
            # "~/.cursor/projects/*/agent-transcripts": the part before the "*", where project folders come and go
            base = Path(os.path.expanduser(loc).partition("*")[0])
            if base.is_dir():
                out.append(base)
    return out


def _glob_match(path: str, pattern: str) -> bool:
    """``fnmatch`` where ``**/`` may also match nothing and a pattern with no ``/`` matches a name anywhere."""
    if "/" not in pattern:
        return any(fnmatch.fnmatchcase(part, pattern) for part in Path(path).parts)
    if fnmatch.fnmatchcase(path, pattern):
        return True
    # "**/subagents/**" should match "/x/subagents/a.jsonl" and a relative "subagents/a.jsonl"
    return pattern.startswith("**/") and fnmatch.fnmatchcase(path, pattern[3:])


def load_config(home: str | os.PathLike[str] | None = None, **flags: Any) -> PersonalConfig:
    """The settings of the memory at ``home`` (``$FUNES_HOME``, else ``~/.funes-py``): its ``personal.toml``,
    then ``flags`` that are not None (``sources`` from ``--source`` adds to the file's). ConfigError names
    the key of a value that is wrong."""
    root = Path(os.path.expanduser(os.fspath(home) if home is not None else settings().home))
    if "://" in os.fspath(root):
        raise ConfigError("the one-person mode keeps a local memory: --home must be a directory")
    values = _read(root / CONFIG_NAME)
    extra = flags.pop("sources", None)
    if extra:
        values["sources"] = (*values.get("sources", ()), *(Path(os.path.expanduser(str(p))) for p in extra))
    values.update({k: v for k, v in flags.items() if v is not None})
    return PersonalConfig(home=root, **values)


def _read(file: Path) -> dict[str, Any]:
    try:
        raw = tomllib.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(f"{file}: {e}") from None
    return _checked(raw, file)


def _checked(raw: Mapping[str, Any], file: Path) -> dict[str, Any]:
    unknown = set(raw) - _KEYS
    if unknown:
        raise ConfigError(f"{file}: unknown key(s) {', '.join(sorted(unknown))} (known: {', '.join(sorted(_KEYS))})")
    out: dict[str, Any] = {}
    if "sources" in raw:
        out["sources"] = tuple(Path(os.path.expanduser(s)) for s in _strings(raw["sources"], "sources", file))
    if "exclude" in raw:
        out["exclude"] = tuple(_strings(raw["exclude"], "exclude", file))
    for key in ("skip_marker", "private_tag"):
        if key in raw:
            if not isinstance(raw[key], str) or not raw[key].strip():
                raise ConfigError(f"{file}: `{key}` must be a non-empty string")
            out[key] = raw[key]
    if "default_sources" in raw:
        if not isinstance(raw["default_sources"], bool):
            raise ConfigError(f"{file}: `default_sources` must be true or false")
        out["default_sources"] = raw["default_sources"]
    if "debounce_ms" in raw:
        v = raw["debounce_ms"]
        if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= 60_000:
            raise ConfigError(f"{file}: `debounce_ms` must be a whole number of milliseconds, 0 to 60000")
        out["debounce_ms"] = v
    if "batch_mb" in raw:
        v = raw["batch_mb"]
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not 0 < v <= 4096:
            raise ConfigError(f"{file}: `batch_mb` must be a number of megabytes above 0, at most 4096")
        out["batch_mb"] = v
    return out


def _strings(value: Any, key: str, file: Path) -> Iterable[str]:
    if not isinstance(value, list) or not all(isinstance(s, str) and s.strip() for s in value):
        raise ConfigError(f"{file}: `{key}` must be a list of non-empty strings")
    return value

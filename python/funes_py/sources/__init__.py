"""Read the histories people already have and hand the engine their turns.

    path --discover--> Units (files, zip members) --unchanged?--> detect (by content) --adapter--> Source items
    --> Engine.index_sources (chunk, embed only what is new, store)

One module per format (`claude_code`, `codex`, `cursor`, `chatgpt`, `claude_ai`, `native`), each turning its
format into `.funes.jsonl` lines (secrets masked); `registry` lists them with their default locations,
`detect` recognises a file by content, `discover` walks a path or a zip, `jsonarray` streams a ~1 GB export,
`limits` bounds what one record and one zip member may hold (a JSONL line is read in bounded pieces), `cli`
is `funes-py sources`. Pure Python: nothing here loads the engine or a model."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from .common import Source, Unit
from .discover import UnknownFormat, check_explicit, items, units
from .registry import FORMATS, Format, get

__all__ = ["FORMATS", "Format", "Source", "Unit", "UnknownFormat", "get", "items", "plan", "sample_texts", "units"]

log = logging.getLogger("funes_py.sources")


def plan(
    path: str | os.PathLike[str],
    format: str | None,
    unchanged: Callable[[list[tuple[str, str]]], list[bool]],
) -> tuple[Iterator[Source], int]:
    """The items to index under `path` (lazy) and how many files were skipped as unchanged.

    `unchanged` is the engine's: which (key, signature) pairs it already indexed. Files that vanish while the
    tree is listed are skipped. A file named directly that is none of our formats raises UnknownFormat now,
    before anything is written; `format` (a name from FORMATS) skips detection."""
    forced = get(format) if format else None
    keyed = []
    for u in units(path):
        try:
            keyed.append((u, u.signature()))
        except OSError as e:
            log.info("skipping %s: %s", u, e)
    same = unchanged([(u.key, sig) for u, sig in keyed]) if keyed else []
    todo = [u for (u, _), s in zip(keyed, same, strict=True) if not s]
    if forced is None and Path(path).expanduser().is_file():
        check_explicit(path, todo)
    return items(todo, forced), len(keyed) - len(todo)


def sample_texts(path: str | os.PathLike[str], format: str | None, n: int) -> list[str]:
    """Up to `n` message texts from the start of what `path` holds, read as `plan` would read them (what a new
    memory's model is chosen by, `funes_py.choice`). Stops reading as soon as it has them."""
    forced = get(format) if format else None
    out: list[str] = []
    for source in items(units(path), forced):
        for _, line in source.lines or []:
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):  # a record nested past the parser's depth is the run's to report
                continue
            if not isinstance(record, dict) or not isinstance(record.get("blocks"), list):
                continue
            out.extend(b.get("text", "") for b in record["blocks"] if isinstance(b, dict) and b.get("block_type") == "text")
            if len(out) >= n:
                return out[:n]
    return out

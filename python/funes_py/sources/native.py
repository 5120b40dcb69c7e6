"""`.funes.jsonl`, the native format: its lines are handed to the engine untouched (it parses them and reports
bad ones with their line numbers). They are read here, not by the engine, so that a line over
FUNES_MAX_RECORD_BYTES is reported with its number instead of being read whole (the engine reads a file it
is given whole). No masking here: a native file is the contract, written as meant."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .common import Bad, Line, Source, Unit
from .limits import Limits, over_limit, read_lines

NAME = "funes"
HARNESS = ""  # each line names its own


def looks_like(record: dict[str, Any]) -> bool:
    return {"session_id", "turn_uuid", "blocks"} <= record.keys()


def read(unit: Unit) -> Iterator[Source]:
    signature = unit.signature()  # before reading: lines appended meanwhile make the next run read again
    limit = Limits.current().record
    lines: list[Line] = []
    bad: list[Bad] = []
    with unit.open() as f:
        for n, raw, size, _ in read_lines(f, limit):
            if raw is None:
                bad.append((n, over_limit(size, limit)))
            elif raw.strip():
                lines.append((n, raw.decode("utf-8", "replace")))  # a bad byte must not cost the line
    yield Source(unit.key, signature, lines, bad)

"""`.funes.jsonl`, the native format: handed to the engine untouched (it parses the lines itself and reports
bad ones with their line numbers). No masking here: a native file is the contract, written as meant."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .common import Source, Unit

NAME = "funes"
HARNESS = ""  # each line names its own


def looks_like(record: dict[str, Any]) -> bool:
    return {"session_id", "turn_uuid", "blocks"} <= record.keys()


def read(unit: Unit) -> Iterator[Source]:
    yield Source(unit.key, unit.signature(), None, [])

"""Which format a file (or zip member) is, from its content: the first bytes of a JSON export, the first
records of a JSONL file. The name is never trusted (a `conversations.json` is ChatGPT's or Claude.ai's,
a `.jsonl` anyone's)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from .common import Unit
from .registry import EXPORTS, FORMATS, JSONL_ORDER, Format

HEAD_BYTES = 64 * 1024
SNIFF_RECORDS = 20  # a JSONL file is judged by its first records that look like anything
SNIFF_BYTES = 8 * 1024 * 1024  # ... read no further than this (a first record can hold a large tool output)
# The keys that open a conversation object of each export. Inside a JSON string these quotes would be
# escaped (\"mapping\"), so text that merely mentions them does not match.
_EXPORT_KEYS = {"chatgpt": re.compile(r'"mapping"\s*:\s*\{'), "claude-ai": re.compile(r'"chat_messages"\s*:\s*\[')}
assert set(_EXPORT_KEYS) == set(EXPORTS)


def detect(unit: Unit) -> Format | None:
    """The format of `unit`, or None when it is none of ours (or an empty export: nothing to index)."""
    with unit.open() as f:
        head = f.read(HEAD_BYTES)
    text = head.decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    found = _export(text) if text.startswith("[") else _jsonl(unit) if text.startswith("{") else None
    if found is None and unit.name.endswith(".funes.jsonl"):
        # Our own suffix is a promise: a native file whose first lines are all broken still goes to the engine,
        # which reports every bad line, instead of being skipped without a word.
        return FORMATS["funes"]
    return found


def _export(head: str) -> Format | None:
    found = [(m.start(), name) for name, rx in _EXPORT_KEYS.items() if (m := rx.search(head))]
    return FORMATS[min(found)[1]] if found else None


def _safe(looks_like: Callable[[dict[str, Any]], bool], rec: dict[str, Any]) -> bool:
    try:
        return looks_like(rec)
    except TypeError:  # a value of an odd type (a list where a name is expected): not ours
        return False


def _jsonl(unit: Unit) -> Format | None:
    seen = read = 0
    with unit.open() as f:
        for raw in f:
            read += len(raw)
            try:
                rec = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                rec = None
            if isinstance(rec, dict):
                for name in JSONL_ORDER:
                    looks_like = FORMATS[name].looks_like
                    if looks_like is not None and _safe(looks_like, rec):
                        return FORMATS[name]
                seen += 1
            if seen >= SNIFF_RECORDS or read >= SNIFF_BYTES:
                break
    return None

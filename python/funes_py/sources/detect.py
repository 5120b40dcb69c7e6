"""Which format a file (or zip member) is, from its content: the opening of a JSON export, the first records of
a JSONL file. The name is never trusted (a `conversations.json` is ChatGPT's or Claude.ai's, a `.jsonl`
anyone's). Broken lines do not decide: a JSONL file is judged by its first records that parse, however its
first line looks (a file cut off or garbled at its start still has its records read)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import IO, Any, NamedTuple

from .common import Unit
from .limits import Limits, read_lines
from .registry import EXPORTS, FORMATS, JSONL_ORDER, Format

HEAD_BYTES = 64 * 1024
SNIFF_RECORDS = 20  # a JSONL file is judged by its first records that look like anything
SNIFF_LINES = 1_000  # ... or its first lines, broken or not
SNIFF_BYTES = 8 * 1024 * 1024  # ... reading no more than this of lines that parse (a record can be large)
_OVERLAP = 64  # an export's opening is searched in pieces that overlap by this much (a key across two)
# The keys that open a conversation object of each export. Inside a JSON string these quotes would be
# escaped (\"mapping\"), so text that merely mentions them does not match.
_EXPORT_KEYS = {"chatgpt": re.compile(r'"mapping"\s*:\s*\{'), "claude-ai": re.compile(r'"chat_messages"\s*:\s*\[')}
assert set(_EXPORT_KEYS) == set(EXPORTS)
_BLANK = re.compile(r"^[\ufeff \t\r\n]*(\[[ \t\r\n]*\][ \t\r\n]*)?$")


class Sniffed(NamedTuple):
    format: Format | None
    # (line, size) of the lines over the record limit met while looking: when nothing else told the format,
    # they are why (a file of one huge record is damaged, not foreign).
    over_limit: list[tuple[int, int]]


def detect(unit: Unit) -> Format | None:
    """The format of `unit`, or None when it is none of ours."""
    return sniff(unit).format


def sniff(unit: Unit) -> Sniffed:
    """The format of `unit` (None when it is none of ours), and the over-long lines met on the way."""
    with unit.open() as f:
        head = f.read(HEAD_BYTES)
        text = head.decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
        found = _export(f, text) if text.startswith("[") else None
    if found is not None:
        return Sniffed(found, [])
    found, over = _jsonl(unit)
    if found is None and unit.name.endswith(".funes.jsonl"):
        # Our own suffix is a promise: a native file whose first lines are all broken still goes to the engine,
        # which reports every bad line, instead of being skipped without a word.
        found = FORMATS["funes"]
    return Sniffed(found, over)


def is_blank(unit: Unit) -> bool:
    """Nothing to read: an empty file, blank lines, or an empty JSON array (an export without conversations)."""
    with unit.open() as f:
        head = f.read(HEAD_BYTES + 1)
    return len(head) <= HEAD_BYTES and _BLANK.match(head.decode("utf-8", "replace")) is not None


def _export(f: IO[bytes], text: str) -> Format | None:
    """The export whose key comes first in the opening SNIFF_BYTES of the array (the first conversation
    usually shows it within the first few hundred bytes; a broken or huge first one may hide it longer)."""
    read = len(text)
    while True:
        found = [(m.start(), name) for name, rx in _EXPORT_KEYS.items() if (m := rx.search(text))]
        if found:
            return FORMATS[min(found)[1]]
        data = f.read(HEAD_BYTES) if read < SNIFF_BYTES else b""
        if not data:
            return None
        read += len(data)
        text = text[-_OVERLAP:] + data.decode("utf-8", "replace")


def _safe(looks_like: Callable[[dict[str, Any]], bool], rec: dict[str, Any]) -> bool:
    try:
        return looks_like(rec)
    except TypeError:  # a value of an odd type (a list where a name is expected): not ours
        return False


def _jsonl(unit: Unit) -> tuple[Format | None, list[tuple[int, int]]]:
    seen = parsed = 0
    over: list[tuple[int, int]] = []
    with unit.open() as f:
        for n, raw, size, _ in read_lines(f, Limits.current().record):
            if n > SNIFF_LINES or seen >= SNIFF_RECORDS or parsed >= SNIFF_BYTES:
                break
            if raw is None:
                over.append((n, size))
                continue
            if not raw.strip():
                continue
            parsed += len(raw)
            try:
                rec = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
                continue
            if isinstance(rec, dict):
                for name in JSONL_ORDER:
                    looks_like = FORMATS[name].looks_like
                    if looks_like is not None and _safe(looks_like, rec):
                        return FORMATS[name], over
                seen += 1
    return None, over

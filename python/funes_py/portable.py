"""The export file: a memory's verbatim turns and its model stamp in one portable file.

Written by `funes-py export` (from a memory) and the service's `GET /export` (from a user's stored
conversations); read by `funes-py import`. Format: gzip of UTF-8 JSON lines.

    line 1   {"funes_export": 1, "model": "name@fingerprint" | null, "dim": 384 | null,
              "created": "2026-12-03T17:00:00Z", "source": "memory" | "service"}
    then     one turn per line, a `.funes.jsonl` record (docs/inputs.md), grouped by session

So the turns are an index input as they stand (`gunzip -c F | tail -n +2 > F.funes.jsonl`). gzip's own CRC
tells a cut-off copy from a whole one, so no trailer is needed; the file is written beside its target and
renamed into place, so a crash leaves the old file or none, never half of one.

No vectors: they belong to one model's fingerprint (and are most of a memory's bytes). An import embeds the
text with the importing memory's model: its own, or for a new memory the export's model when it is installed
here, else the default. Importing into a memory built with another model therefore works, and re-embeds.

A memory gives its turns back through `Engine.get`: each block's text as it was indexed (trimmed, inline
base64 payloads elided, a tool block labelled `[tool_use NAME] `), the blocks joined by a blank line, their
types kept, the harness and working directory not. `turn_record` splits the blocks again when that is
unambiguous and takes the label back off into `tool_name`, so an import renders the same text. The service's
export carries its source files as they were stored, so nothing is lost there.
"""

from __future__ import annotations

import datetime as dt
import gzip
import io
import itertools
import json
import os
import re
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

FORMAT = 1
MAGIC = "funes_export"
# The harness of turns exported from a memory (the memory does not give the original back, see above).
EXPORTED_HARNESS = "export"
BLOCK_SEPARATOR = "\n\n"  # how Engine.get joins a turn's blocks


class NotAnExport(ValueError):
    """The file is not an export this version reads (not gzip, no header, another format version)."""


@dataclass(frozen=True)
class Header:
    model: str | None
    dim: int | None
    source: str
    created: str = ""

    def line(self) -> str:
        created = self.created or dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return json.dumps({MAGIC: FORMAT, **asdict(self), "created": created}, ensure_ascii=False)


def write_export(path: str | os.PathLike[str], header: Header, lines: Iterable[str]) -> int:
    """Write the export atomically (temporary file beside `path`, fsync, rename); returns the turns written."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}.tmp")
    turns = 0
    try:
        with open(tmp, "wb") as raw:
            with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz, io.TextIOWrapper(gz, encoding="utf-8") as out:
                out.write(header.line() + "\n")
                for line in lines:
                    out.write(line)
                    out.write("\n")
                    turns += 1
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return turns


def read_header(path: str | os.PathLike[str]) -> Header:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return _header(f.readline(), path)


def read_sessions(path: str | os.PathLike[str]) -> Iterator[tuple[str, list[str]]]:
    """(session id, its lines) in file order, one session held at a time. A line that is not a JSON object
    is passed on as it is, for the engine to report with its place."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        _header(f.readline(), path)
        body = (line.rstrip("\n") for line in f if line.strip())
        for sid, group in itertools.groupby(body, key=_session_of):
            yield sid, list(group)


def _header(first: str, path: Any) -> Header:
    try:
        data = json.loads(first)
    except ValueError:
        data = None
    if not isinstance(data, dict) or MAGIC not in data:
        raise NotAnExport(f"{path}: not a funes-py export (no header line)")
    if data[MAGIC] != FORMAT:
        raise NotAnExport(f"{path}: export format {data[MAGIC]!r}; this version reads format {FORMAT}")
    model, dim = data.get("model"), data.get("dim")
    return Header(model if isinstance(model, str) else None, dim if isinstance(dim, int) else None,
                  str(data.get("source") or ""), str(data.get("created") or ""))  # fmt: skip


def _session_of(line: str) -> str:
    try:
        record = json.loads(line)
    except ValueError:
        return ""
    return str(record.get("session_id", "")) if isinstance(record, dict) else ""


# --- from a memory ----------------------------------------------------------------------------------------

def memory_lines(engine: Any) -> Iterator[str]:
    """Every turn of `engine`'s memory as a `.funes.jsonl` line, session by session (sorted by id)."""
    for session in sorted(s.session_id for s in engine.sessions()):
        for turn in engine.get(session):
            yield json.dumps(turn_record(turn), ensure_ascii=False)


def turn_record(turn: Any) -> dict[str, Any]:
    """A `Turn` (Engine.get) as a `.funes.jsonl` record. Its blocks were joined by a blank line: they are split
    again when the text holds exactly as many blank lines as there are joins, else kept as one block of the
    first block's type (the text is the same either way; only `--type` filters see the difference)."""
    types = list(turn.block_types) or ["text"]
    parts = turn.text.split(BLOCK_SEPARATOR) if len(types) > 1 else [turn.text]
    pairs = zip(types, parts, strict=True) if len(parts) == len(types) else [(types[0], turn.text)]
    blocks = [_block(t, p) for t, p in pairs]
    return {"session_id": turn.session_id, "turn_uuid": turn.turn_uuid, "seq": turn.seq, "ts": turn.ts,
            "role": turn.role, "harness": EXPORTED_HARNESS, "blocks": blocks}  # fmt: skip


def _block(block_type: str, text: str) -> dict[str, Any]:
    """A block from its indexed text: a tool block's `[type NAME] ` label (chunk.rs `render_block`) becomes
    its `tool_name` again."""
    block: dict[str, Any] = {"block_type": block_type, "text": text}
    if block_type in _TOOL_BLOCKS:
        m = re.match(rf"\[{block_type}(?: ([^\]\n]*))?\] ?", text)
        if m is not None:
            block["text"] = text[m.end():]
            if m.group(1):
                block["tool_name"] = m.group(1)
    return block


_TOOL_BLOCKS = ("tool_use", "tool_result")


def memory_header(engine: Any) -> Header:
    from . import _funes

    stored = _funes.stored_model(engine.home)
    return Header(stored[0] if stored else None, stored[1] if stored else None, "memory")

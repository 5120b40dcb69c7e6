"""What every adapter shares: the `Source` item the engine consumes, the `Unit` an adapter reads (a file or
one member of a zip), the `.funes.jsonl` turn line it writes (secrets masked), timestamps, stable ids, and
the JSONL record reader (a truncated last line is not an error; an over-long or too deeply nested one costs only
itself).

Pure apart from `Unit.open`/`stat`: no engine, no model."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import uuid
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, NamedTuple

from ..redact import mask_secrets
from .limits import TOO_DEEP, Limits, capped, over_limit, read_lines

Place = int
Line = tuple[Place, str]
Bad = tuple[Place, str]
# (block_type, text, tool_name)
Block = tuple[str, str, str | None]

BLOCK_TYPES = ("text", "thinking", "tool_use", "tool_result")
# Ids made from (session, position) live in their own namespace, so they never collide with a format's own.
_ID_NAMESPACE = uuid.UUID("6f0c2b1e-5d0a-4b8e-9a61-3c1f0e7d2a45")


class Source(NamedTuple):
    """One file (or zip member) for `Engine.index_sources`.

    `lines` is [(place, .funes.jsonl line)], place being the 1-based line of the file or the ordinal of the
    export's conversation (None would make the engine read the file itself, whole: no adapter does, so that
    a line's size is bounded here). `bad` is [(place, reason)] for the records the adapter could not read;
    place 0 is the whole file (one no format recognised, or one that could not be read). A conversation's
    turns are all in one item (the engine takes a turn's context from the turn before it in the item); a big
    export comes as several items with the same key, only the last with the signature. A `signature` of None
    means: do not record the file as indexed for this item (the file could not be read to its end, or could
    not be placed, and the next run reads it again)."""

    key: str
    signature: str | None
    lines: list[Line] | None
    bad: list[Bad]


@dataclass(frozen=True)
class Unit:
    """One thing an adapter reads: a file, or one member of a zip (then `path` is the zip)."""

    path: Path
    member: str | None = None

    @property
    def key(self) -> str:
        """The canonical path (symlinks resolved, as the engine spells it); `<zip>!<member>` for a member."""
        base = os.path.realpath(self.path)
        return f"{base}!{self.member}" if self.member is not None else base

    @property
    def name(self) -> str:
        """The file name (of the member, for a zip member)."""
        return (self.member or "").rsplit("/", 1)[-1] if self.member is not None else self.path.name

    @property
    def stem(self) -> str:
        name = self.name
        for suffix in (".funes.jsonl", ".jsonl", ".json"):
            if name.endswith(suffix):
                return name[: -len(suffix)]
        return name

    def signature(self) -> str:
        """ "size:mtime_ns" of the file (of the zip, for a member): the engine's change stamp."""
        st = os.stat(self.path)
        return f"{st.st_size}:{st.st_mtime_ns}"

    def mtime(self) -> dt.datetime:
        return dt.datetime.fromtimestamp(os.stat(self.path).st_mtime, dt.UTC)

    @contextlib.contextmanager
    def open(self) -> Iterator[IO[bytes]]:
        """The bytes, streamed (a zip member is decompressed as it is read, never extracted, and refused past
        FUNES_MAX_MEMBER_BYTES: MemberTooLarge, an OSError)."""
        if self.member is None:
            with open(self.path, "rb") as f:
                yield f
        else:
            with zipfile.ZipFile(self.path) as z, z.open(self.member) as f:
                declared = z.getinfo(self.member).file_size
                yield capped(f, self.member, declared, Limits.current().member)

    def __str__(self) -> str:
        return self.key


class Refused(ValueError):
    """A record an adapter will not index; the message names the field (or fault) and becomes a `bad` entry."""


# What a record of an unexpected shape raises inside an adapter (a list where a string was expected, a value
# nested deeper than Python's recursion limit where it is copied as JSON, ...): it is reported as a bad record
# like a Refused one, never a crash that would cost the rest of the file.
SHAPE_ERRORS = (Refused, TypeError, AttributeError, KeyError, ValueError, IndexError, RecursionError)


def reason(e: Exception) -> str:
    """The `bad` reason for an exception out of SHAPE_ERRORS."""
    if isinstance(e, RecursionError):
        return TOO_DEEP
    return str(e) if isinstance(e, Refused) else f"unexpected shape ({type(e).__name__}: {e})"


def need(obj: Any, field: str, kind: type | tuple[type, ...], where: str = "") -> Any:
    """`obj[field]`, which must be of `kind`; else Refused naming the field."""
    value = obj.get(field) if isinstance(obj, dict) else None
    if value is None:
        raise Refused(f"missing field `{where}{field}`")
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise Refused(f"field `{where}{field}` is not {_kind_name(kind)}")
    return value


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {str: "a string", dict: "an object", list: "a list", int: "a number", float: "a number"}
    return " or ".join(dict.fromkeys(names.get(k, k.__name__) for k in kinds))


def iso_utc(value: Any) -> str | None:
    """An ISO-8601 string or epoch seconds (milliseconds when implausibly large) as
    'YYYY-MM-DDTHH:MM:SS(.mmm)Z' in UTC; None when it is neither. A time without a zone is taken as UTC."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        secs = float(value) / 1000.0 if value > 1e11 else float(value)
        try:
            t = dt.datetime.fromtimestamp(secs, dt.UTC)
        except (OverflowError, OSError, ValueError):
            return None
    elif isinstance(value, str) and value.strip():
        s = value.strip()
        if s[-1:] in "zZ":
            s = s[:-1] + "+00:00"
        try:
            t = dt.datetime.fromisoformat(s)
        except ValueError:
            return None
        t = t.replace(tzinfo=dt.UTC) if t.tzinfo is None else t.astimezone(dt.UTC)
    else:
        return None
    return format_utc(t)


def format_utc(t: dt.datetime) -> str:
    t = t.astimezone(dt.UTC)
    if t.microsecond:
        return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def position_id(session_id: str, position: str | int) -> str:
    """A stable turn uuid for formats without message ids: a name-based uuid of (session, position), where the
    position is something an append never changes (a line number, an index in the export)."""
    return str(uuid.uuid5(_ID_NAMESPACE, f"{session_id}\x00{position}"))


def compact_json(value: Any) -> str:
    """Tool input as compact JSON, keys in source order (what the reference funes stores)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def turn_line(
    session_id: str,
    turn_uuid: str,
    seq: int,
    ts: str,
    role: str,
    harness: str,
    blocks: list[Block],
    extra: dict[str, str] | None = None,
) -> str | None:
    """One `.funes.jsonl` line, every text secret-masked; None when no block has text (the turn is not kept
    and does not take a seq). `extra` carries metadata the engine may keep (workdir, title); today's engine
    ignores unknown fields."""
    kept = [
        {"block_type": bt, "text": mask_secrets(text), **({"tool_name": name} if name else {})}
        for bt, text, name in blocks
        if text and text.strip()
    ]
    if not kept:
        return None
    row: dict[str, Any] = {
        "session_id": session_id,
        "turn_uuid": turn_uuid,
        "seq": seq,
        "ts": ts,
        "role": role,
        "harness": harness,
        "blocks": kept,
    }
    if extra:
        row.update({k: v for k, v in extra.items() if v})
    return json.dumps(row, ensure_ascii=False)


def text_of_parts(content: Any, text_types: tuple[str, ...] = ("text",)) -> str:
    """The text of a content value that is a string or a list of typed parts (other parts, images, dropped)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, dict) and part.get("type") in text_types and isinstance(part.get("text"), str):
                out.append(part["text"])
        return "\n".join(t for t in out if t.strip())
    return ""


def jsonl_records(stream: IO[bytes], limit: int | None = None) -> Iterator[tuple[Place, dict[str, Any] | None, str | None]]:
    """(line number, record, None) per JSON-object line, (line number, None, reason) per broken line.

    Blank lines are skipped. A last line without its newline that does not parse is a record still being
    written: skipped silently (the next run, seeing the file grown, reads it whole). Invalid UTF-8 is decoded
    with replacement characters (a bad byte must not cost the line). A line over `limit` bytes
    (FUNES_MAX_RECORD_BYTES when None) is reported, never read whole; one nested past the parser's depth is
    reported."""
    for n, rec, fault, _, complete in records_from(stream, 0, limit):
        if rec is None and fault is None and not complete:
            return
        if rec is not None or fault is not None:
            yield n, rec, fault


def records_from(
    stream: IO[bytes], first_line: int, limit: int | None = None
) -> Iterator[tuple[Place, dict[str, Any] | None, str | None, int, bool]]:
    """Every line of `stream` (read from where it stands, numbered after `first_line`) as (line number, record,
    fault, bytes it took with its newline, complete). A blank line gives (n, None, None, size, complete); a
    last line without its newline that does not parse gives (n, None, None, size, False): a record still
    being written, which a resumable read leaves for its next pass."""
    limit = Limits.current().record if limit is None else limit
    for n, raw, size, complete in read_lines(stream, limit):
        n += first_line
        took = size + complete
        if raw is None:
            yield n, None, over_limit(size, limit), took, complete
            continue
        text = raw.decode("utf-8", "replace").strip()
        if not text:
            yield n, None, None, took, complete
            continue
        try:
            obj = json.loads(text)
        except RecursionError:
            yield n, None, TOO_DEEP, took, complete
            continue
        except json.JSONDecodeError as e:
            yield (n, None, None, took, False) if not complete else (n, None, f"invalid JSON ({e.msg}, column {e.colno})", took, True)
            continue
        if not isinstance(obj, dict):
            yield n, None, "not a JSON object", took, complete
            continue
        yield n, obj, None, took, complete

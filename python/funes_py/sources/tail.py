"""Reading a growing JSONL history from where the last read stopped.

An agent appends to its session file all day; reading the whole file again at every write would cost the whole
file each time. A format that can resume has a `Reader` (its per-file carry: the next seq, the names of tool
calls still open, a Codex session's id and project) and reads through here: `read_from(unit, reader, tail)`
reads the complete lines after `tail`, and returns their `Source` with the `Tail` to resume from next time.

A `Tail` knows the bytes and lines it consumed and a digest of the file's first bytes: a file that shrank or
was rewritten in place (its head differs) is read again from its start. A last line still being written (no
newline yet) is left for the next read. Whole-file reads (`read_whole`) go through the same reader, so the
two give the same lines.

Pure apart from `Unit.open`: no engine, no model."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterator
from typing import Any, Protocol

from .common import SHAPE_ERRORS, Bad, Line, Source, Unit, reason, records_from

HEAD_BYTES = 4096


class Reader(Protocol):
    """One file's reader: `feed` turns a record into a turn line (or None), raising one of SHAPE_ERRORS for a
    record it refuses; `carry` is what a later read of the same file needs (JSON-serialisable)."""

    def feed(self, n: int, rec: dict[str, Any]) -> str | None: ...

    def carry(self) -> dict[str, Any]: ...


class ReaderFactory(Protocol):
    def __call__(self, unit: Unit, carry: dict[str, Any] | None = None) -> Reader: ...


@dataclasses.dataclass(frozen=True)
class Tail:
    """Where a resumable read stopped: `offset` bytes (`line` lines) consumed, `head` the digest of the file's
    first bytes then, `carry` the reader's."""

    offset: int = 0
    line: int = 0
    head: str = ""
    carry: dict[str, Any] = dataclasses.field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, raw: Any) -> Tail:
        if not isinstance(raw, dict):
            return cls()
        try:
            return cls(int(raw.get("offset", 0)), int(raw.get("line", 0)), str(raw.get("head", "")), dict(raw.get("carry") or {}))
        except (TypeError, ValueError):
            return cls()


def head_digest(unit: Unit, upto: int) -> str:
    with unit.open() as f:
        return hashlib.sha1(f.read(min(upto, HEAD_BYTES))).hexdigest()


def resumable(unit: Unit, tail: Tail, size: int) -> bool:
    """Can `tail` resume on this file as it is now (`size` bytes)?"""
    return 0 < tail.offset <= size and tail.head == head_digest(unit, tail.offset)


def read_from(unit: Unit, make: ReaderFactory, tail: Tail) -> tuple[Source, Tail]:
    """The complete lines after `tail` (from the start when it cannot resume) as one `Source` with no
    signature (the caller keeps its own cursor), and where the next read starts."""
    size = unit.path.stat().st_size
    if not resumable(unit, tail, size):
        tail = Tail()
    reader = make(unit, tail.carry or None)
    lines: list[Line] = []
    bad: list[Bad] = []
    offset, line = tail.offset, tail.line
    with unit.open() as f:
        f.seek(offset)
        for n, rec, fault, took, complete in records_from(f, line):
            if not complete:
                break  # still being written: the next read takes it whole
            offset, line = offset + took, n
            _take(reader, n, rec, fault, lines, bad)
    head = head_digest(unit, offset) if offset else ""
    return Source(unit.key, None, lines, bad), Tail(offset, line, head, reader.carry())


def read_whole(unit: Unit, make: ReaderFactory) -> Iterator[Source]:
    """A whole file through its reader, for `index` (a last line complete as JSON but without its newline is
    read too, as every format always did)."""
    signature = unit.signature()  # before reading: lines appended meanwhile make the next run read again
    reader = make(unit)
    lines: list[Line] = []
    bad: list[Bad] = []
    with unit.open() as f:
        for n, rec, fault, _, complete in records_from(f, 0):
            if rec is None and fault is None and not complete:
                break
            _take(reader, n, rec, fault, lines, bad)
    yield Source(unit.key, signature, lines, bad)


def _take(reader: Reader, n: int, rec: dict[str, Any] | None, fault: str | None, lines: list[Line], bad: list[Bad]) -> None:
    """One record through the reader: its turn line, its fault, or nothing (a blank line, a record that is
    not a turn)."""
    if rec is None:
        if fault is not None:
            bad.append((n, fault))
        return
    try:
        text = reader.feed(n, rec)
    except SHAPE_ERRORS as e:
        bad.append((n, reason(e)))
        return
    if text is not None:
        lines.append((n, text))

"""How much an importer reads at once, and the readers that hold to it: one record (a JSONL line, an export's
conversation) and one zip member; and how a record nested too deeply to parse is reported.

A line is read in bounded pieces: one longer than the record limit is never held whole, only counted while
reading on to its newline, and is reported with its line number and size. A zip member's inflated size is
checked twice: against the zip's directory before it is opened, and while it streams, since the directory
is written by whoever made the zip. The limits come from `funes_py.config` (FUNES_MAX_RECORD_BYTES,
FUNES_MAX_MEMBER_BYTES), read when a file is opened so a test or a caller can set them first."""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, NamedTuple

# Bytes read at a time while skipping the rest of an over-long line (and the buffer of a zip member's stream).
PIECE = 1 << 20


@dataclass(frozen=True)
class Limits:
    record: int
    member: int

    @classmethod
    def current(cls) -> Limits:
        from ..config import settings

        s = settings()
        return cls(record=s.max_record_bytes, member=s.max_member_bytes)


# The `bad` reason for a record nested deeper than Python's JSON parser goes (it recurses, and stops at the
# interpreter's recursion limit, about 1,000 levels): that record is skipped, never its file.
TOO_DEEP = "nested too deeply to read (JSON deeper than Python's recursion limit)"


def over_limit(size: int, limit: int, unit: str = "bytes") -> str:
    """The `bad` reason for a record of `size` over `limit`."""
    return f"{size:,} {unit}, over the limit of {limit:,} for one record (FUNES_MAX_RECORD_BYTES)"


class MemberTooLarge(OSError):
    """A zip member inflates past FUNES_MAX_MEMBER_BYTES (an OSError: the file is reported as unreadable)."""

    def __init__(self, member: str, size: int, limit: int, where: str) -> None:
        super().__init__(
            f"zip member {member} inflates to {where}{size:,} bytes, over the limit of {limit:,} (FUNES_MAX_MEMBER_BYTES)"
        )


class _Capped(io.RawIOBase):
    """A stream that raises MemberTooLarge once more than `limit` bytes came out of it."""

    def __init__(self, inner: IO[bytes], member: str, limit: int) -> None:
        self.inner, self.member, self.limit, self.count = inner, member, limit, 0

    def readable(self) -> bool:
        return True

    def readinto(self, b: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self.inner.read(len(b))
        self.count += len(data)
        if self.count > self.limit:
            raise MemberTooLarge(self.member, self.count, self.limit, "at least ")
        b[: len(data)] = data
        return len(data)


def capped(inner: IO[bytes], member: str, declared: int, limit: int) -> IO[bytes]:
    """`inner` (a zip member's stream, `declared` bytes by the zip's directory), buffered, read no further
    than `limit` bytes. MemberTooLarge now when the directory already says more."""
    if declared > limit:
        raise MemberTooLarge(member, declared, limit, "")
    # The buffer also gives the member a fast C `readline(size)` (zipfile's own goes 512 bytes at a time).
    return io.BufferedReader(_Capped(inner, member, limit), buffer_size=PIECE)


class RawLine(NamedTuple):
    """One line of a JSONL stream: `data` without its newline, or None when the line is over the limit
    (then `size` says how long it was). `complete` is False for a last line without its newline."""

    number: int
    data: bytes | None
    size: int
    complete: bool


def read_lines(stream: IO[bytes], limit: int) -> Iterator[RawLine]:
    """Every line of `stream` (blank ones too), numbered from 1, none held longer than `limit` bytes.

    A line comes in pieces of at most PIECE bytes; once its pieces pass the limit they are dropped and the rest
    of the line is only counted. (One `readline(limit)` would also stop at the limit, but the C reader joins
    its pieces at the end: twice the limit held for a moment, for every over-long line.)"""
    piece = min(PIECE, limit + 2)
    n = 0
    while True:
        raw = stream.readline(piece)
        if not raw:
            return
        n += 1
        parts, size = [raw], len(raw)
        while not raw.endswith(b"\n") and size <= limit:
            raw = stream.readline(piece)
            if not raw:
                break
            parts.append(raw)
            size += len(raw)
        complete = raw.endswith(b"\n")
        if size - complete <= limit:
            data = parts[0] if len(parts) == 1 else b"".join(parts)
            del parts
            yield RawLine(n, data[:-1] if complete else data, size - complete, complete)
            continue
        del parts  # over the limit: the rest is counted, never kept
        while not complete:
            raw = stream.readline(PIECE)
            if not raw:
                break
            complete = raw.endswith(b"\n")
            size += len(raw)
        yield RawLine(n, None, size - complete, complete)

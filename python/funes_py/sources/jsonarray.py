"""Stream the elements of a top-level JSON array (a ChatGPT or Claude.ai `conversations.json`, up to ~1 GB)
holding one element in memory at a time.

The bytes are read in chunks and decoded incrementally; each element is handed to the C decoder
(`json.JSONDecoder.raw_decode`) once it is whole. When the decoder fails, a small scanner (strings and
brackets only) tells an element that is merely cut off by the buffer's end (read more: the buffer at least
doubles, so a big element costs linear time) from one that is complete but invalid (reported with its
ordinal; reading goes on after it). Memory: the current element plus one chunk. `ijson` would do the same
with a C backend; this keeps the package free of another dependency and lets a broken conversation in the
middle of an export cost only itself."""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

CHUNK = 1 << 20
_DECODER = json.JSONDecoder()
_WS = re.compile(r"[ \t\r\n]*")
# A whole string (unrolled loop: fast on long strings), a lone quote (a string cut off), or a bracket.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|"|[\[\]{}]', re.DOTALL)


class NotAnArray(ValueError):
    """The stream does not hold a JSON array."""


@dataclass(frozen=True)
class Fault:
    """An element that could not be read: `ordinal` is 1-based; `fatal` when nothing after it can be read."""

    ordinal: int
    reason: str
    fatal: bool = False


def _element_end(buf: str, pos: int) -> int | None:
    """The index just past the object or array starting at `pos`, or None when the buffer ends first."""
    depth = 0
    for m in _TOKEN.finditer(buf, pos):
        tok = m.group()
        if tok[0] == '"':
            if len(tok) == 1:
                return None  # an unterminated string: the rest is in the next chunk
            continue
        depth += 1 if tok in "[{" else -1
        if depth == 0:
            return m.end()
    return None


class _Reader:
    def __init__(self, stream: IO[bytes], chunk: int) -> None:
        self.stream, self.chunk = stream, chunk
        self.decode = codecs.getincrementaldecoder("utf-8")(errors="replace").decode
        self.buf, self.pos, self.eof = "", 0, False
        self.offset = 0  # characters dropped from the buffer's front so far

    def more(self, at_least: int = 0) -> bool:
        """Reads at least one more chunk (and `at_least` characters when possible); False at the end."""
        if self.eof:
            return False
        self.offset += self.pos
        self.buf, self.pos = self.buf[self.pos :], 0
        target = len(self.buf) + max(at_least, 1)
        while len(self.buf) < target:
            data = self.stream.read(max(self.chunk, at_least))
            if not data:
                self.buf += self.decode(b"", final=True)
                self.eof = True
                break
            self.buf += self.decode(data)
        return True

    def skip_ws(self) -> str:
        """The next non-blank character ('' at the end), not consumed."""
        while True:
            self.pos = _WS.match(self.buf, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.more():
                return ""


def iter_array(stream: IO[bytes], chunk: int = CHUNK) -> Iterator[Any | Fault]:
    """Each element of the array in `stream`, in order, or a `Fault` in its place. A fatal fault (the file
    ends inside an element, or the array's punctuation is broken) ends the iteration."""
    r = _Reader(stream, chunk)
    first = r.skip_ws()
    if first.startswith("\ufeff"):
        r.pos += 1
        first = r.skip_ws()
    if first != "[":
        raise NotAnArray(f"expected a JSON array, found {r.buf[r.pos : r.pos + 20]!r}")
    r.pos += 1
    ordinal = 0
    while True:
        c = r.skip_ws()
        if c == "]":
            return
        if ordinal:
            if c != ",":
                yield Fault(ordinal + 1, f"expected ',' or ']' after element {ordinal}, found {c!r}", fatal=True)
                return
            r.pos += 1
            c = r.skip_ws()
        if c == "":
            yield Fault(ordinal + 1, "the file ends inside the array (truncated?)", fatal=True)
            return
        ordinal += 1
        item = _next_element(r, ordinal)
        yield item
        if isinstance(item, Fault) and item.fatal:
            return


def _next_element(r: _Reader, ordinal: int) -> Any | Fault:
    while True:
        try:
            value, end = _DECODER.raw_decode(r.buf, r.pos)
        except json.JSONDecodeError as e:
            if r.buf[r.pos] not in "[{":
                if not r.eof and len(r.buf) - r.pos < 64:
                    r.more()
                    continue
                return Fault(ordinal, f"invalid JSON: {e.msg}", fatal=True)
            stop = _element_end(r.buf, r.pos)
            if stop is None:
                if r.more(at_least=len(r.buf) - r.pos):
                    continue
                return Fault(ordinal, "the file ends inside this element (truncated?)", fatal=True)
            at = r.offset + e.pos
            r.pos = stop
            return Fault(ordinal, f"invalid JSON: {e.msg} (character {at})")
        if end == len(r.buf) and not r.eof and not isinstance(value, (dict, list)):
            r.more()  # a number at the buffer's end may go on in the next chunk
            continue
        r.pos = end
        return value

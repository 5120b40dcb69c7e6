"""Stream the elements of a top-level JSON array (a ChatGPT or Claude.ai `conversations.json`, up to ~1 GB)
holding one element in memory at a time.

The bytes are read in chunks and decoded incrementally; each element is handed to the C decoder
(`json.JSONDecoder.raw_decode`) once it is whole. When the decoder fails, a small scanner (strings and
brackets only) tells an element that is merely cut off by the buffer's end (read more: the buffer at least
doubles, so a big element costs linear time) from one that is complete but invalid (reported with its
ordinal; reading goes on after it). An element nested deeper than the C decoder's recursion limit is found
whole by the same scanner (it counts brackets without recursing) and reported, the same way. An element
longer than `limit` characters is not buffered: the scanner reads on to its end one chunk at a time, keeping
its state (depth, inside a string) between chunks, and the element is reported with its length. Memory: the
current element (at most `limit`) plus one chunk. `ijson` would do the same with a C backend; this keeps the
package free of another dependency and lets a broken conversation in the middle of an export cost only
itself."""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from .limits import TOO_DEEP, over_limit

CHUNK = 1 << 20
NO_LIMIT = 1 << 62
_DECODER = json.JSONDecoder()
_WS = re.compile(r"[ \t\r\n]*")
# The rest of a string up to its closing quote (unrolled loop: fast on long strings); it stops early only at
# the buffer's end, or before a backslash that ends the buffer (the escaped character is in the next chunk).
_STRING_REST = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*', re.DOTALL)
_STRUCTURE = re.compile(r'["\[\]{}]')


class NotAnArray(ValueError):
    """The stream does not hold a JSON array."""


@dataclass(frozen=True)
class Fault:
    """An element that could not be read: `ordinal` is 1-based; `fatal` when nothing after it can be read."""

    ordinal: int
    reason: str
    fatal: bool = False


class _Scanner:
    """Finds where an element (an object, an array or a string) ends, by its strings and brackets only; its
    state carries over from one chunk to the next."""

    def __init__(self) -> None:
        self.depth = 0
        self.in_string = False

    def scan(self, buf: str, i: int) -> tuple[int | None, int]:
        """(index just past the element's end, or None; the index up to which `buf` is consumed)."""
        n = len(buf)
        while i < n:
            if self.in_string:
                j = _STRING_REST.match(buf, i).end()  # type: ignore[union-attr]
                if j >= n or buf[j] == "\\":
                    return None, j  # the string goes on in the next chunk
                self.in_string, i = False, j + 1
                if self.depth <= 0:
                    return i, i  # the element was a string
                continue
            m = _STRUCTURE.search(buf, i)
            if m is None:
                return None, n
            c, i = m.group(), m.end()
            if c == '"':
                self.in_string = True
            elif c in "[{":
                self.depth += 1
            else:
                self.depth -= 1
                if self.depth <= 0:
                    return i, i
        return None, i


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


def iter_array(stream: IO[bytes], chunk: int = CHUNK, limit: int = NO_LIMIT) -> Iterator[Any | Fault]:
    """Each element of the array in `stream`, in order, or a `Fault` in its place (an element longer than
    `limit` characters is one, and is never held whole). A fatal fault (the file ends inside an element, or
    the array's punctuation is broken) ends the iteration."""
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
        item = _next_element(r, ordinal, limit)
        yield item
        if isinstance(item, Fault) and item.fatal:
            return


def _next_element(r: _Reader, ordinal: int, limit: int) -> Any | Fault:
    while True:
        try:
            value, end = _DECODER.raw_decode(r.buf, r.pos)
        except (json.JSONDecodeError, RecursionError) as e:
            if r.buf[r.pos] not in '[{"':
                if not r.eof and len(r.buf) - r.pos < 64:
                    r.more()
                    continue
                return Fault(ordinal, f"invalid JSON: {getattr(e, 'msg', e)}", fatal=True)
            scanner = _Scanner()
            stop, consumed = scanner.scan(r.buf, r.pos)
            have = len(r.buf) - r.pos
            if stop is None:
                if have > limit:
                    return _skip(r, ordinal, limit, scanner, consumed)
                # Read until the element is whole, but never more than one character past the limit.
                if r.more(at_least=max(1, min(have, limit + 1 - have))):
                    continue
                return Fault(ordinal, "the file ends inside this element (truncated?)", fatal=True)
            if stop - r.pos > limit:
                return _too_long(r, ordinal, limit, stop)
            why = TOO_DEEP if isinstance(e, RecursionError) else f"invalid JSON: {e.msg} (character {r.offset + e.pos})"
            r.pos = stop
            return Fault(ordinal, why)
        if end == len(r.buf) and not r.eof and not isinstance(value, (dict, list)):
            r.more()  # a number at the buffer's end may go on in the next chunk
            continue
        if end - r.pos > limit:
            return _too_long(r, ordinal, limit, end)
        r.pos = end
        return value


def _too_long(r: _Reader, ordinal: int, limit: int, stop: int) -> Fault:
    size, r.pos = stop - r.pos, stop
    return Fault(ordinal, over_limit(size, limit, "characters"))


def _skip(r: _Reader, ordinal: int, limit: int, scanner: _Scanner, consumed: int) -> Fault:
    """Reads on to the end of an element already longer than `limit`, a chunk at a time, keeping none of it."""
    size, r.pos = consumed - r.pos, consumed
    while r.more():
        stop, consumed = scanner.scan(r.buf, r.pos)
        size += (stop if stop is not None else consumed) - r.pos
        if stop is not None:
            r.pos = stop
            return Fault(ordinal, over_limit(size, limit, "characters"))
        r.pos = consumed
    return Fault(ordinal, f"the file ends inside this element, after {size:,} characters (truncated?)", fatal=True)

"""What one record and one zip member may hold: a JSONL line over the record limit is counted, never held (at
every boundary: exactly the limit, one byte over, no final newline); a zip member is refused by the zip's
directory before a byte is inflated, and while it streams when the directory understates it; either way the
member is reported by name and the rest of the zip is read."""

from __future__ import annotations

import io
import json
import struct
import zipfile

import pytest

from funes_py.sources import items, units
from funes_py.sources.limits import PIECE, MemberTooLarge, capped, read_lines


class Spy(io.BytesIO):
    """Records the longest piece handed out, by `read` or `readline`."""

    longest = 0

    def readline(self, size=-1):  # type: ignore[override]
        out = super().readline(size)
        self.longest = max(self.longest, len(out))
        return out

    def read(self, size=-1):  # type: ignore[override]
        out = super().read(size)
        self.longest = max(self.longest, len(out))
        return out


def lines(data: bytes, limit: int):
    return [tuple(x) for x in read_lines(io.BytesIO(data), limit)]


def test_lines_at_the_limit_are_kept_and_one_byte_over_is_counted():
    assert lines(b"abcd\nabcde\n\nxy", 4) == [(1, b"abcd", 4, True), (2, None, 5, True), (3, b"", 0, True), (4, b"xy", 2, False)]
    assert lines(b"abcdef", 4) == [(1, None, 6, False)]
    assert lines(b"a\r\n", 4) == [(1, b"a\r", 2, True)]


def test_a_long_line_is_never_held_whole_and_the_next_line_is_read():
    long = b"z" * (5 * PIECE + 3)
    spy = Spy(b'{"a": 1}\n' + long + b'\n{"b": 2}\n')
    out = [tuple(x) for x in read_lines(spy, 1000)]
    assert out == [(1, b'{"a": 1}', 8, True), (2, None, len(long), True), (3, b'{"b": 2}', 8, True)]
    assert spy.longest <= PIECE


def test_a_member_the_directory_says_is_too_large_is_refused_before_reading():
    spy = Spy(b"x" * 100)
    with pytest.raises(MemberTooLarge, match="inflates to 100 bytes, over the limit of 99"):
        capped(spy, "m.jsonl", 100, 99)
    assert spy.tell() == 0


def test_a_member_that_inflates_past_the_limit_is_stopped_while_streaming():
    f = capped(io.BytesIO(b"y" * 5000), "m.jsonl", declared=10, limit=4096)  # the directory understates it
    with pytest.raises(MemberTooLarge, match="at least"):
        f.read()


def _zip(path, members):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)


GOOD = json.dumps({"type": "user", "sessionId": "s", "uuid": "u1", "timestamp": "2026-03-04T10:00:00Z",
                   "message": {"role": "user", "content": "the key is under the blue pot"}}) + "\n"  # fmt: skip


def test_a_zip_member_over_the_member_limit_is_reported_and_the_others_read(tmp_path, monkeypatch):
    monkeypatch.setenv("FUNES_MAX_MEMBER_BYTES", "10000")
    z = tmp_path / "e.zip"
    _zip(z, {"a.jsonl": GOOD, "big.jsonl": GOOD + " " * 20_000 + "\n"})
    out = {s.key.rsplit("!", 1)[1]: s for s in items(units(z))}
    assert [json.loads(line)["turn_uuid"] for _, line in out["a.jsonl"].lines] == ["u1"]
    big = out["big.jsonl"]
    assert big.signature is None and big.lines == []
    assert big.bad == [(0, f"unreadable: zip member big.jsonl inflates to {len(GOOD) + 20_001:,} bytes, over the "
                           "limit of 10,000 (FUNES_MAX_MEMBER_BYTES)")]  # fmt: skip


def test_a_zip_whose_directory_lies_about_a_member_is_reported_not_trusted(tmp_path):
    """The central directory says 40 bytes for a member that inflates to 200 KB: it is reported as unreadable
    (read no further than its directory says, it fails its checksum), and the other member is read."""
    z = tmp_path / "e.zip"
    _zip(z, {"a.jsonl": GOOD, "lie.jsonl": GOOD * 1000})
    raw = bytearray(z.read_bytes())
    at = raw.rfind(b"PK\x01\x02", 0, raw.rfind(b"lie.jsonl"))  # the member's central directory entry
    raw[at + 24 : at + 28] = struct.pack("<I", 40)  # its uncompressed size
    z.write_bytes(bytes(raw))
    assert zipfile.ZipFile(z).getinfo("lie.jsonl").file_size == 40
    out = {s.key.rsplit("!", 1)[1]: s for s in items(units(z))}
    assert len(out["a.jsonl"].lines) == 1
    lie = out["lie.jsonl"]
    assert lie.signature is None and lie.lines == [] and lie.bad[0][0] == 0 and "unreadable" in lie.bad[0][1], lie

"""The export parser streams a top-level JSON array element by element whatever the chunk size, reports an
invalid element with its ordinal and goes on after it, stops at a truncation, and keeps only about one
element in memory. An element nested past the decoder's depth, or longer than the limit, is reported by its
ordinal and costs only itself: the stream goes on at the next element, and a long one is never buffered."""

from __future__ import annotations

import io
import json
import random

import pytest

from funes_py.sources.jsonarray import Fault, NotAnArray, _Reader, iter_array

ELEMENTS = [
    {"title": "a", "mapping": {"n": {"parts": ['"]}{[', "tab\there", "\\", "ünï ☃ 😀"]}}},
    {"title": "b" * 5000, "nested": [[[]], {}, [{"x": None}]], "n": -1.5e3},
    {},
    {"s": '\\\\"', "t": True},
]


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64, 4096, 1 << 20])
def test_every_chunk_size_gives_the_same_elements(chunk):
    raw = json.dumps(ELEMENTS, ensure_ascii=False, indent=1).encode()
    assert list(iter_array(io.BytesIO(raw), chunk=chunk)) == ELEMENTS


def test_invalid_element_is_reported_by_ordinal_and_the_rest_is_read():
    raw = b'[{"a": 1}, {"b": tru, "c": "}"}, {"d": [1, 2]}]'
    out = list(iter_array(io.BytesIO(raw), chunk=5))
    assert out[0] == {"a": 1} and out[2] == {"d": [1, 2]}
    assert isinstance(out[1], Fault) and out[1].ordinal == 2 and not out[1].fatal and "invalid JSON" in out[1].reason


def test_truncated_file_ends_with_a_fatal_fault():
    out = list(iter_array(io.BytesIO(b'[{"a": 1}, {"b": "unterminated'), chunk=4))
    assert out[0] == {"a": 1} and isinstance(out[1], Fault) and out[1].fatal and out[1].ordinal == 2


def test_not_an_array_and_empty_array():
    with pytest.raises(NotAnArray):
        list(iter_array(io.BytesIO(b'{"mapping": {}}')))
    assert list(iter_array(io.BytesIO(b"\xef\xbb\xbf  [ ]\n"))) == []


def test_memory_is_bounded_by_the_element_not_the_file(monkeypatch):
    """A 200-element array read in 4 KiB chunks never buffers more than a few elements' worth."""
    rng = random.Random(7)
    elements = [{"id": i, "text": "x" * rng.randint(100, 3000)} for i in range(200)]
    raw = json.dumps(elements).encode()
    peak = 0
    original = _Reader.more

    def spy(self, at_least=0):
        nonlocal peak
        ok = original(self, at_least)
        peak = max(peak, len(self.buf))
        return ok

    monkeypatch.setattr(_Reader, "more", spy)
    assert list(iter_array(io.BytesIO(raw), chunk=4096)) == elements
    assert len(raw) > 250_000 and peak < 2 * 3100 + 2 * 4096


DEEP = "[" * 5000 + "]" * 5000
LONG = json.dumps({"text": 'a "quoted" \\ [bracket] {brace} ' * 600})  # 19 KB of strings that look like structure


@pytest.mark.parametrize("chunk", [1, 3, 64, 4096, 1 << 20])
def test_deep_and_long_elements_are_reported_and_the_next_ones_read(chunk):
    raw = ('[{"a": 1}, ' + DEEP + ', {"d": ' + DEEP + '}, ' + LONG + ', "' + "s" * 13_000 + '", {"b": 2}]').encode()
    out = list(iter_array(io.BytesIO(raw), chunk=chunk, limit=12_000))  # the deep ones are 10,000 characters
    assert out[0] == {"a": 1} and out[-1] == {"b": 2} and len(out) == 6
    faults = [(f.ordinal, f.reason, f.fatal) for f in out[1:5]]
    assert [(n, fatal) for n, _, fatal in faults] == [(2, False), (3, False), (4, False), (5, False)]
    assert "nested too deeply" in faults[0][1] and "nested too deeply" in faults[1][1]
    assert faults[2][1].startswith(f"{len(LONG):,} characters, over the limit of 12,000")
    assert faults[3][1].startswith("13,002 characters, over the limit")


def test_a_long_element_is_skipped_without_buffering_it(monkeypatch):
    big = json.dumps({"t": "x" * 500_000})
    raw = ('[{"a": 1}, ' + LONG + ", " + big + ', {"b": 2}]').encode()
    peak = 0
    original = _Reader.more

    def spy(self, at_least=0):
        nonlocal peak
        ok = original(self, at_least)
        peak = max(peak, len(self.buf))
        return ok

    monkeypatch.setattr(_Reader, "more", spy)
    out = list(iter_array(io.BytesIO(raw), chunk=4096, limit=30_000))
    assert out[0] == {"a": 1} and out[1] == json.loads(LONG)  # under the limit: read and out[-1] == {"b": 2}
    assert isinstance(out[2], Fault) and out[2].ordinal == 3 and f"{len(big):,} characters" in out[2].reason
    assert peak < 30_000 + 2 * 4096


def test_a_file_that_ends_inside_a_long_element_is_a_fatal_fault():
    out = list(iter_array(io.BytesIO(b'[{"a": 1}, {"t": "' + b"x" * 50_000), chunk=1024, limit=1000))
    assert out[0] == {"a": 1} and isinstance(out[1], Fault) and out[1].fatal and "ends inside" in out[1].reason

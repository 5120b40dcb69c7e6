"""The export parser streams a top-level JSON array element by element whatever the chunk size, reports an
invalid element with its ordinal and goes on after it, stops at a truncation, and keeps only about one
element in memory."""

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

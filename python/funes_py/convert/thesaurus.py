"""A model's near words (`thesaurus.tsv` beside the model; read by the engine's `thesaurus` module): for each
whole word of the model's own vocabulary, the words of that vocabulary nearest it in the model's space, each
word embedded alone, with their cosine.

BM25 asks for the near words of a question's words too, weighted below its own, so a question in other
words than the stored ones can still match a word ("choice" finds "decision"). The list is the model's
whole-word tokens of three letters or more (WordPiece: no `##`; SentencePiece: `▁` pieces), about 21,000 for
MiniLM, embedded in under a minute on two cores; the table holds each word's `NEAREST` nearest of cosine at
least `MIN_COSINE`, a little below the least the engine asks for (`options::NEAR_WORD_MIN_COSINE`, 0.55), so
that can be tuned without building the table again.

That threshold is a cosine on MiniLM's scale, where two random words of the list have a median cosine of about
0.22. A model whose word vectors all lie close together has no such table: multilingual-e5-small's random
pairs have a median of about 0.87, so every word would expand to its ten nearest, whatever they mean. `write`
measures the model's median on a sample first and refuses above `MAX_PAIR_MEDIAN`.

`funes-py models thesaurus NAME|DIR` writes one (it loads the engine to embed; this module never does).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

FILE = "thesaurus.tsv"
NEAREST = 10
MIN_COSINE = 0.5
BATCH = 512
MAX_PAIR_MEDIAN = 0.35
PAIR_SAMPLE = 2000  # words: about two million pairs


class ScaleError(ValueError):
    """The model's word cosines are not on the scale the engine's near-word threshold was chosen on."""


def pair_median(vectors: np.ndarray) -> float:
    """The median cosine of two different words among `vectors` (every pair of them)."""
    v = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    sims = v @ v.T
    return float(np.median(sims[np.triu_indices(len(v), k=1)]))


def vocabulary_words(tokenizer_json: Path) -> list[str]:
    """The whole words of a tokenizer's vocabulary: plain ASCII letters, three or more, lower case, each once."""
    model = json.loads(Path(tokenizer_json).read_text(encoding="utf-8"))["model"]
    vocab = model["vocab"]
    pieces = list(vocab) if isinstance(vocab, dict) else [p[0] for p in vocab]
    if model.get("type") == "Unigram":
        pieces = [p[1:] for p in pieces if p.startswith("\u2581")]
    words = (p.lower() for p in pieces if len(p) >= 3 and p.isascii() and p.isalpha())
    return list(dict.fromkeys(words))


def near_words(words: list[str], vectors: np.ndarray, nearest: int = NEAREST,
               min_cosine: float = MIN_COSINE) -> dict[str, list[tuple[str, float]]]:  # fmt: skip
    """Each word's `nearest` nearest others by cosine, nearest first, those of cosine at least `min_cosine`."""
    v = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    out: dict[str, list[tuple[str, float]]] = {}
    for start in range(0, len(words), 2048):
        sims = v[start:start + 2048] @ v.T
        for i in range(sims.shape[0]):
            sims[i, start + i] = -np.inf   # not its own neighbour
        top = np.argpartition(-sims, nearest, axis=1)[:, :nearest]
        for i, cols in enumerate(top):
            ranked = sorted(((float(sims[i, j]), int(j)) for j in cols), key=lambda x: (-x[0], x[1]))
            kept = [(words[j], c) for c, j in ranked if c >= min_cosine]
            if kept:
                out[words[start + i]] = kept
    return out


def write(model_dir: str | Path, embed: Callable[[list[str]], np.ndarray]) -> Path:
    """Writes `thesaurus.tsv` into a converted model directory, from the model itself (`embed`: that model's
    passage embedding, `funes_py.Models.load(embedder=model_dir).embed`: the converter never loads the engine
    itself); returns its path."""
    model_dir = Path(model_dir)
    words = vocabulary_words(model_dir / "tokenizer.json")
    # A spread sample of the list (it is in vocabulary order, frequent words first in WordPiece), embedded
    # first: a model refused costs the sample, not its whole vocabulary (e5: 49,000 words).
    sample = words[:: max(1, len(words) // PAIR_SAMPLE)][:PAIR_SAMPLE]
    median = pair_median(embed(sample))
    if median > MAX_PAIR_MEDIAN:
        raise ScaleError(f"{model_dir}: two random words of its vocabulary have a median cosine of {median:.2f} "
                         f"(MiniLM's: about 0.22); at the engine's near-word threshold every word would expand, "
                         f"so no {FILE} is written")  # fmt: skip
    vectors = np.concatenate([embed(words[i:i + BATCH]) for i in range(0, len(words), BATCH)])
    table = near_words(words, vectors)
    path = model_dir / FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(f"{w}\t" + "\t".join(f"{n}:{c:.4f}" for n, c in near) + "\n" for w, near in table.items()),
                   encoding="utf-8")  # fmt: skip
    os.replace(tmp, path)
    return path

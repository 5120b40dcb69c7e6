"""Randomly initialised Hugging Face model directories: hermetic test models and benchmark stand-ins.

`write_random_model` writes what a Hub download of a BERT or XLM-RoBERTa model holds: config.json,
model.safetensors (HF tensor names, the `bert.`/`roberta.` prefix on cross-encoders) and a small but valid
tokenizer.json written by hand (the `tokenizers` package is not needed). `random_bert_like` gives the real
shapes of all-MiniLM-L6-v2 / ms-marco-MiniLM-L-6-v2 and bge-reranker-base, which is what latency depends on.
"""

from __future__ import annotations

import json
import string
from pathlib import Path

import numpy as np

from .spec import BERT, CROSS_ENCODER, EMBEDDER, XLM_ROBERTA

# Common English words, so text tokenises at about word granularity (as with a real vocabulary) instead of
# one token per character.
WORDS = """the of and to a in is it you that he was for on are with as i his they be at one have this from or
had by not but what some we can out other were all there when up use your how said an each she which do
their time if will way about many then them write would like so these her long make thing see him two has
look more day could go come did number sound no most people my over know water than call first who may down
side been now find any new work part take get place made live where after back little only round man year
came show every good me give our under name very through just form sentence great think say help low line
differ turn cause much mean before move right boy old too same tell does set three want air well also play
small end put home read hand port large spell add even land here must big high such follow act why ask men
change went light kind off need house picture try us again animal point mother world near build self earth
father head stand own page should country found answer school grow study still learn plant cover food sun
four between state keep eye never last let thought city tree cross farm hard start might story saw far sea
draw left late run while press close night real life few north memory search recall conversation model
""".split()
WORDS = list(dict.fromkeys(WORDS))  # keep order, drop repeats (ids must be dense)
_CHARS = string.ascii_lowercase + string.digits + string.punctuation


def _bert_vocab(size: int | None) -> list[str]:
    words = [w for w in WORDS if w not in _CHARS]  # "a", "i" are already there as characters
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *_CHARS, *(f"##{c}" for c in _CHARS), *words]
    return _fill(tokens, size, lambda i: f"[unused{i}]")


def _fill(tokens: list[str], size: int | None, filler) -> list[str]:
    if size is not None and size < len(tokens):
        raise ValueError(f"vocab {size} is smaller than the {len(tokens)} tokens the tokenizer needs")
    return tokens + [filler(i) for i in range((size or len(tokens)) - len(tokens))]


def _special(content: str, i: int) -> dict:
    return {
        "id": i,
        "content": content,
        "single_word": False,
        "lstrip": False,
        "rstrip": False,
        "normalized": False,
        "special": True,
    }


def _template(cls: str, sep: str, cls_id: int, sep_id: int, pair_type: int, double_sep: bool) -> dict:
    """`cls A sep` and `cls A sep [sep] B sep`, segment B with token type `pair_type`."""

    def tok(t: str, type_id: int) -> dict:
        return {"SpecialToken": {"id": t, "type_id": type_id}}

    def seq(s: str, type_id: int) -> dict:
        return {"Sequence": {"id": s, "type_id": type_id}}

    return {
        "type": "TemplateProcessing",
        "single": [tok(cls, 0), seq("A", 0), tok(sep, 0)],
        "pair": [
            tok(cls, 0),
            seq("A", 0),
            tok(sep, 0),
            *([tok(sep, pair_type)] if double_sep else []),
            seq("B", pair_type),
            tok(sep, pair_type),
        ],
        "special_tokens": {
            cls: {"id": cls, "ids": [cls_id], "tokens": [cls]},
            sep: {"id": sep, "ids": [sep_id], "tokens": [sep]},
        },
    }


def bert_tokenizer_json(vocab: list[str]) -> dict:
    """Uncased WordPiece as bert-base-uncased's tokenizer.json has it: [CLS] A [SEP] / [CLS] A [SEP] B [SEP]."""
    ids = {t: i for i, t in enumerate(vocab)}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [_special(t, ids[t]) for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")],
        "normalizer": {
            "type": "BertNormalizer",
            "clean_text": True,
            "handle_chinese_chars": True,
            "strip_accents": None,
            "lowercase": True,
        },
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": _template("[CLS]", "[SEP]", ids["[CLS]"], ids["[SEP]"], pair_type=1, double_sep=False),
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {
            "type": "WordPiece",
            "unk_token": "[UNK]",
            "continuing_subword_prefix": "##",
            "max_input_chars_per_word": 100,
            "vocab": ids,
        },
    }


def xlmr_tokenizer_json(size: int | None) -> dict:
    """SentencePiece-style Unigram with <s>=0 <pad>=1 </s>=2 <unk>=3, <mask> last, <s> A </s> </s> B </s>."""
    meta = "\u2581"
    pieces = [(f"{meta}{w}", -5.0) for w in WORDS] + [(meta, -8.0)]
    pieces += [(c, -10.0) for c in string.ascii_letters + string.digits + string.punctuation]
    head = [("<s>", 0.0), ("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0)]
    need = len(head) + len(pieces) + 1
    if size is not None and size < need:
        raise ValueError(f"vocab {size} is smaller than the {need} pieces the tokenizer needs")
    filler = [(f"<filler{i}>", -100.0) for i in range((size or need) - need)]
    vocab = head + pieces + filler + [("<mask>", 0.0)]
    mask_id = len(vocab) - 1
    metaspace = {"type": "Metaspace", "replacement": meta, "prepend_scheme": "always", "split": True}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [_special(t, i) for i, t in enumerate(["<s>", "<pad>", "</s>", "<unk>"])]
        + [_special("<mask>", mask_id)],
        "normalizer": None,
        "pre_tokenizer": metaspace,
        "post_processor": _template("<s>", "</s>", 0, 2, pair_type=0, double_sep=True),
        "decoder": metaspace,
        "model": {"type": "Unigram", "unk_id": 3, "vocab": [list(p) for p in vocab], "byte_fallback": False},
    }


def _config(kind: str, family: str, layers: int, hidden: int, heads: int, intermediate: int, vocab: int) -> dict:
    bert = family == BERT
    arch = ("Bert" if bert else "XLMRoberta") + ("ForSequenceClassification" if kind == CROSS_ENCODER else "Model")
    cfg = {
        "_name_or_path": f"funes-random/{family}-{kind.replace('_', '-')}-l{layers}-h{hidden}",
        "architectures": [arch],
        "model_type": family,
        "hidden_act": "gelu",
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "intermediate_size": intermediate,
        "vocab_size": vocab,
        "max_position_embeddings": 512 if bert else 514,
        "type_vocab_size": 2 if bert else 1,
        "layer_norm_eps": 1e-12 if bert else 1e-5,
        "pad_token_id": 0 if bert else 1,
        "position_embedding_type": "absolute",
    }
    if not bert:
        cfg.update(bos_token_id=0, eos_token_id=2)
    if kind == CROSS_ENCODER:
        cfg.update(id2label={"0": "LABEL_0"}, label2id={"LABEL_0": 0})
    return cfg


def _weights(cfg: dict, kind: str, std: float, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    h, inter = cfg["hidden_size"], cfg["intermediate_size"]

    def rand(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape, dtype=np.float32) * np.float32(std)

    def dense(name: str, out: int, inp: int) -> dict:
        return {f"{name}.weight": rand(out, inp), f"{name}.bias": rand(out)}

    def norm(name: str) -> dict:
        return {f"{name}.weight": 1 + rand(h), f"{name}.bias": rand(h)}

    w = {
        "embeddings.word_embeddings.weight": rand(cfg["vocab_size"], h),
        "embeddings.position_embeddings.weight": rand(cfg["max_position_embeddings"], h),
        "embeddings.token_type_embeddings.weight": rand(cfg["type_vocab_size"], h),
        **norm("embeddings.LayerNorm"),
    }
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}"
        for part in ("query", "key", "value"):
            w.update(dense(f"{p}.attention.self.{part}", h, h))
        w.update(dense(f"{p}.attention.output.dense", h, h) | norm(f"{p}.attention.output.LayerNorm"))
        w.update(dense(f"{p}.intermediate.dense", inter, h) | dense(f"{p}.output.dense", h, inter))
        w.update(norm(f"{p}.output.LayerNorm"))
    bert = cfg["model_type"] == BERT
    if bert:  # HF BertModel keeps a pooler (and the position_ids buffer) even when nothing uses them
        w.update(dense("pooler.dense", h, h))
        w["embeddings.position_ids"] = np.arange(cfg["max_position_embeddings"], dtype=np.int64)[None]
    if kind != CROSS_ENCODER:
        return w
    w = {("bert." if bert else "roberta.") + k: v for k, v in w.items()}
    head = dense("classifier", 1, h) if bert else dense("classifier.dense", h, h) | dense("classifier.out_proj", 1, h)
    return w | head


def write_random_model(
    dir: str | Path,
    kind: str = EMBEDDER,
    family: str = BERT,
    layers: int = 2,
    hidden: int = 32,
    heads: int = 4,
    intermediate: int = 64,
    vocab: int | None = None,
    std: float = 0.2,
    seed: int = 0,
) -> Path:
    """Write a random HF-style model into `dir` and return it. `vocab` defaults to the tokenizer's size;
    `std` is large by default so that tiny test models give clearly different outputs per input."""
    from safetensors.numpy import save_file

    if kind not in (EMBEDDER, CROSS_ENCODER) or family not in (BERT, XLM_ROBERTA):
        raise ValueError(f"kind {kind!r} / family {family!r} not supported")
    out = Path(dir)
    out.mkdir(parents=True, exist_ok=True)
    tok = bert_tokenizer_json(_bert_vocab(vocab)) if family == BERT else xlmr_tokenizer_json(vocab)
    size = len(tok["model"]["vocab"])
    cfg = _config(kind, family, layers, hidden, heads, intermediate, size)
    (out / "config.json").write_text(json.dumps(cfg, indent=2) + "\n", encoding="utf-8")
    (out / "tokenizer.json").write_text(json.dumps(tok, ensure_ascii=False), encoding="utf-8")
    save_file(_weights(cfg, kind, std, seed), str(out / "model.safetensors"))
    return out


# (family, layers, hidden, heads, intermediate, vocab). bge-reranker-base's real vocab is 250,002; a smaller
# table changes only the embedding Gather's memory, not the latency the benchmark measures.
SHAPES = {
    "minilm": (BERT, 6, 384, 12, 1536, 30522),
    "bge-reranker-base": (XLM_ROBERTA, 12, 768, 12, 3072, 32000),
}


def random_bert_like(
    dir: str | Path, shape: str = "minilm", kind: str = CROSS_ENCODER, vocab: int | None = None, seed: int = 0
) -> Path:
    """A random model with the real shape of `shape` (see SHAPES), a cross-encoder unless `kind` says otherwise."""
    try:
        family, layers, hidden, heads, inter, default_vocab = SHAPES[shape]
    except KeyError:
        raise ValueError(f"unknown shape {shape!r}; known: {sorted(SHAPES)}") from None
    return write_random_model(
        dir,
        kind=kind,
        family=family,
        layers=layers,
        hidden=hidden,
        heads=heads,
        intermediate=inter,
        vocab=vocab or default_vocab,
        std=0.02,
        seed=seed,
    )

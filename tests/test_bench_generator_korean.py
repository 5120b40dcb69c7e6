"""The Korean and mixed Korean/English synthetic histories keep the English history's promises, on their own
text: deterministic bytes, one conversation per answer, keys said together only in their own conversation,
paraphrased questions; and they read as Korean is written: particles attached to nouns and codes, in the
form the word before them takes, English product names inside Korean sentences. The English generator is
unchanged byte for byte. Pure Python; needs neither funes_py nor the Rust extension."""
import copy
import hashlib
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benches.history import LANGS, check_history, generate, write_history  # noqa: E402
from benches.korean import attach_particles, final_sound  # noqa: E402
from benches.metrics import contains_answer, hit_at_k  # noqa: E402
from benches.vocab import ko as vocab_ko  # noqa: E402
from benches.vocab import mixed as vocab_mixed  # noqa: E402

ANSWER_FORMS = {
    "ticket": re.compile(r"MT-\d{4,5}"),
    "rate": re.compile(r"\d{1,2}\.\d%"),
    "owner": re.compile(r"[가-힣]{3}"),  # surname + two-syllable given name
    "decision": re.compile(r"DR-\d{4,5}"),
}
KEY_FORMS = {"ticket": re.compile(r"[PKCFMTGB]-\d{3}"), "rate": re.compile(r"L-\d{2,3}"),
             "owner": re.compile(r"[NSEWRH]-\d{2,3}"), "decision": re.compile(r"[NSEWRH]-\d{2,3}")}
MARKERS = ("이/가", "을/를", "은/는", "과/와", "(으)로", "이에요/예요", "이네요/네요", "이랑/랑")
HANGUL = re.compile(r"[가-힣]")
# English output of generate(300, seed=7) before the Korean variants existed: sha256 over the written
# files' relative paths and bytes, in path order. Regenerate only on a deliberate change to the English history.
ENGLISH_300_S7 = "e1dfe098a08917a75385445f4a404531bac2ea66d405bbc4f4fe60625d587280"


@pytest.fixture(scope="module", params=["ko", "mixed"])
def hist(request):
    return generate(300, seed=7, lang=request.param)


def _texts(conv):
    return "\n".join(m["blocks"][0]["text"] for m in conv)


def _files(d: Path) -> dict:
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def _digest(d: Path) -> str:
    h = hashlib.sha256()
    for name, data in _files(d).items():
        h.update(name.encode())
        h.update(data)
    return h.hexdigest()


def test_english_history_is_byte_identical_to_before_the_korean_variants(tmp_path):
    assert _digest(write_history(generate(300, seed=7), tmp_path / "en")) == ENGLISH_300_S7
    assert _digest(write_history(generate(300, seed=7, lang="en"), tmp_path / "en2")) == ENGLISH_300_S7


@pytest.mark.parametrize("lang", ["ko", "mixed"])
def test_same_seed_same_bytes_other_seed_and_language_differ(tmp_path, lang):
    a = _files(write_history(generate(300, seed=7, lang=lang), tmp_path / "a"))
    b = _files(write_history(generate(300, seed=7, lang=lang), tmp_path / "b"))
    c = _files(write_history(generate(300, seed=8, lang=lang), tmp_path / "c"))
    en = _files(write_history(generate(300, seed=7), tmp_path / "en"))
    assert a == b
    assert a["src/conv-00001.funes.jsonl"] != c["src/conv-00001.funes.jsonl"]
    assert a["src/conv-00001.funes.jsonl"] != en["src/conv-00001.funes.jsonl"]
    assert b'"lang": "' + lang.encode() + b'"' in a["manifest.json"] and b'"lang"' not in en["manifest.json"]


def test_cli_writes_a_korean_history(tmp_path):
    out = tmp_path / "ko"
    r = subprocess.run([sys.executable, "-m", "benches.history", "--n", "120", "--seed", "3", "--lang", "ko",
                        "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert _files(out) == _files(write_history(generate(120, seed=3, lang="ko"), tmp_path / "api"))


def test_shape_and_the_text_is_korean(hist):
    assert len(hist.conversations) == 300 and hist.lang in ("ko", "mixed")
    for conv in hist.conversations:
        assert [m["role"] for m in conv] == ["user", "assistant"] * 3
        stamps = [m["ts"] for m in conv]
        assert stamps == sorted(stamps) and len(set(stamps)) == 6
        for m in conv:
            text = m["blocks"][0]["text"]
            assert 12 <= len(text) <= 400, text
            assert len(HANGUL.findall(text)) >= 8, text  # every message is Korean
            assert not any(mark in text for mark in MARKERS), text  # every particle marker was resolved


def test_questions_are_korean_paraphrases(hist):
    assert Counter(q["kind"] for q in hist.questions) == {"ticket": 25, "rate": 25, "owner": 25, "decision": 25}
    assert len({q["answer"] for q in hist.questions}) == 100
    for q in hist.questions:
        assert ANSWER_FORMS[q["kind"]].fullmatch(q["answer"]), q
        assert KEY_FORMS[q["kind"]].fullmatch(q["key"]["id"]), q
        assert q["short"].split()[0] == q["key"]["id"]
        assert q["key"]["id"] in q["long"] and q["long"].endswith("?") and HANGUL.search(q["long"])
        assert q["key"]["topic"].lower() not in q["long"].lower()  # paraphrased, not the fact's wording
        assert q["answer"] not in q["long"] + q["short"]
        assert q["turn_uuid"] in q["evidence_turns"]
        assert not any(mark in q["long"] + q["short"] for mark in MARKERS)
    for u in hist.unanswerable:
        assert u["long"].endswith("?") and u["short"].split()[0] == u["absent"][0]


def test_each_answer_is_in_exactly_its_own_conversation(hist):
    texts = [_texts(c) for c in hist.conversations]
    by_session = {c[0]["session_id"]: c for c in hist.conversations}
    for q in hist.questions:
        holders = [c[0]["session_id"] for c, t in zip(hist.conversations, texts, strict=True)
                   if q["answer"] in t and contains_answer(t, q["answer"])]
        assert holders == [q["session_id"]], q
        fact = next(m for m in by_session[q["session_id"]] if m["turn_uuid"] == q["turn_uuid"])
        assert fact["role"] == "user" and contains_answer(fact["blocks"][0]["text"], q["answer"])
    all_text = "\n".join(texts)
    for u in hist.unanswerable:
        assert not contains_answer(all_text, u["absent"][0]), u


def test_particles_are_attached_to_nouns_and_codes(hist):
    text = "\n".join(_texts(c) for c in hist.conversations)
    # Codes with a particle glued on: MT-4471이, P-003의, L-12에서 ... in a good share of the history.
    glued = re.findall(r"\b(?:MT|DR|[A-Z])-\d+[가-힣]", text)
    assert len(glued) > 300, len(glued)
    # One noun, several particles: a query for the bare noun must meet it in all these forms.
    for noun in ("보일러", "변압기"):
        forms = set(re.findall(noun + r"(가|이|를|을|는|은|에서|에|의)(?![가-힣])", text))
        assert len(forms) >= 3, (noun, forms)
    # The particle takes the form the word before it needs, after every code and machine noun:
    # 받침 → 이/을/은, vowel → 가/를/는.
    nouns = "|".join(sorted({n.split()[-1] for n in vocab_ko.MACHINE_TYPES.values()}))
    after = re.compile(r"((?:MT|DR|BLD|[A-Z])-[0-9A-Z]+|%|(?:" + nouns + r"))(이|가|을|를|은|는)(?![가-힣])")
    checked = 0
    for m in after.finditer(text):
        pair = {"이": "이가", "가": "이가", "을": "을를", "를": "을를", "은": "은는", "는": "은는"}[m.group(2)]
        assert m.group(2) == (pair[0] if final_sound(m.group(1)) else pair[1]), text[m.start() - 20: m.end() + 5]
        checked += 1
    assert checked > 200, checked


@pytest.mark.parametrize("marked, resolved", [
    ("MT-4471이/가 닫혔어요", "MT-4471이 닫혔어요"),     # 일: final ㄹ
    ("MT-4472이/가 닫혔어요", "MT-4472가 닫혔어요"),     # 이: vowel
    ("DR-2290이에요/예요", "DR-2290이에요"),            # 영/십: consonant
    ("P-003 펌프을/를 점검", "P-003 펌프를 점검"),
    ("배전반을/를 교체", "배전반을 교체"),
    ("L-12 라인(으)로 옮겨요", "L-12 라인으로 옮겨요"),
    ("창고(으)로", "창고로"), ("서울(으)로", "서울로"),    # ㄹ takes 로
    ("불량률 3.7%(으)로", "불량률 3.7%로"), ("3.7%을/를", "3.7%를"),  # 퍼센트
    ("L-01(으)로", "L-01로"), ("N-10(으)로", "N-10으로"),
    ("SCADA이/가", "SCADA가"), ("BLD-9W2LNZYL은/는", "BLD-9W2LNZYL은"),  # letters by name: 에이, 엘
    ("seal leak이/가", "seal leak이"), ("fence은/는", "fence는"),   # English words by their last sound
    ("지훈 씨과/와", "지훈 씨와"),
])
def test_particle_forms(marked, resolved):
    assert attach_particles(marked) == resolved


def test_mixed_history_puts_english_names_in_korean_sentences():
    h = generate(300, seed=7, lang="mixed")
    facts = [m["blocks"][0]["text"] for c in h.conversations for m in c if m["turn_uuid"] in
             {f["turn_uuid"] for f in h.facts}]
    latin_words = Counter(w for t in facts for w in re.findall(r"\b[A-Za-z][A-Za-z-]{2,}\b", t)
                          if w not in ("MT", "DR", "BLD"))
    assert sum(1 for t in facts if re.search(r"[A-Za-z]{3,}", t) and HANGUL.search(t)) > 0.6 * len(facts)
    assert {"Grundfos", "SAP", "SCADA"} & set(latin_words)
    # Questions are Korean sentences too, many around an English word; a few topics are asked in Korean only.
    questions = [q["long"] for q in h.questions]
    assert all(HANGUL.search(q) for q in questions)
    with_english = [q for q in questions if re.search(r"[A-Za-z]{3,}", q)]
    assert 0.4 * len(questions) < len(with_english) < len(questions)


def test_hit_at_k_reads_a_particle_after_a_code_as_a_boundary():
    assert hit_at_k(["MT-4471을 등록했어요."], "MT-4471", 1)
    assert hit_at_k(["불량률 3.7%로 나왔어요"], "3.7%", 1)
    assert not hit_at_k(["MT-44712을 등록했어요."], "MT-4471", 1)
    assert not hit_at_k(["불량률 13.7%로 나왔어요"], "3.7%", 1)


def test_check_history_catches_broken_promises_in_korean(hist):
    broken = copy.deepcopy(hist)
    broken.questions[0]["answer"] = broken.questions[1]["answer"]
    with pytest.raises(ValueError, match="q-001"):
        check_history(broken)
    broken = copy.deepcopy(hist)
    broken.unanswerable[0]["absent"] = [hist.questions[0]["key"]["id"]]
    with pytest.raises(ValueError, match="u-001"):
        check_history(broken)


@pytest.mark.parametrize("V", [vocab_ko, vocab_mixed])
def test_vocab_lists_recur_in_twelves_and_paraphrase(V):
    for table in (V.SYMPTOMS, V.CHECKS, V.JOBS, V.PROJECTS, V.COLLEAGUES):
        assert len(table) == 12
    for phrase, paraphrase, *_ in V.SYMPTOMS + V.CHECKS + V.JOBS + V.PROJECTS:
        assert phrase.lower() not in paraphrase.lower(), phrase
    assert set(V.MACHINE_TYPES) == set(LANGS["en"].vocab.MACHINE_TYPES)


def test_korean_ten_thousand_has_enough_owner_names():
    assert len(vocab_ko.OWNER_FIRST) * len(vocab_ko.OWNER_LAST) >= 2_500 * 1.5
    assert len(set(vocab_ko.OWNER_FIRST)) == len(vocab_ko.OWNER_FIRST)

"""The household history (the held-out domain) keeps its promises: deterministic bytes, the right shape, one
conversation per answer, keys said together only where the fact is, entities that recur, reworded questions
without the stored words, and negatives about things never mentioned. Pure Python; no engine."""
import copy
import json
import os
import re
import subprocess
import sys
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benches import household  # noqa: E402
from benches.household import HISTORY_END, HISTORY_START, check_household, generate, write_history  # noqa: E402
from benches.metrics import contains_answer  # noqa: E402
from benches.reworded import content_stems  # noqa: E402

ANSWER_FORMS = {
    "repair": re.compile(r"[A-Z][a-z]+ [A-Z][a-z]+"),
    "bill": re.compile(r"£\d{2,4}\.\d\d"),
    "booking": re.compile(r"[A-Z2-9]{6}"),
    "venue": re.compile(r"[A-Z][a-z]+ [A-Z][a-z]+(?: [A-Z][a-z]+)?"),
}
ADDRESS = re.compile(r"\d{1,3} [A-Z][a-z]+ (?:Close|Road|Lane|Avenue|Street|Crescent|Gardens|Way)")
OPS_ID = re.compile(r"\b(?:[PKCFMTGBNSEWRHL]|MT|DR)-\d{2,5}\b")


@pytest.fixture(scope="module")
def h300():
    return generate(300, seed=7)


@pytest.fixture(scope="module")
def h3000():
    return generate(3000, seed=11)


def _texts(conv):
    return "\n".join(m["blocks"][0]["text"] for m in conv)


def _files(d: Path) -> dict:
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def test_same_seed_gives_identical_bytes_and_another_seed_differs(tmp_path):
    a = _files(write_history(generate(300, seed=7), tmp_path / "a"))
    b = _files(write_history(generate(300, seed=7), tmp_path / "b"))
    c = _files(write_history(generate(300, seed=8), tmp_path / "c"))
    assert a == b and a.keys() == c.keys()
    assert a["questions.jsonl"] != c["questions.jsonl"]
    assert {"questions.jsonl", "unanswerable.jsonl", "ood.jsonl", "facts.jsonl", "manifest.json"} <= a.keys()


def test_cli_is_deterministic_across_hash_seeds(tmp_path):
    outs = []
    for hash_seed in ("1", "2"):
        out = tmp_path / f"run{hash_seed}"
        r = subprocess.run([sys.executable, "-m", "benches.household", "--n", "120", "--seed", "3", "--out", str(out)],
                           cwd=ROOT, env=dict(os.environ, PYTHONHASHSEED=hash_seed), capture_output=True, text=True,
                           timeout=60)  # fmt: skip
        assert r.returncode == 0, r.stderr
        outs.append(_files(out))
    assert outs[0] == outs[1]


def test_shape_of_every_conversation(h300):
    assert len(h300.conversations) == 300
    sizes = Counter(len(c) for c in h300.conversations)
    assert set(sizes) == {6, 8} and min(sizes.values()) > 100
    previous = ""
    for conv in h300.conversations:
        assert [m["role"] for m in conv] == ["user", "assistant"] * (len(conv) // 2)
        assert [m["seq"] for m in conv] == list(range(len(conv)))
        stamps = [m["ts"] for m in conv]
        assert stamps == sorted(stamps) and stamps[0] >= previous
        previous = stamps[0]
        hour = int(stamps[0][11:13])
        assert 18 <= hour <= 22                                    # evenings, unlike the operations history
        for m in conv:
            assert 20 <= len(m["blocks"][0]["text"]) <= 400, m
            datetime.strptime(m["ts"], "%Y-%m-%dT%H:%M:%SZ")
    assert HISTORY_START.strftime("%Y-%m-%d") <= h300.conversations[0][0]["ts"][:10]
    assert h300.conversations[-1][-1]["ts"][:10] <= HISTORY_END.strftime("%Y-%m-%d")


def test_no_coded_identifiers_the_entities_are_addresses_and_names(h300):
    text = "\n".join(_texts(c) for c in h300.conversations)
    assert not OPS_ID.search(text)
    for q in h300.questions:
        if q["kind"] in ("repair", "bill"):
            assert ADDRESS.fullmatch(q["key"]["id"]), q
        else:
            assert re.fullmatch(r"[A-Z][a-z]+ [A-Z][a-z]+", q["key"]["id"]), q


def test_questions_kinds_and_three_phrasings(h300):
    qs = h300.questions
    assert len(qs) == 100 and len(h300.unanswerable) == 100
    assert Counter(q["kind"] for q in qs) == {"repair": 25, "bill": 25, "booking": 25, "venue": 25}
    assert len({q["answer"] for q in qs}) == 100 and len({q["session_id"] for q in qs}) == 100
    for q in qs:
        assert ANSWER_FORMS[q["kind"]].fullmatch(q["answer"]), q
        for style in ("long", "short", "reworded"):
            assert q["key"]["id"] in q[style] and not contains_answer(q[style], q["answer"]), (style, q)
        assert q["short"].startswith(q["key"]["id"])
        assert len({q["long"], q["short"], q["reworded"]}) == 3
        assert q["key"]["topic"].lower() not in q["reworded"].lower()
        assert q["turn_uuid"] in q["evidence_turns"]


def test_each_answer_is_in_exactly_its_own_conversation(h300):
    texts = [_texts(c) for c in h300.conversations]
    for q in h300.questions:
        holders = [c[0]["session_id"] for c, t in zip(h300.conversations, texts, strict=True)
                   if q["answer"].lower() in t.lower() and contains_answer(t, q["answer"])]
        assert holders == [q["session_id"]], q


def test_reworded_questions_share_no_content_word_with_the_fact_turn(h300):
    by_session = {c[0]["session_id"]: c for c in h300.conversations}
    for q in h300.questions:
        turn = next(m for m in by_session[q["session_id"]] if m["turn_uuid"] == q["turn_uuid"])
        ignore = q["key"]["id"].split() + q["answer"].split()
        shared = content_stems(q["reworded"], ignore) & content_stems(turn["blocks"][0]["text"], ignore)
        assert not shared, (q["reworded"], turn["blocks"][0]["text"], shared)
    assert household.vocab_overlaps() == []


def test_entities_recur_about_six_times_and_keys_are_unique(h3000):
    texts = [_texts(c) for c in h3000.conversations]
    keys = Counter((f["kind"], f["id"], f["attr"]) for f in h3000.facts)
    assert max(keys.values()) == 1
    per_address = Counter(a for t in texts for a in set(ADDRESS.findall(t)))
    counts = list(per_address.values())
    assert len(counts) == h3000.stats["addresses"]
    assert 5.5 <= sum(counts) / len(counts) <= 6.5 and min(counts) >= 4 and max(counts) <= 8
    people = {f["id"] for f in h3000.facts if f["kind"] in ("booking", "venue")}
    per_person = Counter(p for t in texts for p in people if p in t)
    assert 4.0 <= sum(per_person.values()) / len(per_person) <= 8.0
    for q in h3000.questions:
        assert sum(q["key"]["id"] in t for t in texts) >= 3, q       # the entity alone does not decide
    check_household(h3000)


def test_unanswerable_and_out_of_domain_name_nothing_in_the_history(h300):
    text = "\n".join(_texts(c) for c in h300.conversations)
    for u in h300.unanswerable:
        assert u["absent"][0] in u["long"] and not contains_answer(text, u["absent"][0])
    assert len(h300.ood) >= 50
    for o in h300.ood:
        assert all(not contains_answer(text, t) for t in o["absent"]), o


def test_check_household_catches_broken_promises(h300):
    broken = copy.deepcopy(h300)
    broken.questions[0]["answer"] = broken.questions[1]["answer"]
    with pytest.raises(ValueError, match="q-001"):
        check_household(broken)
    broken = copy.deepcopy(h300)
    q = broken.questions[2]
    q["reworded"] = f"{q['key']['id']}: {q['key']['topic']}?"
    with pytest.raises(ValueError, match="q-003"):
        check_household(broken)
    broken = copy.deepcopy(h300)
    broken.unanswerable[0]["absent"] = [h300.questions[0]["key"]["id"]]
    with pytest.raises(ValueError, match="absent term"):
        check_household(broken)


def test_write_history_layout(tmp_path, h300):
    out = write_history(h300, tmp_path)
    assert len(list((out / "src").glob("conv-*.funes.jsonl"))) == 300
    q = json.loads((out / "questions.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert {"qid", "answer", "session_id", "long", "short", "reworded", "key"} <= set(q)
    assert json.loads((out / "manifest.json").read_text())["generator"] == "benches.household"

"""The reworded questions and out-of-domain negatives for the operations history keep their promises: they
ask the same facts without the stored words, leave the history's own bytes alone, and the negatives are about
things the history never mentions. Pure Python; needs neither funes_py nor the Rust extension."""
import copy
import re
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benches import reworded  # noqa: E402
from benches.history import generate, write_history  # noqa: E402
from benches.metrics import contains_answer  # noqa: E402

MIXED = re.compile(r"\b(?=\w*\d)(?=\w*[A-Za-z])\w+(?:-\w+)*")   # an identifier-like token (P-003, MT-4471)


@pytest.fixture(scope="module")
def h1000():
    return generate(1000, seed=7)


@pytest.fixture(scope="module")
def sets(h1000):
    return reworded.build(h1000)


def _files(d: Path) -> dict:
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def test_building_the_sets_leaves_the_history_unchanged(tmp_path):
    h = generate(300, seed=7)
    before = _files(write_history(h, tmp_path / "a"))
    snapshot = copy.deepcopy(h)
    reworded.build(h)
    assert h == snapshot
    assert _files(write_history(h, tmp_path / "b")) == before


def test_sets_are_deterministic_and_follow_the_seed():
    a, b = reworded.build(generate(300, seed=7)), reworded.build(generate(300, seed=7))
    c = reworded.build(generate(300, seed=8))
    assert a == b
    assert [q["reworded"] for q in a["reworded"]] != [q["reworded"] for q in c["reworded"]]


def test_one_reworded_question_per_question_same_fact(h1000, sets):
    rw = sets["reworded"]
    assert [q["source_qid"] for q in rw] == [q["qid"] for q in h1000.questions]
    assert Counter(q["kind"] for q in rw) == {"ticket": 25, "rate": 25, "owner": 25, "decision": 25}
    by_qid = {q["qid"]: q for q in h1000.questions}
    for q in rw:
        src = by_qid[q["source_qid"]]
        for field in ("answer", "session_id", "turn_uuid", "evidence_turns", "key", "kind"):
            assert q[field] == src[field]
        assert q["key"]["id"] in q["reworded"] and not contains_answer(q["reworded"], q["answer"])
        assert q["reworded"] not in (src["long"], src["short"])
        assert q["key"]["topic"].lower() not in q["reworded"].lower()


def test_reworded_questions_share_no_content_word_with_their_fact(h1000, sets):
    by_session = {c[0]["session_id"]: c for c in h1000.conversations}
    allowed = {reworded.stem(w) for w in reworded.R.NO_SYNONYM}
    for q in sets["reworded"]:
        fact_turn = next(m for m in by_session[q["session_id"]] if m["turn_uuid"] == q["turn_uuid"])
        text = fact_turn["blocks"][0]["text"]
        ids = MIXED.findall(text + " " + q["reworded"])
        shared = reworded.content_stems(q["reworded"], ids) & reworded.content_stems(text, ids)
        assert shared <= allowed, (q["reworded"], text, shared)


def test_the_word_lists_keep_the_promise_for_every_seed():
    assert reworded.vocab_overlaps() == []


def test_stem_conflates_inflections():
    assert {reworded.stem(w) for w in ("leak", "leaking", "leaked", "leaks")} == {"leak"}
    assert reworded.stem("rejected") == reworded.stem("rejects") == reworded.stem("reject")
    assert reworded.content_stems("The pump's seal is leaking", ["pump"]) == {"seal", "leak"}


def test_out_of_domain_negatives_name_nothing_the_history_says(h1000, sets):
    ood = sets["ood"]
    assert len(ood) >= 50 and len({o["question"] for o in ood}) == len(ood)
    text = "\n".join(m["blocks"][0]["text"] for c in h1000.conversations for m in c).lower()
    for o in ood:
        assert o["question"].endswith("?") and o["absent"]
        assert not MIXED.search(o["question"]), o          # no identifiers: the guard cannot answer for it
        for term in o["absent"]:
            assert term.lower() in o["question"].lower()
            assert not contains_answer(text, term), term


def test_check_reworded_catches_broken_promises(h1000, sets):
    broken = copy.deepcopy(sets["reworded"])
    q = next(q for q in broken if q["kind"] == "ticket")
    fact = next(f for f in h1000.facts if f.get("session_id") == q["session_id"])
    q["reworded"] = f"Which reference went with the {fact['topic']} on {q['key']['id']}?"
    with pytest.raises(ValueError, match=q["qid"]):
        reworded.check_reworded(h1000, broken, sets["ood"])
    broken = copy.deepcopy(sets["reworded"])
    broken[0]["reworded"] = broken[0]["reworded"].replace(broken[0]["key"]["id"], "X-999")
    with pytest.raises(ValueError, match=broken[0]["qid"]):
        reworded.check_reworded(h1000, broken, sets["ood"])
    with pytest.raises(ValueError, match="out-of-domain term"):
        reworded.check_reworded(h1000, sets["reworded"], [{"qid": "o-x", "question": "?", "absent": ["lunch"]}])


def test_write_puts_both_sets_next_to_the_history(tmp_path, sets):
    reworded.write(sets, tmp_path)
    assert len((tmp_path / "reworded.jsonl").read_text(encoding="utf-8").splitlines()) == 100
    assert len((tmp_path / "ood.jsonl").read_text(encoding="utf-8").splitlines()) == len(sets["ood"])
    assert not list(tmp_path.glob("*.tmp"))

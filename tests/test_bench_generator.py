"""The synthetic history generator keeps its promises: deterministic bytes, the right shape, one
conversation per answer, confusers that recur, and unanswerable questions about absent things.
Pure Python; needs neither funes_py nor the Rust extension."""
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

from benches.history import HISTORY_END, HISTORY_START, check_history, generate, write_history  # noqa: E402
from benches.metrics import contains_answer  # noqa: E402
from benches.vocab import en as vocab  # noqa: E402

ANSWER_FORMS = {
    "ticket": re.compile(r"MT-\d{4,5}"),
    "rate": re.compile(r"\d{1,2}\.\d%"),
    "owner": re.compile(r"[A-Z][a-zá]+ (?:[A-Z]\. )?[A-Z][a-z]+"),
    "decision": re.compile(r"DR-\d{4,5}"),
}
KEY_FORMS = {"ticket": re.compile(r"[PKCFMTGB]-\d{3}"), "rate": re.compile(r"L-\d{2,3}"),
             "owner": re.compile(r"[NSEWRH]-\d{2,3}"), "decision": re.compile(r"[NSEWRH]-\d{2,3}")}
ENTITY = re.compile(r"(?<![\w-])(?:[PKCFMTGB]-\d{3}|[NSEWRHL]-\d{2,3})(?![\w]|[-.]\w)")
MESSAGE_KEYS = ["session_id", "turn_uuid", "seq", "ts", "role", "harness", "blocks"]


@pytest.fixture(scope="module")
def h300():
    return generate(300, seed=7)


@pytest.fixture(scope="module")
def h3000():
    return generate(3000, seed=11)


def _texts(conv):
    return "\n".join(m["blocks"][0]["text"] for m in conv)


def _holds(text: str, needle: str) -> bool:
    """contains_answer, with a substring test first (the boundary regex is the slow part)."""
    return needle.lower() in text.lower() and contains_answer(text, needle)


def _files(d: Path) -> dict:
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def test_same_seed_gives_identical_bytes_and_another_seed_differs(tmp_path):
    a = _files(write_history(generate(300, seed=7), tmp_path / "a"))
    b = _files(write_history(generate(300, seed=7), tmp_path / "b"))
    c = _files(write_history(generate(300, seed=8), tmp_path / "c"))
    assert a == b
    assert a.keys() == c.keys()
    assert a["src/conv-00001.funes.jsonl"] != c["src/conv-00001.funes.jsonl"]
    assert a["questions.jsonl"] != c["questions.jsonl"]


def test_cli_is_deterministic_across_processes_and_hash_seeds(tmp_path):
    outs = []
    for hash_seed in ("1", "2"):
        out = tmp_path / f"run{hash_seed}"
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        r = subprocess.run([sys.executable, "-m", "benches.history", "--n", "120", "--seed", "3", "--out", str(out)],
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == str(out)
        outs.append(_files(out))
    assert outs[0] == outs[1]
    assert len([k for k in outs[0] if k.startswith("src/")]) == 120


def test_shape_of_every_conversation(h300):
    assert len(h300.conversations) == 300 and len(h300.facts) == 300
    sessions, turns = set(), set()
    previous_start = ""
    for conv in h300.conversations:
        assert len(conv) == 6
        assert [m["role"] for m in conv] == ["user", "assistant"] * 3
        assert [m["seq"] for m in conv] == list(range(6))
        assert len({m["session_id"] for m in conv}) == 1
        sessions.add(conv[0]["session_id"])
        stamps = [m["ts"] for m in conv]
        assert stamps == sorted(stamps) and len(set(stamps)) == 6
        assert stamps[0] >= previous_start          # conversation order is time order
        previous_start = stamps[0]
        for m in conv:
            assert list(m) == MESSAGE_KEYS
            assert m["blocks"] == [{"block_type": "text", "text": m["blocks"][0]["text"]}]
            assert 30 <= len(m["blocks"][0]["text"]) <= 400, m["blocks"][0]["text"]
            datetime.strptime(m["ts"], "%Y-%m-%dT%H:%M:%SZ")
            turns.add(m["turn_uuid"])
    assert len(sessions) == 300 and len(turns) == 1800
    first, last = h300.conversations[0][0]["ts"], h300.conversations[-1][-1]["ts"]
    assert HISTORY_START.strftime("%Y-%m-%d") <= first[:10] and last[:10] <= HISTORY_END.strftime("%Y-%m-%d")
    assert (datetime.fromisoformat(last[:10]) - datetime.fromisoformat(first[:10])).days > 300


def test_question_counts_kinds_and_forms(h300):
    assert len(h300.questions) == 100 and len(h300.unanswerable) == 100
    assert Counter(q["kind"] for q in h300.questions) == {"ticket": 25, "rate": 25, "owner": 25, "decision": 25}
    assert Counter(u["kind"] for u in h300.unanswerable) == {"ticket": 25, "rate": 25, "owner": 25, "decision": 25}
    assert len({q["answer"] for q in h300.questions}) == 100
    assert len({q["session_id"] for q in h300.questions}) == 100
    for q in h300.questions:
        assert ANSWER_FORMS[q["kind"]].fullmatch(q["answer"]), q
        assert KEY_FORMS[q["kind"]].fullmatch(q["key"]["id"]), q
        assert q["short"].split()[0] == q["key"]["id"]            # identifier-led
        assert q["key"]["id"] in q["long"] and q["long"].endswith("?")
        assert q["key"]["topic"].lower() not in q["long"].lower()  # paraphrased, not the fact's wording
        assert q["answer"].lower() not in (q["long"] + q["short"]).lower()
        assert q["turn_uuid"] in q["evidence_turns"]


def test_each_answer_is_in_exactly_its_own_conversation(h300):
    texts = [_texts(c) for c in h300.conversations]
    by_session = {c[0]["session_id"]: c for c in h300.conversations}
    for q in h300.questions:
        holders = [c[0]["session_id"] for c, t in zip(h300.conversations, texts, strict=True) if _holds(t, q["answer"])]
        assert holders == [q["session_id"]], q
        fact_turn = next(m for m in by_session[q["session_id"]] if m["turn_uuid"] == q["turn_uuid"])
        assert fact_turn["role"] == "user" and contains_answer(fact_turn["blocks"][0]["text"], q["answer"])


def test_question_keys_are_one_fact_but_their_parts_recur(h300):
    texts = [_texts(c) for c in h300.conversations]
    facts_by_topic = Counter((f["kind"], f["attr"]) for f in h300.facts)
    keys = Counter((f["kind"], f["id"], f["attr"]) for f in h300.facts)
    assert max(keys.values()) == 1                          # every fact's key is unique in the history
    for q in h300.questions:
        fact = next(f for f in h300.facts if f["session_id"] == q["session_id"])
        assert fact["answer"] == q["answer"] and fact["id"] == q["key"]["id"]
        mentions = sum(_holds(t, q["key"]["id"]) for t in texts)
        assert mentions >= 3, (q, mentions)                 # the machine/site/line alone does not decide
        assert facts_by_topic[(fact["kind"], fact["attr"])] >= 2   # near-identical facts elsewhere


def test_entities_recur_about_six_times_and_references_are_unique(h3000):
    per_entity, refs = Counter(), Counter()
    for conv in h3000.conversations:
        text = _texts(conv)
        per_entity.update(set(ENTITY.findall(text)))
        refs.update(set(re.findall(r"\b(?:MT|DR)-\d+\b", text)))
    counts = list(per_entity.values())
    assert len(counts) == sum(h3000.stats.values())
    assert 5.5 <= sum(counts) / len(counts) <= 6.5 and min(counts) >= 4 and max(counts) <= 8
    assert max(refs.values()) == 1                          # each MT-/DR- number is said in one conversation
    assert len(h3000.questions) == 100
    check_history(h3000)


def test_unanswerable_questions_name_ids_that_never_appear(h300):
    all_text = "\n".join(_texts(c) for c in h300.conversations)
    seen = set()
    for u in h300.unanswerable:
        assert u["long"].endswith("?") and u["short"].split()[0] == u["absent"][0]
        for ref in u["absent"]:
            assert re.fullmatch(r"(?:[PKCFMTGB]-\d{3}|[NSEWRHL]-\d{2,3}|MT-\d{4,5}|DR-\d{4,5})", ref), ref
            assert ref in u["long"] and not _holds(all_text, ref), ref
            assert ref not in seen
            seen.add(ref)


def test_write_history_layout_and_stale_files(tmp_path):
    write_history(generate(300, seed=7), tmp_path)
    out = write_history(generate(120, seed=7), tmp_path)     # smaller N into the same directory
    src = sorted(p.name for p in (out / "src").iterdir())
    assert src == [f"conv-{i:05d}.funes.jsonl" for i in range(1, 121)]
    lines = (out / "src" / "conv-00007.funes.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 6 and all(list(json.loads(ln)) == MESSAGE_KEYS for ln in lines)
    questions = [json.loads(ln) for ln in (out / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(questions) == 100 and {"qid", "answer", "session_id", "long", "short"} <= set(questions[0])
    assert len((out / "unanswerable.jsonl").read_text(encoding="utf-8").splitlines()) == 100
    assert json.loads((out / "manifest.json").read_text())["n_conversations"] == 120


def test_check_history_catches_broken_promises(h300):
    broken = copy.deepcopy(h300)
    broken.questions[0]["answer"] = broken.questions[1]["answer"]       # answer held by another conversation
    with pytest.raises(ValueError, match="q-001"):
        check_history(broken)
    broken = copy.deepcopy(h300)
    broken.unanswerable[0]["absent"] = [h300.questions[0]["key"]["id"]]  # an id the history does mention
    with pytest.raises(ValueError, match="u-001"):
        check_history(broken)


def test_vocab_lists_recur_in_twelves():
    for table in (vocab.SYMPTOMS, vocab.CHECKS, vocab.JOBS, vocab.PROJECTS, vocab.COLLEAGUES):
        assert len(table) == 12
    for phrase, paraphrase, *_ in vocab.SYMPTOMS + vocab.CHECKS + vocab.JOBS + vocab.PROJECTS:
        assert phrase.lower() not in paraphrase.lower(), phrase


def test_too_few_conversations_is_an_error():
    with pytest.raises(ValueError):
        generate(50)

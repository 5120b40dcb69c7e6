"""Index → recall end to end on the real MiniLM model: facts are found, bad lines are reported with their
place and cost nothing else, re-indexing is incremental, identifiers match exactly."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from conftest import write_conversation
from funes_py.options import ANSWER_FLOOR_BASE_ROWS

pytestmark = pytest.mark.models

ALICE = [
    ("user", "Morning! Rain again, the commute took forever. Can you check the N-11 upgrade status?"),
    ("assistant", "The N-11 upgrade is blocked: maintenance ticket MT-4471 for the gearbox seal is still open."),
    ("user", "Who owns that ticket?"),
    ("assistant", "Priya Raman owns MT-4471; she expects the seal kit on Thursday."),
]
BOB = [
    ("user", "Lunch was great. Any news on pump P-7?"),
    ("assistant", "Ticket MT-4472 covers the P-7 motor bearing; it closes next week."),
]
NOISE = [
    ("user", "The number 4471 was our old badge counter, unrelated to anything."),
    ("assistant", "Noted, badge counter 4471."),
]


@pytest.fixture
def src(tmp_path):
    d = tmp_path / "src"
    write_conversation(d / "alice.funes.jsonl", "alice", ALICE)
    write_conversation(d / "sub" / "bob.funes.jsonl", "bob", BOB)
    write_conversation(d / "noise.funes.jsonl", "noise", NOISE)
    return d


def test_index_then_recall_finds_the_fact_with_its_date_and_neighbours(engine, src):
    report = engine.index(src)
    assert report.files == 3 and report.turns == 8 and report.chunks_added == 8
    hits = engine.recall("what blocks the N-11 upgrade?", k=3)
    assert hits, "recall returned nothing"
    top = hits[0]
    assert "MT-4471" in top.text and top.session_id == "alice"
    assert top.ts.startswith("2026-10-08T09:0")
    assert any("N-11 upgrade status" in n.text for n in top.neighbors), top.neighbors
    assert all(n.turn_uuid != top.turn_uuid for n in top.neighbors)


def test_identifier_query_is_exact(engine, src):
    engine.index(src)
    hits = engine.recall("MT-4471", k=3, neighbors=0)
    assert "MT-4471" in hits[0].text
    # The near-miss ticket and the bare number must not outrank the exact identifier.
    ranks = {h.session_id: i for i, h in reversed(list(enumerate(hits)))}
    assert ranks["alice"] == 0
    for h in hits[:2]:
        assert "MT-4472" not in h.text and "badge" not in h.text


def test_bad_lines_are_reported_with_their_place_and_the_rest_is_searchable(engine, tmp_path):
    p = write_conversation(tmp_path / "src" / "c.funes.jsonl", "c", ALICE)
    lines = p.read_text().splitlines()
    lines.insert(1, "{not json")
    lines.insert(3, json.dumps({"session_id": "c", "seq": 9}))
    p.write_text("\n".join(lines) + "\n")
    report = engine.index(p)
    assert [(b.line, b.file.endswith("c.funes.jsonl")) for b in report.bad_lines] == [(2, True), (4, True)]
    assert "missing field" in report.bad_lines[1].reason
    assert report.turns == 4
    assert any("Priya Raman" in h.text for h in engine.recall("who owns the seal ticket", k=4))


def test_unchanged_directory_adds_nothing_and_grown_conversation_embeds_only_new_turns(engine, src):
    first = engine.index(src)
    again = engine.index(src)
    assert again.chunks_added == 0 and again.files_unchanged == first.files
    grown = ALICE + [("user", "Thanks. Let's revisit on Friday."), ("assistant", "Friday it is: N-11 review at 10:00.")]
    write_conversation(src / "alice.funes.jsonl", "alice", grown)
    third = engine.index(src)
    assert third.chunks_added == 2
    assert third.chunks_skipped == len(ALICE)
    assert engine.status().rows == first.chunks_added + 2


def test_status_sessions_get_scan_sketch(engine, src):
    engine.index(src)
    st = engine.status()
    assert st.rows == 8 and st.sessions == 3 and st.fts_indexed and st.disk_bytes > 0
    assert st.model == st.memory_model
    assert {s.session_id for s in engine.sessions()} == {"alice", "bob", "noise"}
    turns = engine.get("alice", "alice-t1", window=1)
    assert [t.seq for t in turns] == [0, 1, 2]
    matches = engine.scan("alice", "mt-4471")
    assert len(matches) == 2 and all("MT-4471" in m.excerpt for m in matches)
    sk = engine.sketch("alice")
    assert sk.turns == 4 and "N-11" in sk.opening and "Priya" in sk.last_word


def test_date_and_role_filters_apply_before_ranking(engine, src):
    engine.index(src)
    hits = engine.recall("MT-4471", roles=["user"], k=5)
    assert hits and all(h.role == "user" for h in hits)
    assert engine.recall("MT-4471", until="2026-10-07") == []
    assert engine.recall("MT-4471", since="2026-10-08", k=1)


def test_bad_arguments_raise_catchable_errors(engine, src, tmp_path):
    from funes_py import FunesError, InvalidInputError

    engine.index(src)
    with pytest.raises(InvalidInputError):
        engine.recall("   ")
    with pytest.raises(InvalidInputError):
        engine.recall("x", since="last tuesday")
    with pytest.raises(FunesError):
        engine.get("no-such-session")
    with pytest.raises(FileNotFoundError):
        engine.index(tmp_path / "missing")


def test_identical_texts_embed_once(engine, tmp_path):
    src = tmp_path / "dup"
    ack = "Noted, I'll refer back to that when it comes up."
    for i in range(3):
        write_conversation(src / f"d{i}.funes.jsonl", f"d{i}", [("user", f"Status of line L-{i}0?"), ("assistant", ack)])
    report = engine.index(src)
    assert report.chunks_added == 6
    assert report.texts_embedded == 4  # three questions, one shared acknowledgement
    hits = [h for h in engine.recall(ack, k=8, half_life_days=0, neighbors=0, keep_repeats=True) if h.text == ack]
    assert {h.session_id for h in hits} == {"d0", "d1", "d2"}
    assert max(h.similarity for h in hits) - min(h.similarity for h in hits) < 1e-6


def test_a_passage_said_more_than_once_is_returned_once_its_latest_copy(engine, tmp_path):
    """Small talk recurs word for word; its copies must not fill the candidates and the top k that the fact
    ranked behind."""
    src = tmp_path / "rep"
    chat = "Drove past 6 Sycamore Gardens on the school run, the hedge there is enormous now."
    for day in range(1, 7):
        write_conversation(src / f"chat{day}.funes.jsonl", f"chat{day}", [("user", chat), ("assistant", "Ha, noted.")],
                           start=datetime(2026, 10, day, 9, 0, tzinfo=timezone.utc))  # fmt: skip
    write_conversation(src / "fact.funes.jsonl", "fact",
                       [("user", "The cracked window pane at 6 Sycamore Gardens was sorted by Trev Ramsbottom.")])  # fmt: skip
    engine.index(src)
    question = "what happened at 6 Sycamore Gardens?"
    ask = {"k": 3, "candidates": 4, "neighbors": 0, "now": "2026-10-20"}
    crowded = [h.session_id for h in engine.recall(question, **ask, keep_repeats=True)]
    assert "fact" not in crowded and all(s.startswith("chat") for s in crowded), "the copies would crowd it out"
    hits = engine.recall(question, **ask)
    texts = [h.text for h in hits]
    assert texts.count(chat) == 1 and any("Trev Ramsbottom" in t for t in texts), texts
    assert next(h for h in hits if h.text == chat).session_id == "chat6", "the latest copy stands for the others"
    every = engine.recall(question, k=8, candidates=30, neighbors=0, now="2026-10-20", keep_repeats=True)
    assert sorted(h.session_id for h in every if h.text == chat) == [f"chat{d}" for d in range(1, 7)]


def test_a_question_naming_a_day_prefers_what_was_said_around_it(engine, tmp_path):
    """"What did I order on October 24, 2023?": of two copies of a passage, the one said that week comes first,
    whatever recency prefers; without the day, recency orders them."""
    src = tmp_path / "days"
    for name, day in (("autumn", datetime(2023, 10, 24, 19, 0, tzinfo=timezone.utc)),
                      ("winter", datetime(2023, 12, 12, 19, 0, tzinfo=timezone.utc))):  # fmt: skip
        write_conversation(src / f"{name}.funes.jsonl", name, [("user", "Ordering sushi for dinner tonight.")], start=day)
    engine.index(src)
    ask = {"k": 2, "neighbors": 0, "now": "2024-01-01", "keep_repeats": True}
    assert [h.session_id for h in engine.recall("what did I order for dinner?", **ask)] == ["winter", "autumn"]
    for question in ("what did I order for dinner on October 24, 2023?", "dinner order, 2023-10-25"):
        assert [h.session_id for h in engine.recall(question, **ask)] == ["autumn", "winter"], question
    # One copy of the text stands for both: the one said around the named day.
    assert [h.session_id for h in engine.recall("dinner on 24 October 2023", k=2, neighbors=0)] == ["autumn"]


def test_a_korean_question_naming_a_day_or_a_month_reads_it(engine, tmp_path):
    """A day written with unit words ("2023년 10월 24일") is named as "October 24, 2023" is; a month ("5월")
    asks for that month's passages, which BM25 indexes with their month in English."""
    src = tmp_path / "ko"
    said = {"autumn": datetime(2023, 10, 24, 19, 0, tzinfo=timezone.utc), "winter": datetime(2023, 12, 12, 19, 0, tzinfo=timezone.utc)}
    for name, day in said.items():
        write_conversation(src / f"{name}.funes.jsonl", name, [("user", "오늘 저녁은 초밥을 주문할게.")], start=day)
    for name, month, text in (("may", 5, "고양이를 입양하기로 했어."), ("august", 8, "고양이 사료를 새로 샀어.")):
        write_conversation(src / f"{name}.funes.jsonl", name, [("user", text)], start=datetime(2023, month, 3, 9, 0, tzinfo=timezone.utc))
    engine.index(src)
    ask = {"k": 2, "neighbors": 0, "now": "2024-01-01", "keep_repeats": True}
    assert [h.session_id for h in engine.recall("저녁에 뭘 주문했지?", **ask)] == ["winter", "autumn"]
    for question in ("2023년 10월 24일 저녁에 뭘 주문했지?", "2023.10.24 저녁 주문"):
        assert [h.session_id for h in engine.recall(question, **ask)] == ["autumn", "winter"], question
    ask = {"k": 2, "neighbors": 0, "half_life_days": 0, "legs": "bm25"}
    assert [h.session_id for h in engine.recall("2023년 5월에 고양이 얘기 뭐였지?", **ask)][0] == "may"
    assert [h.session_id for h in engine.recall("8월에 고양이 얘기 뭐였지?", **ask)][0] == "august"


def test_a_reply_is_found_by_the_question_it_answers(engine, tmp_path):
    """BM25 indexes each turn with the end of the turn before it, so "yes, go with them" is found by the
    question's words; the text shown is the reply's own."""
    src = tmp_path / "ctx"
    write_conversation(src / "noise.funes.jsonl", "noise", [("user", "Lunch was fine."), ("assistant", "Good.")])
    engine.index(src)
    assert engine.recall("Kestrel", k=3, legs="bm25") == []  # also builds a resident engine's copy
    reply = "Yes, go with them; sign by Friday."
    write_conversation(
        src / "c.funes.jsonl",
        "ctx",
        [("user", "Should we pick the Kestrel vendor for the cold-store retrofit?"), ("assistant", reply)],
    )
    engine.index(src)  # a resident engine extends its copy with these rows
    hits = engine.recall("Kestrel vendor", k=3, half_life_days=0, neighbors=0, legs="bm25")
    assert {h.turn_uuid for h in hits} == {"ctx-t0", "ctx-t1"}
    assert next(h for h in hits if h.turn_uuid == "ctx-t1").text == reply


def test_answer_floor_reads_the_best_passage_and_spares_identifier_questions(engine, src):
    engine.index(src)
    question = "who owns the ticket for the gearbox seal?"  # names no identifier
    best = max(h.similarity for h in engine.recall("which pastry did the baker recommend for the wedding?", k=8))
    assert engine.recall("which pastry did the baker recommend for the wedding?", k=3, answer_floor=best + 0.01) == []
    assert engine.recall("which pastry did the baker recommend for the wedding?", k=3, answer_floor=best - 0.01)
    # A memory of fewer than ANSWER_FLOOR_BASE_ROWS passages keeps the floor as given, however fast it rises.
    assert engine.status().rows < ANSWER_FLOOR_BASE_ROWS
    assert engine.recall("which pastry did the baker recommend for the wedding?", k=3, answer_floor=best - 0.01,
                         answer_floor_per_decade=5.0)  # fmt: skip
    # A near question keeps all its passages, weak ones included: the floor reads the best one only.
    near = engine.recall(question, k=8, neighbors=0)
    floored = engine.recall(question, k=8, neighbors=0, answer_floor=max(h.similarity for h in near) - 0.01)
    assert [h.turn_uuid for h in floored] == [h.turn_uuid for h in near]
    # A query naming an identifier is judged by the identifier guard, not by the answer floor.
    assert engine.recall("MT-4471", k=3, answer_floor=0.99)


def test_answer_floor_does_not_overrule_a_word_for_word_keyword_match(engine, src):
    engine.index(src)
    hits = engine.recall("seal kit Thursday", k=3, answer_floor=0.99)
    assert hits and "seal kit" in hits[0].text
    assert engine.recall("gearbox seal wedding", k=3, answer_floor=0.99) == [], "one term matches nowhere"


def test_models_embed_queries_as_recall_does(models):
    q = models.embed_queries(["what blocks the N-11 upgrade?"])
    assert q.shape == (1, models.dim) and abs(float((q * q).sum()) - 1.0) < 1e-3

"""Recency orders passages of about equal relevance newest first, and never buries a clearly better old
answer under recent chatter (the default half-life of 30 days, on both recall paths)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from conftest import write_conversation

pytestmark = pytest.mark.models

NOW = datetime.now(timezone.utc)
CHATTER = [
    "The canteen upgrade looks great, new coffee machine too.",
    "Line 4 had a slow start today, nothing serious.",
    "The vendor visit went fine, they liked the new layout.",
    "Upgrade of the badge readers is done on the second floor.",
    "What a week. The line was quiet after lunch.",
    "Reminder: the upgrade window for laptops is Friday.",
]


def test_an_old_answer_outranks_recent_chatter(engine, tmp_path):
    src = tmp_path / "src"
    write_conversation(src / "old.funes.jsonl", "old", [
        ("user", "What is blocking the Kestrel line upgrade?"),
        ("assistant", "The Kestrel line upgrade is blocked by ticket MT-9120: the vendor owes us firmware 4.2."),
    ], start=NOW - timedelta(days=250))  # fmt: skip
    for i, text in enumerate(CHATTER):
        write_conversation(src / f"recent-{i}.funes.jsonl", f"recent-{i}", [("user", text), ("assistant", "Noted.")],
                           start=NOW - timedelta(days=1 + i))  # fmt: skip
    engine.index(src)
    hits = engine.recall("what blocks the Kestrel line upgrade?", k=3, neighbors=0)
    # The old question and its answer, then chatter: nothing recent outranks them.
    assert [h.session_id for h in hits[:2]] == ["old", "old"], [h.text for h in hits]
    assert any("MT-9120" in h.text for h in hits[:2])


def test_equally_relevant_passages_come_newest_first(engine, tmp_path):
    src = tmp_path / "src"
    text = "Deploy status for the billing service: all green after the rollback."
    for name, age in (("older", 200), ("newer", 2), ("oldest", 400)):
        write_conversation(src / f"{name}.funes.jsonl", name, [("user", text)], start=NOW - timedelta(days=age))
    engine.index(src)
    hits = engine.recall("billing service deploy status", k=3, neighbors=0, keep_repeats=True)
    assert [h.session_id for h in hits] == ["newer", "older", "oldest"], [(h.session_id, h.score) for h in hits]
    # Recency off: the same three passages, whatever their order.
    assert {h.session_id for h in engine.recall("billing service deploy status", k=3, neighbors=0, half_life_days=0,
                                                 keep_repeats=True)} == {"newer", "older", "oldest"}  # fmt: skip
    # One text said three times comes back once, as its latest copy.
    assert [h.session_id for h in engine.recall("billing service deploy status", k=3, neighbors=0)] == ["newer"]

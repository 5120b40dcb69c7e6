"""Forgetting a session removes it from recall and scan and from every file of the memory, on disk or in the
bucket."""

from __future__ import annotations

import pytest

from conftest import stored_bytes, write_conversation
from funes_py import InvalidInputError

pytestmark = pytest.mark.models

SECRET = "Zanzibar-Quokka-7781"


def test_forget_removes_the_session_everywhere(engine, tmp_path, request):
    src = tmp_path / "src"
    write_conversation(src / "keep.funes.jsonl", "keep", [("user", "The pump P-9 check is fine."), ("assistant", "Logged P-9 as fine.")])
    write_conversation(
        src / "gone.funes.jsonl",
        "gone",
        [("user", f"The vault code word is {SECRET}."), ("assistant", f"I will remember {SECRET} for the vault.")],
    )
    engine.index(src)
    s3 = request.getfixturevalue("s3_server") if engine.home.startswith("s3://") else None

    def _all_bytes(home: str) -> bytes:
        return stored_bytes(home, s3)

    home = engine.home
    assert SECRET.encode() in _all_bytes(home)

    report = engine.forget("gone")
    assert report.found and report.rows_removed == 2 and report.turns_removed == 2

    assert all(h.session_id != "gone" for h in engine.recall(f"vault code word {SECRET}", k=8))
    with pytest.raises(InvalidInputError, match="not found"):
        engine.get("gone")
    assert engine.scan("keep", SECRET) == []
    assert SECRET.encode() not in _all_bytes(home), "forgotten text is still on disk"
    assert SECRET.lower().encode() not in _all_bytes(home).lower()
    # The rest of the memory still works, and indexing again is possible.
    assert engine.recall("pump P-9", k=1)[0].session_id == "keep"
    assert engine.status().sessions == 1


def test_forgetting_an_unknown_session_reports_not_found(engine, tmp_path):
    write_conversation(tmp_path / "s.funes.jsonl", "s", [("user", "hello there")])
    engine.index(tmp_path / "s.funes.jsonl")
    r = engine.forget("nope")
    assert not r.found and r.rows_removed == 0

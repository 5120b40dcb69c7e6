"""The reliability round's PETREL case (issue 39): in one session, a line with invalid UTF-8 bytes (kept with
U+FFFD) names PETREL-2 and the next turn names PETREL-4. The next turn's BM25 text holds the end of the turn
before it (its context), so it matched PETREL-2 too, and with the replacement characters dragging the
passage's own cosine down, a search for PETREL-2 returned PETREL-4 first. The passage that names the
identifier itself, whole, must come first (search::proximity: its words `petrel 2` side by side)."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.models


def test_the_passage_naming_the_identifier_comes_first(engine, tmp_path):
    texts = ["canary PETREL-1 logged", "bad \x00 bytes canary PETREL-2", "canary PETREL-4 logged"]
    lines = [
        json.dumps({"session_id": "s", "turn_uuid": f"t{i}", "seq": i, "ts": "2026-10-08T09:14:00Z", "role": "user",
                    "harness": "chat", "blocks": [{"block_type": "text", "text": t}]}).encode()  # fmt: skip
        for i, t in enumerate(texts)
    ]
    raw = b"\n".join(lines).replace(b"\\u0000", b"\xff\xfe") + b"\n"  # invalid UTF-8 inside the JSON string
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.funes.jsonl").write_bytes(raw)
    report = engine.index(tmp_path / "src")
    assert report.bad_lines == [] and report.turns == 3
    for ident in ("PETREL-1", "PETREL-2", "PETREL-4"):
        top = engine.recall(ident, k=3, neighbors=0)[0].text
        assert ident in top, (ident, top)
    assert "\ufffd" in engine.recall("PETREL-2", k=1, neighbors=0)[0].text, "the bad bytes are kept as U+FFFD"

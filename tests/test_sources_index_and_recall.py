"""Each format end to end on the real engine and MiniLM: its sample is indexed, a known passage comes back with
the right session, role, date, block type and tool name; re-indexing adds nothing; two appended turns are the
only texts embedded; ChatGPT and Claude.ai keep only the visible branch."""

from __future__ import annotations

import datetime as dt
import json
import os

import pytest

from sources_helpers import (
    CHATGPT,
    CHATGPT_SOURDOUGH,
    CLAUDE_AI,
    CLAUDE_AI_BIKE,
    CLAUDE_AI_TAX,
    CLAUDE_CODE,
    CLAUDE_CODE_SESSION,
    CODEX,
    CODEX_SESSION,
    CURSOR,
    CURSOR_SESSION,
    append_jsonl,
    copy_sample,
)  # fmt: skip

pytestmark = pytest.mark.models

CURSOR_MTIME = dt.datetime(2026, 3, 5, 16, 10, tzinfo=dt.UTC).timestamp()


def top(engine, query, **kw):
    hits = engine.recall(query, k=3, neighbors=0, half_life_days=0, **kw)
    assert hits, f"nothing recalled for {query!r}"
    return hits[0]


def check(hit, session, role, date, block_type, tool_name, needle):
    assert (hit.session_id, hit.role, hit.block_type, hit.tool_name) == (session, role, block_type, tool_name), hit
    assert hit.ts.startswith(date) and needle in hit.text, (hit.ts, hit.text)


# (sample, query, recall filter, expected (session, role, date, block type, tool name, needle), two turns to append)
CASES = {
    "claude-code": (CLAUDE_CODE, "overcurrent trips on phase B in the pump log", {"block_types": ["tool_result"]},
                    (CLAUDE_CODE_SESSION, "tool", "2026-03-04", "tool_result", "Bash", "41.7A (limit 38A)")),
    "codex": (CODEX, "patch fetch_tariffs with retry_with_backoff", {"block_types": ["tool_use"]},
              (CODEX_SESSION, "assistant", "2026-03-05", "tool_use", "apply_patch", "retry_with_backoff(base_s=2")),
    "cursor": (CURSOR, "the disabled prop reads couponPending, never reset after applyCoupon", {"block_types": ["text"], "roles": ["assistant"]},
               (CURSOR_SESSION, "assistant", "2026-03-05", "text", None, "couponPending")),
    "chatgpt": (CHATGPT, "rye sourdough spreads flat, hydration too high, bake in a tin", {},
                (CHATGPT_SOURDOUGH, "assistant", "2026-03-04", "text", None, "Drop to 68%")),
    "claude-ai": (CLAUDE_AI, "when is the first estimated tax payment due", {"block_types": ["tool_result"]},
                  (CLAUDE_AI_TAX, "assistant", "2026-03-07", "tool_result", "web_search", "April 15, 2026")),
}  # fmt: skip


def sample(fmt, tmp_path):
    p = copy_sample(CASES[fmt][0], tmp_path / "src")
    if fmt == "cursor":
        os.utime(p, (CURSOR_MTIME, CURSOR_MTIME))
    return p


@pytest.mark.parametrize("fmt", list(CASES))
def test_sample_is_recalled_with_its_metadata_and_reindexing_adds_nothing(engine, tmp_path, fmt):
    _, query, filters, expected = CASES[fmt]
    p = sample(fmt, tmp_path)
    first = engine.index(p)
    assert first.chunks_added > 0 and len(first.bad_lines) >= 1, first
    assert all(b.file == str(p.resolve()) for b in first.bad_lines)
    check(top(engine, query, **filters), *expected)
    again = engine.index(p)
    assert (again.chunks_added, again.texts_embedded, again.files_unchanged) == (0, 0, 1)


@pytest.mark.parametrize("fmt", list(CASES))
def test_appending_two_turns_embeds_only_those(engine, tmp_path, fmt):
    p = sample(fmt, tmp_path)
    first = engine.index(p)
    grow(fmt, p)
    second = engine.index(p)
    assert (second.chunks_added, second.texts_embedded) == (2, 2), second
    assert second.chunks_skipped == first.chunks_added
    hit = top(engine, "the spare part is on shelf Q9 of the north store")
    assert "shelf Q9" in hit.text


ANSWER = "The spare part is on shelf Q9 of the north store."


def grow(fmt, p):
    """Two more turns, the way each tool would write them (append a line; rewrite the export)."""
    if fmt == "claude-code":
        base = {
            "type": "user",
            "isSidechain": False,
            "sessionId": CLAUDE_CODE_SESSION,
            "timestamp": "2026-03-04T11:00:00Z",
        }
        append_jsonl(p, {**base, "uuid": "e0000000-0000-4000-8000-000000000001", "message": {"role": "user", "content": "Where is the spare?"}},
                     {**base, "type": "assistant", "uuid": "e0000000-0000-4000-8000-000000000002",
                      "message": {"role": "assistant", "content": [{"type": "text", "text": ANSWER}]}})  # fmt: skip
    elif fmt == "codex":
        append_jsonl(p, *({"timestamp": "2026-03-05T10:00:00Z", "type": "response_item", "payload": {"type": "message", "role": r,
                           "content": [{"type": t, "text": x}]}} for r, t, x in
                          (("user", "input_text", "Where is the spare?"), ("assistant", "output_text", ANSWER))))  # fmt: skip
    elif fmt == "cursor":
        append_jsonl(p, {"role": "user", "message": {"content": [{"type": "text", "text": "<user_query>Where is the spare?</user_query>"}]}},
                     {"role": "assistant", "message": {"content": [{"type": "text", "text": ANSWER}]}})  # fmt: skip
    elif fmt == "chatgpt":
        convs = json.loads(p.read_text())
        c = convs[0]
        t = c["mapping"]["a-2"]["message"]["create_time"] + 60
        for nid, parent, role, text in (
            ("u-9", "a-3", "user", "Where is the spare?"),
            ("a-9", "u-9", "assistant", ANSWER),
        ):
            c["mapping"][parent]["children"].append(nid)
            c["mapping"][nid] = {
                "id": nid,
                "parent": parent,
                "children": [],
                "message": {
                    "id": nid,
                    "author": {"role": role},
                    "create_time": t,
                    "recipient": "all",
                    "content": {"content_type": "text", "parts": [text]},
                    "metadata": {},
                },
            }
        c["current_node"] = "a-9"
        p.write_text(json.dumps(convs, ensure_ascii=False))
    else:
        convs = json.loads(p.read_text())
        msgs = convs[0]["chat_messages"]
        for i, (sender, text) in enumerate((("human", "Where is the spare?"), ("assistant", ANSWER))):
            msgs.append({"uuid": f"44444444-0000-4000-8000-00000000000{i}", "sender": sender, "text": text,
                         "content": [{"type": "text", "text": text}], "created_at": "2026-03-07T19:00:00Z",
                         "parent_message_uuid": msgs[-1]["uuid"], "attachments": [], "files": []})  # fmt: skip
        p.write_text(json.dumps(convs, ensure_ascii=False))


def test_chatgpt_regenerated_answer_is_not_indexed(engine, tmp_path):
    engine.index(sample("chatgpt", tmp_path))
    turns = engine.get(CHATGPT_SOURDOUGH)
    assert [t.turn_uuid for t in turns] == ["u-1", "a-new", "u-2", "t-1", "a-2"]
    assert [t.seq for t in turns] == [0, 1, 2, 3, 4]
    hits = engine.recall("just add more flour until it feels right", k=8, neighbors=0)
    assert hits and not any("REGENERATED AWAY" in h.text for h in hits)


def test_claude_ai_edited_question_is_not_indexed(engine, tmp_path):
    engine.index(sample("claude-ai", tmp_path))
    assert [t.turn_uuid[-1] for t in engine.get(CLAUDE_AI_BIKE)] == ["3", "4"]
    assert not any("EDITED AWAY" in h.text or "ABANDONED" in h.text for h in engine.recall("chain squeaks oil it", k=8))

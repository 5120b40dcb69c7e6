"""Each adapter turns its sample into the right turns (session, role, ts, block types, tool names), keeps and
drops what its README paragraph says, reports the corrupt record with its place, masks secrets, and gives the
same ids and seqs to old turns when the file has grown. No engine needed."""

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
    DATA,
    NATIVE,
    SAMPLES,
    append_jsonl,
    bad_of,
    copy_sample,
    read_items,
    record_of,
    turns_of,
)  # fmt: skip


def blocks(turn):
    return [(b["block_type"], b.get("tool_name")) for b in turn["blocks"]]


def all_text(turns):
    return "\n".join(b["text"] for t in turns for b in t["blocks"])


def test_claude_code_keeps_the_main_chain_and_names_tool_results():
    turns = turns_of(DATA / CLAUDE_CODE)
    assert {t["session_id"] for t in turns} == {CLAUDE_CODE_SESSION}
    assert {t["harness"] for t in turns} == {"claude-code"}
    assert [t["seq"] for t in turns] == list(range(len(turns)))
    assert [(t["role"], blocks(t)) for t in turns] == [
        ("user", [("text", None)]),
        ("assistant", [("thinking", None)]),
        ("assistant", [("tool_use", "Bash")]),
        ("tool", [("tool_result", "Bash")]),
        ("assistant", [("text", None)]),
        ("user", [("text", None)]),
        ("assistant", [("tool_use", "Edit")]),
        ("tool", [("tool_result", "Edit")]),
        ("assistant", [("text", None)]),
    ]
    first = turns[0]
    assert first["turn_uuid"] == "c3a1e0f2-0000-4000-8000-000000000003" and first["ts"] == "2026-03-04T10:16:40.512Z"
    assert first["workdir"] == "/home/ana/projects/pumpctl"
    assert json.loads(turns[2]["blocks"][0]["text"])["command"].startswith("grep -n OVERCURRENT")
    text = all_text(turns)
    # Sidechains, summaries, compaction summaries, meta caveats, command echoes and images are not indexed.
    for dropped in ("SIDECHAIN ONLY", "P-7 pump controller overcurrent trips", "continued from a previous",
                    "local-command-caveat", "<command-name>", "iVBORw0KGgo", "/9j/4AAQ"):  # fmt: skip
        assert dropped not in text
    assert "Überprüfe bitte die Drehzahl" in text and "✓" in text


def test_claude_code_corrupt_line_is_reported_with_its_line_number():
    assert [(n, "invalid JSON" in r) for n, r in bad_of(DATA / CLAUDE_CODE)] == [(11, True)]


def test_codex_turns_from_response_items_only():
    turns = turns_of(DATA / CODEX)
    assert {t["session_id"] for t in turns} == {CODEX_SESSION} and {t["harness"] for t in turns} == {"codex"}
    assert [(t["role"], blocks(t)) for t in turns] == [
        ("user", [("text", None)]),
        ("assistant", [("thinking", None)]),
        ("assistant", [("tool_use", "shell")]),
        ("tool", [("tool_result", "shell")]),
        ("assistant", [("tool_use", "apply_patch")]),
        ("tool", [("tool_result", "apply_patch")]),
        ("assistant", [("text", None)]),
    ]
    assert turns[0]["ts"] == "2026-03-05T09:13:02.550Z" and turns[0]["workdir"] == "/home/ana/energy"
    # The output's JSON envelope is unwrapped to the command's output.
    assert turns[3]["blocks"][0]["text"] == "billing/sync.py:41:def fetch_tariffs(region: str) -> list[Tariff]:\n"
    text = all_text(turns)
    for dropped in ("environment_context", "permissions instructions", "gAAAAB", "token_count"):
        assert dropped not in text
    assert text.count("the tariff API answers 429 at night") == 1  # the event_msg copy is not a second turn
    assert [(n, "invalid JSON" in r) for n, r in bad_of(DATA / CODEX)] == [(12, True)]


def test_cursor_unwraps_user_text_and_dates_turns_by_the_file(tmp_path):
    p = copy_sample(CURSOR, tmp_path)
    when = dt.datetime(2026, 3, 5, 16, 10, tzinfo=dt.UTC).timestamp()
    os.utime(p, (when, when))
    turns = turns_of(p)
    assert {t["session_id"] for t in turns} == {CURSOR_SESSION} and {t["harness"] for t in turns} == {"cursor"}
    assert {t["ts"] for t in turns} == {"2026-03-05T16:10:00Z"}
    assert [(t["role"], blocks(t)) for t in turns] == [
        ("user", [("text", None)]),
        ("assistant", [("tool_use", "Read")]),  # the "[REDACTED]" thinking placeholder is dropped
        ("assistant", [("text", None), ("tool_use", "StrReplace")]),
        ("user", [("text", None)]),
        ("assistant", [("text", None)]),
    ]
    assert turns[0]["blocks"][0]["text"].startswith("The checkout button stays disabled")
    assert turns[3]["blocks"][0]["text"] == "Danke! Läuft jetzt 🎉 — can you add a test for the coupon flow?"
    assert "<user_query>" not in all_text(turns) and "<timestamp>" not in all_text(turns)
    assert [(n, "invalid JSON" in r) for n, r in bad_of(p)] == [(5, True)]


def test_cursor_iso_timestamp_tag_dates_the_turn_and_its_replies(tmp_path):
    p = tmp_path / "s1" / "s1.jsonl"
    p.parent.mkdir()
    append_jsonl(p, {"role": "user", "message": {"content": [{"type": "text", "text": "<timestamp>2026-02-01T08:30:00Z</timestamp>\n<user_query>hi</user_query>"}]}},
                 {"role": "assistant", "message": {"content": [{"type": "text", "text": "hello"}]}})  # fmt: skip
    assert [t["ts"] for t in turns_of(p, "cursor")] == ["2026-02-01T08:30:00Z"] * 2


def test_chatgpt_keeps_only_the_visible_branch():
    turns = turns_of(DATA / CHATGPT)
    sourdough = [t for t in turns if t["session_id"] == CHATGPT_SOURDOUGH]
    assert [(t["turn_uuid"], t["role"], blocks(t)) for t in sourdough] == [
        ("u-1", "user", [("text", None)]),
        ("a-new", "assistant", [("text", None)]),  # the regenerated answer a-old is on a dropped branch
        ("u-2", "user", [("text", None)]),  # the image part is dropped, its text kept
        ("t-1", "assistant", [("thinking", None)]),
        ("a-2", "assistant", [("text", None)]),
    ]
    assert [t["seq"] for t in sourdough] == [0, 1, 2, 3, 4]
    assert sourdough[0]["ts"] == "2026-03-04T10:00:10.123Z" and sourdough[0]["title"] == "Sourdough hydration"
    text = all_text(turns)
    # Hidden system and context nodes, the call to python, its output and the "Thought for" recap are dropped.
    for dropped in ("REGENERATED AWAY", "I bake at home", "estimate_rise", "rise ~ 40%", "Thought for 5 seconds"):
        assert dropped not in text
    kyoto = [t for t in turns if t["title"] == "京都の旅程"]
    assert [t["ts"] for t in kyoto] == ["2026-03-06T10:00:05Z"] * 2  # no create_time: the turn before's


def test_chatgpt_corrupt_conversations_are_reported_by_ordinal_and_id():
    bad = bad_of(DATA / CHATGPT)
    assert [n for n, _ in bad] == [3, 4]
    assert "67c8ffff-3333-8003-bbbb-000000000003" in bad[0][1] and "missing field `mapping`" in bad[0][1]
    assert "67c8ffff-4444-8003-cccc-000000000004" in bad[1][1] and "gone" in bad[1][1]


def test_claude_ai_blocks_branches_and_old_exports():
    turns = turns_of(DATA / CLAUDE_AI)
    tax = [t for t in turns if t["session_id"] == CLAUDE_AI_TAX]
    assert [(t["role"], blocks(t)) for t in tax] == [
        ("user", [("text", None)]),
        ("assistant", [("thinking", None), ("tool_use", "web_search"), ("tool_result", "web_search"), ("text", None)]),
        ("user", [("text", None), ("text", None)]),  # the message, then the pasted attachment's text
        ("assistant", [("text", None)]),
    ]
    assert tax[0]["turn_uuid"] == "11111111-0000-4000-8000-000000000001" and tax[0]["ts"] == "2026-03-07T18:20:12.001Z"
    assert "April 15, 2026" in tax[1]["blocks"][2]["text"] and "INV-0311" in tax[2]["blocks"][1]["text"]
    bike = [t for t in turns if t["session_id"] == CLAUDE_AI_BIKE]
    assert [t["turn_uuid"][-1] for t in bike] == ["3", "4"]  # the edited-away question and its answer dropped
    old = [t for t in turns if t["title"] == "Old export shape"]
    assert [t["role"] for t in old] == ["user", "assistant"] and old[0]["ts"] == "2024-05-02T12:00:05Z"
    assert [
        (n, "missing field `chat_messages`" in r and "aaaaaaaa-0000" in r) for n, r in bad_of(DATA / CLAUDE_AI)
    ] == [(3, True)]


def test_native_files_are_handed_to_the_engine_untouched():
    [src] = read_items(DATA / NATIVE)
    text = (DATA / NATIVE).read_text().splitlines()
    assert src.lines == list(enumerate(text, start=1)) and src.bad == [] and src.key == os.path.realpath(DATA / NATIVE)
    st = os.stat(DATA / NATIVE)
    assert src.signature == f"{st.st_size}:{st.st_mtime_ns}"


def test_secrets_are_masked_in_every_adapter(tmp_path):
    token = "ghp_" + "a1B2c3D4e5" * 4
    p = tmp_path / "s" / "s.jsonl"
    p.parent.mkdir()
    append_jsonl(
        p, {"role": "user", "message": {"content": [{"type": "text", "text": f"<user_query>use {token}</user_query>"}]}}
    )
    codex = tmp_path / "rollout-x.jsonl"
    append_jsonl(codex, {"timestamp": "2026-03-05T09:00:00Z", "type": "response_item",
                         "payload": {"type": "function_call", "name": "shell", "arguments": f"GITHUB_TOKEN={token} git push", "call_id": "c"}})  # fmt: skip
    for path, fmt in ((p, "cursor"), (codex, "codex")):
        text = all_text(turns_of(path, fmt))
        assert token not in text and "[REDACTED" in text, fmt


@pytest.mark.parametrize("fmt", ["claude-code", "codex", "cursor", "funes"])
def test_a_line_with_invalid_utf8_is_kept_with_replacement_characters(tmp_path, fmt):
    p = copy_sample(SAMPLES[fmt], tmp_path)
    with p.open("ab") as f:
        f.write(record_of(fmt, '"@"').encode().replace(b"@", b"bad \xff\xfe bytes canary PETREL-2") + b"\n")
    [src] = read_items(p)
    place, line = src.lines[-1]
    assert place == len(p.read_bytes().splitlines()) and "bad \ufffd\ufffd bytes canary PETREL-2" in line


@pytest.mark.parametrize("rel", [CLAUDE_CODE, CODEX, CURSOR])
def test_a_grown_jsonl_keeps_the_old_turns_ids_and_seqs(tmp_path, rel):
    p = copy_sample(rel, tmp_path)
    before = turns_of(p)
    def key(t):
        return (t["turn_uuid"], t["seq"], json.dumps(t["blocks"]))

    # A last line still being written is skipped silently, not reported.
    with p.open("a") as f:
        f.write('{"type":"user","message":{"role":"user","content":"half wri')
    assert [key(t) for t in turns_of(p)] == [key(t) for t in before]
    assert len(bad_of(p)) == 1  # only the sample's own corrupt line
    lines = p.read_text().splitlines(keepends=True)[:-1]
    p.write_text("".join(lines) + _two_more(rel))
    after = turns_of(p)
    assert [key(t) for t in after[: len(before)]] == [key(t) for t in before]
    assert len(after) == len(before) + 2 and [t["seq"] for t in after[-2:]] == [len(before), len(before) + 1]


def _two_more(rel: str) -> str:
    if rel == CLAUDE_CODE:
        base = {"type": "user", "isSidechain": False, "sessionId": CLAUDE_CODE_SESSION, "cwd": "/home/ana/projects/pumpctl",
                "timestamp": "2026-03-04T11:00:00Z"}  # fmt: skip
        recs = [{**base, "uuid": "d0000000-0000-4000-8000-000000000001", "message": {"role": "user", "content": "And the spare bearing?"}},
                {**base, "type": "assistant", "uuid": "d0000000-0000-4000-8000-000000000002",
                 "message": {"role": "assistant", "content": [{"type": "text", "text": "Two in stock, shelf B4."}]}}]  # fmt: skip
    elif rel == CODEX:
        recs = [{"timestamp": "2026-03-05T10:00:00Z", "type": "response_item", "payload": {"type": "message", "role": role,
                 "content": [{"type": t, "text": text}]}} for role, t, text in
                (("user", "input_text", "Run the tests"), ("assistant", "output_text", "All 48 pass."))]  # fmt: skip
    else:
        recs = [
            {"role": "user", "message": {"content": [{"type": "text", "text": "<user_query>Ship it</user_query>"}]}},
            {"role": "assistant", "message": {"content": [{"type": "text", "text": "Merged into main."}]}},
        ]
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs)


ODD = {  # a record of a shape no writer intended, per format: reported with its place, the rest kept
    CLAUDE_CODE: {
        "type": "assistant",
        "uuid": "u",
        "timestamp": "2026-03-04T10:00:00Z",
        "sessionId": "s",
        "message": ["x"],
    },
    CODEX: {
        "timestamp": "2026-03-05T10:00:00Z",
        "type": "response_item",
        "payload": {"type": "message", "role": ["user"]},
    },
    CURSOR: {"role": "assistant", "message": {"content": 42}},
}


@pytest.mark.parametrize("rel", list(ODD))
def test_a_record_of_an_odd_shape_is_reported_not_a_crash(tmp_path, rel):
    p = copy_sample(rel, tmp_path)
    n_before = len(turns_of(p))
    append_jsonl(p, ODD[rel])
    n_lines = len(p.read_text().splitlines())
    assert len(turns_of(p)) == n_before
    place, why = bad_of(p)[-1]
    assert place == n_lines and why, why


@pytest.mark.parametrize("rel", [CHATGPT, CLAUDE_AI])
def test_an_export_conversation_of_an_odd_shape_is_reported_by_ordinal(tmp_path, rel):
    p = copy_sample(rel, tmp_path)
    convs = json.loads(p.read_text())
    n_before = len(turns_of(p))
    odd = {"id": "odd-1", "uuid": "odd-1", "conversation_id": "odd-1", "current_node": "a", "mapping": {"a": ["not a node"]},
           "chat_messages": ["not a message", {"sender": ["human"], "created_at": 5}]}  # fmt: skip
    p.write_text(json.dumps([*convs, odd]))
    bad = bad_of(p)
    assert len(turns_of(p)) == n_before
    assert bad[-1][0] == len(convs) + 1 and "odd-1" in bad[-1][1], bad


def test_codex_older_rollouts_without_the_envelope(tmp_path):
    p = tmp_path / "rollout-2025-04-20T10-00-00-5973b6c0-94b8-487b-a530-2aeb6098ae0e.jsonl"
    append_jsonl(
        p,
        {"id": "5973b6c0-94b8-487b-a530-2aeb6098ae0e", "timestamp": "2025-04-20T10:00:00.000Z", "instructions": None},
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "rename the flag to --dry-run"}]},
        {"type": "function_call", "name": "shell", "arguments": '{"command":["rg","--dry"]}', "call_id": "c1"},
        {"type": "function_call_output", "call_id": "c1", "output": {"content": "cli.py:12: --dry", "success": True}},
    )
    turns = turns_of(p)
    assert {t["session_id"] for t in turns} == {"5973b6c0-94b8-487b-a530-2aeb6098ae0e"}
    assert [(t["role"], blocks(t)) for t in turns] == [
        ("user", [("text", None)]),
        ("assistant", [("tool_use", "shell")]),
        ("tool", [("tool_result", "shell")]),
    ]
    assert {t["ts"] for t in turns} == {"2025-04-20T10:00:00Z"} and turns[2]["blocks"][0]["text"] == "cli.py:12: --dry"

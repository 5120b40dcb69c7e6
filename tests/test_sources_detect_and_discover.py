"""Formats are recognised by content, whatever the file is called, in directories and inside export zips, and
whatever the first line looks like (broken, nested past the parser's depth, over the record limit); hidden
entries are skipped; `--format` forces one; a named file that is none of ours is refused before any
indexing, one found in a directory is named in the run's report; unchanged files are neither opened nor
counted as read; `funes-py sources` only lists."""

from __future__ import annotations

import json
import os
import shutil
import zipfile
from pathlib import Path

import pytest

from funes_py.sources import UnknownFormat, common, get, plan, units
from funes_py.sources.cli import locations
from funes_py.sources.detect import detect
from sources_helpers import CHATGPT, CLAUDE_AI, CLAUDE_CODE, CODEX, CURSOR, DATA, NATIVE

MISLEADING = {  # sample -> a name that says nothing true about it
    CLAUDE_CODE: "notes/session.jsonl",
    CODEX: "b.jsonl",
    CURSOR: "c/c.jsonl",
    CHATGPT: "claude-export.json",
    CLAUDE_AI: "chatgpt/conversations.json",
    NATIVE: "plain.jsonl",
}
EXPECTED = {
    CLAUDE_CODE: "claude-code",
    CODEX: "codex",
    CURSOR: "cursor",
    CHATGPT: "chatgpt",
    CLAUDE_AI: "claude-ai",
    NATIVE: "funes",
}


def test_each_format_is_recognised_by_content(tmp_path):
    for rel, name in MISLEADING.items():
        dest = tmp_path / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(DATA / rel, dest)
    found = {str(Path(u.path).relative_to(tmp_path)): detect(u) for u in units(tmp_path)}
    assert {name: fmt.name if fmt else None for name, fmt in found.items()} == {
        MISLEADING[rel]: EXPECTED[rel] for rel in MISLEADING
    }


def test_zip_members_are_units_keyed_by_the_zip(tmp_path):
    z = tmp_path / "export-2026-03-09.zip"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED) as f:
        f.write(DATA / CHATGPT, "conversations.json")
        f.writestr("user.json", json.dumps({"id": "user-x", "email": "ana@example.org"}))
        f.writestr("chat.html", "<html></html>")
        f.writestr("__MACOSX/._conversations.json", "junk")
        f.writestr("dalle-generations/", "")
    us = units(z)
    assert [u.member for u in us] == ["conversations.json", "user.json"]
    assert us[0].key == f"{os.path.realpath(z)}!conversations.json"
    st = os.stat(z)
    assert us[0].signature() == f"{st.st_size}:{st.st_mtime_ns}"
    assert [detect(u).name if detect(u) else None for u in us] == ["chatgpt", None]
    # The same zip found while walking a directory.
    assert [u.member for u in units(tmp_path)] == ["conversations.json", "user.json"]


def test_hidden_entries_below_the_root_are_skipped_but_a_hidden_root_is_walked(tmp_path):
    root = tmp_path / ".claude" / "projects"
    for rel in ("p/a.jsonl", ".git/b.jsonl", "p/.c.jsonl.tmp", "p/.d.jsonl", "p/readme.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("{}\n")
    assert [str(u.path.relative_to(root)) for u in units(root)] == ["p/a.jsonl"]


def test_a_missing_path_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        units(tmp_path / "nope")


def never_seen(pairs):
    return [False] * len(pairs)


def test_plan_skips_unchanged_files_without_opening_them(tmp_path, monkeypatch):
    for rel in (CLAUDE_CODE, CODEX):
        shutil.copyfile(DATA / rel, tmp_path / Path(rel).name)
    asked = []

    def unchanged(pairs):
        asked.extend(pairs)
        return [k.endswith(Path(CODEX).name) for k, _ in pairs]

    opened = []
    orig = common.Unit.open

    def spy(self):
        opened.append(self.name)
        return orig(self)

    monkeypatch.setattr(common.Unit, "open", spy)
    todo, skipped = plan(tmp_path, None, unchanged)
    items = list(todo)
    assert skipped == 1 and len(asked) == 2
    assert [Path(i.key).name for i in items] == [Path(CLAUDE_CODE).name]
    assert Path(CODEX).name not in opened


def test_forced_format_skips_detection_and_refuses_records_by_field(tmp_path):
    p = tmp_path / "x.jsonl"
    shutil.copyfile(DATA / CODEX, p)
    [src] = list(plan(p, "cursor", never_seen)[0])
    assert src.lines == [] and src.bad and all("role" in r or "invalid JSON" in r for _, r in src.bad)


def test_a_named_file_of_no_known_format_is_refused_before_indexing(tmp_path):
    p = tmp_path / "notes.json"
    p.write_text(json.dumps({"hello": "world"}))
    with pytest.raises(UnknownFormat, match="notes.json"):
        plan(p, None, never_seen)
    # In a directory the same file is named in the report (place 0: the whole file), and not recorded as read.
    [src] = list(plan(tmp_path, None, never_seen)[0])
    assert (src.key, src.signature, src.lines) == (os.path.realpath(p), None, [])
    assert src.bad == [(0, "none of the formats funes-py reads recognises it (`funes-py sources` lists them; "
                           "--format NAME forces one)")]  # fmt: skip


def test_a_blank_file_or_an_empty_export_is_read_and_holds_nothing(tmp_path):
    for name, text in (("a.jsonl", ""), ("b.jsonl", "\n  \n"), ("conversations.json", "\ufeff[ ]\n")):
        (tmp_path / name).write_text(text)
    out = list(plan(tmp_path, None, never_seen)[0])
    assert [(os.path.basename(s.key), s.lines, s.bad, s.signature is not None) for s in out] == [
        ("a.jsonl", [], [], True), ("b.jsonl", [], [], True), ("conversations.json", [], [], True)
    ]


CLAUDE_RECORD = json.dumps({"type": "user", "sessionId": "s", "uuid": "u", "timestamp": "2026-03-04T10:00:00Z",
                            "message": {"role": "user", "content": "hi"}})  # fmt: skip


@pytest.mark.parametrize("first", ["{broken first line", "garbage", "]", "[1, 2", "[" * 5000 + "]" * 5000,
                                   '{"pad": "' + "x" * 100_000 + '"}', '{"a":' * 3000 + "1" + "}" * 3000])  # fmt: skip
def test_a_broken_first_line_does_not_decide_the_format(tmp_path, monkeypatch, first):
    monkeypatch.setenv("FUNES_MAX_RECORD_BYTES", "65536")
    p = tmp_path / "s.jsonl"
    p.write_text(first + "\n" + CLAUDE_RECORD + "\n")
    assert detect(common.Unit(p)).name == "claude-code"


def test_an_export_whose_first_conversation_hides_its_keys_is_still_recognised(tmp_path):
    conv = json.loads((DATA / CHATGPT).read_text())[0]
    p = tmp_path / "conversations.json"
    p.write_text(json.dumps([{"title": "x" * 200_000}, conv]))  # the first key after 64 KiB
    assert detect(common.Unit(p)).name == "chatgpt"


def test_format_names_and_aliases():
    assert (
        get("claude").name == "claude-code" and get("Claude.ai").name == "claude-ai" and get("native").name == "funes"
    )
    with pytest.raises(ValueError, match="chatgpt"):
        get("gemini")


def test_sources_lists_default_locations_with_file_counts(tmp_path):
    home = tmp_path / "home"
    for rel in (".claude/projects/-p/a.jsonl", ".claude/projects/-p/b.jsonl", ".claude/projects/-p/.tmp.jsonl",
                ".cursor/projects/web/agent-transcripts/u/u.jsonl", ".cursor/projects/web/other/x.jsonl"):  # fmt: skip
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text("secret content that must not be read")
    rows = {(r.format, r.location): r for r in locations(home)}
    assert rows[("claude-code", "~/.claude/projects")].files == 2
    assert rows[("codex", "~/.codex/sessions")].path is None
    cursor = rows[("cursor", "~/.cursor/projects/*/agent-transcripts")]
    assert cursor.files == 1 and cursor.path == str(home / ".cursor/projects/web/agent-transcripts")
    assert rows[("chatgpt", "")].path is None


def test_a_damaged_zip_member_is_reported_unreadable_and_not_stamped(tmp_path):
    z = tmp_path / "export.zip"
    payload = (DATA / CLAUDE_AI).read_bytes()
    with zipfile.ZipFile(z, "w", zipfile.ZIP_STORED) as f:
        f.writestr("conversations.json", payload)
    raw = bytearray(z.read_bytes())
    at = raw.find(b"Bike chain")
    raw[at : at + 4] = b"Bxke"  # same length: the member still parses, its CRC no longer matches
    z.write_bytes(bytes(raw))
    out = list(plan(z, None, never_seen)[0])
    assert out[-1].signature is None and out[-1].bad[0][0] == 0 and "unreadable" in out[-1].bad[0][1]
    assert out[-1].key.endswith("export.zip!conversations.json")


def test_a_funes_jsonl_file_of_broken_lines_still_goes_to_the_engine(tmp_path):
    p = tmp_path / "c.funes.jsonl"
    p.write_text('{"session_id": "c", "seq": 1}\n{not json\n')
    [src] = list(plan(tmp_path, None, never_seen)[0])
    assert src.lines == [(1, '{"session_id": "c", "seq": 1}'), (2, "{not json")] and src.key == os.path.realpath(p)


def test_a_file_of_only_over_long_records_is_reported_line_by_line_not_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("FUNES_MAX_RECORD_BYTES", "1000")
    p = tmp_path / "s.jsonl"
    p.write_text(CLAUDE_RECORD.replace('"hi"', json.dumps("x" * 5000)) + "\n")
    [src] = list(plan(p, None, never_seen)[0])  # named: damaged, not foreign, so not an UnknownFormat
    size = len(p.read_bytes()) - 1
    assert src.signature is None and src.lines == []
    assert src.bad == [(1, f"{size:,} bytes, over the limit of 1,000 for one record (FUNES_MAX_RECORD_BYTES)"),
                       (0, "its format could not be told: the records looked at are over the record limit "
                           "(--format NAME forces one)")]  # fmt: skip
    [forced] = list(plan(p, "claude-code", never_seen)[0])
    assert forced.signature is not None and forced.bad == src.bad[:1]

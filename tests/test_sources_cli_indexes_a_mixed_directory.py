"""One `funes-py index DIR` over a directory holding every format (the ChatGPT export as its zip) reads each
file with its own adapter, reports the corrupt record of each with its place, names the file it could not
place, and indexes everything else."""

from __future__ import annotations

import json
import os
import zipfile

import pytest

from funes_py.cli import main
from sources_helpers import CHATGPT, CLAUDE_AI, CLAUDE_CODE, CODEX, CURSOR, DATA, NATIVE, copy_sample

pytestmark = pytest.mark.models


@pytest.fixture
def mixed(tmp_path):
    d = tmp_path / "histories"
    for rel in (CLAUDE_CODE, CODEX, CURSOR, CLAUDE_AI, NATIVE):
        copy_sample(rel, d)
    with zipfile.ZipFile(d / "chatgpt-export.zip", "w", zipfile.ZIP_DEFLATED) as z:
        z.write(DATA / CHATGPT, "conversations.json")
        z.writestr("user.json", json.dumps({"id": "user-x"}))
        z.writestr("chat.html", "<html></html>")
    return d


def run_json(capsys, *argv):
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_one_index_run_reads_every_format_and_reports_each_corrupt_record(mixed, tmp_path, capsys):
    home = tmp_path / "memory"
    report = run_json(capsys, "--home", str(home), "index", str(mixed), "--json")
    real = os.path.realpath
    zip_member = f"{real(mixed / 'chatgpt-export.zip')}!conversations.json"
    bad = sorted((b["file"], b["line"]) for b in report["bad_lines"])
    assert bad == sorted(
        [
            (real(mixed / CLAUDE_CODE), 11),
            (real(mixed / CODEX), 12),
            (real(mixed / CURSOR), 5),
            (zip_member, 3),
            (zip_member, 4),
            (real(mixed / CLAUDE_AI), 3),
            (real(mixed / NATIVE), 2),
            (f"{real(mixed / 'chatgpt-export.zip')}!user.json", 0),  # the export's account file: named, not read
        ]
    ), report["bad_lines"]
    assert report["turns"] == 9 + 7 + 5 + 7 + 8 + 2
    assert report["unreadable"] == []

    from funes_py import Engine, Models

    eng = Engine(home, Models.load(), resident=False)
    for query, harness in (("overcurrent phase B motor M2 bearing", "claude-code"),
                           ("retry with exponential backoff for the tariff API 429", "codex"),
                           ("couponPending reset in a finally block", "cursor"),
                           ("rye sourdough hydration bake in a tin", "chatgpt"),
                           ("11-speed chain skips on the smallest cogs", "claude-ai"),
                           ("dentist after Easter", "gateway")):  # fmt: skip
        hits = eng.recall(query, k=1, neighbors=0, half_life_days=0)
        assert hits and hits[0].harness == harness, (query, hits[:1])

    again = run_json(capsys, "--home", str(home), "index", str(mixed), "--json")
    assert again["chunks_added"] == 0 and again["turns"] == 0


def test_a_named_file_of_no_known_format_is_a_clear_error(tmp_path, capsys):
    p = tmp_path / "notes.json"
    p.write_text('{"hello": "world"}')
    assert main(["--home", str(tmp_path / "m"), "index", str(p)]) == 1
    assert "notes.json" in capsys.readouterr().err


def test_unknown_format_name_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        main(["--home", str(tmp_path / "m"), "index", str(tmp_path), "--format", "gemini"])
    assert e.value.code == 2 and "unknown format" in capsys.readouterr().err


def test_sources_command_lists_without_a_memory(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".codex" / "sessions" / "2026").mkdir(parents=True)
    (tmp_path / ".codex" / "sessions" / "2026" / "rollout-a.jsonl").write_text("{}")
    assert main(["sources"]) == 0
    out = capsys.readouterr().out
    assert "codex" in out and str(tmp_path / ".codex" / "sessions") in out and "funes-py index ~/.codex/sessions" in out

"""The funes-py command line: index → recall, JSON output, a flag-looking query after --, clear exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import write_conversation

pytestmark = pytest.mark.models


def run(*args, home, check=True):
    env = dict(os.environ, FUNES_HOME=str(home))
    p = subprocess.run([sys.executable, "-m", "funes_py.cli", *args], capture_output=True, text=True, env=env, timeout=300)
    if check and p.returncode != 0:
        raise AssertionError(f"exit {p.returncode}\nstdout: {p.stdout}\nstderr: {p.stderr}")
    return p


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    src = root / "src"
    write_conversation(
        src / "ops.funes.jsonl",
        "ops",
        [
            ("user", "What did we decide about the N-11 upgrade?"),
            ("assistant", "We chose option B for N-11, decision DR-2291; ticket MT-4471 blocks it."),
            ("user", "Set -k 100 as the batch size flag for the export job."),
            ("assistant", "Done: the export job now runs with -k 100."),
        ],
    )
    home = root / "memory"
    p = run("index", str(src), home=home)
    assert "4 chunks added" in p.stdout
    return home


def test_recall_prints_dated_passages(indexed):
    p = run("recall", "-k", "2", "what", "did", "we", "decide", "about", "N-11", home=indexed)
    assert "DR-2291" in p.stdout and "[2026-10-08" in p.stdout


def test_recall_json(indexed):
    p = run("recall", "--json", "-k", "1", "N-11 decision", home=indexed)
    hits = json.loads(p.stdout)
    assert len(hits) == 1 and {"ts", "role", "text", "score", "neighbors"} <= set(hits[0])


def test_keep_repeats_returns_every_copy_of_a_repeated_passage(tmp_path):
    line = "Noted, the export job runs nightly."
    for i in range(3):
        write_conversation(tmp_path / "src" / f"r{i}.funes.jsonl", f"r{i}", [("assistant", line)])
    home = tmp_path / "memory"
    run("index", str(tmp_path / "src"), home=home)
    once = json.loads(run("recall", "--json", "-k", "3", "export job", home=home).stdout)
    every = json.loads(run("recall", "--json", "-k", "3", "--keep-repeats", "export job", home=home).stdout)
    assert [h["text"] for h in once] == [line]
    assert [h["text"] for h in every] == [line] * 3


def test_query_after_double_dash_is_text_even_if_it_looks_like_a_flag(indexed):
    p = run("recall", "--json", "-k", "1", "--", "-k", "100", home=indexed)
    hits = json.loads(p.stdout)
    assert "-k 100" in hits[0]["text"]


def test_reindex_is_a_no_op(indexed):
    p = run("index", "--json", str(indexed.parent / "src"), home=indexed)
    assert json.loads(p.stdout)["chunks_added"] == 0


def test_status_sessions_get_scan_sketch(indexed):
    assert "chunks: 4" in run("status", home=indexed).stdout
    assert "ops 4 turns" in run("sessions", home=indexed).stdout
    assert "option B" in run("get", "ops", "ops-t1", "--window", "0", home=indexed).stdout
    assert "MT-4471" in run("scan", "ops", "mt-4471", home=indexed).stdout
    assert "N-11" in run("sketch", "ops", home=indexed).stdout


def test_exit_codes(indexed, tmp_path):
    assert run("recall", "x", home=tmp_path / "nowhere", check=False).returncode == 3
    assert run("index", str(tmp_path / "missing"), home=tmp_path / "m2", check=False).returncode == 5
    assert run("recall", home=indexed, check=False).returncode == 2
    bad = run("recall", "x", "--since", "someday", home=indexed, check=False)
    assert bad.returncode == 1 and "someday" in bad.stderr


def test_home_goes_before_or_after_the_command(indexed, tmp_path):
    elsewhere = tmp_path / "not-this-one"  # $FUNES_HOME points elsewhere: only --home can find the memory
    after = run("recall", "--home", str(indexed), "--json", "-k", "3", "--", "-k", "100", home=elsewhere)
    assert any("-k 100" in h["text"] for h in json.loads(after.stdout))
    before = run("--home", str(indexed), "recall", "--json", "-k", "3", "--", "-k", "100", home=elsewhere)
    turns = lambda p: [h["turn_uuid"] for h in json.loads(p.stdout)]  # noqa: E731 (scores move with the clock)
    assert turns(before) == turns(after)
    # The command's own --home wins over one given before it.
    both = run("--home", str(elsewhere), "status", "--home", str(indexed), home=elsewhere)
    assert "chunks: 4" in both.stdout


def test_every_command_names_the_memory_option_and_version_is_printed(indexed):
    for cmd in ("index", "recall", "get", "scan", "sessions", "sketch", "status", "forget", "models"):
        help_text = run(cmd, "--help", home=indexed).stdout
        assert "--home" in help_text and "FUNES_HOME" in help_text, cmd
    assert run("--version", home=indexed).stdout.startswith("funes-py ")

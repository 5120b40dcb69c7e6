"""Kill and restart during a sync loses nothing and indexes nothing twice (issue 38): `funes-py sync` killed
with SIGKILL after its first committed batch, then run again, holds exactly the rows and turns of one
uninterrupted index of the same files; a third run reads nothing. A session that later receives the skip
marker is forgotten and stays out."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest

from personal_helpers import START, append_turn, write_session

pytestmark = pytest.mark.models

TOPICS = ["pump", "valve", "motor", "boiler", "chiller", "fan", "compressor", "conveyor"]


def _tree(root: Path, sessions: int = 24, turns: int = 20) -> None:
    for s in range(sessions):
        topic = TOPICS[s % len(TOPICS)]
        write_session(root, f"/src/site-{s % 4}", f"sess-{s:03d}", [
            ("user" if i % 2 == 0 else "assistant",
             f"{topic} unit {topic[0].upper()}-{s}{i}: reading {i * 7 % 97} at step {i}; ticket WO-{s * 100 + i}")
            for i in range(turns)
        ], START + timedelta(days=s))  # fmt: skip


def _sync(home: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "funes_py.cli", "sync", "--home", str(home), "--no-default-sources", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip


def _counts(home: Path) -> tuple[int, int, int]:
    from funes_py import Engine

    eng = Engine(home, resident=False)
    st = eng.status()
    return st.rows, st.sessions, sum(s.turns for s in eng.sessions())


def test_a_killed_sync_resumes_without_losing_or_doubling_anything(tmp_path: Path, models):
    from funes_py import Engine

    root, home = tmp_path / "projects", tmp_path / "memory"
    _tree(root)
    home.mkdir()
    # small batches: many commits, so the kill lands between two of them
    (home / "personal.toml").write_text(f'sources = ["{root}"]\nbatch_mb = 0.004\n')

    p = _sync(home)
    state = home / "sync-state.json"
    t0 = time.monotonic()
    while not state.exists() and p.poll() is None and time.monotonic() - t0 < 120:
        time.sleep(0.02)
    assert p.poll() is None, "the sync ended before the kill: the batches are too big for this test"
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    done_before = len(json.loads(state.read_text())["files"])  # never half-written: it parses
    assert 0 < done_before < 24

    p = _sync(home)
    out, err = p.communicate(timeout=600)
    assert p.returncode == 0, err
    report = json.loads(out)
    assert report["files_read"] == 24 - done_before and not report["bad"]

    reference = tmp_path / "reference"
    Engine(reference, models=models).index(root)
    assert _counts(home) == _counts(reference)

    p = _sync(home)
    out, _ = p.communicate(timeout=600)
    assert json.loads(out)["files_read"] == 0
    assert _counts(home) == _counts(reference)


def test_a_session_given_the_skip_marker_is_forgotten_and_stays_out(tmp_path: Path):
    root, home = tmp_path / "projects", tmp_path / "memory"
    path = write_session(root, "/src/a", "sess-secret", [("user", "the vault combination for site Q-9 is 31-7-22")])
    write_session(root, "/src/a", "sess-open", [("user", "the pump P-4 service is due in March")])
    home.mkdir()
    (home / "personal.toml").write_text(f'sources = ["{root}"]\ndefault_sources = false\n')
    for text in (None, "scratch session, do not keep: funes:skip", "one more line about Q-9"):
        if text:
            append_turn(path, "sess-secret", "user", text, "/src/a", START + timedelta(hours=1))
        p = _sync(home)
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    from funes_py import Engine

    eng = Engine(home, resident=False)
    assert [s.session_id for s in eng.sessions()] == ["sess-open"]
    assert all(h.session_id == "sess-open" for h in eng.recall("vault combination Q-9", k=3))

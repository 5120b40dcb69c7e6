"""Killing the server (SIGKILL) while an index run is going loses nothing: the next start opens the memory,
finds the conversations newer than its stamp, and finishes indexing them."""

from __future__ import annotations

import time

import pytest

from funes_py.tenancy.auth import tenant_id
from funes_py.tenancy.storage import read_stamp
from service_helpers import ALICE, Server

pytestmark = pytest.mark.models

# Long enough that embedding it takes seconds on a CI machine: the kill must land mid-run (the int8 MiniLM
# embeds about a thousand such turns a second on two cores; 400 left the 0.2 s below too little room).
N_TURNS = 2000


def long_conversation() -> dict:
    turns = [
        {"role": "user" if i % 2 == 0 else "assistant",
         "text": f"Inspection log entry {i}: valve V-{100 + i} on manifold M-{i % 17} was checked, torque "
                 f"{40 + i % 25} Nm, seal condition grade {i % 4}, next check in {7 + i % 21} days, "
                 f"inspector initials {chr(65 + i % 26)}{chr(66 + i % 24)}.",
         "ts": f"2026-10-{1 + i // 80:02d}T{8 + (i % 80) // 8:02d}:{(i % 8) * 7:02d}:00Z"}
        for i in range(N_TURNS)
    ]
    turns.append({"role": "user", "text": "Final note: the Zeebrugge manifold audit code is ZB-7781-Q.",
                  "ts": "2026-10-26T18:00:00Z"})
    return {"user": "alice", "conversation_id": "inspection-log", "turns": turns}


def test_sigkill_during_indexing_loses_nothing(tmp_path) -> None:
    data = tmp_path / "data"
    server = Server(data, env={"FUNES_INDEX_DEBOUNCE_S": "0"}).start()
    try:
        assert server.post_turns(long_conversation()).status_code == 202
        deadline = time.monotonic() + 30
        while "index run started" not in server.log():
            assert time.monotonic() < deadline, server.log()
            time.sleep(0.02)
        time.sleep(0.2)
    finally:
        server.kill()
    assert "index run done" not in server.log(), "the run finished before the kill; make the conversation longer"

    paths = data / tenant_id("alice")
    src = paths / "src" / "inspection-log.funes.jsonl"
    stamp = read_stamp(paths / "indexed.stamp")
    assert src.exists() and (stamp is None or stamp <= src.stat().st_mtime_ns)

    restarted = Server(data).start()
    try:
        assert "recovering tenant=" in restarted.log()
        health = restarted.wait_indexed(timeout=120)
        assert health["index_runs"] >= 1 and health["index_runs_failed"] == 0
        assert "ZB-7781-Q" in restarted.recall(ALICE, "Zeebrugge manifold audit code")
        assert "V-105" in restarted.recall(ALICE, "valve V-105 torque")
        stamp = read_stamp(paths / "indexed.stamp")
        assert stamp is not None and stamp > src.stat().st_mtime_ns
    finally:
        restarted.stop()

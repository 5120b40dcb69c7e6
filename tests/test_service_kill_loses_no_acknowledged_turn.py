"""`kill -9` in the middle of a stream of writes (some index runs going, some writes in flight), then a
restart (on S3: another replica taking over): every conversation that got its 202 is stored whole and, once
the new server has caught up, recallable, on local disk and on a real S3 server; the server's ingest worker processes do not outlive it. And `kill -9` of a process inside `Engine.index`: the memory opens afterwards and the
same index run, redone, completes it. Real server, real engine, real signals."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import psutil
import pytest

from conftest import write_conversation
from funes_py.tenancy.auth import tenant_id
from service_helpers import INGEST_KEY, DataRoot, Server, mcp_recall_many

pytestmark = pytest.mark.models

WRITERS = 4
PACE_S = 0.1  # per writer: about 40 writes a second in all, so index runs keep up and the test stays short
MAX_PER_WRITER = 60
USERS = ["alice", "bob"]
TOKENS = {"alice": "tok-alice-5f1c", "bob": "tok-bob-9a2e"}


def conversation(user: str, n: int) -> dict:
    """A few turns with a canary only this conversation holds (K<user initial><n>Q)."""
    canary = f"K{user[0].upper()}{n:04d}Q"
    turns = [{"role": "user" if i % 2 == 0 else "assistant",
              "text": f"Shift log {n}.{i}: the {canary} pallet count at the Ghent dock was {100 + i * 7} "
                      f"units, forklift F-{i} inspected, seal grade {i % 4}.",
              "ts": f"2026-10-{1 + n % 28:02d}T{8 + i:02d}:00:00Z"} for i in range(6)]
    return {"user": user, "conversation_id": f"shift-{n}", "turns": turns}


def write_until(server: Server, stop: threading.Event, acked: list[dict], start: int) -> None:
    n = start
    with httpx.Client(headers={"x-ingest-key": INGEST_KEY}, timeout=10.0) as http:
        while not stop.is_set() and n < start + WRITERS * MAX_PER_WRITER:
            body = conversation(USERS[n % 2], n)
            try:
                if http.post(server.url + "/turns", json=body).status_code == 202:
                    acked.append(body)
            except httpx.HTTPError:  # the kill: this write was never acknowledged
                return
            n += WRITERS
            time.sleep(PACE_S)


def test_sigkill_during_a_stream_of_writes_loses_no_acknowledged_conversation(data_root: DataRoot) -> None:
    server = Server(data_root, env={"FUNES_INDEX_DEBOUNCE_S": "0.2", "FUNES_INDEX_MAX_WAIT_S": "0.5"}).start()
    acked: list[dict] = []
    stop = threading.Event()
    writers = [threading.Thread(target=write_until, args=(server, stop, acked, i)) for i in range(WRITERS)]
    try:
        for w in writers:
            w.start()
        deadline = time.monotonic() + 60

        def running() -> int:  # index runs started and not done: the kill must cut one short
            log = server.log()
            return log.count("index run started") - log.count("index run done")

        while server.log().count("index run started") < 2 or len(acked) < 40 or running() < 1:
            assert time.monotonic() < deadline, server.log()
            time.sleep(0.01)
    finally:
        assert server.proc is not None
        workers = psutil.Process(server.proc.pid).children(recursive=True)  # the ingest worker processes
        server.kill()  # SIGKILL, with writes and (most likely) an index run in flight
        stop.set()
        for w in writers:
            w.join()
    log = server.log()
    assert log.count("index run started") > log.count("index run done"), "no run was cut short; kill earlier"
    assert len(workers) >= 2
    _, alive = psutil.wait_procs(workers, timeout=10)
    assert not alive, f"worker processes outlived the killed server: {alive}"

    # Stored: every acknowledged conversation, whole (the write is atomic: old file or new, never half).
    for body in acked:
        stored = data_root.source(tenant_id(body["user"]), body["conversation_id"])
        assert stored is not None, body["conversation_id"]
        lines = [json.loads(x) for x in stored.splitlines()]
        assert [x["blocks"][0]["text"] for x in lines] == [t["text"] for t in body["turns"]]

    # On S3, another replica (its own local state, as on another machine) takes the tenants over: it finds
    # what the dead one acknowledged but never indexed when it first opens each tenant, not at its start.
    restarted = Server(data_root, replica="-b").start()
    try:
        if data_root.s3 is not None:  # open both tenants; the run cut short left its writes' markers
            for user in USERS:
                asyncio.run(mcp_recall_many(restarted.url + "/mcp", TOKENS[user], ["pallet count"]))
            deadline = time.monotonic() + 30
            while "recovering tenant=" not in restarted.log():
                assert time.monotonic() < deadline, restarted.log()
                time.sleep(0.05)
        assert "recovering tenant=" in restarted.log()
        health = restarted.wait_indexed(timeout=240)
        assert health["index_runs_failed"] == 0
        for user in USERS:
            mine = [b for b in acked if b["user"] == user]
            canaries = [b["turns"][0]["text"].split()[4] for b in mine]
            answers = asyncio.run(
                mcp_recall_many(restarted.url + "/mcp", TOKENS[user], [f"{c} pallet count" for c in canaries]))
            missing = [c for c, a in zip(canaries, answers, strict=True) if c not in a]
            assert not missing, f"{user}: {len(missing)} of {len(canaries)} acknowledged canaries not recalled: {missing[:10]}"
    finally:
        restarted.stop()


# The run holds inside its own progress callback, part way through, until it is killed: a kill by the clock
# raced the run, which on a fast machine finished 800 turns inside the second the test waited.
INDEX_SCRIPT = """
import sys, time
from funes_py import Engine, Models
engine = Engine(sys.argv[1], models=Models.load())
def hold(done, total):
    if 0 < done < total:
        print("indexing", done, total, flush=True)
        time.sleep(120)
report = engine.index(sys.argv[2], progress=hold)
print("done", report.chunks_added, flush=True)
"""


def test_sigkill_inside_engine_index_leaves_a_memory_that_opens_and_completes(tmp_path: Path, models) -> None:
    from funes_py import Engine

    src = tmp_path / "src"
    for n in range(40):
        write_conversation(src / f"c{n}.funes.jsonl", f"c{n}",
                           [("user", f"Batch {n} line {i}: the V-{n * 100 + i} valve torque was {30 + i} Nm and "
                                     f"the seal grade {i % 4}; audit code AC-{n:03d}-{i:02d}.") for i in range(20)])
    home = tmp_path / "memory"
    proc = subprocess.Popen([sys.executable, "-c", INDEX_SCRIPT, str(home), str(src)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    first = proc.stdout.readline().split()
    proc.kill()
    proc.wait()
    assert first[:1] == ["indexing"] and 0 < int(first[1]) < int(first[2]), f"no progress inside the run: {first}"

    engine = Engine(home, models=models)  # opens: whatever was committed is readable
    before = engine.status()
    report = engine.index(str(src))
    after = engine.status()
    assert after.rows == before.rows + report.chunks_added and after.sessions == 40
    assert report.chunks_added + report.chunks_skipped == 800  # nothing committed twice, nothing lost
    hits = engine.recall("audit code AC-039-19", k=3)
    assert hits and "AC-039-19" in hits[0].text

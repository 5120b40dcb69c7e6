"""Three `funes-py serve` replicas sharing their tenants on a real S3 server (SeaweedFS), behind the real
HAProxy running deploy/haproxy.cfg: a turn ingested as alice through the balancer is recalled through it;
the replica that holds alice is killed with SIGKILL, and alice's recall through the balancer still finds the
turn (another replica opens her memory from the bucket) and her next turn is indexed there; bob, whose
requests go through the same balancer, never gets a word of alice's. And a backfill (`funes-py index` on an
s3:// memory, as a batch job elsewhere) runs beside the replicas, which pick its commits up. Real processes,
real models, no mocks."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest

from conftest import write_conversation
from funes_py.tenancy.auth import tenant_id
from lb_helpers import HAProxy
from service_helpers import ALICE, BOB, CAROL, INGEST_KEY, DataRoot, Server, mcp_recall

pytestmark = pytest.mark.models

ALICE_FACT = "The Lisbon furnace F-7731 was relined with Quarzite-88 bricks on Tuesday."
ALICE_LATER = "The Lisbon furnace F-7731 passed its heat-up test at 1,340 degrees on Friday."
BOB_FACT = "Bob's Oslo crane C-2204 had its hoist rope replaced by Nordlift."


def turns_body(user: str, cid: str, *texts: str) -> dict:
    return {"user": user, "conversation_id": cid,
            "turns": [{"role": "user", "text": t, "ts": f"2026-11-0{1 + i}T08:00:00Z"} for i, t in enumerate(texts)]}


def ingest(lb: HAProxy, body: dict) -> httpx.Response:
    """POST /turns through the balancer: it carries the ingest key and no tenant credential, so any replica
    may take it (all write the same bucket)."""
    return httpx.post(lb.url + "/turns", json=body, headers={"x-ingest-key": INGEST_KEY}, timeout=30.0)


def recall(lb: HAProxy, token: str, query: str) -> str:
    return asyncio.run(mcp_recall(lb.url + "/mcp", token, query))


def wait_recalled(lb: HAProxy, token: str, query: str, needle: str, timeout: float = 90.0) -> str:
    deadline = time.monotonic() + timeout
    while True:
        out = recall(lb, token, query)
        if needle in out:
            return out
        assert time.monotonic() < deadline, f"{needle!r} not recalled within {timeout} s; last answer: {out}"
        time.sleep(0.3)


@pytest.fixture(scope="module")
def cluster(s3_server, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[HAProxy, list[Server]]]:
    root = DataRoot.on_s3(s3_server, tmp_path_factory.mktemp("replicas"))
    env = {"FUNES_INDEX_DEBOUNCE_S": "0.2", "FUNES_INDEX_MAX_WAIT_S": "1"}
    replicas: list[Server] = []
    try:
        for i in range(1, 4):  # each its own local state directory, as on its own machine
            replicas.append(Server(root, env=env, replica=f"-{i}").start())
        with HAProxy([r.port for r in replicas], workdir=root.workdir / "haproxy") as lb:
            lb.wait_states(dict.fromkeys(lb.servers, "UP"), timeout=15)
            yield lb, replicas
    finally:
        for r in replicas:
            r.stop()


def holder(lb: HAProxy, token: str) -> str:
    """The replica the balancer sends `token`'s requests to: the one whose session count grows while only
    that token asks."""
    before = lb.server_counts()
    for _ in range(3):
        recall(lb, token, "anything")
    grown = {name: n - before[name] for name, n in lb.server_counts().items() if n > before[name]}
    assert len(grown) == 1, f"one token's requests reached several replicas: {grown}"
    return next(iter(grown))


def test_a_tenant_survives_the_death_of_its_replica(cluster: tuple[HAProxy, list[Server]]) -> None:
    lb, replicas = cluster
    assert ingest(lb, turns_body("alice", "furnace", ALICE_FACT)).status_code == 202
    assert ingest(lb, turns_body("bob", "crane", BOB_FACT)).status_code == 202
    wait_recalled(lb, ALICE, "Lisbon furnace bricks", "Quarzite-88")
    wait_recalled(lb, BOB, "Oslo crane hoist rope", "Nordlift")

    alices = holder(lb, ALICE)
    victim = replicas[lb.servers.index(alices)]
    assert victim.proc is not None
    victim.kill()  # SIGKILL: no shutdown, no goodbye to the balancer

    # The very next recall: HAProxy retries the dead replica's refused connection on another one, which
    # opens alice's memory from the bucket.
    out = wait_recalled(lb, ALICE, "Lisbon furnace bricks", "Quarzite-88", timeout=20)
    assert "Nordlift" not in out
    lb.wait_states({alices: "DOWN"}, timeout=10)
    assert holder(lb, ALICE) != alices

    # Alice goes on: a new turn is indexed by a surviving replica and found through the balancer.
    assert ingest(lb, turns_body("alice", "furnace", ALICE_FACT, ALICE_LATER)).status_code == 202
    wait_recalled(lb, ALICE, "furnace heat-up test temperature", "1,340")

    # Bob, through the same balancer before and after the failover, only ever reads bob's memory.
    for q in ["Lisbon furnace bricks", "Quarzite-88", "F-7731 heat-up test", "Oslo crane hoist rope"]:
        out = recall(lb, BOB, q)
        assert "Quarzite" not in out and "F-7731" not in out and "Lisbon" not in out, out
    assert "Nordlift" in recall(lb, BOB, "Oslo crane hoist rope")


def test_a_backfill_job_beside_the_service_is_picked_up(cluster: tuple[HAProxy, list[Server]], tmp_path) -> None:
    """`funes-py index --home s3://…/<tenant>/memory DIR` on another "machine" (its own process and local
    state) while the replicas serve: carol's recall through the balancer finds the backfilled history, and
    her live ingest keeps working beside it."""
    lb, replicas = cluster
    live = next(r for r in replicas if r.proc is not None and r.proc.poll() is None)
    assert ingest(lb, turns_body("carol", "live-1", "Carol's Turku press P-515 runs the night shift now.")).status_code == 202
    wait_recalled(lb, CAROL, "Turku press night shift", "P-515")

    history = tmp_path / "export"
    write_conversation(history / "old-1.funes.jsonl", "old-1",
                       [("user", "Which supplier makes the Turku press dies?"), ("assistant", "Vantaa Tooling, order VT-9902.")])
    env = {**live.env, "FUNES_STATE_DIR": str(tmp_path / "backfill-state")}
    home = f"{live.data}/{tenant_id('carol')}/memory"
    done = subprocess.run([sys.executable, "-m", "funes_py.cli", "index", str(history), "--home", home],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr

    wait_recalled(lb, CAROL, "supplier of the Turku press dies", "VT-9902", timeout=30)
    assert "P-515" in recall(lb, CAROL, "Turku press night shift")

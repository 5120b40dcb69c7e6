"""After `DELETE /conversations/{id}`, nothing under the data directory holds the conversation: a byte search
of every file (source files, the service's state, Lance's data, index pages, transaction files, manifests,
the engine's index-state.json) finds neither its id nor its text, and no index file or manifest written
before the forget is still there (BM25's token list is an FST, which a byte search cannot see: replacing
the files is the proof). Both with other conversations left in the memory and when it was the only one.
Real server, real engine, files read as bytes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import jwt
import pytest

from funes_py.server.auth import tenant_id
from service_helpers import INGEST_KEY, JWT_SECRET, Server, mcp_recall

pytestmark = pytest.mark.models

CONV_ID = "forget-me-Q7ZX"
CANARY = "Zanzibarkiln"  # one token, so it is one word in the text index too
TEXT = f"The {CANARY} burner KX-4471 was relit at 06:10 after the flame sensor fault."


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = Server(tmp_path_factory.mktemp("forget") / "data").start()
    try:
        yield s
    finally:
        s.stop()


def post(server: Server, user: str, cid: str, *texts: str) -> None:
    turns = [{"role": "user" if i % 2 == 0 else "assistant", "text": t, "ts": f"2026-10-0{1 + i}T09:00:00Z"}
             for i, t in enumerate(texts)]
    r = server.post_turns({"user": user, "conversation_id": cid, "turns": turns})
    assert r.status_code == 202, r.text


def holders(root: Path, needles: list[bytes]) -> dict[str, list[str]]:
    """Files under `root` that contain any needle: relative path -> the needles found."""
    found: dict[str, list[str]] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        hits = [n.decode() for n in needles if n in data]
        if hits:
            found[str(path.relative_to(root))] = hits
    return found


def index_files(memory: Path) -> set[tuple[str, int, int]]:
    """Index pages, transaction files and manifests, as (path, mtime, size): after a forget each must be a
    file written since (a rewritten file, like the version hint, counts as new)."""
    out = set()
    for p in memory.rglob("*"):
        if p.is_file() and any(part in ("_indices", "_transactions", "_versions") for part in p.parts):
            st = p.stat()
            out.add((str(p.relative_to(memory)), st.st_mtime_ns, st.st_size))
    return out


@pytest.mark.parametrize("others", [2, 0], ids=["with-other-conversations", "the-only-conversation"])
def test_forget_leaves_neither_id_nor_text_in_any_file(server: Server, others: int) -> None:
    user = f"erin-{others}"
    tenant = server.data / tenant_id(user)
    for n in range(others):
        post(server, user, f"keep-{n}", f"Keep {n}: the Ghent line L-{n} changeover took {20 + n} minutes.",
             "Noted, the changeover log is updated.")
    post(server, user, CONV_ID, TEXT, f"Logged: {CANARY} relit, sensor to be replaced.")
    server.wait_indexed()
    post(server, user, CONV_ID, TEXT, f"Logged: {CANARY} relit, sensor to be replaced.", "Sensor part ordered.")
    server.wait_indexed()  # two index runs: several versions, transactions and index generations exist

    needles = [CONV_ID.encode(), CANARY.encode(), CANARY.lower().encode()]
    before = holders(tenant, needles)
    assert any(p.startswith("src/") for p in before) and any(p.startswith("memory/") for p in before), before
    old_index_files = index_files(tenant / "memory")

    r = httpx.delete(f"{server.url}/conversations/{CONV_ID}", params={"user": user},
                     headers={"x-ingest-key": INGEST_KEY}, timeout=60.0)
    assert r.status_code == 200 and r.json()["rows_removed"] >= 3, r.text

    assert not (tenant / "src" / f"{CONV_ID}.funes.jsonl").exists()
    left = holders(tenant, needles)
    still = sorted(path for path, _, _ in old_index_files & index_files(tenant / "memory"))
    assert not left and not still, (
        f"after forget, files still holding the id or the text: {left}; "
        f"index files, transactions or manifests from before the forget still there: {still}")

    if others:  # the rest of the memory still answers
        token = jwt.encode({"sub": user, "exp": int(time.time()) + 600}, JWT_SECRET, algorithm="HS256")
        assert "L-1" in asyncio.run(mcp_recall(server.url + "/mcp", token, "Ghent line L-1 changeover"))

"""After `DELETE /conversations/{id}`, nothing where the service keeps the tenant holds the conversation: a
byte search of every file (source files, the service's state, Lance's data, index pages, transaction files,
manifests, the engine's index-state.json) finds neither its id nor its text, and no index file or manifest
written before the forget is still there (BM25's token list is an FST, which a byte search cannot see:
replacing the files is the proof). Both with other conversations left in the memory and when it was the only
one; both on local disk and on a real S3 server, where every object under the tenant's prefix is read back
(and the replica's local state directory too). Real server, real engine, bytes as stored."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import httpx
import jwt
import pytest

from funes_py.tenancy.auth import tenant_id
from service_helpers import INGEST_KEY, JWT_SECRET, DataRoot, Server, mcp_recall

pytestmark = pytest.mark.models

CONV_ID = "forget-me-Q7ZX"
CANARY = "Zanzibarkiln"  # one token, so it is one word in the text index too
TEXT = f"The {CANARY} burner KX-4471 was relit at 06:10 after the flame sensor fault."


@pytest.fixture(scope="module")
def server(data_root: DataRoot) -> Iterator[Server]:
    s = Server(data_root).start()
    try:
        yield s
    finally:
        s.stop()


def post(server: Server, user: str, cid: str, *texts: str) -> None:
    turns = [{"role": "user" if i % 2 == 0 else "assistant", "text": t, "ts": f"2026-10-0{1 + i}T09:00:00Z"}
             for i, t in enumerate(texts)]
    r = server.post_turns({"user": user, "conversation_id": cid, "turns": turns})
    assert r.status_code == 202, r.text


def holders(files: dict[str, tuple[bytes, str]], needles: list[bytes]) -> dict[str, list[str]]:
    """Files (or objects) that contain any needle: path under the tenant -> the needles found."""
    found: dict[str, list[str]] = {}
    for path, (data, _) in files.items():
        hits = [n.decode() for n in needles if n in data]
        if hits:
            found[path] = hits
    return found


def index_files(files: dict[str, tuple[bytes, str]]) -> set[tuple[str, str]]:
    """Index pages, transaction files and manifests, as (path, version): after a forget each must be a file
    written since (a rewritten file, like the version hint, counts as new)."""
    return {(path, version) for path, (_, version) in files.items()
            if path.startswith("memory/") and any(part in ("_indices", "_transactions", "_versions")
                                                  for part in path.split("/"))}  # fmt: skip


@pytest.mark.parametrize("others", [2, 0], ids=["with-other-conversations", "the-only-conversation"])
def test_forget_leaves_neither_id_nor_text_in_any_file(server: Server, others: int) -> None:
    user = f"erin-{others}"
    tenant = tenant_id(user)
    for n in range(others):
        post(server, user, f"keep-{n}", f"Keep {n}: the Ghent line L-{n} changeover took {20 + n} minutes.",
             "Noted, the changeover log is updated.")
    post(server, user, CONV_ID, TEXT, f"Logged: {CANARY} relit, sensor to be replaced.")
    server.wait_indexed()
    post(server, user, CONV_ID, TEXT, f"Logged: {CANARY} relit, sensor to be replaced.", "Sensor part ordered.")
    server.wait_indexed()  # two index runs: several versions, transactions and index generations exist

    needles = [CONV_ID.encode(), CANARY.encode(), CANARY.lower().encode()]
    before = holders(server.root.tenant_files(tenant), needles)
    assert any(p.startswith("src/") for p in before) and any(p.startswith("memory/") for p in before), before
    old_index_files = index_files(server.root.tenant_files(tenant))

    r = httpx.delete(f"{server.url}/conversations/{CONV_ID}", params={"user": user},
                     headers={"x-ingest-key": INGEST_KEY}, timeout=60.0)
    assert r.status_code == 200 and r.json()["rows_removed"] >= 3, r.text

    assert server.root.source(tenant, CONV_ID) is None
    after = server.root.tenant_files(tenant)
    left = holders(after, needles)
    still = sorted(path for path, _ in old_index_files & index_files(after))
    assert not left and not still, (
        f"after forget, files still holding the id or the text: {left}; "
        f"index files, transactions or manifests from before the forget still there: {still}")

    if others:  # the rest of the memory still answers
        token = jwt.encode({"sub": user, "exp": int(time.time()) + 600}, JWT_SECRET, algorithm="HS256")
        assert "L-1" in asyncio.run(mcp_recall(server.url + "/mcp", token, "Ghent line L-1 changeover"))

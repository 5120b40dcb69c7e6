"""A user's data as a whole, through the real service, on local disk and on a real S3 server (SeaweedFS):

- `GET /export` gives the user's own export file (their bearer token, or the ingest key naming them): every
  stored turn verbatim with the memory's model stamp; `funes-py import` of it into a fresh home recalls them.
- `DELETE /data` (the ingest key only: an agent's token never erases) removes everything of the user: no file
  or object under the tenant is left, and a byte search of the whole data root (every file, or every object
  under the service's prefix in the bucket, and the replica's local state directory) finds none of the user's
  text; another user's memory still answers."""

from __future__ import annotations

import asyncio
import gzip
import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import jwt
import pytest

from conftest import stored_bytes
from funes_py import Engine, Models
from funes_py.cli import main
from funes_py.server.passages import NO_MEMORY
from funes_py.tenancy.auth import tenant_id
from funes_py.tenancy.storage import remote_state_dir
from service_helpers import INGEST_KEY, JWT_SECRET, DataRoot, Server, mcp_recall

pytestmark = pytest.mark.models

USER, OTHER = "erin-erase", "otto-keeps"
CANARY = "Xylocarpine"  # one token: one word in the text index too
TEXTS = [f"The {CANARY} valve V-3381 on the north boiler was replaced on Monday.",
         f"Logged: {CANARY} valve replaced, pressure test due Friday."]  # fmt: skip


def token(user: str) -> str:
    return jwt.encode({"sub": user, "exp": int(time.time()) + 600}, JWT_SECRET, algorithm="HS256")


def post(server: Server, user: str, cid: str, *texts: str) -> None:
    turns = [{"role": "user" if i % 2 == 0 else "assistant", "text": t, "ts": f"2026-10-0{1 + i}T09:00:00Z"}
             for i, t in enumerate(texts)]
    r = server.post_turns({"user": user, "conversation_id": cid, "turns": turns})
    assert r.status_code == 202, r.text


def everything(root: DataRoot) -> bytes:
    """Every byte the service keeps: the data root (files, or objects under its prefix) and local state."""
    data = stored_bytes(root.uri, root.s3)
    return data + b"".join(p.read_bytes() for p in root.workdir.glob("state*/**/*") if p.is_file())


@pytest.fixture(scope="module")
def server(data_root: DataRoot) -> Iterator[Server]:
    s = Server(data_root).start()
    try:
        post(s, USER, "boiler-1", *TEXTS)
        post(s, USER, "boiler-2", f"Second note on {CANARY}: order a spare gasket G-12.")
        post(s, OTHER, "garden-1", "The quince tree by the shed was pruned in March.")
        s.wait_indexed()
        assert CANARY in asyncio.run(mcp_recall(s.url + "/mcp", token(USER), f"{CANARY} valve V-3381"))
        yield s
    finally:
        s.stop()


def test_export_needs_the_users_token_or_the_ingest_key(server: Server) -> None:
    url = server.url + "/export"
    assert httpx.get(url, params={"user": USER}, timeout=30).status_code == 401
    assert httpx.get(url, params={"user": USER}, headers={"authorization": f"Bearer {token(OTHER)}"}, timeout=30).status_code == 403
    assert httpx.get(url, params={"user": "nobody-here"}, headers={"x-ingest-key": INGEST_KEY}, timeout=30).status_code == 404


def test_the_export_holds_the_users_turns_and_imports_into_a_fresh_home(server: Server, tmp_path: Path) -> None:
    by_token = httpx.get(server.url + "/export", headers={"authorization": f"Bearer {token(USER)}"}, timeout=60)
    by_key = httpx.get(server.url + "/export", params={"user": USER}, headers={"x-ingest-key": INGEST_KEY}, timeout=60)
    assert by_token.status_code == by_key.status_code == 200, by_token.text
    assert by_token.headers["content-type"] == "application/gzip" and by_token.headers["x-funes-turns"] == "3"
    lines = gzip.decompress(by_token.content).decode().splitlines()
    assert gzip.decompress(by_key.content).decode().splitlines()[1:] == lines[1:]
    header = json.loads(lines[0])
    assert header["source"] == "service" and header["model"] == Models.load().embedder_stamp
    texts = [json.loads(x)["blocks"][0]["text"] for x in lines[1:]]
    assert TEXTS[0] in texts and not any("quince" in t for t in texts), "the user's own turns only"

    out = tmp_path / "export.gz"
    out.write_bytes(by_token.content)
    home = tmp_path / "home"
    assert main(["import", "--home", str(home), str(out)]) == 0
    hits = Engine(home, Models.load(), resident=False).recall(f"{CANARY} valve V-3381", k=1)
    assert hits and TEXTS[0] in hits[0].text


def test_erase_leaves_no_byte_of_the_users_text(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    root = server.root
    tenant = tenant_id(USER)
    assert CANARY.encode() in everything(root)
    state = None
    if root.s3 is not None:  # the engine's local state of the S3 memory, named as the engine names it
        monkeypatch.setenv("FUNES_STATE_DIR", str(root.workdir / "state"))
        state = remote_state_dir(f"{root.uri}/{tenant}/memory")
        assert state.is_dir(), sorted(p.name for p in (root.workdir / "state").iterdir())
    # an agent's token never erases
    r = httpx.delete(server.url + "/data", params={"user": USER}, headers={"authorization": f"Bearer {token(USER)}"}, timeout=60)
    assert r.status_code == 401

    r = httpx.delete(server.url + "/data", params={"user": USER}, headers={"x-ingest-key": INGEST_KEY}, timeout=120)
    assert r.status_code == 200 and r.json() == {"erased": True}, r.text
    left = {p for p in root.tenant_files(tenant) if not p.startswith("local:")}
    assert not left, f"still stored under the tenant: {sorted(left)}"
    assert state is None or not state.exists()
    data = everything(root)
    for needle in (CANARY, CANARY.lower(), "V-3381", "boiler-1"):
        assert needle.encode() not in data, f"{needle!r} still in the data root after erase"

    assert asyncio.run(mcp_recall(server.url + "/mcp", token(USER), f"{CANARY} valve")) == NO_MEMORY
    assert "quince" in asyncio.run(mcp_recall(server.url + "/mcp", token(OTHER), "when was the quince tree pruned"))
    again = httpx.delete(server.url + "/data", params={"user": USER}, headers={"x-ingest-key": INGEST_KEY}, timeout=60)
    assert again.status_code == 404
    assert httpx.get(server.url + "/export", headers={"authorization": f"Bearer {token(USER)}"}, timeout=30).status_code == 404

    # the user can start over
    post(server, USER, "boiler-3", "A fresh start: the new boiler is model B-9.")
    server.wait_indexed()
    assert "B-9" in asyncio.run(mcp_recall(server.url + "/mcp", token(USER), "which model is the new boiler"))

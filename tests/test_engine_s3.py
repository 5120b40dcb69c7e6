"""A memory on S3-compatible object storage (`s3://bucket/prefix`), against a real server (SeaweedFS, see
s3_helpers.py): indexed, recalled through both paths, reopened by another engine as another replica would,
forgotten until no object in the bucket holds the text, and written by two processes at once (as two machines
would: each its own local state) without losing a commit. Real Lance, real models, no mocks."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest

from conftest import index_at_once, write_conversation

pytestmark = pytest.mark.models

SECRET = "Zanzibar-Quokka-7781"


@pytest.fixture
def s3_env(s3_server, monkeypatch, tmp_path):
    """The AWS variables for the test server in this process, and a local state directory of its own."""
    for k, v in s3_server.env().items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("FUNES_STATE_DIR", str(tmp_path / "state"))
    return s3_server


def fresh_uri(server) -> str:
    return server.uri(f"memories/{uuid.uuid4().hex[:12]}")


def bucket_bytes(server, uri: str) -> tuple[int, bytes]:
    """How many objects are under the memory's prefix, and all their bytes."""
    prefix = uri.removeprefix(f"s3://{server.bucket}/")
    client = server.client()
    keys = client.list_objects_v2(server.bucket, prefix=prefix)
    blobs = []
    for k in keys:
        r = client.get(server.bucket, k)
        assert r.ok, (k, r.status)
        blobs.append(r.body)
    return len(keys), b"".join(blobs)


def small_history(root: Path) -> Path:
    write_conversation(root / "keep.funes.jsonl", "keep", [("user", "The pump P-9 check is fine."), ("assistant", "Logged P-9 as fine.")])
    write_conversation(
        root / "gone.funes.jsonl",
        "gone",
        [("user", f"The vault code word is {SECRET}."), ("assistant", f"I will remember {SECRET} for the vault.")],
    )
    return root


@pytest.mark.parametrize("resident", [True, False], ids=["resident", "lance"])
def test_a_memory_in_a_bucket_is_indexed_recalled_and_forgotten(s3_env, models, tmp_path, resident):
    from funes_py import Engine, InvalidInputError

    uri = fresh_uri(s3_env)
    engine = Engine(uri, models=models, resident=resident)
    assert engine.home == uri
    report = engine.index(small_history(tmp_path / "src"))
    assert report.chunks_added == 4 and not report.bad_lines
    assert engine.recall("pump P-9", k=1)[0].session_id == "keep"
    status = engine.status()
    assert status.home == uri and status.rows == 4 and status.sessions == 2 and status.disk_bytes > 0
    objects, data = bucket_bytes(s3_env, uri)
    assert objects > 0 and SECRET.encode() in data, "the memory is in the bucket"
    assert not any(p.suffix == ".lance" for p in tmp_path.rglob("*")), "nothing of the dataset on local disk"

    # Unchanged sources add nothing (the local index state, and chunk ids against the bucket).
    assert engine.index(tmp_path / "src").chunks_added == 0

    report = engine.forget("gone")
    assert report.found and report.rows_removed == 2
    assert all(h.session_id != "gone" for h in engine.recall(f"vault code word {SECRET}", k=8))
    with pytest.raises(InvalidInputError, match="not found"):
        engine.get("gone")
    _, data = bucket_bytes(s3_env, uri)
    assert SECRET.lower().encode() not in data.lower(), "forgotten text is still in an object of the bucket"
    assert engine.recall("pump P-9", k=1)[0].session_id == "keep"


def test_another_engine_opens_the_memory_from_the_bucket_and_sees_new_commits(s3_env, models, tmp_path):
    """What a second replica does: open a tenant it has never held, answer from the bucket, and pick up a
    commit made elsewhere (its resident copy follows the dataset's version)."""
    from funes_py import Engine

    uri = fresh_uri(s3_env)
    writer = Engine(uri, models=models)
    writer.index(small_history(tmp_path / "src"))
    replica = Engine(uri, models=models, resident=True)
    assert replica.recall("pump P-9", k=1)[0].session_id == "keep"
    write_conversation(tmp_path / "more" / "new.funes.jsonl", "new", [("user", "The chiller C-77 compressor was replaced on Friday.")])
    writer.index(tmp_path / "more")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        hits = replica.recall("chiller C-77 compressor", k=1)
        if hits and hits[0].session_id == "new":
            break
        time.sleep(0.2)
    assert hits and hits[0].session_id == "new", "the replica did not see the other engine's commit"


def test_two_machines_index_one_bucket_memory_at_once(s3_env, models, tmp_path):
    """Two processes with separate local state (two machines: no shared lock) index one memory at the same
    moment. Lance commits through conditional PUT and retries on a conflict: both runs complete, every
    conversation of both is in the memory afterwards, and the dataset opens."""
    from funes_py import Engine

    uri = fresh_uri(s3_env)
    sources = []
    for tag in ("a", "b"):
        root = tmp_path / tag
        for n in range(12):
            write_conversation(root / f"{tag}{n}.funes.jsonl", f"{tag}{n}",
                               [("user", f"{tag.upper()} log {n}.{i}: pump P-{n * 50 + i} ran {i + 2} hours; work order "
                                         f"WO-{tag}{n:03d}{i:02d}.") for i in range(6)])  # fmt: skip
        sources.append(root)
    envs = [{**s3_env.env(), "FUNES_STATE_DIR": str(tmp_path / f"machine{i}")} for i in range(len(sources))]
    results = index_at_once(uri, sources, envs)
    assert [r.get("ok") for r in results] == [72, 72], results

    engine = Engine(uri, models=models)
    sessions = {s.session_id for s in engine.sessions()}
    assert sessions == {f"{t}{n}" for t in "ab" for n in range(12)}
    assert engine.status().rows == 144
    for t in "ab":
        for n in (0, 11):
            assert engine.recall(f"work order WO-{t}{n:03d}03", k=1)[0].session_id == f"{t}{n}"


def test_a_memory_needs_a_known_scheme_and_a_bucket(models):
    from funes_py import Engine, InvalidInputError

    with pytest.raises(InvalidInputError, match="s3://bucket/prefix"):
        Engine("gs://bucket/x", models=models)
    with pytest.raises(InvalidInputError, match="no bucket"):
        Engine("s3:///x", models=models)

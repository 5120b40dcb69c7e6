"""The service's S3 data root against a real S3 server (SeaweedFS): what an acknowledged write leaves
(source, then a marker unique to the write), what an index run takes and settles (exactly the markers it
listed before reading, so a write that lands during the run stays pending), forget removing the markers
whose names hold the id, and back-to-back writes, empty ones included, on one client (an empty upload once
left the connection out of step and the next request hung)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from funes_py.tenancy.storage import S3Data


@pytest.fixture
def data(s3_server, monkeypatch) -> S3Data:
    for k, v in s3_server.env().items():
        monkeypatch.setenv(k, v)
    d = S3Data(s3_server.uri(f"storage-{uuid.uuid4().hex[:12]}"))
    d.prepare()
    return d


class FakeEngine:
    """Records what an index step hands the engine (the engine itself is tested elsewhere)."""

    def __init__(self) -> None:
        self.indexed: list[tuple[str, list[str]]] = []

    def index_lines(self, sources: Any) -> Any:
        self.indexed += [(key, list(lines)) for key, lines in sources]
        return object()


def run(data: S3Data, tenant: str, ids: set[str] | None, during=None) -> FakeEngine:
    plan = data.index_plan(tenant, ids)
    if during is not None:
        during()
    engine = FakeEngine()
    for step in plan.steps:
        step(engine)
    plan.done()
    return engine


def test_a_write_stays_pending_until_a_run_that_read_it_succeeds(data: S3Data) -> None:
    t = "a" * 24
    assert data.stale(t) == set() and not data.has_memory(t)
    data.write_conversation(t, "c1", ['{"x": 1}'])
    data.write_conversation(t, "c2", ['{"x": 2}'])
    assert data.stale(t) == {"c1", "c2"}

    # A run asked for c1 alone also takes c2, pending from a write this replica never saw.
    engine = run(data, t, {"c1"})
    assert sorted(k.rsplit("/", 1)[1] for k, _ in engine.indexed) == ["c1.funes.jsonl", "c2.funes.jsonl"]
    assert data.stale(t) == set()

    # A write that lands after the run listed the markers keeps its own marker.
    engine = run(data, t, {"c1"}, during=lambda: data.write_conversation(t, "c1", ['{"x": 1}', '{"x": 3}']))
    assert data.stale(t) == {"c1"}
    assert run(data, t, None).indexed[0][1] == ['{"x": 1}', '{"x": 3}']
    assert data.stale(t) == set()


def test_forget_removes_the_source_and_the_markers_naming_it(data: S3Data, s3_server) -> None:
    t = "b" * 24
    data.write_conversation(t, "secret-title-Q7", ["line"])
    data.write_conversation(t, "secret-title-Q7", ["line", "more"])
    assert data.delete_conversation(t, "secret-title-Q7")
    assert not data.delete_conversation(t, "secret-title-Q7")
    keys = s3_server.client().list_objects_v2(s3_server.bucket, prefix=data.key(t))
    assert not [k for k in keys if "secret-title-Q7" in k], keys
    # A run planned before the forget finds the source gone and hands the engine nothing of it.
    assert run(data, t, {"secret-title-Q7"}).indexed == []


def test_back_to_back_writes_on_one_client_do_not_stall(data: S3Data) -> None:
    failed: list[str] = []  # requests that failed and were retried (a stalled one times out, then retries)

    def record(caught_exception=None, **_: Any) -> None:
        if caught_exception is not None:
            failed.append(repr(caught_exception))

    data._client.meta.events.register("needs-retry.s3", record)
    t = "c" * 24
    for i in range(20):
        data.write_conversation(t, f"c{i}", [] if i % 2 else [f'{{"n": {i}}}'])
    assert data.stale(t) == {f"c{i}" for i in range(20)}
    assert not failed, failed

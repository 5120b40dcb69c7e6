"""The per-tenant index scheduler: one run per burst, exactly one more for writes during a run, never two
runs on one tenant at once, other tenants independent, and the stamp that crash recovery relies on.
Hermetic: the run is a coroutine that records what it was asked to index."""

from __future__ import annotations

import asyncio
from pathlib import Path

from funes_py.tenancy.scheduler import IndexScheduler
from funes_py.tenancy.storage import read_stamp, stale_conversations, write_stamp


class Recorder:
    def __init__(self, run_s: float = 0.0):
        self.run_s = run_s
        self.runs: list[tuple[str, set[str] | None]] = []
        self.running: dict[str, int] = {}
        self.max_running = 0
        self.stamps: dict[str, int | None] = {}

    async def run(self, tenant: str, ids: set[str] | None) -> None:
        self.running[tenant] = self.running.get(tenant, 0) + 1
        self.max_running = max(self.max_running, self.running[tenant])
        self.runs.append((tenant, ids))
        await asyncio.sleep(self.run_s)
        self.running[tenant] -= 1

    def stamp(self, tenant: str, value: int | None) -> None:
        self.stamps[tenant] = value


def write(s: IndexScheduler, tenant: str, cid: str) -> None:
    s.end_write(tenant, s.begin_write(tenant), cid)


def test_a_burst_gives_one_run() -> None:
    async def main() -> Recorder:
        rec = Recorder()
        s = IndexScheduler(rec.run, rec.stamp, debounce_s=0.1, max_wait_s=5.0)
        for i in range(20):
            write(s, "t", f"c{i % 3}")
            await asyncio.sleep(0.01)
        assert await s.wait_idle(5)
        return rec

    rec = asyncio.run(main())
    assert rec.runs == [("t", {"c0", "c1", "c2"})]


def test_writes_during_a_run_schedule_exactly_one_more() -> None:
    async def main() -> Recorder:
        rec = Recorder(run_s=0.3)
        s = IndexScheduler(rec.run, rec.stamp, debounce_s=0.05, max_wait_s=5.0)
        write(s, "t", "a")
        await asyncio.sleep(0.15)  # the first run is going now
        for cid in ("b", "c", "b", "d"):
            write(s, "t", cid)
            await asyncio.sleep(0.02)
        assert await s.wait_idle(5)
        return rec

    rec = asyncio.run(main())
    assert rec.runs == [("t", {"a"}), ("t", {"b", "c", "d"})]
    assert rec.max_running == 1


def test_tenants_do_not_wait_for_each_other() -> None:
    async def main() -> tuple[Recorder, float]:
        rec = Recorder(run_s=0.3)
        s = IndexScheduler(rec.run, rec.stamp, debounce_s=0.05, max_wait_s=5.0)
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        for t in ("x", "y", "z"):
            write(s, t, "a")
        assert await s.wait_idle(5)
        return rec, loop.time() - t0

    rec, took = asyncio.run(main())
    assert sorted(t for t, _ in rec.runs) == ["x", "y", "z"]
    assert took < 0.8  # three 0.3 s runs side by side, not one after another


def test_a_steady_stream_is_still_indexed_after_max_wait() -> None:
    async def main() -> Recorder:
        rec = Recorder()
        s = IndexScheduler(rec.run, rec.stamp, debounce_s=0.1, max_wait_s=0.3)
        for _ in range(12):  # a write every 50 ms for 0.6 s: never quiet for 0.1 s
            write(s, "t", "c")
            await asyncio.sleep(0.05)
        assert await s.wait_idle(5)
        return rec

    assert len(asyncio.run(main()).runs) >= 2


def test_the_stamp_never_covers_a_write_that_was_not_indexed() -> None:
    async def main() -> tuple[Recorder, int, int]:
        rec = Recorder(run_s=0.2)
        s = IndexScheduler(rec.run, rec.stamp, debounce_s=0.0, max_wait_s=0.0)
        write(s, "t", "a")
        await asyncio.sleep(0.05)  # run 1 is going
        token = s.begin_write("t")  # a write starts during run 1 and is still in flight when it ends
        from time import time_ns

        started = time_ns()
        await asyncio.sleep(0.3)
        first_stamp = rec.stamps["t"]
        s.end_write("t", token, "b")
        assert await s.wait_idle(5)
        return rec, first_stamp, started

    rec, first_stamp, in_flight_started = asyncio.run(main())
    assert first_stamp is not None and first_stamp <= in_flight_started
    assert rec.runs == [("t", {"a"}), ("t", {"b"})]


def test_a_failed_run_removes_the_stamp_and_the_next_run_takes_everything() -> None:
    async def main() -> tuple[list, dict]:
        calls: list = []
        stamps: dict = {}

        async def run(tenant: str, ids: set[str] | None) -> None:
            calls.append(ids)
            if len(calls) == 1:
                raise OSError("disk full")

        s = IndexScheduler(run, lambda t, v: stamps.__setitem__(t, v), debounce_s=0.0, max_wait_s=0.0)
        write(s, "t", "a")
        assert await s.wait_idle(5)
        after_failure = dict(stamps)
        write(s, "t", "b")
        assert await s.wait_idle(5)
        return calls, after_failure

    calls, after_failure = asyncio.run(main())
    assert after_failure == {"t": None}
    assert calls == [{"a"}, None]


def test_stale_conversations_follow_the_stamp(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "old.funes.jsonl").write_text("{}\n")
    stamp_file = tmp_path / "indexed.stamp"
    assert stale_conversations(src, read_stamp(stamp_file)) is None  # no stamp: everything
    old_mtime = (src / "old.funes.jsonl").stat().st_mtime_ns
    write_stamp(stamp_file, old_mtime + 1)
    (src / "new.funes.jsonl").write_text("{}\n")
    import os

    os.utime(src / "new.funes.jsonl", ns=(old_mtime + 10, old_mtime + 10))
    assert stale_conversations(src, read_stamp(stamp_file)) == {"new"}

"""Debounced, per-tenant index runs, and the stamp that lets a restart finish what a crash interrupted.

Per tenant: writes mark conversations dirty; a run starts once writes have been quiet for `debounce_s`
(or `max_wait_s` after the first unindexed write, so a steady stream is still indexed); never two runs on
one tenant at once; writes during a run are picked up by exactly one more run. Recall never waits on any
of this: it reads whatever the memory holds.

The stamp (`<tenant>/indexed.stamp`, nanoseconds since the epoch; storage.py keeps it) promises: every
source file written before the stamp is in the memory. A successful run writes min(its start, the start of
any write still in flight, the first write of anything still dirty); a failed run deletes it. Files at or
past the stamp (all files, when there is no stamp) are indexed again at start-up (a local data root) or
when a replica opens the tenant (a shared one, on S3). Indexing is idempotent (unchanged chunks are
skipped), so indexing a file twice costs little and killing the server in the middle of a run loses nothing.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from ..metrics import ERRORS, INDEX_RUN_SECONDS, INDEX_RUNS

log = logging.getLogger("funes_py.tenancy")

# run(tenant, conversation ids, or None for every file in src/)
RunFn = Callable[[str, "set[str] | None"], Awaitable[None]]
StampFn = Callable[[str, "int | None"], None]


@dataclass
class _Tenant:
    dirty: dict[str, int] = field(default_factory=dict)  # conversation id -> wall ns of its first write
    whole: bool = False  # next run indexes every file in src/
    retry_whole: bool = False  # a run failed: the next run, whenever it comes, indexes every file
    first_write: float | None = None  # monotonic, for max_wait
    last_write: float = 0.0
    writes_in_flight: dict[int, int] = field(default_factory=dict)  # write token -> wall ns it started
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)  # held by a run and by forget
    task: asyncio.Task[None] | None = None
    running: bool = False


class IndexScheduler:
    def __init__(self, run: RunFn, write_stamp: StampFn, debounce_s: float, max_wait_s: float):
        self._run = run
        self._write_stamp = write_stamp
        self._debounce_s = debounce_s
        self._max_wait_s = max_wait_s
        self._tenants: dict[str, _Tenant] = {}
        self._next_token = 0
        self.runs_started = 0
        self.runs_failed = 0

    def _state(self, tenant: str) -> _Tenant:
        return self._tenants.setdefault(tenant, _Tenant())

    def lock(self, tenant: str) -> asyncio.Lock:
        """The tenant's write lock: index runs hold it; so must anything else that changes the memory."""
        return self._state(tenant).lock

    # --- the write path tells us about writes ------------------------------------------------------
    def begin_write(self, tenant: str) -> int:
        """Call before writing a source file; pass the token to `end_write` once it is renamed in place."""
        self._next_token += 1
        self._state(tenant).writes_in_flight[self._next_token] = time.time_ns()
        return self._next_token

    def end_write(self, tenant: str, token: int, conversation_id: str | None) -> None:
        """The write with `token` is done; `conversation_id` (None when the write failed) needs indexing."""
        st = self._state(tenant)
        started = st.writes_in_flight.pop(token, time.time_ns())
        if conversation_id is not None:
            st.dirty.setdefault(conversation_id, started)
            self._wake(tenant, st, immediate=False)

    def schedule_all(self, tenant: str) -> None:
        """Index every source file of `tenant` now (start-up recovery)."""
        st = self._state(tenant)
        st.whole = True
        self._wake(tenant, st, immediate=True)

    def schedule(self, tenant: str, conversation_ids: set[str]) -> None:
        """Index these conversations now (start-up recovery)."""
        st = self._state(tenant)
        now = time.time_ns()
        for cid in conversation_ids:
            st.dirty.setdefault(cid, now)
        self._wake(tenant, st, immediate=True)

    def discard(self, tenant: str, conversation_id: str) -> None:
        """Drop a pending index of a conversation that is being forgotten."""
        self._state(tenant).dirty.pop(conversation_id, None)

    def discard_all(self, tenant: str) -> None:
        """Drop every pending index of a tenant that is being erased (a run waiting for the lock then finds
        nothing to do)."""
        st = self._state(tenant)
        st.dirty.clear()
        st.whole = st.retry_whole = False

    # --- introspection ----------------------------------------------------------------------------
    @property
    def busy(self) -> int:
        """Tenants with a run going or pending."""
        return sum(1 for st in self._tenants.values() if st.task is not None)

    @property
    def running(self) -> int:
        """Index runs going now."""
        return sum(1 for st in self._tenants.values() if st.running)

    async def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until no run is going or pending; False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.busy:
            if deadline is not None and time.monotonic() >= deadline:
                return False
            await asyncio.sleep(0.05)
        return True

    async def stop(self, timeout: float) -> None:
        """Shut down: cancel pending runs, let a run already going finish (up to `timeout`)."""
        for st in self._tenants.values():
            if st.task is not None and not st.running:
                st.task.cancel()
        tasks = [st.task for st in self._tenants.values() if st.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)

    # --- the loop ---------------------------------------------------------------------------------
    def _wake(self, tenant: str, st: _Tenant, immediate: bool) -> None:
        now = time.monotonic()
        if immediate:
            st.first_write = now - self._max_wait_s
            st.last_write = now - self._debounce_s
        else:
            st.last_write = now
            if st.first_write is None:
                st.first_write = now
        if st.task is None:
            st.task = asyncio.get_running_loop().create_task(self._worker(tenant, st))

    async def _worker(self, tenant: str, st: _Tenant) -> None:
        try:
            while st.dirty or st.whole:
                while True:  # debounce: quiet for debounce_s, or max_wait_s since the first write
                    assert st.first_write is not None
                    due = min(st.last_write + self._debounce_s, st.first_write + self._max_wait_s)
                    wait = due - time.monotonic()
                    if wait <= 0:
                        break
                    await asyncio.sleep(wait)
                async with st.lock:
                    await self._one_run(tenant, st)
        finally:
            st.task = None

    async def _one_run(self, tenant: str, st: _Tenant) -> None:
        batch, whole = set(st.dirty), st.whole or st.retry_whole
        st.dirty, st.whole, st.retry_whole, st.first_write = {}, False, False, None
        if not batch and not whole:  # everything pending was forgotten meanwhile
            return
        started = time.time_ns()
        self.runs_started += 1
        st.running = True
        t0 = time.perf_counter()
        try:
            await self._run(tenant, None if whole else batch)
            INDEX_RUNS.labels("ok").inc()
        except Exception:
            self.runs_failed += 1
            INDEX_RUNS.labels("failed").inc()
            ERRORS.labels("index_run_failed").inc()
            log.exception("index run failed tenant=%s; the next run indexes all of src/", tenant)
            st.retry_whole = True  # not rescheduled now: the next write, or the next start, retries
            await self._stamp(tenant, None)
            return
        finally:
            st.running = False
            INDEX_RUN_SECONDS.observe(time.perf_counter() - t0)
        stamp = min([started, *st.writes_in_flight.values(), *st.dirty.values()])
        await self._stamp(tenant, stamp)

    async def _stamp(self, tenant: str, stamp: int | None) -> None:
        """Write (or, with None, delete) the stamp on a thread: on object storage it is a request. Still under
        the tenant's lock, so no other run's stamp overtakes it. A stamp that cannot be written is logged: the
        older one on record stays, and the next check re-indexes a little more than needed."""
        try:
            await asyncio.to_thread(self._write_stamp, tenant, stamp)
        except Exception:
            log.exception("writing the index stamp failed tenant=%s", tenant)


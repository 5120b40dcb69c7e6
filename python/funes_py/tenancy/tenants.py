"""The tenants of one data root: warm engines, debounced index runs, and the recall, store and forget paths.

What the recall service and the agent-archive proxy share. Each builds one `Tenants` over its data root and
keeps only its policy (what a user may do, what an agent sees on failure, how answers are rendered); this
class owns the lifetimes and the threads:

- `registry` keeps one warm engine per tenant (opened on a worker thread, idle ones closed);
- `scheduler` decides when a tenant is indexed (debounce, never two runs at once, the stamp that lets a
  restart finish what a crash interrupted);
- recalls run on a pool of `recall_threads` threads, index runs and forgets on `index_workers` threads (at
  most that many tenants index at once); every engine call releases the GIL, so these pools are the
  parallelism and the event loop stays free.

A memory embedded with another model than the one loaded is re-embedded from its stored text when its tenant
is opened (`open_engine`): the tenancy owns its tenants' memories, so refusing would leave every tenant
without recall after a model change until someone rebuilt each by hand.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .registry import TenantRegistry
from .scheduler import IndexScheduler
from .storage import TenantData

log = logging.getLogger("funes_py.tenancy")

# Called before an index run reads these conversations (None: all of them): the proxy makes pending archive
# lines durable there. Runs on an index thread.
BeforeIndex = Callable[[str, "set[str] | None"], None]


@dataclass(frozen=True)
class TenancyLimits:
    """How many of what run at once, and when index runs start. Each surface maps its own settings here."""

    recall_threads: int
    index_workers: int
    max_open: int
    idle_s: float
    debounce_s: float
    max_wait_s: float
    reconcile_s: float = 30.0  # a shared root: how often held tenants are checked for unindexed writes


class Tenants:
    def __init__(self, data: TenantData, models: Any, limits: TenancyLimits, *, name: str = "funes",
                 before_index: BeforeIndex | None = None) -> None:  # fmt: skip
        self.data = data
        self.limits = limits
        self._before_index = before_index
        self.registry = TenantRegistry(
            data.memory_home,
            functools.partial(open_engine, models=models, rebuild_slots=threading.Semaphore(limits.index_workers)),
            limits.max_open,
            limits.idle_s,
            on_open=self._reconcile if data.shared else None,
        )
        self.scheduler = IndexScheduler(self._index_run, self.data.write_stamp, limits.debounce_s, limits.max_wait_s)
        self._recall_pool = concurrent.futures.ThreadPoolExecutor(limits.recall_threads, f"{name}-recall")
        self._index_pool = concurrent.futures.ThreadPoolExecutor(limits.index_workers, f"{name}-index")
        self._index_slots = asyncio.Semaphore(limits.index_workers)
        self._tasks: list[asyncio.Task[None]] = []
        self._background: set[asyncio.Task[None]] = set()
        self._unopened_checked: dict[str, float] = {}  # tenant -> when `reconcile_unopened` last looked

    # --- lifecycle --------------------------------------------------------------------------------
    def start(self) -> None:
        """Queue recovery of interrupted indexing and start the upkeep loops (on the running event loop)."""
        self._recover()
        loop = asyncio.get_running_loop()
        self._tasks.append(loop.create_task(self._sweep()))
        if self.data.shared:
            self._tasks.append(loop.create_task(self._reconcile_open()))

    async def stop(self, grace_s: float) -> None:
        """Cancel pending runs, give a run already going `grace_s`, close every engine. A run cut short loses
        nothing: the stamp is written only after a run succeeds, and the next start indexes again."""
        for task in self._tasks:
            task.cancel()
        await self.scheduler.stop(grace_s)
        await self.registry.close_all()
        for pool in (self._recall_pool, self._index_pool):
            pool.shutdown(wait=False, cancel_futures=True)

    # --- read -------------------------------------------------------------------------------------
    async def has_memory(self, tenant: str) -> bool:
        if self.data.shared:  # a request to the store (the answer is kept once it is yes)
            return await asyncio.to_thread(self.data.has_memory, tenant)
        return self.data.has_memory(tenant)  # a stat

    async def recall(self, tenant: str, query: str, *args: Any, **kwargs: Any) -> list[Any]:
        """`engine.recall(query, *args, **kwargs)` on the tenant's warm engine, on the recall pool. The engine
        stays leased until the thread is done with it, even when the caller has been cancelled."""
        loop = asyncio.get_running_loop()
        engine, release = await self.registry.acquire(tenant)
        try:
            work = self._recall_pool.submit(engine.recall, query, *args, **kwargs)
        except BaseException:
            release()
            raise
        def done(f: Any) -> None:
            release()
            if not f.cancelled() and f.exception() is None:
                self.registry.mark_warm(tenant, engine)

        work.add_done_callback(lambda f: loop.call_soon_threadsafe(done, f))
        try:
            return await asyncio.shield(asyncio.wrap_future(work))
        except asyncio.CancelledError:
            work.cancel()  # still queued: never runs; already running: finishes, and its result is dropped
            raise

    async def with_engine(self, tenant: str, call: Callable[[Any], Any]) -> Any:
        """`call(engine)` on the tenant's engine, on the recall pool (reads other than recall: get, sessions)."""
        loop = asyncio.get_running_loop()
        async with self.registry.lease(tenant) as engine:
            return await loop.run_in_executor(self._recall_pool, call, engine)

    # --- write ------------------------------------------------------------------------------------
    async def store(self, tenant: str, conversation_id: str, lines: list[str]) -> None:
        """Write a conversation's source atomically (durable when this returns) and schedule its indexing."""
        token = self.scheduler.begin_write(tenant)
        done = False
        try:
            await asyncio.to_thread(self.data.write_conversation, tenant, conversation_id, lines)
            done = True
        finally:
            self.scheduler.end_write(tenant, token, conversation_id if done and lines else None)

    def wrote(self, tenant: str, conversation_id: str) -> None:
        """Someone else wrote `conversation_id`'s source (the proxy's archive): index it soon (debounced)."""
        token = self.scheduler.begin_write(tenant)
        self.scheduler.end_write(tenant, token, conversation_id)

    async def forget(self, tenant: str, conversation_id: str,
                     drop_source: Callable[[], bool] | None = None) -> tuple[bool, int]:  # fmt: skip
        """Remove a conversation's source (`drop_source`, else the data root's file) under the tenant's index
        lock, so no run reads it again, then purge its rows: (anything found, rows removed)."""
        async with self.scheduler.lock(tenant):
            self.scheduler.discard(tenant, conversation_id)
            if drop_source is None:
                had_source = await asyncio.to_thread(self.data.delete_conversation, tenant, conversation_id)
            else:
                had_source = await asyncio.to_thread(drop_source)
            rows, had_rows = 0, False
            if await self.has_memory(tenant):
                loop = asyncio.get_running_loop()
                async with self.registry.lease(tenant) as engine:
                    report = await loop.run_in_executor(self._index_pool, engine.forget, conversation_id)
                rows, had_rows = int(report.rows_removed), bool(report.found)
        if had_source or had_rows:
            log.info("forgot conversation tenant=%s rows=%d", tenant, rows)
        return had_source or had_rows, rows

    async def erase(self, tenant: str) -> bool:
        """Everything of the tenant gone: pending runs dropped, the engine closed, then the data root's
        `erase` (sources, memory, stamp, markers, local state), all under the tenant's index lock so that no
        run writes meanwhile. True when there was anything. TimeoutError (registry.drop) leaves it all."""
        async with self.scheduler.lock(tenant):
            self.scheduler.discard_all(tenant)
            await self.registry.drop(tenant)
            found = await asyncio.to_thread(self.data.erase, tenant)
        if found:
            log.info("erased tenant=%s", tenant)
        return found

    async def _index_run(self, tenant: str, conversation_ids: set[str] | None) -> None:
        loop = asyncio.get_running_loop()
        if self._before_index is not None:
            await loop.run_in_executor(self._index_pool, self._before_index, tenant, conversation_ids)
        plan = await asyncio.to_thread(self.data.index_plan, tenant, conversation_ids)
        if not plan.steps:
            return
        async with self._index_slots:  # bounds open engines and CPU when many tenants index at once
            log.info("index run started tenant=%s targets=%s", tenant, "all" if plan.size is None else plan.size)
            t0 = time.perf_counter()
            added = skipped = bad = 0
            async with self.registry.lease(tenant) as engine:
                for step in plan.steps:
                    report = await loop.run_in_executor(self._index_pool, step, engine)
                    added += report.chunks_added
                    skipped += report.chunks_skipped
                    bad += len(report.bad_lines)
                    for b in report.bad_lines:
                        log.warning("skipped a bad line tenant=%s file=%s line=%d: %s",
                                    tenant, os.path.basename(b.file), b.line, b.reason)  # fmt: skip
            await asyncio.to_thread(plan.done)
        log.info("index run done tenant=%s chunks_added=%d chunks_skipped=%d bad_lines=%d in %.2f s",
                 tenant, added, skipped, bad, time.perf_counter() - t0)  # fmt: skip

    # --- start-up recovery and upkeep -------------------------------------------------------------
    def _recover(self) -> None:
        """Queue an index run for every local tenant whose sources are newer than its stamp. A shared root
        (S3) is checked tenant by tenant as replicas open them (`_reconcile`) instead: another replica may have
        acknowledged a turn and died before indexing it, long after this one started."""
        for tenant in self.data.tenants():
            self._queue_stale(tenant, self.data.stale(tenant), self.data.has_sources(tenant))

    def _queue_stale(self, tenant: str, stale: set[str] | None, has_sources: bool) -> None:
        if stale is None:
            if has_sources:
                log.info("recovering tenant=%s: no stamp, indexing all of its sources", tenant)
                self.scheduler.schedule_all(tenant)
        elif stale:
            log.info("recovering tenant=%s: %d conversation(s) newer than the stamp", tenant, len(stale))
            self.scheduler.schedule(tenant, stale)

    def reconcile_unopened(self, tenant: str) -> None:
        """`_reconcile` for a tenant without a memory yet, at most once per `reconcile_s`: nothing opens it
        (recall answers at once that there is nothing), yet another replica may have acknowledged its first
        writes and died before indexing them."""
        if not self.data.shared:
            return
        now = time.monotonic()
        if now - self._unopened_checked.get(tenant, -self.limits.reconcile_s) >= self.limits.reconcile_s:
            self._unopened_checked[tenant] = now
            self._reconcile(tenant)

    def _reconcile(self, tenant: str) -> None:
        """A replica opened `tenant` from the shared store: index what no run has taken in yet (in the
        background; recall answers from the memory meanwhile)."""

        async def check() -> None:
            try:
                stale = await asyncio.to_thread(self.data.stale, tenant)
                has_sources = stale is not None or await asyncio.to_thread(self.data.has_sources, tenant)
                self._queue_stale(tenant, stale, has_sources)
            except Exception:
                log.exception("checking tenant=%s for unindexed sources failed", tenant)

        task = asyncio.get_running_loop().create_task(check())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _reconcile_open(self) -> None:
        """Every `reconcile_s`, look for unindexed writes in the tenants this replica holds open: a tenant
        opened here before another replica acknowledged a write and died is not opened again, so `_reconcile`
        at open would never see it."""
        while True:
            await asyncio.sleep(self.limits.reconcile_s)
            for tenant in self.registry.open_tenants():
                self._reconcile(tenant)

    async def _sweep(self) -> None:
        period = max(1.0, min(60.0, self.limits.idle_s / 2))
        while True:
            await asyncio.sleep(period)
            self.registry.sweep_idle()


def live_tenancy(tenants: Tenants | None) -> dict[str, tuple[str, float]]:
    """What /metrics reads of the tenancy at each scrape (zeros before it started)."""
    reg, sched = (tenants.registry, tenants.scheduler) if tenants is not None else (None, None)
    return {
        "funes_warm_tenants": ("Tenants with a warm engine", reg.open_count if reg else 0),
        "funes_index_queue_tenants": ("Tenants with an index run pending or going", sched.busy if sched else 0),
        "funes_index_running": ("Index runs going now", sched.running if sched else 0),
    }


def open_engine(home: str, models: Any, rebuild_slots: threading.Semaphore) -> Any:
    """A tenant's engine. A memory embedded with another model than the loaded one (the operator changed
    FUNES_EMBEDDER, or a new release changed the default's fingerprint) is re-embedded from its stored text,
    here, before the tenant's first call is answered. Lance commits the re-embedded rows at once, so a crash
    midway leaves the old memory, re-embedded again at the next open. At most `rebuild_slots` re-embeds run
    at once (as many as index runs): after an upgrade every tenant needs one, and a plain open must not queue
    behind them."""
    from funes_py import Engine, ModelMismatchError  # the compiled engine, only when a tenant really opens

    try:
        return Engine(home, models=models)
    except ModelMismatchError as e:
        log.warning("re-embedding %s: built with %s, the service loads %s", home, e.stored, e.loaded)  # type: ignore[attr-defined]
    t0 = time.perf_counter()
    with rebuild_slots:
        engine = Engine(home, models=models, on_model_mismatch="rebuild")
    _, chunks = engine.rebuilt or ("", 0)
    log.info("re-embedded %d chunks of %s in %.1f s", chunks, home, time.perf_counter() - t0)
    return engine

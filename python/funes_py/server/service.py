"""The recall service's state and its three operations: recall (read), store and forget (write).

Placement: this file decides what an operation does (which tenant, which limits, what the agent sees on
failure); `tenants` keeps engines warm, `indexer` decides when to index, `funes_py.render` renders
(`passages` holds the fixed answers), `turns` validates, and the HTTP and MCP surfaces (`routes`,
`mcp_tool`) only translate to and from these calls.

Threads: recalls run on a pool of `max_concurrent_recalls` threads (more wait in its queue), index runs
and forgets on a pool of `index_workers` threads, engine opening and closing on asyncio's default pool.
Every engine call releases the GIL, so these pools are the service's parallelism and the event loop
stays free for HTTP.

Processes: ingest bodies (JSON, limits, secret masking, the pasted-recall rule) become lines in
`_INGEST_PROCESSES` worker processes (`ingest_pool`), so that Python work never holds this process's GIL.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import os
import threading
import time
from typing import Any

from ..render import format_passages
from .auth import tenant_id
from .config import ServiceConfig
from .indexer import IndexScheduler
from .ingest_pool import IngestPool
from .jsonbody import JsonLimits
from .passages import EMPTY_QUERY, NO_MEMORY, NOTHING_FOUND, UNAVAILABLE
from .storage import TenantData, open_data
from .tenants import TenantRegistry
from .turns import Conversation, TurnLimits

log = logging.getLogger("funes_py.server")

_SHUTDOWN_GRACE_S = 30.0
# Two, so one large body does not queue every other write behind it (about 16 MB each, see ingest_pool).
_INGEST_PROCESSES = 2


class Service:
    def __init__(self, config: ServiceConfig, models: Any = None):
        self.config = config
        self._models = models
        self.ready = False
        self.data: TenantData = open_data(config.data_dir)
        self.registry: TenantRegistry | None = None
        self.scheduler: IndexScheduler | None = None
        self._recall_pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._index_pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._ingest_pool: IngestPool | None = None
        self.json_limits = JsonLimits(config.max_json_depth, config.max_json_number_chars)
        self._turn_limits = TurnLimits(config.max_turns, config.max_turn_chars)
        self._index_slots: asyncio.Semaphore | None = None
        self._sweeper: asyncio.Task[None] | None = None
        self._reconciler: asyncio.Task[None] | None = None
        self._recall_options = config.recall_options()
        self._invalid_input: type[Exception] = ValueError
        self._background: set[asyncio.Task[None]] = set()
        self._unopened_checked: dict[str, float] = {}  # tenant -> when `_reconcile_unopened` last looked

    # --- lifecycle --------------------------------------------------------------------------------
    async def start(self) -> None:
        """Load the models (once, before the first request), then queue recovery of interrupted indexing."""
        from funes_py import InvalidInputError, Models  # imported here: the pure parts need no engine
        from funes_py.convert.floors import calibrated_floors

        self._invalid_input = InvalidInputError

        cfg = self.config
        await asyncio.to_thread(self.data.prepare)
        if self._models is None:
            t0 = time.perf_counter()
            # One thread per query embedding (FUNES_QUERY_THREADS): concurrent recalls share the cores, and a
            # second thread per query costs half again its CPU (about 150 recalls/s at 16 clients, not 110).
            self._models = await asyncio.to_thread(
                Models.load, cfg.embedder, reranker=cfg.reranker, query_threads=cfg.query_threads
            )
            log.info("models loaded in %.1f s", time.perf_counter() - t0)
        models = self._models
        self._recall_options = cfg.recall_options(calibrated_floors(models.embedder_name))
        log.info("recall options: %s", self._recall_options)
        self.registry = TenantRegistry(
            self.data.memory_home,
            functools.partial(_open_engine, models=models, rebuild_slots=threading.Semaphore(cfg.index_workers)),
            cfg.max_open_tenants,
            cfg.tenant_idle_s,
            on_open=self._reconcile if self.data.shared else None,
        )
        self.scheduler = IndexScheduler(self._index_run, self._write_stamp, cfg.index_debounce_s, cfg.index_max_wait_s)
        self._recall_pool = concurrent.futures.ThreadPoolExecutor(cfg.max_concurrent_recalls, "funes-recall")
        self._index_pool = concurrent.futures.ThreadPoolExecutor(cfg.index_workers, "funes-index")
        self._ingest_pool = IngestPool(_INGEST_PROCESSES)
        await self._ingest_pool.start()  # before the port opens, like the models
        self._index_slots = asyncio.Semaphore(cfg.index_workers)
        self._recover()
        self._sweeper = asyncio.get_running_loop().create_task(self._sweep())
        if self.data.shared:
            self._reconciler = asyncio.get_running_loop().create_task(self._reconcile_open())
        self.ready = True

    async def stop(self) -> None:
        self.ready = False
        for task in (self._sweeper, self._reconciler):
            if task is not None:
                task.cancel()
        if self.scheduler is not None:
            await self.scheduler.stop(_SHUTDOWN_GRACE_S)
        if self.registry is not None:
            await self.registry.close_all()
        for pool in (self._recall_pool, self._index_pool):
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)
        if self._ingest_pool is not None:
            await self._ingest_pool.close()

    def health(self) -> dict[str, Any]:
        if not self.ready or self.registry is None or self.scheduler is None:
            return {"status": "starting"}
        return {
            "status": "ready",
            "open_tenants": self.registry.open_count,
            "index_runs": self.scheduler.runs_started,
            "index_runs_failed": self.scheduler.runs_failed,
            "indexing": self.scheduler.busy,
        }

    # --- read -------------------------------------------------------------------------------------
    async def recall_text(self, user: str, query: str) -> str:
        """The tool's answer for `user`. Never raises: a failure is logged and the agent is told to go on."""
        tenant = tenant_id(user)
        query = cut_query(query, self.config.recall_max_query_chars)
        if not query:
            return EMPTY_QUERY
        try:
            assert self.registry is not None
            if not await self._has_memory(tenant):
                if self.data.shared:  # writes of a replica that died before its first commit for this tenant
                    self._reconcile_unopened(tenant)
                return NO_MEMORY
            async with asyncio.timeout(self.config.recall_timeout_s):
                hits = await self._recall(tenant, query)
            return format_passages(hits, self.config.recall_max_chars)
        except TimeoutError:
            log.warning("recall timed out after %.1f s tenant=%s", self.config.recall_timeout_s, tenant)
        except Exception as e:
            if isinstance(e, self._invalid_input):  # the query itself (say, only punctuation): not an outage
                log.info("recall refused the query tenant=%s: %s", tenant, e)
                return NOTHING_FOUND
            log.exception("recall failed tenant=%s", tenant)
        return UNAVAILABLE

    async def _recall(self, tenant: str, query: str) -> list[Any]:
        assert self.registry is not None and self._recall_pool is not None
        loop = asyncio.get_running_loop()
        engine, release = await self.registry.acquire(tenant)
        try:
            work = self._recall_pool.submit(engine.recall, query, self._recall_options)
        except BaseException:
            release()
            raise
        # The engine stays leased until the thread is done with it, even when the caller has timed out.
        work.add_done_callback(lambda _: loop.call_soon_threadsafe(release))
        try:
            return await asyncio.shield(asyncio.wrap_future(work))
        except asyncio.CancelledError:
            work.cancel()  # still queued: never runs; already running: finishes, and its result is dropped
            raise

    # --- write ------------------------------------------------------------------------------------
    async def parse_turns(self, raw: bytes) -> Conversation:
        """An ingest body -> the conversation to store (BadRequest naming the field), in a worker process."""
        assert self._ingest_pool is not None
        return await self._ingest_pool.parse(raw, self.json_limits, self._turn_limits, self.config.mask_secrets)

    async def store(self, conv: Conversation) -> None:
        """Write the conversation's source file atomically and schedule its indexing."""
        assert self.registry is not None and self.scheduler is not None
        tenant = tenant_id(conv.user)
        token = self.scheduler.begin_write(tenant)
        done = False
        try:
            await asyncio.to_thread(self.data.write_conversation, tenant, conv.conversation_id, conv.lines)
            done = True
        finally:
            self.scheduler.end_write(tenant, token, conv.conversation_id if done and conv.lines else None)

    async def forget(self, user: str, conversation_id: str) -> tuple[bool, int]:
        """Remove a conversation's source file and purge its rows: (found, rows removed)."""
        assert self.registry is not None and self.scheduler is not None and self._index_pool is not None
        tenant = tenant_id(user)
        async with self.scheduler.lock(tenant):  # no index run re-adds it while we purge
            self.scheduler.discard(tenant, conversation_id)
            had_file = await asyncio.to_thread(self.data.delete_conversation, tenant, conversation_id)
            rows, had_rows = 0, False
            if await self._has_memory(tenant):
                loop = asyncio.get_running_loop()
                async with self.registry.lease(tenant) as engine:
                    report = await loop.run_in_executor(self._index_pool, engine.forget, conversation_id)
                rows, had_rows = int(report.rows_removed), bool(report.found)
        if had_file or had_rows:
            log.info("forgot conversation tenant=%s rows=%d", tenant, rows)
        return had_file or had_rows, rows

    async def _index_run(self, tenant: str, conversation_ids: set[str] | None) -> None:
        assert self.registry is not None and self._index_pool is not None and self._index_slots is not None
        plan = await asyncio.to_thread(self.data.index_plan, tenant, conversation_ids)
        if not plan.steps:
            return
        loop = asyncio.get_running_loop()
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
                                    tenant, os.path.basename(b.file), b.line, b.reason)
            await asyncio.to_thread(plan.done)
        log.info("index run done tenant=%s chunks_added=%d chunks_skipped=%d bad_lines=%d in %.2f s",
                 tenant, added, skipped, bad, time.perf_counter() - t0)

    def _write_stamp(self, tenant: str, stamp: int | None) -> None:
        self.data.write_stamp(tenant, stamp)

    async def _has_memory(self, tenant: str) -> bool:
        if self.data.shared:  # a request to the store (the answer is kept once it is yes)
            return await asyncio.to_thread(self.data.has_memory, tenant)
        return self.data.has_memory(tenant)  # a stat

    # --- start-up recovery and upkeep -------------------------------------------------------------
    def _recover(self) -> None:
        """Queue an index run for every local tenant whose sources are newer than its stamp. A shared root
        (S3) is checked tenant by tenant as replicas open them (`_reconcile`) instead: another replica may have
        acknowledged a turn and died before indexing it, long after this one started."""
        assert self.scheduler is not None
        for tenant in self.data.tenants():
            self._queue_stale(tenant, self.data.stale(tenant), self.data.has_sources(tenant))

    def _queue_stale(self, tenant: str, stale: set[str] | None, has_sources: bool) -> None:
        assert self.scheduler is not None
        if stale is None:
            if has_sources:
                log.info("recovering tenant=%s: no stamp, indexing all of its sources", tenant)
                self.scheduler.schedule_all(tenant)
        elif stale:
            log.info("recovering tenant=%s: %d conversation(s) newer than the stamp", tenant, len(stale))
            self.scheduler.schedule(tenant, stale)

    def _reconcile_unopened(self, tenant: str) -> None:
        """`_reconcile` for a tenant without a memory yet, at most once per FUNES_RECONCILE_S: nothing opens
        it (recall answers at once that there is nothing), yet another replica may have acknowledged its
        first writes and died before indexing them."""
        now = time.monotonic()
        if now - self._unopened_checked.get(tenant, -self.config.reconcile_s) >= self.config.reconcile_s:
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
        """Every FUNES_RECONCILE_S, look for unindexed writes in the tenants this replica holds open: a tenant
        opened here before another replica acknowledged a write and died is not opened again, so `_reconcile`
        at open would never see it."""
        assert self.registry is not None
        while True:
            await asyncio.sleep(self.config.reconcile_s)
            for tenant in self.registry.open_tenants():
                self._reconcile(tenant)

    async def _sweep(self) -> None:
        assert self.registry is not None
        period = max(1.0, min(60.0, self.config.tenant_idle_s / 2))
        while True:
            await asyncio.sleep(period)
            self.registry.sweep_idle()


def _open_engine(home: str, models: Any, rebuild_slots: threading.Semaphore) -> Any:
    """A tenant's engine. A memory embedded with another model than the service's (the operator changed
    FUNES_EMBEDDER, or a new release changed the default's fingerprint) is re-embedded from its stored text
    with the service's model, here, before the tenant's first call is answered: the service owns its tenants'
    memories, and refusing would leave every tenant without recall until someone rebuilt each one by hand.
    Lance commits the re-embedded rows at once, so a crash midway leaves the old memory, re-embedded again
    at the next open. At most `rebuild_slots` re-embeds run at once (FUNES_INDEX_WORKERS, as for index
    runs): after an upgrade every tenant needs one, and a plain open must not queue behind them."""
    from funes_py import Engine, ModelMismatchError

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


def cut_query(query: str, max_chars: int) -> str:
    """The query with its whitespace flattened, cut at a word boundary to at most `max_chars` characters
    (a word longer than that is cut inside). Only a bounded prefix is looked at: this runs on the event
    loop, and a query can be a megabyte long."""
    words = query.lstrip()[: max_chars * 4 + 1].split()
    flat = " ".join(words)
    if len(flat) <= max_chars:
        return flat
    head = flat[: max_chars + 1]
    cut = head.rfind(" ")
    return head[:cut] if cut > 0 else flat[:max_chars]


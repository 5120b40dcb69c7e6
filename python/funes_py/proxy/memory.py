"""The archive's search side: one warm funes_py engine per tenant, fed by debounced background index runs.

Reuses the recall service's pieces: `TenantRegistry` (warm engines, opened on worker threads, idle ones
closed) and `IndexScheduler` (debounce, one run per tenant at a time, the stamp that lets a restart index
what a crash left behind). Before indexing a conversation file the archive's pending lines are made durable
(`before_index`), so the background run is also what syncs lines that nothing hid yet.

Layout per tenant (`DATA/<tenant>/`): `src/` (the archive), `memory/` (the engine's home), `indexed.stamp`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..server.indexer import IndexScheduler
from ..server.storage import LocalData
from ..server.tenants import TenantRegistry

log = logging.getLogger("funes_py.proxy")

MAX_OPEN_TENANTS = 32
TENANT_IDLE_S = 3600.0
RECALL_THREADS = 2
INDEX_THREADS = 1  # index runs embed on the same two cores as the answers: one at a time
STOP_GRACE_S = 3.0


class Memories:
    def __init__(self, data_dir: Path, models: Any, debounce_s: float, max_wait_s: float,
                 before_index: Callable[[str, str], None]) -> None:  # fmt: skip
        from funes_py import Engine  # the compiled engine, only when a proxy really starts

        self.data = LocalData(data_dir)
        self.registry = TenantRegistry(
            self.data.memory_home, functools.partial(Engine, models=models, resident=True), MAX_OPEN_TENANTS,
            TENANT_IDLE_S,
        )
        self.scheduler = IndexScheduler(self._index_run, self._write_stamp, debounce_s, max_wait_s)
        self._before_index = before_index
        self._recall_pool = concurrent.futures.ThreadPoolExecutor(RECALL_THREADS, "funes-proxy-recall")
        self._index_pool = concurrent.futures.ThreadPoolExecutor(INDEX_THREADS, "funes-proxy-index")

    def recover(self) -> None:
        """Queue an index run for every conversation file newer than its tenant's stamp."""
        for tenant in self.data.tenants():
            stale = self.data.stale(tenant)
            if stale is None:
                if self.data.has_sources(tenant):
                    self.scheduler.schedule_all(tenant)
            elif stale:
                self.scheduler.schedule(tenant, stale)

    async def stop(self) -> None:
        # A run cut short loses nothing: the stamp is written only after a run succeeds, and the next start
        # indexes every file newer than it again. So shutdown waits a little, not for a whole run.
        await self.scheduler.stop(STOP_GRACE_S)
        await self.registry.close_all()
        for pool in (self._recall_pool, self._index_pool):
            pool.shutdown(wait=False, cancel_futures=True)

    # --- writes -----------------------------------------------------------------------------------
    def wrote(self, tenant: str, conv: str) -> None:
        """New archive lines for `conv`: index them soon (debounced)."""
        token = self.scheduler.begin_write(tenant)
        self.scheduler.end_write(tenant, token, conv)

    async def _index_run(self, tenant: str, convs: set[str] | None) -> None:
        paths = self.data.paths(tenant)
        if convs is None:
            convs = {p.name[: -len(".funes.jsonl")] for p in paths.src.glob("*.funes.jsonl")}
        loop = asyncio.get_running_loop()
        t0 = time.perf_counter()
        async with self.registry.lease(tenant) as engine:
            for conv in sorted(convs):
                path = paths.conversation(conv)
                if not path.exists():
                    continue
                await loop.run_in_executor(self._index_pool, self._before_index, tenant, conv)
                report = await loop.run_in_executor(self._index_pool, engine.index, str(path))
                for b in report.bad_lines:
                    log.warning("archive line skipped by the index tenant=%s line=%d: %s", tenant, b.line, b.reason)
        log.debug("index run tenant=%s conversations=%d in %.2f s", tenant, len(convs), time.perf_counter() - t0)

    def _write_stamp(self, tenant: str, stamp: int | None) -> None:
        self.data.write_stamp(tenant, stamp)

    async def wait_indexed(self, timeout: float) -> bool:
        return await self.scheduler.wait_idle(timeout)

    # --- reads ------------------------------------------------------------------------------------
    async def recall(self, tenant: str, query: str, **options: Any) -> list[Any]:
        """Hits from the tenant's memory; [] when it has none yet."""
        if not self.data.has_memory(tenant):
            return []
        loop = asyncio.get_running_loop()
        async with self.registry.lease(tenant) as engine:
            return await loop.run_in_executor(self._recall_pool, functools.partial(engine.recall, query, **options))

    async def forget(self, tenant: str, conv: str, drop_source: Callable[[], Any]) -> int:
        """Delete a conversation: `drop_source` (its archive file, under the tenant's index lock, so no index
        run reads it again), then its rows; returns how many rows were removed."""
        async with self.scheduler.lock(tenant):
            self.scheduler.discard(tenant, conv)
            drop_source()
            if not self.data.has_memory(tenant):
                return 0
            loop = asyncio.get_running_loop()
            async with self.registry.lease(tenant) as engine:
                report = await loop.run_in_executor(self._index_pool, engine.forget, conv)
            return int(report.rows_removed)

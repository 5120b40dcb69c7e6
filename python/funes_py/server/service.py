"""The recall service's policy over its tenants: recall (read), store and forget (write).

Placement: this file decides what an operation does for a user (which tenant, which limits, what the agent
sees on failure); `funes_py.tenancy` keeps the engines warm, the index runs, the pools and the data root
(shared with the proxy), `funes_py.render` renders (`passages` holds the fixed answers), `turns` validates,
and the HTTP and MCP surfaces (`routes`, `mcp_tool`) only translate to and from these calls.

Processes: ingest bodies (JSON, limits, secret masking, the pasted-recall rule) become lines in
`_INGEST_PROCESSES` worker processes (`ingest_pool`), so that Python work never holds this process's GIL.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from typing import Any

from ..jsonbody import JsonLimits
from ..metrics import ERRORS, RECALL_SECONDS, RECALLS
from ..render import format_passages
from ..tenancy import TenancyLimits, Tenants, live_tenancy, open_data, tenant_id
from .config import ServiceConfig
from .ingest_pool import IngestPool
from .passages import EMPTY_QUERY, NO_MEMORY, NOTHING_FOUND, UNAVAILABLE
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
        self.data = open_data(config.data_dir)
        self.tenants: Tenants | None = None
        self._ingest_pool: IngestPool | None = None
        self.json_limits = JsonLimits(config.max_json_depth, config.max_json_number_chars)
        self._turn_limits = TurnLimits(config.max_turns, config.max_turn_chars)
        self._recall_options = config.recall_options()
        self._invalid_input: type[Exception] = ValueError

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
        limits = TenancyLimits(
            recall_threads=cfg.max_concurrent_recalls, index_workers=cfg.index_workers, max_open=cfg.max_open_tenants,
            idle_s=cfg.tenant_idle_s, debounce_s=cfg.index_debounce_s, max_wait_s=cfg.index_max_wait_s,
            reconcile_s=cfg.reconcile_s,
        )
        self.tenants = Tenants(self.data, models, limits, name="funes")
        self._ingest_pool = IngestPool(_INGEST_PROCESSES)
        await self._ingest_pool.start()  # before the port opens, like the models
        self.tenants.start()
        self.ready = True

    async def stop(self) -> None:
        self.ready = False
        if self.tenants is not None:
            await self.tenants.stop(_SHUTDOWN_GRACE_S)
        if self._ingest_pool is not None:
            await self._ingest_pool.close()

    def health(self) -> dict[str, Any]:
        if not self.ready or self.tenants is None:
            return {"status": "starting"}
        scheduler = self.tenants.scheduler
        return {
            "status": "ready",
            "open_tenants": self.tenants.registry.open_count,
            "index_runs": scheduler.runs_started,
            "index_runs_failed": scheduler.runs_failed,
            "indexing": scheduler.busy,
        }

    def live_metrics(self) -> dict[str, tuple[str, float]]:
        """The present, for each scrape of /metrics (funes_py.metrics)."""
        return live_tenancy(self.tenants)

    # --- read -------------------------------------------------------------------------------------
    async def recall_text(self, user: str, query: str) -> str:
        """The tool's answer for `user`. Never raises: a failure is logged and the agent is told to go on."""
        t0 = time.perf_counter()
        answer, outcome = await self._recall(user, query)
        RECALL_SECONDS.observe(time.perf_counter() - t0)
        RECALLS.labels(outcome).inc()
        return answer

    async def _recall(self, user: str, query: str) -> tuple[str, str]:
        """(the answer, its outcome for the metrics)."""
        tenant = tenant_id(user)
        query = cut_query(query, self.config.recall_max_query_chars)
        if not query:
            return EMPTY_QUERY, "empty_query"
        try:
            assert self.tenants is not None
            if not await self.tenants.has_memory(tenant):
                # writes of a replica that died before its first commit for this tenant (shared roots only)
                self.tenants.reconcile_unopened(tenant)
                return NO_MEMORY, "no_memory"
            # A cold tenant's first recall reads its memory into RAM first (seconds for a large one).
            cold = not self.tenants.registry.is_warm(tenant)
            limit = max(self.config.recall_timeout_s, self.config.recall_cold_timeout_s) if cold else self.config.recall_timeout_s
            async with asyncio.timeout(limit):
                hits = await self.tenants.recall(tenant, query, self._recall_options)
            return format_passages(hits, self.config.recall_max_chars), "answered" if hits else "nothing_found"
        except TimeoutError:
            log.warning("recall timed out after %.1f s tenant=%s", limit, tenant)
            ERRORS.labels("recall_timeout").inc()
            return UNAVAILABLE, "timeout"
        except Exception as e:
            if isinstance(e, self._invalid_input):  # the query itself (say, only punctuation): not an outage
                log.info("recall refused the query tenant=%s: %s", tenant, e)
                return NOTHING_FOUND, "refused_query"
            log.exception("recall failed tenant=%s", tenant)
            ERRORS.labels("recall_failed").inc()
        return UNAVAILABLE, "failed"

    # --- write ------------------------------------------------------------------------------------
    async def parse_turns(self, raw: bytes) -> Conversation:
        """An ingest body -> the conversation to store (BadRequest naming the field), in a worker process."""
        assert self._ingest_pool is not None
        return await self._ingest_pool.parse(raw, self.json_limits, self._turn_limits, self.config.mask_secrets)

    async def store(self, conv: Conversation) -> None:
        """Write the conversation's source file atomically and schedule its indexing."""
        assert self.tenants is not None
        await self.tenants.store(tenant_id(conv.user), conv.conversation_id, conv.lines)

    async def forget(self, user: str, conversation_id: str) -> tuple[bool, int]:
        """Remove a conversation's source file and purge its rows: (found, rows removed)."""
        assert self.tenants is not None
        return await self.tenants.forget(tenant_id(user), conversation_id)

    # --- a user's data as a whole -----------------------------------------------------------------
    async def export(self, user: str, directory: str) -> tuple[str, int] | None:
        """The user's export file (funes_py.portable), written under `directory`: its stored conversations as
        they were stored, and their memory's model stamp. (path, turns), or None when nothing is stored."""
        assert self.tenants is not None
        data, tenant = self.tenants.data, tenant_id(user)
        if not await asyncio.to_thread(data.has_sources, tenant):
            return None

        def write() -> tuple[str, int]:
            from funes_py import _funes

            from ..portable import Header, write_export

            stored = _funes.stored_model(data.memory_home(tenant)) if data.has_memory(tenant) else None
            header = Header(stored[0] if stored else None, stored[1] if stored else None, "service")
            lines = (line for _, conv in data.conversations(tenant) for line in conv if line.strip())
            path = os.path.join(directory, "funes-export.gz")
            return path, write_export(path, header, lines)

        return await asyncio.to_thread(write)

    async def erase(self, user: str) -> bool:
        """Everything stored for the user gone (sources, memory, state); False when there was nothing."""
        assert self.tenants is not None
        return await self.tenants.erase(tenant_id(user))


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


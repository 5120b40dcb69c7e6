"""The proxy's long-lived state: config, the upstream client, what the engine is, tenants, memories, the slot.

Placement: this file owns lifetimes (start, stop, lazy engine detection, tenants opened on first use);
`turn` decides what one chat request does; `app` only translates HTTP to and from these calls.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from ..tenancy import LocalData, TenancyLimits, Tenants, TenantTokenVerifier, tenant_id
from .config import ProxyConfig
from .engines import EngineInfo, Llama, detect
from .slots import SlotKeeper
from .tenant import LOCAL_USER, Tenant
from .upstream import Upstream

log = logging.getLogger("funes_py.proxy")

# The archive's memories: the tenancy the recall service uses, with the proxy's own sizes. Index runs embed on
# the same two cores as the answers, so one at a time.
MAX_OPEN_TENANTS = 32
TENANT_IDLE_S = 3600.0
RECALL_THREADS = 2
INDEX_THREADS = 1
# A run cut short loses nothing (the stamp is written only after a run succeeds, and the next start indexes
# every file newer than it again), so shutdown waits a little, not for a whole run.
STOP_GRACE_S = 3.0


class ProxyService:
    def __init__(self, cfg: ProxyConfig, models: Any = None) -> None:
        self.cfg = cfg
        self._models = models
        self.upstream = Upstream(cfg.upstream, cfg.upstream_api_key, cfg.connect_timeout_s, cfg.timeout_s)
        self.verifier: TenantTokenVerifier | None = (
            TenantTokenVerifier.from_files(cfg.tokens_file, None) if cfg.tokens_file else None
        )
        self.engine: EngineInfo | None = None
        self.llama: Llama | None = None
        self.slots: SlotKeeper | None = None
        self.memories: Tenants | None = None
        self.tenants: dict[str, Tenant] = {}
        self._detecting = asyncio.Lock()
        self._tenant_lock = asyncio.Lock()
        self._tasks: list[asyncio.Task[None]] = []
        self.ready = False
        self.counters = {"requests": 0, "refused": 0, "mask_batches": 0, "switches": 0, "recall_calls": 0}

    # --- lifecycle --------------------------------------------------------------------------------
    async def start(self) -> None:
        """Load the models once (every tenant's engine shares them), then recover unindexed archive lines."""
        from funes_py import Models

        self.cfg.data_dir.mkdir(parents=True, exist_ok=True)
        if self._models is None:
            self._models = await asyncio.to_thread(Models.load)
        limits = TenancyLimits(
            recall_threads=RECALL_THREADS, index_workers=INDEX_THREADS, max_open=MAX_OPEN_TENANTS, idle_s=TENANT_IDLE_S,
            debounce_s=self.cfg.index_debounce_s, max_wait_s=self.cfg.index_max_wait_s,
        )
        # Layout per tenant (`DATA/<tenant>/`): `src/` (the archive), `memory/` (the engine's home),
        # `indexed.stamp`: the service's local layout, so the same storage serves both.
        self.memories = Tenants(LocalData(self.cfg.data_dir), self._models, limits, name="funes-proxy",
                                before_index=self._sync_archive)  # fmt: skip
        self.memories.start()
        try:
            await self.engine_info()
        except Exception as e:  # the engine may start after the proxy: detected again on the first request
            log.warning("engine not detected yet (%s); trying again on the first request", e)
        self.ready = True

    async def stop(self) -> None:
        self.ready = False
        for task in self._tasks:
            task.cancel()
        if self.memories is not None:
            await self.memories.stop(STOP_GRACE_S)
        await self.upstream.close()

    async def engine_info(self) -> EngineInfo:
        """What the engine is (detected once; again after a failure)."""
        if self.engine is not None:
            return self.engine
        async with self._detecting:
            if self.engine is None:
                info = await detect(self.upstream, self.cfg.engine, self.cfg.window, self.cfg.slot_id)
                if info.llama:
                    self.llama = Llama(self.upstream, info)
                    self.slots = SlotKeeper(self.llama, info.slot_saves, self.cfg.autosave_idle_s,
                                            self.cfg.autosave_min_tokens, self.cfg.slot_dir)  # fmt: skip
                    self._tasks.append(asyncio.get_running_loop().create_task(self.slots.autosave_loop()))
                self.engine = info
        return self.engine

    # --- tenants ----------------------------------------------------------------------------------
    def user_for(self, authorization: str | None) -> str | None:
        """The user a request speaks for: from its bearer token when a tokens file is set, else "local"."""
        if self.verifier is None:
            return LOCAL_USER
        if not authorization or not authorization.lower().startswith("bearer "):
            return None
        found = self.verifier.user_for(authorization[7:].strip())
        return found[0] if found else None

    async def tenant(self, user: str) -> Tenant:
        tid = tenant_id(user)
        t = self.tenants.get(tid)
        if t is None:
            async with self._tenant_lock:
                t = self.tenants.get(tid)
                if t is None:
                    mask = None
                    if self.cfg.mask_secrets:
                        from ..redact import mask_secrets

                        mask = mask_secrets
                    t = await asyncio.to_thread(Tenant, tid, self.cfg.data_dir / tid, mask)
                    self.tenants[tid] = t
        return t

    def _sync_archive(self, tid: str, convs: set[str] | None) -> None:
        """Before an index run reads these conversation files (None: all): make their pending lines durable, so
        the background run is also what syncs lines that nothing hid yet."""
        t = self.tenants.get(tid)
        if t is not None:
            for conv in t.archive.dirty() if convs is None else sorted(convs):
                t.archive.sync(conv)

    def root(self, tid: str) -> Path:
        return self.cfg.data_dir / tid

"""Tenant -> warm engine: open on first use, keep open, close idle or least recently used ones past a cap.

Engines are opened and closed on worker threads, so a tenant that takes a second to open (a memory read from
object storage, say) never stalls another tenant's recall on the event loop. An engine in use (leased) is
never closed; the cap is then exceeded for as long as the lease lasts. Where a tenant's memory lives is the
caller's business (`home_of`; see storage.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from ..metrics import EVICTIONS

log = logging.getLogger("funes_py.tenancy")


@dataclass
class _Entry:
    engine: Any
    refs: int = 0
    last_used: float = 0.0
    fresh: bool = True  # opened, not yet leased by the caller that asked for it: not evicted for the cap
    warm: bool = False  # has answered a recall: its memory is in RAM (the resident copy)


class TenantRegistry:
    """Warm engines by tenant id. `open_engine(home_of(tenant))` builds one (Engine(home, models=models) in
    the service); `on_open(tenant)`, when given, runs on the event loop after each open."""

    def __init__(self, home_of: Callable[[str], str], open_engine: Callable[[str], Any], max_open: int,
                 idle_s: float, on_open: Callable[[str], None] | None = None):
        self._home_of = home_of
        self._open_engine = open_engine
        self._on_open = on_open
        self._max_open = max_open
        self._idle_s = idle_s
        self._open: OrderedDict[str, _Entry] = OrderedDict()
        self._opening: dict[str, asyncio.Task[_Entry]] = {}
        self._closing: dict[str, asyncio.Task[None]] = {}

    @property
    def open_count(self) -> int:
        return len(self._open)

    def open_tenants(self) -> list[str]:
        return list(self._open)

    def is_warm(self, tenant: str) -> bool:
        """Whether the tenant's engine is open and has answered a recall (see `mark_warm`)."""
        entry = self._open.get(tenant)
        return entry is not None and entry.warm

    def mark_warm(self, tenant: str, engine: Any) -> None:
        """The tenant's `engine` has answered a recall: later ones read its memory from RAM (nothing if the
        tenant has since been closed or reopened with another engine)."""
        entry = self._open.get(tenant)
        if entry is not None and entry.engine is engine:
            entry.warm = True

    async def acquire(self, tenant: str) -> tuple[Any, Callable[[], None]]:
        """The tenant's engine and a release function; the engine stays open until release is called.

        Safe to cancel: an engine being opened finishes opening in the background and is kept, so a
        timed-out first call leaves a warm tenant for the next one, not a leaked engine.
        """
        entry = self._open.get(tenant)
        if entry is None:
            task = self._opening.get(tenant)
            if task is None:
                task = asyncio.get_running_loop().create_task(self._open_tenant(tenant))
                self._opening[tenant] = task
            entry = await asyncio.shield(task)
        else:
            self._open.move_to_end(tenant)
        entry.refs += 1
        entry.fresh = False
        released = False

        def release() -> None:
            nonlocal released
            if released:
                return
            released = True
            entry.refs -= 1
            entry.last_used = time.monotonic()
            self._evict_over_cap()

        return entry.engine, release

    @contextlib.asynccontextmanager
    async def lease(self, tenant: str) -> AsyncIterator[Any]:
        """The tenant's engine, opened if needed and kept open at least until the block ends."""
        engine, release = await self.acquire(tenant)
        try:
            yield engine
        finally:
            release()

    async def _open_tenant(self, tenant: str) -> _Entry:
        try:
            closing = self._closing.get(tenant)
            if closing is not None:  # never two engines on one memory: let the old one finish closing
                await asyncio.wait([closing])
            engine = await asyncio.to_thread(self._open_engine, self._home_of(tenant))
            log.info("opened tenant=%s", tenant)
            entry = _Entry(engine, last_used=time.monotonic())
            self._open[tenant] = entry
            self._evict_over_cap()
            if self._on_open is not None:
                self._on_open(tenant)
            return entry
        finally:
            self._opening.pop(tenant, None)

    def _evict_over_cap(self) -> None:
        excess = len(self._open) - self._max_open
        if excess <= 0:
            return
        for tenant in [t for t, e in self._open.items() if e.refs == 0 and not e.fresh][:excess]:
            self._close(tenant, "over cap")

    def sweep_idle(self) -> None:
        """Close engines unused for longer than the idle limit."""
        now = time.monotonic()
        for tenant in [t for t, e in self._open.items() if e.refs == 0 and now - e.last_used > self._idle_s]:
            self._close(tenant, "idle")

    def _close(self, tenant: str, why: str) -> None:
        entry = self._open.pop(tenant)
        if why in ("idle", "over cap"):
            EVICTIONS.labels(why.replace(" ", "_")).inc()

        async def close() -> None:
            try:
                await asyncio.to_thread(entry.engine.close)
                log.info("closed tenant=%s (%s)", tenant, why)
            except Exception:
                log.exception("closing tenant=%s failed", tenant)
            finally:
                if self._closing.get(tenant) is asyncio.current_task():
                    del self._closing[tenant]

        self._closing[tenant] = asyncio.get_running_loop().create_task(close())

    async def drop(self, tenant: str, timeout_s: float = 30.0) -> None:
        """Close the tenant's engine and wait until it is closed (before its memory is erased): an open in
        progress finishes first, and leases (a recall running) are waited for. TimeoutError when the engine is
        still in use after `timeout_s`: nothing was closed then."""
        deadline = time.monotonic() + timeout_s
        while True:
            opening = self._opening.get(tenant)
            if opening is not None:
                await asyncio.wait([opening])
                continue
            entry = self._open.get(tenant)
            if entry is None or not entry.refs:
                break
            if time.monotonic() >= deadline:
                raise TimeoutError(f"tenant={tenant} still in use after {timeout_s:.0f} s")
            await asyncio.sleep(0.02)
        if entry is not None:
            self._close(tenant, "erase")
        closing = self._closing.get(tenant)
        if closing is not None:
            await asyncio.wait([closing])

    async def close_all(self) -> None:
        for tenant in list(self._open):
            self._close(tenant, "shutdown")
        if self._closing:
            await asyncio.gather(*self._closing.values(), return_exceptions=True)

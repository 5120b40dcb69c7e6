"""llama-server's pinned slot: what it holds, when to save it to disk, when to restore a saved state.

The proxy pins every request to one slot, so the slot's KV cache is the last prompt the proxy sent. It
remembers which conversation that was and which physical messages it covered (a digest of their canonical
forms). Saves go to `funes-<tenant>-<conversation>-<kind>.bin` in the server's --slot-save-path:
`anchor` after a request that hid a new mask batch, `seg<N>` before a segment switch, `auto` once the
conversation has been idle. Each save is stored with the conversation's decisions (count + digest), so after
a restart of the proxy or of llama-server a new request whose physical messages start with a saved prefix is
preceded by a restore: the server then reads only the new tokens. Requests on the pinned slot are
serialised by `lock` (the server would serialise them anyway), so this bookkeeping stays true.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .decisions import SlotSave
from .engines import Llama
from .identity import canonical
from .tenant import Conversation

log = logging.getLogger("funes_py.proxy")

# Within this many seconds of our last request the slot is taken to still hold what we sent (no GET /slots).
CHECK_AFTER_S = 1.0
IDLE_POLL_S = 0.5


def digest(messages: Sequence[Mapping[str, Any]]) -> str:
    h = hashlib.sha256()
    for m in messages:
        h.update(canonical(m))
        h.update(b"\x1d")
    return h.hexdigest()[:24]


@dataclass
class Holder:
    tenant: str
    conversation: Conversation
    count: int
    tokens: int
    at: float
    saved: bool = False
    prompt: Sequence[Mapping[str, Any]] = ()  # what the slot was sent; digested only when needed
    _digest: str | None = None

    @property
    def digest(self) -> str:
        if self._digest is None:
            self._digest = digest(self.prompt[: self.count])
        return self._digest


class SlotKeeper:
    def __init__(self, llama: Llama, enabled: bool, idle_s: float, min_tokens: int, slot_dir: Path | None):
        self.llama = llama
        self.enabled = enabled  # the server has a --slot-save-path
        self.idle_s = idle_s
        self.min_tokens = min_tokens
        self.slot_dir = slot_dir
        self.lock = asyncio.Lock()
        self.holder: Holder | None = None
        self.last_request = 0.0
        self.saves = self.restores = 0
        self._pending: set[asyncio.Task[None]] = set()

    @staticmethod
    def filename(tenant: str, conv: str, kind: str) -> str:
        return f"funes-{tenant[:8]}-{conv}-{kind}.bin"

    # --- around each request (called with `lock` held) ---------------------------------------------
    async def before(self, tenant: str, conv: Conversation, phys: Sequence[Mapping[str, Any]]) -> None:
        """Restore a saved state of this conversation if the slot lost it (server restart, another one)."""
        if not self.enabled:
            return
        h = self.holder
        ours = h is not None and h.tenant == tenant and h.conversation is conv and h.count <= len(phys)
        if ours and time.monotonic() - self.last_request < CHECK_AFTER_S:
            return
        if ours:
            assert h is not None
            slot = await self.llama.slot()
            cached = int(slot.get("n_prompt_tokens") or 0) if slot else 0
            if cached > 0 and cached >= h.tokens // 2 and h.digest == digest(phys[: h.count]):
                return
        best: SlotSave | None = None
        for s in conv.state.slots.values():
            if s.count <= len(phys) and (best is None or s.count > best.count) and s.tokens >= self.min_tokens:
                if s.digest == digest(phys[: s.count]):
                    best = s
        if best is None:
            return
        t0 = time.perf_counter()
        r = await self.llama.action("restore", best.file)
        if r is not None:
            self.restores += 1
            n = int(r.get("n_restored") or best.tokens)
            self.holder = Holder(tenant, conv, best.count, n, time.monotonic(), saved=True, _digest=best.digest)
            log.info("restored slot from %s: %d tokens in %.2f s", best.file, n, time.perf_counter() - t0)

    def after(self, tenant: str, conv: Conversation, prompt: Sequence[Mapping[str, Any]], tokens: int) -> None:
        """The slot now holds `prompt` (plus its answer): `tokens` in all."""
        self.last_request = time.monotonic()
        if self.enabled:  # the digest is computed only if this state is saved or checked (not per request)
            self.holder = Holder(tenant, conv, len(prompt), tokens, self.last_request, prompt=list(prompt))

    async def save(self, kind: str) -> bool:
        """Save what the slot holds (called with `lock` held); the save is stored with the conversation."""
        h = self.holder
        if not self.enabled or h is None or h.tokens < self.min_tokens:
            return False
        name = self.filename(h.tenant, h.conversation.id, kind)
        t0 = time.perf_counter()
        r = await self.llama.action("save", name)
        if r is None:
            return False
        self.saves += 1
        h.saved = True
        h.conversation.state.record(
            {"k": "slot", "file": name, "count": h.count, "digest": h.digest, "tokens": h.tokens}, durable=False
        )
        log.info("saved slot to %s: %d tokens in %.2f s", name, h.tokens, time.perf_counter() - t0)
        return True

    # --- background ----------------------------------------------------------------------------
    def save_later(self, kind: str) -> None:
        """Save once the request in progress has released the slot (it holds `lock` now)."""

        async def run() -> None:
            async with self.lock:
                try:
                    await self.save(kind)
                except Exception:
                    log.exception("slot save (%s) failed", kind)

        task = asyncio.get_running_loop().create_task(run())
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def autosave_loop(self) -> None:
        """Save the slot once the conversation it holds has been idle `idle_s` (never while a request runs)."""
        while True:
            await asyncio.sleep(IDLE_POLL_S)
            h = self.holder
            if h is None or h.saved or time.monotonic() - h.at < self.idle_s or self.lock.locked():
                continue
            async with self.lock:
                if self.holder is h and not h.saved:
                    try:
                        await self.save("auto")
                    except Exception:
                        log.exception("autosave failed")
                        h.saved = True  # do not retry in a loop; the next request makes a new holder

    async def forget(self, tenant: str, conv: Conversation | None, conv_id: str) -> int:
        """Drop a conversation's slot state: erase the slot if it holds it, delete its files; returns files deleted."""
        async with self.lock:
            h = self.holder
            if h is not None and h.tenant == tenant and h.conversation.id == conv_id:
                await self.llama.action("erase")
                self.holder = None
        removed = 0
        if self.slot_dir is not None:
            for path in self.slot_dir.glob(self.filename(tenant, conv_id, "*")):
                path.unlink(missing_ok=True)
                removed += 1
        elif conv is not None and conv.state.slots:
            log.warning("FUNES_PROXY_SLOT_DIR is not set: slot files of %s stay in llama-server's save path", conv_id)
        return removed

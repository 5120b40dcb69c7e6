"""What the engine behind the proxy is, and llama-server's extras: window, exact token counts, slot files.

* Detection: llama-server answers `GET /props` with `default_generation_settings.n_ctx` (the per-slot
  window). Anything else is a generic OpenAI-compatible engine, whose window must be given (`--window`).
* Exact counts: llama-server's `POST /v1/chat/completions/input_tokens` renders and tokenizes a body as a
  completion would (about 20 ms for 2,000 tokens on a CPU): used when an estimate comes close to the limit.
* Slots: requests are pinned to one slot (`id_slot`) with `cache_prompt`; its KV state can be saved to
  a file in the server's `--slot-save-path` and restored later (`POST /slots/{id}?action=save|restore`).
  Whether saving is on is probed once with an invalid action: 400 means on, 501 means no save path.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from .upstream import Upstream

log = logging.getLogger("funes_py.proxy")

LLAMA = "llama.cpp"
OPENAI = "openai"


class EngineConfigError(Exception):
    """The engine cannot be used as configured (no window known, not the engine --engine names)."""


@dataclass(frozen=True)
class EngineInfo:
    kind: str
    window: int
    slot_saves: bool = False
    slot_id: int = 0

    @property
    def llama(self) -> bool:
        return self.kind == LLAMA


async def detect(upstream: Upstream, engine: str, window: int | None, slot_id: int) -> EngineInfo:
    """Ask the engine what it is. `engine`: auto, llama.cpp or openai; `window`: --window or None."""
    if engine in ("auto", LLAMA):
        props = await upstream.get_json("/props")
        settings = props.get("default_generation_settings") if isinstance(props, dict) else None
        n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else None
        if isinstance(n_ctx, int) and n_ctx > 0:
            if window is not None and window > n_ctx:
                log.warning("--window %d is larger than the engine's n_ctx %d per slot: using %d", window, n_ctx, n_ctx)
            saves = await _probe_saves(upstream, slot_id)
            info = EngineInfo(LLAMA, min(window or n_ctx, n_ctx), saves, slot_id)
            log.info("engine: llama.cpp at %s, window %d, slot %d, slot saves %s", upstream.base, info.window,
                     slot_id, "on" if saves else "off (start llama-server with --slot-save-path)")
            return info
        if engine == LLAMA:
            raise EngineConfigError(f"{upstream.base}/props does not look like llama-server (no n_ctx)")
    if window is None:
        raise EngineConfigError(
            f"--window is required: the engine at {upstream.base} does not report its context size"
        )
    log.info("engine: generic OpenAI-compatible at %s, window %d", upstream.base, window)
    return EngineInfo(OPENAI, window)


async def _probe_saves(upstream: Upstream, slot_id: int) -> bool:
    resp = await upstream.send("POST", f"/slots/{slot_id}", params={"action": "funes-probe"}, content=b"{}")
    return resp.status_code == 400


class Llama:
    """llama-server's extras for one pinned slot."""

    def __init__(self, upstream: Upstream, info: EngineInfo) -> None:
        self.upstream = upstream
        self.info = info

    async def count(self, body: bytes) -> int | None:
        """The exact prompt tokens of a chat body, or None when the engine cannot say."""
        resp = await self.upstream.post_json("/v1/chat/completions/input_tokens", body)
        if resp.status_code != 200:
            return None
        n = resp.json().get("input_tokens")
        return n if isinstance(n, int) else None

    async def slot(self) -> dict[str, Any] | None:
        """The pinned slot's state from GET /slots (n_prompt_tokens: what its cache holds)."""
        slots = await self.upstream.get_json("/slots")
        if isinstance(slots, list):
            for s in slots:
                if isinstance(s, dict) and s.get("id") == self.info.slot_id:
                    return s
        return None

    async def action(self, action: str, filename: str | None = None) -> dict[str, Any] | None:
        """save / restore / erase on the pinned slot; the engine's answer, or None on failure."""
        body = b"{}" if filename is None else json.dumps({"filename": filename}).encode()
        resp = await self.upstream.send("POST", f"/slots/{self.info.slot_id}", params={"action": action}, content=body)
        if resp.status_code != 200:
            log.warning("slot %s %s failed: %d %s", action, filename or "", resp.status_code, resp.text[:200])
            return None
        out: dict[str, Any] = resp.json()
        return out

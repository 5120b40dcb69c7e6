"""Planning one request: the engine's view of the history, plus the new decisions it needs.

In order: replay the stored decisions; past the trigger (or when the request would not fit), hide a batch of
old tool outputs; if it still does not fit, switch to a new segment; then auto-recall on a new user message;
then the window guard (exactly checked on llama.cpp when close). Every new decision is made durable (the
archive lines it hides first, then the decision) before anything is sent with it.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from .archive import Record
from .engines import EngineInfo
from .errors import ChatRequest, window_exceeded
from .identity import Identified, first_user, message_id
from .messages import calls_by_id, text_of
from .recall_tool import describe
from .receipts import candidates, choose_batch, receipt
from .replay import Physical, build
from .segments import NOTES_FAILED, NOTES_PROMPT, archive_index, choose_cut, cut_points, head, leading_system, notes_source
from .service import ProxyService
from .tenant import Conversation, Tenant
from .upstream import UpstreamError
from .window import MARGIN, Sizer, Window, raw_tokens, raw_tools

log = logging.getLogger("funes_py.proxy")

HEAD_RESERVE = 400  # tokens of a segment message besides the notes and the first request (text, index)
AUTO_HITS = 3
AUTO_INJECT_CHARS = 1500
REPLANS = 2


@dataclass
class Plan:
    phys: Physical
    tools: list[Any] | None
    prompt: int  # estimated prompt tokens (scaled)
    raw: float  # the same, unscaled (for calibration)
    max_tokens: int
    events: list[str] = field(default_factory=list)
    sizer: Sizer = field(default_factory=Sizer)


def dumps(obj: Any) -> bytes:
    """The one serialisation of bodies sent upstream: compact and deterministic (prefix-cache stable).
    orjson (a 200 KB body in about 0.3 ms instead of 4); text orjson refuses (a lone surrogate a client sent
    escaped) goes through the standard library, which is just as deterministic for it."""
    try:
        return orjson.dumps(obj)
    except TypeError:
        return json.dumps(obj, separators=(",", ":")).encode("ascii")


def upstream_body(req: ChatRequest, messages: Sequence[Mapping[str, Any]], tools: list[Any] | None,
                  max_tokens: int | None, info: EngineInfo, slot_id: int, stream: bool) -> dict[str, Any]:  # fmt: skip
    """The client's body with the engine's messages, tools and limits in place (other fields kept)."""
    body = dict(req.body)
    body["messages"] = messages
    if tools:
        body["tools"] = tools
    else:
        body.pop("tools", None)
        body.pop("tool_choice", None)
    if max_tokens is not None:
        body["max_completion_tokens" if "max_completion_tokens" in body else "max_tokens"] = max_tokens
    body["stream"] = stream
    if stream:
        body["stream_options"] = {**(body.get("stream_options") or {}), "include_usage": True}
    else:
        body.pop("stream_options", None)
    if info.llama:
        body["id_slot"] = slot_id
        body["cache_prompt"] = True
    return body


class Planner:
    def __init__(self, svc: ProxyService, tenant: Tenant, conv: Conversation, req: ChatRequest,
                 ident: Identified, info: EngineInfo, tool: str, tools: list[Any] | None) -> None:  # fmt: skip
        self.svc, self.cfg, self.tenant, self.conv, self.req = svc, svc.cfg, tenant, conv, req
        self.ident, self.info, self.tool, self.tools = ident, info, tool, tools
        response = self.cfg.response_tokens or info.window // 8
        self.window = Window(info.window, response)
        self.need = min(req.max_tokens, response) if req.max_tokens else response
        self.est = conv.estimator
        self.events: list[str] = []
        self.sizer = Sizer()
        self.tools_raw = raw_tools(tools)

    # --- sizes ------------------------------------------------------------------------------------
    def raw(self, messages: Sequence[Mapping[str, Any]]) -> float:
        return self.sizer.messages(messages) + self.tools_raw

    def guarded(self, messages: Sequence[Mapping[str, Any]]) -> int:
        return self.est.guarded(self.est.tokens(self.raw(messages)))

    def fits(self, messages: Sequence[Mapping[str, Any]]) -> bool:
        return self.guarded(messages) + self.need <= self.window.size

    # --- the plan ---------------------------------------------------------------------------------
    async def plan(self) -> Plan:
        for _ in range(REPLANS + 1):
            phys = build(self.req.messages, self.ident.ids, self.conv.state)
            if await self._mask(phys, must=not self.fits(phys.messages)):
                phys = build(self.req.messages, self.ident.ids, self.conv.state)
            if not self.fits(phys.messages):
                await self._switch(phys)
                phys = build(self.req.messages, self.ident.ids, self.conv.state)
                if not self.fits(phys.messages) and await self._mask(phys, must=True):
                    phys = build(self.req.messages, self.ident.ids, self.conv.state)
            if not self.fits(phys.messages):
                raise window_exceeded(self.guarded(phys.messages), self.need, self.window.size,
                                      "the newest messages alone are too large")  # fmt: skip
            if await self._auto_recall(phys):
                phys = build(self.req.messages, self.ident.ids, self.conv.state)
            raw = self.raw(phys.messages)
            max_tokens = self.window.max_tokens(self.est.guarded(self.est.tokens(raw)), self.req.max_tokens)
            if max_tokens is None:  # auto-recall's line did not fit after all: it is small, so replan
                continue
            exact = await self._exact(phys, raw, max_tokens)
            if exact is not None:
                if exact + MARGIN + self.need > self.window.size:
                    continue  # the estimate was low: the calibrated scale now says so, plan again
                max_tokens = min(max_tokens, self.window.size - exact - MARGIN)
            return Plan(phys, self.tools, self.est.tokens(raw), raw, max_tokens, self.events, self.sizer)
        raise window_exceeded(self.guarded(phys.messages), self.need, self.window.size, "the engine's exact count")

    async def _exact(self, phys: Physical, raw: float, max_tokens: int) -> int | None:
        """On llama.cpp, near the limit: the engine's own count (and a calibration from it)."""
        llama = self.svc.llama
        if llama is None or not self.window.close_to_limit(self.est.guarded(self.est.tokens(raw)), max_tokens):
            return None
        body = upstream_body(self.req, phys.messages, self.tools, None, self.info, self.info.slot_id, False)
        n = await llama.count(dumps(body))
        if n is not None:
            self.calibrate(raw, n)
        return n

    def calibrate(self, raw: float, actual: int) -> None:
        scale = self.est.calibrate(raw, actual)
        if scale is not None:
            self.conv.state.record({"k": "scale", "v": scale}, durable=False)

    async def _durable(self, rec: dict[str, Any]) -> None:
        """Archive lines first, then the decision: nothing is hidden before its text is on disk."""
        await asyncio.to_thread(self.tenant.archive.sync, self.conv.id)
        await asyncio.to_thread(self.conv.state.record, rec)

    # --- masking ----------------------------------------------------------------------------------
    async def _mask(self, phys: Physical, must: bool) -> bool:
        W = self.window.size
        msgs, ids = self.req.messages, self.ident.ids
        total = self.est.tokens(self.raw(phys.messages))
        if not must and total <= self.cfg.mask_trigger * W:
            return False
        sizes = [self.est.tokens(self.sizer.message(m)) if m.get("role") == "tool" else 0 for m in msgs]
        pool = candidates(msgs, ids, sizes, self.conv.state.masks, phys.start,
                          self.cfg.min_mask_tokens, self.cfg.min_age_turns)  # fmt: skip
        to_free = total - int(self.cfg.mask_target * W)
        if must:
            to_free = max(to_free, self.guarded(phys.messages) + self.need - W)
        batch = choose_batch(pool, to_free, 0 if must else int(self.cfg.min_batch * W))
        if not batch:
            return False
        calls = calls_by_id(msgs)
        receipts = {
            c.mid: receipt(c.mid, text_of(msgs[c.position].get("content")),
                           calls.get(str(msgs[c.position].get("tool_call_id"))), c.tokens, self.tool)
            for c in batch
        }  # fmt: skip
        await self._durable({"k": "mask", "ids": receipts})
        self.events.append("mask")
        self.svc.counters["mask_batches"] += 1
        log.info("conversation %s: hid %d outputs (%d tokens)", self.conv.id, len(batch), sum(c.tokens for c in batch))
        return True

    # --- segments ---------------------------------------------------------------------------------
    async def _switch(self, phys: Physical) -> None:
        msgs, ids, W = self.req.messages, self.ident.ids, self.window.size
        number = (self.conv.state.segments[-1].number + 1) if self.conv.state.segments else 1
        fu = first_user(msgs) or 0
        points = cut_points(msgs, max(phys.start, fu))
        if not points:
            raise window_exceeded(self.guarded(phys.messages), self.need, W, "no place to start a new segment")
        notes_tokens = self.cfg.notes_tokens or max(256, W // 8)
        sys_raw = self.raw(msgs[: leading_system(msgs)]) + raw_tokens(msgs[fu])
        head_est = self.est.tokens(sys_raw) + notes_tokens + HEAD_RESERVE

        def tail(p: int) -> int:
            return self.est.tokens(self.sizer.messages(phys.messages[phys.index_of[p]:]))

        def fits(p: int) -> bool:
            return self.est.guarded(head_est + tail(p)) + self.need <= W

        cut = choose_cut(points, tail, int(self.cfg.tail_share * W), fits)
        if cut is None:
            raise window_exceeded(self.guarded(phys.messages), self.need, W, "the newest messages alone are too large")
        notes = await self._notes(phys, notes_tokens, number)
        sizes = {ids[i]: self.est.tokens(raw_tokens(msgs[i])) for i in range(cut) if msgs[i].get("role") == "tool"}
        entries = [(ids[i], e) for i in range(cut) if (e := self.tenant.archive.entries.get(ids[i])) is not None]
        index = archive_index(entries, sizes, self.tool)
        for p in [q for q in points if q >= cut]:  # the notes are in: take the earliest cut that really fits
            new_head = head(msgs, number, p, notes, index, self.tool)
            tail_msgs = phys.messages[phys.index_of[p]:]
            if self.fits([*new_head, *tail_msgs]):
                cut = p
                break
        else:
            raise window_exceeded(self.guarded(phys.messages), self.need, W, "the handoff notes leave no room")
        await self._durable({"k": "segment", "n": number, "cut": cut, "cut_id": ids[cut], "head": new_head})
        self.events.append("switch")
        self.svc.counters["switches"] += 1
        log.info("conversation %s: segment %d starts at message %d", self.conv.id, number, cut + 1)

    async def _notes(self, phys: Physical, notes_tokens: int, number: int) -> str:
        """Ask the model for handoff notes on the current prompt (its cached prefix); a failure is noted."""
        W = self.window.size
        ask = {"role": "user", "content": NOTES_PROMPT}
        sizes = [self.est.tokens(raw_tokens(m)) for m in phys.messages]
        budget = int((W - notes_tokens - MARGIN) / (1 + self.est.slack)) - self.est.tokens(raw_tokens(ask) + raw_tools(self.tools))
        source = [*notes_source(phys.messages, sizes, budget), ask]
        body = upstream_body(self.req, source, self.tools, notes_tokens, self.info, self.info.slot_id, False)
        if self.tools:
            body["tool_choice"] = "none"
        try:
            resp = await self.svc.upstream.post_json("/v1/chat/completions", dumps(body))
            if resp.status_code != 200:
                notes = NOTES_FAILED.format(why=f"the engine answered {resp.status_code}")
            else:
                data = resp.json()
                notes = text_of(((data.get("choices") or [{}])[0].get("message") or {}).get("content")).strip()
                notes = notes or NOTES_FAILED.format(why="the model wrote nothing")
                if self.svc.slots is not None:
                    usage = data.get("usage") or {}
                    self.svc.slots.after(self.tenant.id, self.conv, source, int(usage.get("total_tokens") or 0))
                    await self.svc.slots.save(f"seg{number - 1}")
        except UpstreamError as e:
            notes = NOTES_FAILED.format(why=str(e))
        mid = message_id(self.conv.id, -number, f"notes\x1e{notes}".encode())
        self.tenant.archive.append(self.conv.id, [Record(mid, "assistant", [{"block_type": "text", "text": notes}], "notes")])
        return notes

    # --- auto-recall ------------------------------------------------------------------------------
    async def _auto_recall(self, phys: Physical) -> bool:
        """On a new user message: name (hint) or quote (inject) hidden outputs that match it."""
        msgs, ids, state = self.req.messages, self.ident.ids, self.conv.state
        mode, mid = self.cfg.auto_recall, ids[-1]
        if mode == "off" or msgs[-1].get("role") != "user" or mid in state.autos:
            return False
        if not state.masks and phys.start == 0:
            return False  # nothing is hidden yet: everything is in the prompt already
        query = " ".join(text_of(msgs[-1].get("content")).split())[:1000]
        found: list[Any] = []
        if query and self.svc.memories is not None:
            try:
                hits = await self.svc.memories.recall(
                    self.tenant.id, query, sessions=[self.conv.id], k=8, neighbors=0, identifier_guard=True,
                    min_similarity=self.cfg.auto_recall_min_similarity)  # fmt: skip
            except Exception as e:
                log.warning("auto-recall failed, nothing added: %s", e)
                hits = []
            seen: set[str] = set()
            for h in hits:
                entry = self.tenant.archive.entries.get(h.turn_uuid)
                if (entry is None or entry.conversation != self.conv.id or entry.kind != "message" or entry.position is None
                        or h.turn_uuid in seen or not phys.hidden(entry.position, h.turn_uuid, state)):  # fmt: skip
                    continue
                seen.add(h.turn_uuid)
                found.append((h, entry))
        line = self._auto_line(found[:AUTO_HITS], mode)
        rec = {"k": "auto", "id": mid, "text": line}
        if line:
            await self._durable(rec)
            self.events.append("auto")
        else:
            self.conv.state.record(rec, durable=False)
        return bool(line)

    def _auto_line(self, found: list[Any], mode: str) -> str:
        if not found:
            return ""
        if mode == "hint":
            named = "; ".join(f"{self.tool}(id=\"{h.turn_uuid}\") ({e.tool or e.role} {e.origin or ''})".replace(" )", ")")
                              for h, e in found)  # fmt: skip
            return (f"[funes-proxy: archived outputs that may bear on this message, hidden from this prompt: {named}. "
                    f"Read them before answering from memory.]")  # fmt: skip
        h, e = found[0]
        passage = h.text.strip()
        if len(passage) > AUTO_INJECT_CHARS:
            passage = passage[:AUTO_INJECT_CHARS] + " …"
        return f"[funes-proxy: from the archive, {describe(h.turn_uuid, e)}:\n«{passage}»]"

"""One chat request, start to end: identify, archive, plan, run the rounds, answer.

Locks: one per conversation for the whole request (its decisions are made in order), and on llama.cpp the
pinned slot's lock (what the slot holds is known only if requests on it do not interleave). A streamed answer
holds both until its last byte.

When the archive cannot be written, nothing may be hidden: the request goes upstream as the client sent it
if it fits the window, and is refused with 503 otherwise.
"""

from __future__ import annotations

import logging
import time
from contextlib import AsyncExitStack
from typing import Any

from starlette.responses import Response

from ..metrics import ERRORS
from .errors import ChatRequest, ProxyError
from .identity import CONVERSATION_RE, identify
from .messages import call_for
from .planner import Planner, dumps, upstream_body
from .recall_tool import definition, tool_name
from .records import record
from .rounds import PATH, Rounds, passthrough
from .service import ProxyService
from .tenant import Tenant
from .timing import Timing
from .window import Estimator, Window, raw_tokens, raw_tools

log = logging.getLogger("funes_py.proxy")

CONVERSATION_HEADER = "x-funes-conversation"


async def chat(svc: ProxyService, tenant: Tenant, req: ChatRequest, headers: Any, timing: Timing) -> Response:
    info = await svc.engine_info()
    svc.counters["requests"] += 1
    named = headers.get(CONVERSATION_HEADER)
    if named is not None and not CONVERSATION_RE.fullmatch(named):
        raise ProxyError(400, f"{CONVERSATION_HEADER}: 1 to 64 of A-Z a-z 0-9 _ -", param=CONVERSATION_HEADER)
    ident = identify(req.messages, tenant.archive.chains, named)
    conv = tenant.conversation(ident.conversation)
    timing.mark("identify")
    stack = AsyncExitStack()
    await stack.enter_async_context(conv.lock)
    try:
        conv.last_request = time.monotonic()
        if not _archive(svc, tenant, ident, req):
            return await _unarchived(svc, req, stack)
        timing.mark("archive")
        if svc.slots is not None:
            await stack.enter_async_context(svc.slots.lock)
        tool = tool_name(req.tools)
        tools = [*(req.tools or []), definition(tool)]
        try:
            plan = await Planner(svc, tenant, conv, req, ident, info, tool, tools).plan()
        except ProxyError as e:
            if e.code == "context_window_exceeded":
                svc.counters["refused"] += 1
            raise
        timing.mark("plan")
        if svc.slots is not None:
            await svc.slots.before(tenant.id, conv, plan.phys.messages)
        if "mask" in plan.events and svc.slots is not None:
            svc.slots.save_later("anchor")  # a new frontier: keep the engine's state of it once this is done
        rounds = Rounds(svc, tenant, conv, req, ident, plan, tool, req.tools, timing)
        if req.stream:
            return await rounds.open_stream(stack)  # the stream owns the locks from here on
        return await rounds.run()
    finally:
        await stack.aclose()


def _archive(svc: ProxyService, tenant: Tenant, ident: Any, req: ChatRequest) -> bool:
    """Append the messages not archived yet (no fsync here: see archive.py); False when the write failed."""
    archive = tenant.archive
    new = [i for i, mid in enumerate(ident.ids) if mid not in archive.entries]
    if not new:
        return True
    recs = []
    for i in new:  # the call behind each new output: found near it, not by parsing the whole history again
        m = req.messages[i]
        call = call_for(req.messages, i) if m.get("role") == "tool" else None
        calls = {str(m.get("tool_call_id")): call} if call is not None else {}
        recs.append(record(m, ident.ids[i], calls, position=i, chain=ident.chains[i]))
    try:
        archive.append(ident.conversation, recs)
    except OSError as e:
        log.error("archive write failed for conversation %s: %s", ident.conversation, e)
        ERRORS.labels("archive_write_failed").inc()
        return False
    if svc.memories is not None:
        svc.memories.wrote(tenant.id, ident.conversation)
    return True


async def _unarchived(svc: ProxyService, req: ChatRequest, stack: AsyncExitStack) -> Response:
    """The archive failed: forward the client's request untouched if it fits the window, else 503."""
    info = await svc.engine_info()
    est = Estimator()
    response = svc.cfg.response_tokens or info.window // 8
    window = Window(info.window, response)
    guarded = est.guarded(est.tokens(sum(raw_tokens(m) for m in req.messages) + raw_tools(req.tools)))
    max_tokens = window.max_tokens(guarded, req.max_tokens)
    if max_tokens is None:
        raise ProxyError(503, "the archive could not be written, and the request does not fit the context window "
                         "unmasked; nothing was sent", "server_error", code="archive_unavailable")  # fmt: skip
    body = dumps(upstream_body(req, req.messages, req.tools, max_tokens, info, info.slot_id, req.stream))
    if not req.stream:
        resp = await svc.upstream.post_json(PATH, body)
        return passthrough(resp, resp.content)
    from starlette.background import BackgroundTask
    from starlette.responses import StreamingResponse

    resp = await svc.upstream.send("POST", PATH, content=body, stream=True)
    if resp.status_code != 200:
        data = await resp.aread()
        await resp.aclose()
        return passthrough(resp, data)
    inner = stack.pop_all()

    async def relay() -> Any:
        async with inner:
            try:
                async for part in resp.aiter_raw():
                    yield part
            finally:
                await resp.aclose()

    return StreamingResponse(relay(), media_type="text/event-stream", background=BackgroundTask(inner.aclose))

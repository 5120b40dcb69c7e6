"""The engine rounds of one request: the recall tool loop, streamed or not, and what is kept afterwards.

A round whose answer calls the proxy's recall tool is internal: the proxy runs the calls, appends the call
and its results, and asks again (at most `max_recall_rounds` times, then once more without the tool). The
client sees one answer: the text of every round (streamed as it comes; tool-call deltas of internal calls
are never sent) and the final round's own tool calls. Afterwards: the internal rounds are archived and stored
as an `insert` decision keyed by the id of the answer the client will send back, so the next request shows the
engine exactly what it saw; the answer itself is archived; the estimate is calibrated from `usage`.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack
from typing import Any

import httpx
from starlette.background import BackgroundTask
from starlette.responses import JSONResponse, Response, StreamingResponse

from ..metrics import RECALL_CALLS
from .errors import ChatRequest
from .identity import Identified, key, message_id, next_chain
from .messages import calls_by_id, text_of
from .planner import Plan, dumps, upstream_body
from .recall_tool import UNAVAILABLE, RecallCall, in_scope, out_of_scope, page, render_hits
from .records import record
from .service import ProxyService
from .sse import Round, chunks, sse
from .tenant import Conversation, Tenant
from .timing import Timing
from .upstream import BadResponse
from .window import CHARS_PER_TOKEN, MARGIN, Window, raw_tools

log = logging.getLogger("funes_py.proxy")

MIN_RESULT_CHARS = 200
PATH = "/v1/chat/completions"


def passthrough(resp: httpx.Response, body: bytes) -> Response:
    """An upstream answer given to the client as it came (status, body, content type)."""
    return Response(body, status_code=resp.status_code,
                    media_type=resp.headers.get("content-type", "application/json"))  # fmt: skip


class Rounds:
    def __init__(self, svc: ProxyService, tenant: Tenant, conv: Conversation, req: ChatRequest,
                 ident: Identified, plan: Plan, tool: str, client_tools: list[Any] | None, timing: Timing) -> None:  # fmt: skip
        self.svc, self.cfg, self.tenant, self.conv, self.req = svc, svc.cfg, tenant, conv, req
        self.ident, self.plan, self.tool, self.client_tools, self.timing = ident, plan, tool, client_tools, timing
        assert svc.engine is not None
        self.info = svc.engine
        response = self.cfg.response_tokens or self.info.window // 8
        self.window = Window(self.info.window, response)
        self.need = min(req.max_tokens, response) if req.max_tokens else response
        self.internal: list[dict[str, Any]] = []
        self.contents: list[str] = []
        self.recall_calls = 0
        self.last_prompt: list[Mapping[str, Any]] = plan.phys.messages
        self.last_raw = plan.raw

    # --- one round --------------------------------------------------------------------------------
    def body(self, final: bool, stream: bool) -> bytes:
        msgs = [*self.plan.phys.messages, *self.internal]
        tools = self.client_tools if final else self.plan.tools
        raw = self.plan.sizer.messages(msgs) + raw_tools(tools)
        est = self.conv.estimator
        max_tokens = self.window.max_tokens(est.guarded(est.tokens(raw)), self.req.max_tokens)
        if max_tokens is None:  # internal results are capped to leave the answer room; never send oversize
            max_tokens = max(1, self.window.size - est.guarded(est.tokens(raw)))
        if not self.internal:
            max_tokens = min(max_tokens, self.plan.max_tokens)
        self.last_prompt, self.last_raw = msgs, raw
        return dumps(upstream_body(self.req, msgs, tools, max_tokens, self.info, self.info.slot_id, stream))

    def internal_calls(self, msg: Mapping[str, Any]) -> list[dict[str, Any]]:
        return [c for c in msg.get("tool_calls") or [] if (c.get("function") or {}).get("name") == self.tool]

    async def run_internal(self, msg: Mapping[str, Any], calls: list[dict[str, Any]]) -> None:
        """Answer the round's recall calls and append the round (its client calls dropped: the model is
        asked again and calls them then)."""
        call_msg = {"role": "assistant", "content": text_of(msg.get("content")), "tool_calls": calls}
        results = []
        for c in calls:
            self.recall_calls += 1
            self.svc.counters["recall_calls"] += 1
            RECALL_CALLS.inc()
            results.append({"role": "tool", "tool_call_id": c.get("id") or "",
                            "content": await self.execute((c.get("function") or {}).get("arguments"))})  # fmt: skip
        self.internal.extend([call_msg, *results])

    async def execute(self, arguments: Any) -> str:
        parsed = RecallCall.parse(arguments)
        if isinstance(parsed, str):
            return parsed
        est = self.conv.estimator
        raw = self.plan.sizer.messages([*self.plan.phys.messages, *self.internal]) + raw_tools(self.plan.tools)
        room = self.window.size - est.guarded(est.tokens(raw)) - self.need - 3 * MARGIN
        cap = self.cfg.recall_max_tokens or min(4000, max(256, self.info.window // 16))
        max_chars = int(min(cap, room) * CHARS_PER_TOKEN / (est.factor * (1 + est.slack)))
        if max_chars < MIN_RESULT_CHARS:
            return "No room left in the context window for archive text: answer with what you have."
        if parsed.mid is not None:
            if not in_scope(self.tenant.archive, parsed.mid, self.conv.id, parsed.scope):
                return out_of_scope(parsed.mid, self.tool)
            return page(self.tenant.archive, parsed.mid, parsed.offset, max_chars, self.tool, parsed.scope)
        assert parsed.query is not None and self.svc.memories is not None
        try:
            hits = await self.svc.memories.recall(
                self.tenant.id, parsed.query, k=2 * self.cfg.recall_k, neighbors=0, identifier_guard=True,
                min_similarity=self.cfg.recall_min_similarity,
                sessions=None if parsed.scope == "all" else [self.conv.id])  # fmt: skip
            # The proxy's own recall rounds are archived too, but a search must not find its earlier calls
            # and answers (copies of passages): only the conversation's messages and handoff notes.
            entries = self.tenant.archive.entries
            hits = [h for h in hits if (e := entries.get(h.turn_uuid)) is None or e.kind != "internal"]
            hits = hits[: self.cfg.recall_k]
        except Exception as e:
            if type(e).__name__ == "InvalidInputError":
                hits = []
            else:
                log.warning("recall failed: %s", e)
                return UNAVAILABLE
        return render_hits(hits, self.tenant.archive, parsed.query, parsed.scope, max_chars)

    # --- afterwards ----------------------------------------------------------------------------------
    async def finish(self, final_msg: dict[str, Any], usage: Mapping[str, Any] | None) -> dict[str, Any]:
        """Keep what this request taught: internal rounds (archived + insert), the answer, the calibration.
        Returns the answer as the client sees it."""
        client_calls = [c for c in final_msg.get("tool_calls") or [] if c not in self.internal_calls(final_msg)]
        content = "".join(self.contents)
        view: dict[str, Any] = {"role": "assistant", "content": content}
        if client_calls:
            view["tool_calls"] = client_calls
        n = len(self.req.messages)
        conv_id, archive = self.conv.id, self.tenant.archive
        view_id = message_id(conv_id, n, key(view))
        if self.internal:
            phys_final: dict[str, Any] = {"role": "assistant", "content": text_of(final_msg.get("content"))}
            if client_calls:
                phys_final["tool_calls"] = client_calls
            calls = calls_by_id(self.internal)
            recs = [record(m, message_id(conv_id, n, f"internal\x1e{k}\x1e".encode() + key(m)), calls,
                           kind="internal") for k, m in enumerate(self.internal)]  # fmt: skip
            archive.append(conv_id, recs)
            await asyncio.to_thread(archive.sync, conv_id)
            await asyncio.to_thread(self.conv.state.record, {"k": "insert", "id": view_id,
                                                             "messages": [*self.internal, phys_final]})
        answer = record(view, view_id, {}, position=n, chain=next_chain(self.ident.chains[-1], key(view)))
        if archive.append(conv_id, [answer]) and self.svc.memories is not None:
            self.svc.memories.wrote(self.tenant.id, conv_id)
        if isinstance(usage, Mapping) and isinstance(usage.get("prompt_tokens"), int):
            scale = self.conv.estimator.calibrate(self.last_raw, usage["prompt_tokens"])
            if scale is not None:
                self.conv.state.record({"k": "scale", "v": scale}, durable=False)
        if self.svc.slots is not None:
            total = int((usage or {}).get("total_tokens") or 0) if isinstance(usage, Mapping) else 0
            self.svc.slots.after(self.tenant.id, self.conv, self.last_prompt, total)
        return view

    # --- not streamed -----------------------------------------------------------------------------
    async def run(self) -> Response:
        data: dict[str, Any] = {}
        final_msg: dict[str, Any] = {}
        for r in range(self.cfg.max_recall_rounds + 1):
            final = r == self.cfg.max_recall_rounds
            body = self.body(final, stream=False)
            self.timing.mark("body")
            resp = await self.svc.upstream.post_json(PATH, body)
            self.timing.mark("upstream")
            if resp.status_code != 200:
                return passthrough(resp, resp.content)
            data = completion(resp)
            final_msg = dict(((data.get("choices") or [{}])[0]).get("message") or {})
            self.contents.append(text_of(final_msg.get("content")))
            calls = self.internal_calls(final_msg)
            if calls and not final:
                await self.run_internal(final_msg, calls)
                continue
            break
        view = await self.finish(final_msg, data.get("usage"))
        self.timing.mark("finish")
        out = dict(data)
        choice = dict((data.get("choices") or [{}])[0])
        message = {**{k: v for k, v in final_msg.items() if k not in ("content", "tool_calls")}, **view}
        choice["message"] = message
        if choice.get("finish_reason") == "tool_calls" and "tool_calls" not in view:
            choice["finish_reason"] = "stop"
        out["choices"] = [choice]
        return JSONResponse(out, headers=self.headers())

    def headers(self) -> dict[str, str]:
        st = self.conv.state
        seg = st.segments[-1].number if st.segments else 0
        events = ",".join(self.plan.events) or "none"
        return {"x-funes-conversation": self.conv.id,
                "x-funes-proxy": f"segment={seg}; hidden={len(st.masks)}; events={events}; "
                                 f"recall_calls={self.recall_calls}; prompt_estimate={self.plan.prompt}",
                "server-timing": self.timing.header()}  # fmt: skip

    # --- streamed ---------------------------------------------------------------------------------
    async def open_stream(self, stack: AsyncExitStack) -> Response:
        """Start round 0; an upstream error before the stream is passed through as is."""
        first_is_final = self.cfg.max_recall_rounds == 0
        body = self.body(first_is_final, stream=True)
        self.timing.mark("body")
        resp = await self.svc.upstream.send("POST", PATH, content=body, stream=True)
        self.timing.mark("upstream")
        if resp.status_code != 200:
            body = await resp.aread()
            await resp.aclose()
            return passthrough(resp, body)
        # The first chunk before the answer starts: a 200 that is no stream of chunks is still a 502 here.
        round0 = chunks(resp)
        try:
            first = await anext(round0)
        except BaseException:
            await resp.aclose()
            raise
        inner = stack.pop_all()

        async def relay() -> AsyncIterator[bytes]:
            async with inner:
                async for part in self._stream(resp, _prepend(first, round0)):
                    yield part

        # The locks go with the stream; if the client leaves before it starts, the background task frees them.
        return StreamingResponse(relay(), media_type="text/event-stream", background=BackgroundTask(inner.aclose),
                                 headers={**self.headers(), "cache-control": "no-cache"})  # fmt: skip

    async def _stream(self, resp: httpx.Response, round0: AsyncIterator[tuple[bytes, dict[str, Any]]]) -> AsyncIterator[bytes]:
        r = 0
        this_round = round0
        try:
            while True:
                final = r == self.cfg.max_recall_rounds
                rnd = Round()
                held: list[tuple[bytes, dict[str, Any]]] = []
                try:
                    async for raw, chunk in this_round:
                        if rnd.add(chunk) in ("text", "other"):
                            yield raw
                        else:
                            held.append((raw, chunk))
                except BadResponse as e:  # the status is sent: say it in the stream, as an upstream error
                    log.warning("upstream stream broken off: %s", e)
                    yield sse({"error": {"message": str(e), "type": "upstream_error", "code": e.code}})
                    yield b"data: [DONE]\n\n"
                    return
                await resp.aclose()
                msg = rnd.message()
                self.contents.append(rnd.text)
                calls = self.internal_calls(msg)
                if calls and not final:
                    await self.run_internal(msg, calls)
                    r += 1
                    resp = await self.svc.upstream.send("POST", PATH, content=self.body(r == self.cfg.max_recall_rounds,
                                                        stream=True), stream=True)  # fmt: skip
                    if resp.status_code != 200:
                        err = await resp.aread()
                        yield sse({"error": _error_of(err, resp.status_code)})
                        yield b"data: [DONE]\n\n"
                        return
                    this_round = chunks(resp)
                    continue
                internal_idx = {i for i, c in rnd.calls.items() if (c.get("function") or {}).get("name") == self.tool}
                for raw, chunk in held:
                    yield raw if not internal_idx else _without_calls(chunk, internal_idx)
                await self.finish(msg, rnd.usage)
                yield b"data: [DONE]\n\n"
                return
        finally:
            await resp.aclose()


def completion(resp: httpx.Response) -> dict[str, Any]:
    """A non-streamed 200's body as a completion; BadResponse when it is not JSON or has no choice."""
    try:
        data = resp.json()
    except ValueError:  # JSONDecodeError and UnicodeDecodeError both
        data = None
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(data, dict) or not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        kind = resp.headers.get("content-type", "no content type")
        raise BadResponse(f"the upstream answered 200 with a body that is not a chat completion ({kind}, "
                          f"{len(resp.content)} bytes)")
    return data


async def _prepend(first: tuple[bytes, dict[str, Any]],
                   rest: AsyncIterator[tuple[bytes, dict[str, Any]]]) -> AsyncIterator[tuple[bytes, dict[str, Any]]]:  # fmt: skip
    yield first
    async for item in rest:
        yield item


def _without_calls(chunk: dict[str, Any], drop: set[int]) -> bytes:
    """A held chunk with the deltas of internal tool calls removed (a final round's stray recall call)."""
    for choice in chunk.get("choices") or []:
        delta = choice.get("delta") or {}
        if delta.get("tool_calls"):
            delta["tool_calls"] = [tc for tc in delta["tool_calls"] if int(tc.get("index", 0)) not in drop]
            if not delta["tool_calls"]:
                del delta["tool_calls"]
        if choice.get("finish_reason") == "tool_calls":
            choice["finish_reason"] = "stop"
    return sse(chunk)


def _error_of(body: bytes, status: int) -> Any:
    try:
        return json.loads(body).get("error") or {"message": body.decode("utf-8", "replace"), "code": status}
    except (ValueError, AttributeError):
        return {"message": body.decode("utf-8", "replace")[:500], "code": status}

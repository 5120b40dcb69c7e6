"""The proxy as one ASGI app: the chat route, the proxy's own routes, and everything else passed through.

    POST   /v1/chat/completions          the managed route (turn.chat)
    GET    /funes/health                 engine, window, counters
    GET    /funes/archive/{id}           one archived message (?offset=&limit= pages it, as the recall tool)
    DELETE /funes/conversations/{conv}   archive lines, engine rows, decisions, slot files: all gone
    GET    /metrics                      Prometheus text format (funes_py.metrics: loopback, or FUNES_METRICS_TOKEN)
    *      anything else                 to the upstream unchanged, streamed both ways

The lifespan loads the models before uvicorn binds the port, so the first request never waits for them.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ..gc_freeze import freeze_startup
from ..jsonbody import BadRequest, JsonLimits, check_depth, parse_json
from ..metrics import ERRORS, REFUSALS, route
from ..tenancy import live_tenancy
from .config import MAX_JSON_NUMBER_CHARS, ProxyConfig
from .engines import EngineConfigError
from .errors import ProxyError, bad_request, too_large, unauthorized, validate
from .identity import CONVERSATION_RE
from .recall_tool import page
from .service import ProxyService
from .timing import Timing
from .turn import chat
from .upstream import HOP_HEADERS, UpstreamError

log = logging.getLogger("funes_py.proxy")

DEFAULT_PAGE_CHARS = 20000


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise too_large(limit)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)


def _loads(raw: bytes, limits: JsonLimits) -> Any:
    """The request body as JSON: orjson (5x faster on a large history), then its nesting checked (containers
    only: orjson already refused invalid UTF-8 and lone surrogates). What orjson refuses goes to the service's
    parser (`funes_py.jsonbody`), which says why with the place: not JSON, not UTF-8, nested too deep, a number
    too long, a lone surrogate. Before, the standard library's `json.loads` took those: it recursed to a
    RecursionError (a 500 that also broke the keep-alive connection) and let lone surrogates through into the
    archive as invalid UTF-8."""
    try:
        value = orjson.loads(raw)
        check_depth(value, limits.max_depth)
        return value
    except orjson.JSONDecodeError:
        pass
    except BadRequest as e:
        raise _named(e) from None
    try:
        return parse_json(raw, limits)
    except BadRequest as e:
        raise _named(e) from None


def _named(e: BadRequest) -> ProxyError:
    """`jsonbody`'s "place: reason" as a 400 whose param is the place."""
    place, _, reason = str(e).partition(": ")
    return bad_request(place, reason or "not acceptable")


def create_app(cfg: ProxyConfig, models: Any = None) -> Starlette:
    svc = ProxyService(cfg, models)
    json_limits = JsonLimits(cfg.max_json_depth, MAX_JSON_NUMBER_CHARS)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await svc.start()
        freeze_startup()  # what start-up built lives as long as the process (see gc_freeze)
        log.info("proxy on http://%s:%d -> %s (data in %s)", cfg.host, cfg.port, svc.upstream.base, cfg.data_dir)
        try:
            yield
        finally:
            await svc.stop()

    async def tenant_of(request: Request) -> Any:
        user = svc.user_for(request.headers.get("authorization"))
        if user is None:
            raise unauthorized()
        return await svc.tenant(user)

    async def guarded(request: Request, handler: Any) -> Response:
        try:
            return await handler(request)  # type: ignore[no-any-return]
        except ProxyError as e:
            REFUSALS.labels(e.code or f"http_{e.status}").inc()
            return e.response()
        except UpstreamError as e:
            ERRORS.labels(e.code).inc()
            return ProxyError(e.status, str(e), "upstream_error", code=e.code).response()
        except EngineConfigError as e:
            ERRORS.labels("engine_unsupported").inc()
            return ProxyError(502, str(e), "upstream_error", code="engine_unsupported").response()

    async def chat_completions(request: Request) -> Response:
        async def handle(request: Request) -> Response:
            timing = Timing()
            tenant = await tenant_of(request)
            raw = await _read_body(request, cfg.max_body_bytes)
            timing.mark("read")
            req = validate(_loads(raw, json_limits), cfg.max_message_chars)
            timing.mark("parse")
            return await chat(svc, tenant, req, request.headers, timing)

        return await guarded(request, handle)

    async def health(request: Request) -> Response:
        info = svc.engine
        return JSONResponse({
            "status": "ready" if svc.ready else "starting",
            "upstream": svc.upstream.base,
            "engine": info.kind if info else None,
            "window": info.window if info else None,
            "slot_saves": info.slot_saves if info else None,
            "tenants": len(svc.tenants),
            "indexing": svc.memories.scheduler.busy if svc.memories else 0,
            **svc.counters,
            "slot_saves_done": svc.slots.saves if svc.slots else 0,
            "slot_restores_done": svc.slots.restores if svc.slots else 0,
        }, status_code=200 if svc.ready else 503)  # fmt: skip

    async def archive_item(request: Request) -> Response:
        async def handle(request: Request) -> Response:
            tenant = await tenant_of(request)
            mid = request.path_params["mid"]
            entry = tenant.archive.entries.get(mid)
            if entry is None:
                raise ProxyError(404, f"no archived message {mid}", param="id", code="not_found")
            try:
                offset = int(request.query_params.get("offset", 0))
                limit = int(request.query_params.get("limit", DEFAULT_PAGE_CHARS))
            except ValueError:
                raise bad_request("offset", "offset and limit must be integers") from None
            if offset < 0:
                raise bad_request("offset", f"must be 0 or more, got {offset}")
            if limit < 1:
                raise bad_request("limit", f"must be 1 or more, got {limit}")
            text = tenant.archive.text(mid) or ""
            return JSONResponse({
                "id": mid, "conversation": entry.conversation, "role": entry.role, "kind": entry.kind,
                "position": entry.position, "tool": entry.tool, "origin": entry.origin, "ts": entry.ts,
                "chars": len(text), "text": text if "offset" not in request.query_params else None,
                "page": page(tenant.archive, mid, offset, limit, "recall") if "offset" in request.query_params else None,
            })  # fmt: skip

        return await guarded(request, handle)

    async def forget(request: Request) -> Response:
        async def handle(request: Request) -> Response:
            tenant = await tenant_of(request)
            conv_id = request.path_params["conv"]
            if not CONVERSATION_RE.fullmatch(conv_id):
                raise bad_request("conversation", "1 to 64 of A-Z a-z 0-9 _ -")
            known = tenant.known(conv_id)
            conv = tenant.conversation(conv_id) if known else None
            async with conv.lock if conv is not None else contextlib.nullcontext():
                assert svc.memories is not None
                found, rows = await svc.memories.forget(tenant.id, conv_id, lambda: tenant.drop(conv_id))
                slot_files = await svc.slots.forget(tenant.id, conv, conv_id) if svc.slots is not None else 0
            if not found:
                raise ProxyError(404, f"no conversation {conv_id}", param="conversation", code="not_found")
            return JSONResponse({"forgotten": conv_id, "rows_removed": rows, "slot_files_removed": slot_files})

        return await guarded(request, handle)

    async def passthrough(request: Request) -> Response:
        async def handle(request: Request) -> Response:
            if svc.verifier is not None:
                await tenant_of(request)
            headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_HEADERS}
            body = await _read_body(request, cfg.max_body_bytes)
            resp = await svc.upstream.send(request.method, request.url.path, content=body or None,
                                           params=request.query_params, headers=headers, stream=True)  # fmt: skip
            out_headers = {k: v for k, v in resp.headers.items() if k.lower() not in HOP_HEADERS}

            async def relay() -> AsyncIterator[bytes]:
                try:
                    async for part in resp.aiter_raw():
                        yield part
                finally:
                    await resp.aclose()

            return StreamingResponse(relay(), status_code=resp.status_code, headers=out_headers)

        return await guarded(request, handle)

    routes = [
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/funes/health", health, methods=["GET"]),
        Route("/funes/archive/{mid}", archive_item, methods=["GET"]),
        Route("/funes/conversations/{conv}", forget, methods=["DELETE"]),
        route(lambda: live_tenancy(svc.memories), cfg.metrics_token),
        Route("/{path:path}", passthrough, methods=["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.service = svc
    return app

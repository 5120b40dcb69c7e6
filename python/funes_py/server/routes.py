"""The HTTP write path and health check: POST /turns, DELETE /conversations/{id}, GET /healthz.

Only the ingest key (`x-ingest-key`) opens the write routes; a bearer token, the agent's credential, is
not looked at here, so an agent can never write or forget anything.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .auth import ingest_key_ok, tenant_id
from .service import Service
from .turns import BadRequest, parse_body, require_conversation_id, require_user

log = logging.getLogger("funes_py.server")


class _TooLarge(Exception):
    pass


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def _read_json(request: Request, limit: int, required: bool = True) -> Any:
    """The body as JSON, read at most `limit` bytes; _TooLarge past it, BadRequest when not JSON."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _TooLarge
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():  # a chunked body has no length header: count as it comes
        size += len(chunk)
        if size > limit:
            raise _TooLarge
        chunks.append(chunk)
    raw = b"".join(chunks)
    if not raw.strip():
        if required:
            raise BadRequest("body: expected a JSON object")
        return None
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise BadRequest("body: not valid JSON") from None


def build_routes(service: Service) -> list[Route]:
    cfg = service.config

    def unauthorized(request: Request) -> Response | None:
        if ingest_key_ok(cfg.ingest_key, request.headers.get("x-ingest-key")):
            return None
        return _error(401, "missing or wrong x-ingest-key")

    def not_ready() -> Response | None:
        return None if service.ready else _error(503, "starting")

    async def post_turns(request: Request) -> Response:
        if (denied := unauthorized(request)) or (denied := not_ready()):
            return denied
        try:
            body = await _read_json(request, cfg.max_body_bytes)
            conv = parse_body(body, mask=cfg.mask_secrets)
        except _TooLarge:
            return _error(413, f"body larger than {cfg.max_body_bytes} bytes")
        except BadRequest as e:
            return _error(400, str(e))
        await service.store(conv)
        log.info("stored conversation tenant=%s turns=%d skipped=%d",
                 tenant_id(conv.user), len(conv.lines), conv.skipped)
        return JSONResponse(
            {"stored": conv.conversation_id, "turns": len(conv.lines), "skipped": conv.skipped}, status_code=202
        )

    async def delete_conversation(request: Request) -> Response:
        if (denied := unauthorized(request)) or (denied := not_ready()):
            return denied
        try:
            cid = require_conversation_id(request.path_params.get("conversation_id"))
            user = request.query_params.get("user")
            if user is None:
                body = await _read_json(request, cfg.max_body_bytes, required=False)
                user = body.get("user") if isinstance(body, dict) else None
            user = require_user(user)
        except _TooLarge:
            return _error(413, f"body larger than {cfg.max_body_bytes} bytes")
        except BadRequest as e:
            return _error(400, str(e))
        found, rows = await service.forget(user, cid)
        if not found:
            return _error(404, "no such conversation for this user")
        return JSONResponse({"forgotten": cid, "rows_removed": rows})

    async def healthz(request: Request) -> Response:
        health = service.health()
        return JSONResponse(health, status_code=200 if health["status"] == "ready" else 503)

    return [
        Route("/turns", post_turns, methods=["POST"]),
        Route("/conversations/{conversation_id}", delete_conversation, methods=["DELETE"]),
        Route("/healthz", healthz, methods=["GET"]),
    ]

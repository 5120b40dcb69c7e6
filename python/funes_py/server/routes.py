"""The HTTP write path, a user's data as a whole, and the health check: POST /turns,
DELETE /conversations/{id}, GET /export, DELETE /data, GET /healthz.

Only the ingest key (`x-ingest-key`) opens the write routes, erase (`DELETE /data`) included; a bearer
token, the agent's credential, never writes, forgets or erases anything. A user's export (`GET /export`) is
a read: the ingest key with `?user=`, or the user's own bearer token (its user, nothing else; an agent can
read all of it through recall anyway).

Every malformed request is the client's mistake and answers 4xx with `{"error": "<field>: <reason>"}`:
bodies are read up to a limit (413 past it), decoded and parsed by `jsonbody` (400 naming the place),
validated by `turns` (400 naming the field). The parsing of an ingest body runs in a worker process
(`Service.parse_turns`): a large turn never holds up the event loop or the GIL that recalls need.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from concurrent.futures.process import BrokenProcessPool

from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route

from ..jsonbody import parse_json
from ..metrics import ERRORS, INGEST_BYTES, INGEST_REQUESTS, INGEST_TURNS
from ..tenancy.auth import TenantTokenVerifier, ingest_key_ok, tenant_id
from .service import Service
from .turns import BadRequest, require_conversation_id, require_user

log = logging.getLogger("funes_py.server")

# A DELETE body carries only {"user": ...}; it is parsed on the event loop, so it is kept small.
_DELETE_BODY_BYTES = 64 * 1024


class TooLarge(Exception):
    pass


def error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def read_body(request: Request, limit: int) -> bytes:
    """The body, read at most `limit` bytes; TooLarge past it (declared or counted)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise TooLarge
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():  # a chunked body has no length header: count as it comes
        size += len(chunk)
        if size > limit:
            raise TooLarge
        chunks.append(chunk)
    return b"".join(chunks)


def build_routes(service: Service, verifier: TenantTokenVerifier | None = None) -> list[Route]:
    cfg = service.config

    def unauthorized(request: Request) -> Response | None:
        if ingest_key_ok(cfg.ingest_key, request.headers.get("x-ingest-key")):
            return None
        return error(401, "missing or wrong x-ingest-key")

    def not_ready() -> Response | None:
        return None if service.ready else error(503, "starting")

    async def post_turns(request: Request) -> Response:
        response = await _post_turns(request)
        INGEST_REQUESTS.labels(str(response.status_code)).inc()
        return response

    async def _post_turns(request: Request) -> Response:
        if (denied := unauthorized(request)) or (denied := not_ready()):
            return denied
        try:
            raw = await read_body(request, cfg.max_body_bytes)
            if not raw or raw.isspace():  # no copy of a large body on the event loop
                raise BadRequest("body: expected a JSON object")
            conv = await service.parse_turns(raw)
        except TooLarge:
            return error(413, f"body larger than {cfg.max_body_bytes} bytes")
        except BadRequest as e:
            return error(400, str(e))
        except BrokenProcessPool:
            log.error("an ingest worker died twice on one body (%d bytes); nothing was stored", len(raw))
            ERRORS.labels("ingest_worker_died").inc()
            return error(503, "body: could not be processed (a worker process died on it); nothing was stored")
        await service.store(conv)
        INGEST_TURNS.inc(len(conv.lines))
        INGEST_BYTES.inc(len(raw))
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
            user = await user_param(request)
        except TooLarge:
            return error(413, f"body larger than {_DELETE_BODY_BYTES} bytes")
        except BadRequest as e:
            return error(400, str(e))
        try:
            found, rows = await service.forget(user, cid)
        except Exception:
            # The source file is gone by now (it goes first), so no index run brings the rows back; a retry
            # purges them. Never a 500 with a traceback: say what happened and what to do.
            log.exception("forget failed tenant=%s", tenant_id(user))
            ERRORS.labels("forget_failed").inc()
            return error(503, "forget failed part-way: the conversation's file is removed, its rows may remain; retry")
        if not found:
            return error(404, "no such conversation for this user")
        return JSONResponse({"forgotten": cid, "rows_removed": rows})

    async def user_param(request: Request) -> str:
        """`user` from the query, else from a small JSON body (the DELETE routes)."""
        user = request.query_params.get("user")
        if user is None:
            raw = await read_body(request, _DELETE_BODY_BYTES)
            body = None if not raw or raw.isspace() else parse_json(raw, service.json_limits)
            user = body.get("user") if isinstance(body, dict) else None
        return require_user(user)

    async def export(request: Request) -> Response:
        if denied := not_ready():
            return denied
        bearer = verifier.user_of_header(request.headers.get("authorization")) if verifier is not None else None
        try:
            if bearer is not None:  # the token's own user; a `user` naming anyone else is refused
                user = bearer
                if request.query_params.get("user", user) != user:
                    return error(403, "user: a bearer token exports its own user only")
            elif (denied := unauthorized(request)) is not None:
                return error(401, "missing or wrong x-ingest-key, and no valid bearer token")
            else:
                user = require_user(request.query_params.get("user"))
        except BadRequest as e:
            return error(400, str(e))
        directory = tempfile.mkdtemp(prefix="funes-export-")
        try:
            made = await service.export(user, directory)
        except BaseException:
            shutil.rmtree(directory, ignore_errors=True)
            raise
        if made is None:
            shutil.rmtree(directory, ignore_errors=True)
            return error(404, "nothing stored for this user")
        path, turns = made
        log.info("exported tenant=%s turns=%d", tenant_id(user), turns)
        return FileResponse(path, media_type="application/gzip", filename="funes-export.gz",
                            headers={"x-funes-turns": str(turns)},
                            background=BackgroundTask(shutil.rmtree, directory, True))  # fmt: skip

    async def erase(request: Request) -> Response:
        if (denied := unauthorized(request)) or (denied := not_ready()):
            return denied
        try:
            user = await user_param(request)
        except TooLarge:
            return error(413, f"body larger than {_DELETE_BODY_BYTES} bytes")
        except BadRequest as e:
            return error(400, str(e))
        try:
            found = await service.erase(user)
        except TimeoutError:
            return error(503, "the user's memory is in use; nothing was erased; retry")
        except Exception:
            log.exception("erase failed tenant=%s", tenant_id(user))
            ERRORS.labels("erase_failed").inc()
            return error(503, "erase failed part-way: some of the user's data may remain; retry")
        if not found:
            return error(404, "nothing stored for this user")
        return JSONResponse({"erased": True})

    async def healthz(request: Request) -> Response:
        health = service.health()
        return JSONResponse(health, status_code=200 if health["status"] == "ready" else 503)

    return [
        Route("/turns", post_turns, methods=["POST"]),
        Route("/conversations/{conversation_id}", delete_conversation, methods=["DELETE"]),
        Route("/export", export, methods=["GET"]),
        Route("/data", erase, methods=["DELETE"]),
        Route("/healthz", healthz, methods=["GET"]),
    ]

"""An ASGI layer in front of the MCP SDK's endpoint: bad bodies get JSON-RPC errors, idle streams get closed.

The SDK's streamable HTTP transport (mcp 1.x) parses a POST body with `json.loads` and catches only
`JSONDecodeError`, so invalid UTF-8, a deeply nested body or a huge integer literal escape as a 500 with
a traceback in the log. Rather than patch the SDK, a POST to /mcp from an authenticated caller is read
here (up to `max_mcp_body_bytes`, 413 past it) and checked with the same parser as the ingest route:
text that is not JSON answers HTTP 400 with a JSON-RPC parse error (-32700), JSON past the limits (depth,
number length, a lone surrogate in a string) HTTP 400 with an invalid-request error (-32600), as the
JSON-RPC spec and the MCP transport spec ask. Two more the SDK mishandles are answered here: a request id
that is neither a string nor an integer (`1e999` parses as infinity; the SDK dropped the call without an
answer) gets 400 invalid request, and a JSON-RPC *response* (this server never sends a request, so none is
awaited; the SDK logged each at ERROR, a log flood for any token holder) gets the 202 the transport spec
gives a response, logged at DEBUG. Good bodies are replayed to the SDK unchanged.

`GET /mcp` opens a server-to-client event stream. The endpoint is stateless, so nothing is ever sent on
one but keep-alive pings: it only holds a connection. Each token may hold `mcp_streams_per_token` at once
(429 beyond), and a stream that carried nothing but pings for `mcp_stream_idle_s` is ended.

A plain `tools/call` of the recall tool is answered here too, without the SDK (`mcp_fast`).

Requests without a valid token pass straight through: the SDK answers them 401 before reading anything.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from typing import Any

import anyio
from starlette.requests import ClientDisconnect, Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..jsonbody import BadRequest, JsonLimits, NotJson, parse_json
from ..metrics import MCP_POSTS
from ..tenancy.auth import TenantTokenVerifier, tenant_id
from .config import ServiceConfig
from .mcp_fast import FastRecall

log = logging.getLogger("funes_py.server")

MCP_PATH = "/mcp"
PARSE_ERROR = -32700
INVALID_REQUEST = -32600


class McpGuard:
    def __init__(self, app: ASGIApp, verifier: TenantTokenVerifier, config: ServiceConfig,
                 fast: FastRecall | None = None) -> None:
        self.app = app
        self._fast = fast
        self._verifier = verifier
        self._max_body = config.max_mcp_body_bytes
        self._limits = JsonLimits(config.max_json_depth, config.max_json_number_chars)
        self._streams_per_token = config.mcp_streams_per_token
        self._idle_s = config.mcp_stream_idle_s
        self._open_streams: dict[bytes, int] = {}  # sha256(token) -> streams open now

    @property
    def open_streams(self) -> int:
        return sum(self._open_streams.values())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].rstrip("/") != MCP_PATH:
            await self.app(scope, receive, send)
            return
        token = _bearer(scope)
        user = self._verified_user(token) if token is not None else None
        if user is None or token is None:  # the SDK answers 401 and reads nothing
            await self.app(scope, receive, send)
        elif scope["method"] == "POST" and _sdk_reads_body(scope):
            await self._post(scope, receive, send, user)
        elif scope["method"] == "GET":
            await self._stream(scope, receive, send, token, user)
        else:
            await self.app(scope, receive, send)

    def _verified_user(self, token: str) -> str | None:
        found = self._verifier.user_for(token)
        if found is None:
            return None
        user, expires = found
        return None if expires and expires < int(time.time()) else user

    async def _post(self, scope: Scope, receive: Receive, send: Send, user: str) -> None:
        declared = dict(scope["headers"]).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self._max_body:
            await _jsonrpc_error(send, 413, INVALID_REQUEST, f"body larger than {self._max_body} bytes")
            return
        chunks: list[bytes] = []
        size = 0
        try:
            async for chunk in Request(scope, receive).stream():
                size += len(chunk)
                if size > self._max_body:
                    await _jsonrpc_error(send, 413, INVALID_REQUEST, f"body larger than {self._max_body} bytes")
                    return
                chunks.append(chunk)
        except ClientDisconnect:
            return
        raw = b"".join(chunks)
        try:
            message = parse_json(raw, self._limits)
            bad_ids(message)
        except NotJson as e:
            await _jsonrpc_error(send, 400, PARSE_ERROR, f"Parse error: {e}")
            return
        except BadRequest as e:
            await _jsonrpc_error(send, 400, INVALID_REQUEST, f"Invalid Request: {e}")
            return
        if is_response(message):
            log.debug("ignored a JSON-RPC response posted to /mcp (no request of ours awaits one)")
            await send({"type": "http.response.start", "status": 202, "headers": [(b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        fast = self._fast
        if fast is not None and (call := fast.call_of(message)) is not None and await fast.headers_pass(scope):
            MCP_POSTS.labels("fast").inc()
            await fast.answer(send, user, *call)
            return
        MCP_POSTS.labels("sdk").inc()
        await self.app(scope, _replay(raw, receive), send)

    async def _stream(self, scope: Scope, receive: Receive, send: Send, token: str, user: str) -> None:
        key = hashlib.sha256(token.encode("utf-8")).digest()
        if self._open_streams.get(key, 0) >= self._streams_per_token:
            await _jsonrpc_error(send, 429, INVALID_REQUEST,
                                 f"this token already holds {self._streams_per_token} open streams")
            return
        self._open_streams[key] = self._open_streams.get(key, 0) + 1
        try:
            if await _serve_until_idle(self.app, scope, receive, send, self._idle_s):
                log.info("closed an idle MCP stream after %.0f s tenant=%s", self._idle_s, tenant_id(user))
        finally:
            self._open_streams[key] -= 1
            if not self._open_streams[key]:
                del self._open_streams[key]


async def _serve_until_idle(app: ASGIApp, scope: Scope, receive: Receive, send: Send, idle_s: float) -> bool:
    """Run `app` until it finishes or has sent nothing but SSE comments (pings) for `idle_s`; then end
    the response cleanly. True when it was ended for being idle."""
    last = time.monotonic()
    started = finished = timed_out = False

    async def tracked(message: Message) -> None:
        nonlocal last, started, finished
        if message["type"] == "http.response.start":
            started = True
        elif message["type"] == "http.response.body":
            if not _only_comments(message.get("body", b"")):
                last = time.monotonic()
            finished = not message.get("more_body", False)
        await send(message)

    async with anyio.create_task_group() as tg:

        async def watchdog() -> None:
            nonlocal timed_out
            while (left := last + idle_s - time.monotonic()) > 0:
                await anyio.sleep(left)
            timed_out = True
            tg.cancel_scope.cancel()

        tg.start_soon(watchdog)
        await app(scope, receive, tracked)
        tg.cancel_scope.cancel()
    if started and not finished:
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    return timed_out


def _only_comments(body: bytes) -> bool:
    """An SSE chunk of comment lines only (`: ping - ...`), or nothing."""
    return all(not line or line.startswith(b":") for line in body.splitlines())


def bad_ids(message: Any) -> None:
    """BadRequest when a message (or one of a batch) has an id that is neither a string nor an integer
    (JSON-RPC 2.0: numbers SHOULD NOT have fractions; the SDK takes only str | int) nor null."""
    for i, m in enumerate(message if isinstance(message, list) else [message]):
        rid = m.get("id") if isinstance(m, dict) else None
        if rid is not None and not isinstance(rid, str) and (not isinstance(rid, int) or isinstance(rid, bool)):
            where = f"body[{i}].id" if isinstance(message, list) else "body.id"
            raise BadRequest(f"{where}: a request id is a string or an integer, got {str(rid)[:40]}")


def is_response(message: Any) -> bool:
    """A JSON-RPC response (a result or an error, no method), alone or a batch of nothing else."""
    items = message if isinstance(message, list) else [message]
    return bool(items) and all(
        isinstance(m, dict) and "method" not in m and ("result" in m or "error" in m) for m in items)


def _sdk_reads_body(scope: Scope) -> bool:
    """Whether the SDK would parse this POST's body: it first answers 406 to a caller that does not accept
    JSON and 415 to a body not labelled JSON (same checks as its transport), and those answers stay its."""
    headers = {k.decode(): v.decode("latin-1") for k, v in scope["headers"] if k in (b"accept", b"content-type")}
    accepts = [t.strip() for t in headers.get("accept", "").split(",")]
    labelled = [t.strip() for t in headers.get("content-type", "").split(";")[0].split(",")]
    return any(t.startswith("application/json") for t in accepts) and "application/json" in labelled


def _bearer(scope: Scope) -> str | None:
    """The bearer token exactly as the SDK's BearerAuthBackend reads it (first Authorization header, the
    text after "Bearer "), so this layer checks the same caller the SDK lets in."""
    for name, value in scope["headers"]:
        if name == b"authorization":
            header = value.decode("latin-1")
            return header[7:] if header.lower().startswith("bearer ") else None
    return None


def _replay(body: bytes, receive: Receive) -> Receive:
    """A receive that hands out the already-read body once, then defers to the real one (disconnects)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _jsonrpc_error(send: Send, status: int, code: int, message: str) -> None:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    data = json.dumps(body).encode("utf-8")
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]})
    await send({"type": "http.response.body", "body": data, "more_body": False})

"""The call nearly every request is, `tools/call` of the recall tool, answered without the SDK's per-request
session.

The endpoint is stateless: for each POST the SDK (mcp 1.x) builds a transport, a server session and its
task group, memory streams for the messages, validates the body into its pydantic models twice (request and
result), runs the tool through FastMCP's argument model, and tears it all down. Under 16 clients that
machinery took about 30% of the server's samples (py-spy), more than a third of the engine's own time per
call. The guard has already read, parsed and authenticated the body, so the one call that matters is
answered here with the JSON the SDK would send (a test compares both paths on the same calls).

Only a plain call takes this path: a single JSON-RPC request (no batch), method `tools/call`, params with
exactly the tool's name and `{"query": <string>}` as arguments, a supported protocol version header, and
headers that pass the SDK's own transport security check (its settings object, so DNS-rebinding protection
is the same). Anything else goes to the SDK unchanged: `initialize`, `tools/list`, notifications, a call
with `_meta`, a wrong type, an unknown tool.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.server.streamable_http import MCP_PROTOCOL_VERSION_HEADER
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.shared.version import SUPPORTED_PROTOCOL_VERSIONS
from starlette.requests import HTTPConnection
from starlette.types import Scope, Send

from .service import Service

_VERSION_HEADER = MCP_PROTOCOL_VERSION_HEADER.encode("latin-1")


class FastRecall:
    def __init__(self, service: Service, tool_name: str, security: TransportSecuritySettings | None) -> None:
        self._service = service
        self._tool = tool_name
        self._security = TransportSecurityMiddleware(security)

    def call_of(self, message: Any) -> tuple[str | int, str] | None:
        """(request id, query) when `message` is a plain call of the recall tool, else None."""
        if not isinstance(message, dict) or message.keys() != {"jsonrpc", "id", "method", "params"}:
            return None
        rid, params = message["id"], message["params"]
        if message["jsonrpc"] != "2.0" or message["method"] != "tools/call" or not isinstance(params, dict):
            return None
        if not isinstance(rid, (str, int)) or isinstance(rid, bool):
            return None
        if params.keys() != {"name", "arguments"} or params["name"] != self._tool:
            return None
        args = params["arguments"]
        if not isinstance(args, dict) or args.keys() != {"query"} or not isinstance(args["query"], str):
            return None
        return rid, args["query"]

    async def headers_pass(self, scope: Scope) -> bool:
        """The SDK's checks of a POST's headers, all passed: transport security (Content-Type, and Host and
        Origin when DNS-rebinding protection is on) and the protocol version. When one fails the SDK answers."""
        for name, value in scope["headers"]:
            if name == _VERSION_HEADER and value.decode("latin-1") not in SUPPORTED_PROTOCOL_VERSIONS:
                return False
        return await self._security.validate_request(HTTPConnection(scope), is_post=True) is None

    async def answer(self, send: Send, user: str, rid: str | int, query: str) -> None:
        text = await self._service.recall_text(user, query)
        # The SDK's CallToolResult for a text tool, as its model_dump_json(by_alias, exclude_none) writes it.
        body = {"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}], "isError": False}}
        data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-length", str(len(data)).encode()), (b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": data, "more_body": False})

"""The MCP surface: one tool, `recall_my_conversations(query)`, over streamable HTTP at /mcp.

Built on the MCP Python SDK 1.x `FastMCP` (verified against mcp==1.30.0; 2.x renamed it `MCPServer`,
moved transport options to `streamable_http_app()` and its client to httpx2, so the pin is `<2`).
Bearer tokens are checked by the SDK's `RequireAuthMiddleware` with our `TenantTokenVerifier`; a request
without a valid token gets 401 before any MCP message is read. The tool takes the tenant from the
verified token of the HTTP request that carried the call, never from its arguments.
"""

from __future__ import annotations

import logging
from typing import Annotated

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.settings import AuthSettings
from mcp.server.fastmcp import Context, FastMCP
from mcp.types import ToolAnnotations
from pydantic import AnyHttpUrl, Field

from .._funes import __version__
from ..tenancy.auth import TenantTokenVerifier
from .passages import UNAVAILABLE
from .service import Service

log = logging.getLogger("funes_py.server")

TOOL_NAME = "recall_my_conversations"

TOOL_DESCRIPTION = """\
Search this user's own earlier conversations with you and return dated passages, quoted verbatim.

When to call it: the user points at something said before that is not in this conversation, e.g. \
"last time", "earlier", "as we discussed", "what did we decide", "the numbers we used", "remind me", \
or names a ticket, site, job, person or figure you have no context for. Call it before answering from \
general knowledge or asking the user to repeat themselves.

How: pass a short query built around identifiers and key nouns ("N-11 upgrade blocking ticket", \
"forecast base case parameters", "settlement column escalation"), not a whole sentence. If the passages \
do not answer, search again with other words: a synonym, the identifier alone, the person or site name.

Using the result: quote or closely paraphrase the passages and give their dates; invent nothing they do \
not say. If nothing relevant comes back, say you do not find it in earlier conversations."""

QUERY_DESCRIPTION = "A few key words: identifiers, names and key nouns, e.g. 'N-11 upgrade blocking ticket'."

SERVER_INSTRUCTIONS = (
    "Memory of this user's earlier conversations. Use recall_my_conversations when the user refers to "
    "something discussed before; quote what it returns and invent nothing."
)

# The authorisation server URL the SDK's AuthSettings requires. This service is a resource server only
# (no OAuth routes, no protected-resource metadata), so the URL is never served or advertised.
_ISSUER_PLACEHOLDER = "http://localhost"


def build_mcp(service: Service, verifier: TenantTokenVerifier) -> FastMCP:
    cfg = service.config
    mcp = FastMCP(
        name="funes",
        instructions=SERVER_INSTRUCTIONS,
        token_verifier=verifier,
        auth=AuthSettings(issuer_url=AnyHttpUrl(_ISSUER_PLACEHOLDER), resource_server_url=None),
        host=cfg.host,  # the SDK turns DNS-rebinding protection on for loopback hosts
        streamable_http_path="/mcp",
        # Stateless, plain-JSON answers: each call is one POST carrying its own token, no session to
        # keep or hijack, and any replica can answer.
        stateless_http=True,
        json_response=True,
        log_level=cfg.log_level.upper(),  # type: ignore[arg-type]
    )
    # serverInfo.version is ours. Without it the SDK reports its own version, looked up with
    # importlib.metadata on every stateless request (5% of the server's CPU under load).
    mcp._mcp_server.version = __version__

    @mcp.tool(
        name=TOOL_NAME,
        description=TOOL_DESCRIPTION,
        annotations=ToolAnnotations(
            title="Recall my earlier conversations", readOnlyHint=True, idempotentHint=True, openWorldHint=False
        ),
        structured_output=False,  # text only: a structured copy would double every answer
    )
    async def recall_my_conversations(
        query: Annotated[str, Field(description=QUERY_DESCRIPTION)], ctx: Context  # type: ignore[type-arg]
    ) -> str:
        user = _verified_user(ctx)
        if user is None:  # unreachable behind RequireAuthMiddleware; refuse rather than guess a tenant
            log.error("tool called without a verified token")
            return UNAVAILABLE
        return await service.recall_text(user, query)

    return mcp


def _verified_user(ctx: Context) -> str | None:  # type: ignore[type-arg]
    request = ctx.request_context.request
    user = getattr(request, "scope", {}).get("user") if request is not None else None
    if isinstance(user, AuthenticatedUser):
        return user.access_token.client_id
    return None

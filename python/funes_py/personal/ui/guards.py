"""The page's guards against other sites: the ``Host`` header (DNS rebinding), the CSRF token and ``Origin`` of a
POST, and response headers that keep the page out of other sites' frames.

A written-out ASGI middleware rather than starlette's ``TrustedHostMiddleware``: that one cuts the port off at
the first ``:``, which turns ``[::1]:8765`` into ``[`` and refuses the IPv6 loopback."""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from typing import Any

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# Styles and the scroll-to-the-hit script are inline; nothing is loaded from anywhere else, no frame may hold
# the page (a framed Forget button could be clicked through a decoy), and forms post only to the page itself.
CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    # Not "no-referrer": under it Chromium sends `Origin: null` with the page's own POST, which check_post refuses.
    (b"referrer-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
]


def host_name(host_header: str) -> str:
    """``'[::1]:8765'`` -> ``'::1'``, ``'localhost:8765'`` -> ``'localhost'``."""
    h = host_header.strip().lower()
    if h.startswith("["):
        return h[1:].partition("]")[0]
    return h.rpartition(":")[0] if h.count(":") == 1 else h


def is_loopback_name(name: str) -> bool:
    if name in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class LoopbackHostOnly:
    """403 for a request whose ``Host`` is not a loopback name; the page's security headers on every answer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        host = Headers(scope=scope).get("host", "")
        if not is_loopback_name(host_name(host)):
            text = f"Refused: this page answers only to a loopback address (127.0.0.1, ::1, localhost), not {host!r}.\n"
            await PlainTextResponse(text, status_code=403)(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *HEADERS]
            await send(message)

        await self.app(scope, receive, with_headers)


def new_token() -> str:
    """One per process: a page served by an earlier run of ``funes-py ui`` cannot forget with this one."""
    return secrets.token_urlsafe(32)


def own_origin(request: Request) -> str:
    return f"{request.url.scheme}://{request.headers.get('host', '')}".lower()


def check_post(request: Request, form: Any, token: str) -> str | None:
    """Why a state-changing POST is refused (None when it is not): an ``Origin`` other than the page's own
    (``null`` included), or a missing or wrong CSRF token."""
    origin = request.headers.get("origin")
    if origin is not None and origin.lower() != own_origin(request):
        return f"this form was sent from another site ({origin}); nothing was changed"
    sent = form.get("csrf")
    if not isinstance(sent, str) or not hmac.compare_digest(sent.encode(), token.encode()):
        return "the form's token is missing or stale (was the page opened before funes-py ui restarted?); reload and try again"
    return None

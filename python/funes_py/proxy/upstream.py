"""The HTTP client to the engine (httpx, async, one pooled client): requests, streams, and error mapping.

Failures become exceptions the routes turn into OpenAI-shaped errors: `Unreachable` (nothing listening,
connection refused or reset, connect timeout: 502), `TimedOut` (no answer in time: 504) and `BadResponse` (a
200 whose body is not the API's JSON, or an event stream of it: 502; raised by the callers that read one).
The upstream's own error answers are not exceptions: they are passed through to the client as they came.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

import httpx

from ..metrics import UPSTREAM_SECONDS

log = logging.getLogger("funes_py.proxy")

# Headers that describe one hop, not the message: never forwarded either way.
HOP_HEADERS = frozenset({
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailers",
    "transfer-encoding", "upgrade", "host", "content-length", "authorization", "accept-encoding",
})  # fmt: skip


class UpstreamError(Exception):
    status = 502
    code = "upstream_unreachable"


class Unreachable(UpstreamError):
    status = 502


class TimedOut(UpstreamError):
    status = 504
    code = "upstream_timeout"


class BadResponse(UpstreamError):
    """The upstream said 200 and sent something else than a completion: a proxy in between answering with an
    HTML page, a server of another API. Never an empty answer that reads as success."""

    status = 502
    code = "upstream_bad_response"


def root_of(url: str) -> str:
    """The server root: an upstream given as `http://host:port/v1` is the same server as `http://host:port`
    (clients add `/v1/...` themselves, and llama-server's `/props` and `/slots` live at the root)."""
    url = url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


class Upstream:
    def __init__(self, url: str, api_key: str | None, connect_timeout_s: float, timeout_s: float) -> None:
        self.base = root_of(url)
        self._auth = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = httpx.AsyncClient(
            base_url=self.base,
            timeout=httpx.Timeout(timeout_s, connect=connect_timeout_s),
            limits=httpx.Limits(max_connections=64, max_keepalive_connections=16),
        )

    async def close(self) -> None:
        await self.client.aclose()

    def headers(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        out = {k: v for k, v in (extra or {}).items() if k.lower() not in HOP_HEADERS}
        out.update(self._auth)
        return out

    async def send(self, method: str, path: str, *, content: bytes | None = None, params: Any = None,
                   headers: Mapping[str, str] | None = None, stream: bool = False) -> httpx.Response:  # fmt: skip
        """One request; with `stream` the body is left to read (the caller must close the response)."""
        hdrs = self.headers(headers)
        if content is not None and not any(k.lower() == "content-type" for k in hdrs):
            hdrs["content-type"] = "application/json"
        req = self.client.build_request(method, path, content=content, params=params, headers=hdrs)
        try:
            with UPSTREAM_SECONDS.time():
                return await self.client.send(req, stream=stream)
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.RemoteProtocolError, httpx.ReadError) as e:
            raise Unreachable(f"upstream {self.base} unreachable: {type(e).__name__}: {e}") from None
        except httpx.TimeoutException as e:
            raise TimedOut(f"upstream {self.base} did not answer in time ({type(e).__name__})") from None

    async def post_json(self, path: str, body: bytes) -> httpx.Response:
        return await self.send("POST", path, content=body)

    async def get_json(self, path: str) -> Any:
        """GET a JSON document; None when the path answers non-200 or not JSON."""
        resp = await self.send("GET", path)
        if resp.status_code != 200:
            return None
        try:
            return resp.json()
        except (ValueError, json.JSONDecodeError):
            return None

"""Server-sent events from the engine: split into events, and one round's chunks folded into a message.

`events` yields each event's raw bytes (forwarded to the client unchanged when they carry text) with its
`data` payload; `chunks` those payloads parsed, up to `[DONE]`, and refuses a stream that is not one of JSON
chunks (`BadResponse`: a 200 with an HTML page was an empty answer that read as success, or a reset). `Round` folds the chunks of one streamed completion into what a non-streamed completion
would have returned: content, tool calls (assembled from their deltas by index), finish reason, usage.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from .upstream import BadResponse

DONE = "[DONE]"


async def events(resp: httpx.Response) -> AsyncIterator[tuple[bytes, str | None]]:
    """(raw event including its blank line, its data payload or None) for each event of a stream."""
    buf = b""
    async for chunk in resp.aiter_raw():
        buf += chunk.replace(b"\r\n", b"\n") if b"\r" in chunk else chunk
        while True:
            end = buf.find(b"\n\n")
            if end < 0:
                break
            raw, buf = buf[: end + 2], buf[end + 2 :]
            yield raw, _data(raw)
    if buf.strip():
        yield buf + b"\n\n", _data(buf)


async def chunks(resp: httpx.Response) -> AsyncIterator[tuple[bytes, dict[str, Any]]]:
    """(raw event, its JSON object) for each data event, until `[DONE]`. BadResponse for a payload that is not
    a JSON object, and for a stream that ends before any chunk (a body that is no event stream at all has no
    data events)."""
    seen = False
    async for raw, data in events(resp):
        if data is None:
            continue
        if data.strip() == DONE:
            if not seen:
                raise BadResponse("the upstream's event stream ended before any completion chunk")
            return
        try:
            chunk = json.loads(data)
        except ValueError:
            chunk = None
        if not isinstance(chunk, dict):
            raise BadResponse(f"the upstream's event stream carried a payload that is not a JSON object: {data[:80]!r}")
        seen = True
        yield raw, chunk
    if not seen:
        kind = resp.headers.get("content-type", "no content type")
        raise BadResponse(f"the upstream answered 200 without an event stream of completion chunks ({kind})")


def _data(raw: bytes) -> str | None:
    lines = [ln[5:].lstrip(b" ") if ln.startswith(b"data:") else None for ln in raw.split(b"\n")]
    data = [ln for ln in lines if ln is not None]
    return b"\n".join(data).decode("utf-8", "replace") if data else None


def sse(payload: Any) -> bytes:
    return b"data: " + json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode() + b"\n\n"


@dataclass
class Round:
    content: list[str] = field(default_factory=list)
    calls: dict[int, dict[str, Any]] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    timings: dict[str, Any] | None = None
    role_seen: bool = False

    def add(self, chunk: dict[str, Any]) -> str:
        """Fold a chunk in; returns its kind: "text" (forward now), "tool" or "end" (hold back), "other"."""
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        if isinstance(chunk.get("timings"), dict):
            self.timings = chunk["timings"]
        kind = "other"
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            if delta.get("tool_calls"):
                kind = "tool"
                for tc in delta["tool_calls"]:
                    slot = self.calls.setdefault(int(tc.get("index", 0)), {"id": "", "type": "function",
                                                                           "function": {"name": "", "arguments": ""}})
                    if tc.get("id"):
                        slot["id"] = tc["id"]
                    fn = tc.get("function") or {}
                    slot["function"]["name"] += fn.get("name") or ""
                    slot["function"]["arguments"] += fn.get("arguments") or ""
            if isinstance(delta.get("content"), str) and delta["content"]:
                self.content.append(delta["content"])
                if kind != "tool":
                    kind = "text"
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
                kind = "end" if kind != "tool" else kind
        if kind == "other" and self.usage is not None and not chunk.get("choices"):
            kind = "end"  # the usage-only chunk closes the round: held with the finish
        return kind

    @property
    def text(self) -> str:
        return "".join(self.content)

    def message(self) -> dict[str, Any]:
        msg: dict[str, Any] = {"role": "assistant", "content": self.text}
        if self.calls:
            msg["tool_calls"] = [self.calls[i] for i in sorted(self.calls)]
        return msg

"""The proxy's own errors, in the OpenAI error shape, and the validation of a chat request body (pure).

    {"error": {"message": ..., "type": ..., "param": ..., "code": ...}}

| situation                                   | status | type / code                                 |
|---------------------------------------------|--------|---------------------------------------------|
| body not JSON, bad `messages[i]`, `n` > 1   | 400    | invalid_request_error, param names the field |
| body nested past FUNES_PROXY_MAX_JSON_DEPTH, a lone surrogate | 400 | invalid_request_error, param names the place |
| a message longer than FUNES_PROXY_MAX_MESSAGE_CHARS | 400 | invalid_request_error / message_too_large (nothing archived) |
| body larger than FUNES_PROXY_MAX_BODY_BYTES | 413    | invalid_request_error / body_too_large       |
| cannot fit even after a segment switch      | 400    | invalid_request_error / context_window_exceeded (with counts; nothing sent) |
| missing or unknown bearer token             | 401    | authentication_error / invalid_api_key       |
| upstream unreachable / timed out            | 502 / 504 | upstream_error / upstream_unreachable, upstream_timeout |
| upstream answered 200 with a body that is not its API's JSON (or SSE of JSON) | 502 | upstream_error / upstream_bad_response |
| archive write failed and the request does not fit unmasked | 503 | server_error / archive_unavailable |
| the upstream's own errors                   | passed through as they came                  |
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from starlette.responses import JSONResponse

ROLES = ("system", "developer", "user", "assistant", "tool", "function")


class ProxyError(Exception):
    def __init__(self, status: int, message: str, type_: str = "invalid_request_error",
                 param: str | None = None, code: str | None = None, extra: Mapping[str, Any] | None = None):  # fmt: skip
        super().__init__(message)
        self.status, self.message, self.type, self.param, self.code = status, message, type_, param, code
        self.extra = dict(extra or {})

    def body(self) -> dict[str, Any]:
        err: dict[str, Any] = {"message": self.message, "type": self.type, "param": self.param, "code": self.code}
        err.update(self.extra)
        return {"error": err}

    def response(self) -> JSONResponse:
        return JSONResponse(self.body(), status_code=self.status)


def bad_request(param: str, message: str) -> ProxyError:
    return ProxyError(400, f"{param}: {message}", param=param, code="invalid_value")


def too_large(limit: int) -> ProxyError:
    return ProxyError(413, f"request body larger than {limit} bytes", code="body_too_large")


def unauthorized() -> ProxyError:
    return ProxyError(401, "missing or unknown bearer token", "authentication_error", code="invalid_api_key")


def window_exceeded(prompt: int, response: int, window: int, detail: str) -> ProxyError:
    return ProxyError(
        400,
        f"the conversation cannot fit the context window even after a segment switch: {detail} "
        f"(prompt about {prompt} tokens + {response} for the answer > {window}); nothing was sent to the engine",
        param="messages", code="context_window_exceeded",
        extra={"prompt_tokens": prompt, "response_tokens": response, "window": window},
    )  # fmt: skip


@dataclass(frozen=True)
class ChatRequest:
    body: dict[str, Any]
    messages: list[dict[str, Any]]
    tools: list[Any] | None
    stream: bool
    max_tokens: int | None


def validate(body: Any, max_message_chars: int | None = None) -> ChatRequest:
    """The body of POST /v1/chat/completions, checked; ProxyError(400) names the first bad field. A message
    whose text is longer than `max_message_chars` is refused here, before anything is archived: the archive
    and its index would otherwise keep (and embed) a message that no window can hold."""
    if not isinstance(body, dict):
        raise bad_request("body", "expected a JSON object")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise bad_request("messages", "required, a non-empty array of messages")
    for i, m in enumerate(messages):
        _check_message(i, m)
        if max_message_chars is not None:
            _check_size(i, m, max_message_chars)
    n = body.get("n")
    if n is not None and n != 1:
        raise bad_request("n", f"only n=1 is supported, got {n!r}")
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise bad_request("stream", "must be true or false")
    tools = body.get("tools")
    if tools is not None and not isinstance(tools, list):
        raise bad_request("tools", "must be an array")
    max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
    if max_tokens is not None and (not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1):
        param = "max_completion_tokens" if "max_completion_tokens" in body else "max_tokens"
        raise bad_request(param, "must be a positive integer")
    return ChatRequest(body, messages, tools or None, stream, max_tokens)


def _check_size(i: int, m: dict[str, Any], limit: int) -> None:
    content = m.get("content")
    size = len(content) if isinstance(content, str) else sum(
        len(p.get("text") or "") if isinstance(p, dict) and isinstance(p.get("text"), str) else len(p) if isinstance(p, str) else 0
        for p in content or ())
    size += sum(len(str((c.get("function") or {}).get("arguments") or "")) for c in m.get("tool_calls") or ()
                if isinstance(c, dict))
    if size > limit:
        raise ProxyError(400, f"messages[{i}].content: {size} characters, more than the limit of {limit}; "
                         "nothing was archived or sent", param=f"messages[{i}].content", code="message_too_large")


_PLAIN = frozenset({"system", "developer", "user", "assistant"})


def _check_message(i: int, m: Any) -> None:
    # The common message, checked in one line: every request re-sends the whole history.
    if type(m) is dict and type(m.get("content")) is str and "tool_calls" not in m:
        role = m.get("role")
        if role in _PLAIN or (role == "tool" and type(m.get("tool_call_id")) is str):
            return
    where = f"messages[{i}]"
    if not isinstance(m, dict):
        raise bad_request(where, "expected an object")
    role = m.get("role")
    if role not in ROLES:
        raise bad_request(f"{where}.role", f"must be one of {', '.join(ROLES)}, got {role!r}")
    content = m.get("content")
    if content is not None and not isinstance(content, (str, list)):
        raise bad_request(f"{where}.content", "must be a string, an array of parts, or null")
    if isinstance(content, list):
        for j, part in enumerate(content):
            if not isinstance(part, (dict, str)):
                raise bad_request(f"{where}.content[{j}]", "must be an object")
    if content is None and role not in ("assistant",):
        raise bad_request(f"{where}.content", f"required for a {role} message")
    calls = m.get("tool_calls")
    if calls is not None:
        if role != "assistant" or not isinstance(calls, list):
            raise bad_request(f"{where}.tool_calls", "only an assistant message has tool_calls, an array")
        for j, call in enumerate(calls):
            fn = call.get("function") if isinstance(call, dict) else None
            if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
                raise bad_request(f"{where}.tool_calls[{j}].function.name", "required, a string")
    if role == "tool" and not isinstance(m.get("tool_call_id"), str):
        raise bad_request(f"{where}.tool_call_id", "required for a tool message, a string")

"""Request bodies -> JSON values, within explicit limits, or a `BadRequest` that names the place (pure).

Shared by the recall service and the proxy. Every route that reads a body goes through `parse_json`, so the failures the standard parser turns into
the wrong exception are answered as the client's mistake, not the server's:
  - bytes that are not UTF-8 (RFC 8259 requires it; `json.loads(bytes)` would guess UTF-16 or UTF-32 and
    hand back strings the rest of the service cannot encode),
  - nesting past `max_depth` (the C parser recurses and raises RecursionError near 1,000 levels),
  - number literals longer than `max_number_chars` (Python refuses ints past 4,300 digits with ValueError
    and would spend quadratic time on a shorter but still huge one), NaN and Infinity (not JSON),
  - strings holding a lone UTF-16 surrogate (`"\\ud800"` is valid JSON escape syntax, but no UTF-8 file,
    hash or engine call can carry it), found in keys and values alike and reported with their path.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_SURROGATE_RE = re.compile("[\ud800-\udfff]")


class BadRequest(ValueError):
    """The request is not acceptable; the message starts with the field (or `body`) it is about."""


class NotJson(BadRequest):
    """The body is not JSON text at all (a JSON-RPC parse error, as opposed to an unacceptable value)."""


@dataclass(frozen=True)
class JsonLimits:
    max_depth: int
    max_number_chars: int


def parse_json(raw: bytes, limits: JsonLimits) -> Any:
    """`raw` as a JSON value; raises NotJson or BadRequest with a short reason naming the place."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise NotJson(f"body: not valid UTF-8 (byte {e.start})") from None

    def number(literal: str) -> Any:
        if len(literal) > limits.max_number_chars:
            raise BadRequest(f"body: a number longer than {limits.max_number_chars} characters")
        return float(literal) if any(c in literal for c in ".eE") else int(literal)

    def constant(name: str) -> Any:
        raise NotJson(f"body: {name} is not JSON")

    try:
        value = json.loads(text, parse_int=number, parse_float=number, parse_constant=constant)
    except json.JSONDecodeError as e:
        raise NotJson(f"body: not valid JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
    except RecursionError:
        raise BadRequest(f"body: nested deeper than {limits.max_depth} levels") from None
    check_value(value, limits.max_depth)
    return value


def check_value(value: Any, max_depth: int) -> None:
    """Nesting at most `max_depth` (a bare scalar is depth 0, `{}` depth 1) and no lone surrogate in any
    string; iterative, so a deep value cannot exhaust the stack here either."""
    # (node, depth, path): the path is a linked tuple (parent path, key), formatted only on error.
    stack: list[tuple[Any, int, Any]] = [(value, 0, None)]
    while stack:
        node, depth, path = stack.pop()
        if isinstance(node, str):
            _check_text(node, path)
        elif isinstance(node, (dict, list)):
            if depth + 1 > max_depth:
                raise BadRequest(f"{_format(path)}: nested deeper than {max_depth} levels")
            if isinstance(node, dict):
                for k, v in node.items():
                    _check_text(k, (path, k))
                    stack.append((v, depth + 1, (path, k)))
            else:
                stack.extend((v, depth + 1, (path, i)) for i, v in enumerate(node))


def check_depth(value: Any, max_depth: int) -> None:
    """Nesting at most `max_depth`, containers only (strings are not looked at): for a value from a parser
    that already refuses lone surrogates (orjson), whose strings need no second pass."""
    stack: list[tuple[Any, int, Any]] = [(value, 0, None)]
    while stack:
        node, depth, path = stack.pop()
        if isinstance(node, dict):
            items: Any = node.items()
        elif isinstance(node, list):
            items = enumerate(node)
        else:
            continue
        if depth + 1 > max_depth:
            raise BadRequest(f"{_format(path)}: nested deeper than {max_depth} levels")
        stack.extend((v, depth + 1, (path, k)) for k, v in items if isinstance(v, (dict, list)))


def require_encodable(text: str, where: str) -> str:
    """`text`, if it can be written as UTF-8 (no lone surrogate); BadRequest naming `where` otherwise."""
    m = _find_surrogate(text)
    if m is not None:
        raise BadRequest(f"{where}: lone UTF-16 surrogate \\u{ord(m.group()):04x} at character {m.start()}")
    return text


def _check_text(text: str, path: Any) -> None:
    if _find_surrogate(text) is not None:
        require_encodable(text, _format(path))


# A character-class search runs about 10 ns a character: one call over a 4 MB turn would hold the GIL
# for 40 ms, so a long text is searched in windows (the ingest path runs beside recalls, see redact.py).
_WINDOW = 64 * 1024


def _find_surrogate(text: str) -> re.Match[str] | None:
    if text.isascii():  # constant time in CPython: the string knows it holds only ASCII
        return None
    for pos in range(0, len(text), _WINDOW):
        m = _SURROGATE_RE.search(text, pos, pos + _WINDOW)
        if m is not None:
            return m
    return None


def _format(path: Any) -> str:
    """(((None, 'turns'), 3), 'text') -> 'turns[3].text'; the root is 'body'."""
    parts: list[str] = []
    while path is not None:
        path, key = path
        parts.append(f"[{key}]" if isinstance(key, int) else f".{_short(key)}")
    out = "".join(reversed(parts)).lstrip(".")
    return out or "body"


def _short(key: str) -> str:
    """A key as it may appear in an error message: printable, at most 40 characters."""
    key = _SURROGATE_RE.sub("\ufffd", key)
    return key if len(key) <= 40 and key.isprintable() else repr(key[:40])

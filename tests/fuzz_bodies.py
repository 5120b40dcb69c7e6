"""Seeded generators of bad request bodies for the service's routes (used by tests/test_service_fuzz.py).

Each generator takes a `random.Random` and returns raw bytes: a valid body mutated at one level (a field
of the wrong type or value, JSON that is not acceptable, bytes that are not JSON or not UTF-8). Most are
refused; a few mutations happen to stay valid, which is fine: the fuzz asserts no 5xx, not a refusal.
Bodies stay small (a few KB, the deep ones up to ~100 KB) so ten thousand of them take seconds.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

Gen = Callable[[random.Random], bytes]

# Values of every JSON type and the strings that broke things before: lone surrogates, calendar edges.
ODD_STRINGS = [
    "", " ", "\x00", "\ud800", "\udfff", "a\ud83d", "\ud83d\ude80", "é" * 3, "x" * 3000, "-eyJ" * 500,
    "0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00", "0000-00-00", "2026-13-45T99:99:99Z",
    "2026-10-01T09:00:00Z", "2026-10-01T09:00:00+25:00", "2026-10-01", "now", "../../etc/passwd", "a/b",
    "con", "nul", ".", "..", "\n", "\u2028", "\ufeff", "%00", "user", "assistant", "tool", "system",
    "[2026-10-01 09:00 UTC]", "sk-proj-" + "A" * 30, "\\ud800",
]
ODD_VALUES: list[Any] = [
    None, True, False, 0, -1, 1.5, 10**30, -(10**30), 1e308, [], {}, [1, 2], {"a": 1}, [[[]]],
    {"$ref": "#"}, ["user"],
]


def odd_value(rnd: random.Random) -> Any:
    return rnd.choice(ODD_STRINGS) if rnd.random() < 0.6 else rnd.choice(ODD_VALUES)


def _valid_turn(rnd: random.Random, i: int) -> dict[str, Any]:
    turn: dict[str, Any] = {"role": "user" if i % 2 == 0 else "assistant",
                            "text": f"Fuzz turn {i}: the Ghent line L-{rnd.randint(1, 99)} changeover.",
                            "ts": f"2026-10-{1 + i % 28:02d}T09:{i % 60:02d}:00Z"}
    if rnd.random() < 0.3:
        turn["id"] = f"t-{i}"
    return turn


def valid_turns_body(rnd: random.Random, user: str = "fuzz") -> dict[str, Any]:
    return {"user": user, "conversation_id": f"fz-{rnd.randint(0, 9)}",
            "turns": [_valid_turn(rnd, i) for i in range(rnd.randint(1, 4))]}


def _mutate_field(rnd: random.Random, body: dict[str, Any]) -> dict[str, Any]:
    """One field of the body, of a turn, or of the body's shape, replaced by an odd value."""
    where = rnd.randrange(6)
    if where == 0:
        body[rnd.choice(["user", "conversation_id", "turns"])] = odd_value(rnd)
    elif where == 1:
        del body[rnd.choice(["user", "conversation_id", "turns"])]
    elif where == 2:
        turn = rnd.choice(body["turns"])
        turn[rnd.choice(["role", "text", "ts", "id"])] = odd_value(rnd)
    elif where == 3:
        turn = rnd.choice(body["turns"])
        turn.pop(rnd.choice(["role", "text", "ts"]), None)
    elif where == 4:
        body["turns"][rnd.randrange(len(body["turns"]))] = odd_value(rnd)
    else:
        body[rnd.choice(["extra", "", "\ud800", "user "])] = odd_value(rnd)
    return body


def _bytes_of(rnd: random.Random, value: Any) -> bytes:
    """JSON text of `value`: escaped or raw UTF-8 (a lone surrogate as raw UTF-8 is invalid bytes)."""
    text = json.dumps(value, ensure_ascii=rnd.random() < 0.5)
    return text.encode("utf-8", "surrogatepass")


def _corrupt(rnd: random.Random, raw: bytes) -> bytes:
    """Byte-level damage: cut, flip, insert bytes that are not UTF-8 or not JSON."""
    kind = rnd.randrange(6)
    if kind == 0:
        return raw[: rnd.randrange(len(raw))]
    pos = rnd.randrange(len(raw) + 1)
    if kind == 1:
        junk = rnd.choice([b"\xff", b"\xc3", b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80\x80", b"\xfe\xff"])
    elif kind == 2:
        junk = rnd.choice([b"{", b"}", b"[", b"]", b",", b":", b'"', b"\\", b"\\u", b"\\ud800", b"\x00", b"NaN"])
    elif kind == 3:
        return bytes(b ^ (1 << rnd.randrange(8)) if rnd.random() < 0.02 else b for b in raw)
    elif kind == 4:
        return rnd.choice([b"\xef\xbb\xbf", b"\xff\xfe", b"\x00\x00\xfe\xff"]) + raw
    else:
        return raw + rnd.choice([b"x", b"}", b" []", b"\x00", b"\n{}"])
    return raw[:pos] + junk + raw[pos:]


def _structural(rnd: random.Random) -> bytes:
    """JSON at the limits: deep nesting, long numbers, odd constants, top-level non-objects."""
    kind = rnd.randrange(8)
    depth = rnd.choice([33, 40, 200, 1_500, 20_000])
    if kind == 0:
        return b"[" * depth + b"]" * depth
    if kind == 1:
        return b'{"a":' * depth + b"1" + b"}" * depth
    if kind == 2:
        inner = b"[" * depth + b"]" * depth
        return b'{"user": "fuzz", "conversation_id": "fz", "turns": [{"role": "user", "text": ' + inner + b"}]}"
    if kind == 3:
        digits = rnd.choice([41, 100, 4_301, 20_000])
        return b'{"user": "fuzz", "n": ' + rnd.choice([b"", b"-"]) + b"9" * digits + b"}"
    if kind == 4:
        return b'{"user": "fuzz", "x": ' + rnd.choice([b"NaN", b"Infinity", b"-Infinity", b"1e99999", b"1" * 30 + b".5e-99999"]) + b"}"
    if kind == 5:
        return rnd.choice([b"", b" ", b"null", b"0", b'"text"', b"[]", b"[{}]", b"true", b"\n\n", b"{}"])
    if kind == 6:
        return b'{"user": "fuzz", "turns": ' + b"[" * 5 + b'"\\ud800"' + b"]" * 5 + b"}"
    return b'{"user":"a","user":"b","conversation_id":"fz","turns":[],"turns":[{"role":"user","text":"x","ts":"2026-10-01T00:00:00Z"}]}'


def turns_body(rnd: random.Random) -> bytes:
    """One bad (or oddly valid) body for POST /turns."""
    pick = rnd.random()
    if pick < 0.5:
        return _bytes_of(rnd, _mutate_field(rnd, valid_turns_body(rnd)))
    if pick < 0.8:
        return _corrupt(rnd, _bytes_of(rnd, valid_turns_body(rnd)))
    return _structural(rnd)


def _rpc(rnd: random.Random) -> dict[str, Any]:
    method = rnd.choice(["tools/call", "tools/call", "tools/list", "initialize", "ping", "resources/list",
                         "notifications/initialized", "nope", ""])
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rnd.choice([1, "a", 0, 10**20]), "method": method}
    if method == "tools/call":
        msg["params"] = {"name": "recall_my_conversations", "arguments": {"query": "N-11 upgrade"}}
    elif method == "initialize":
        msg["params"] = {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "fuzz", "version": "0"}}
    return msg


def _mutate_rpc(rnd: random.Random, msg: dict[str, Any]) -> Any:
    where = rnd.randrange(7)
    if where == 0:
        msg[rnd.choice(["jsonrpc", "id", "method", "params"])] = odd_value(rnd)
    elif where == 1:
        msg.pop(rnd.choice(["jsonrpc", "id", "method"]), None)
    elif where == 2:
        msg["params"] = {"name": odd_value(rnd), "arguments": {"query": "x"}}
    elif where == 3:
        msg["method"] = "tools/call"
        msg["params"] = {"name": "recall_my_conversations", "arguments": rnd.choice([
            {"query": odd_value(rnd)}, {}, {"query": "x", "user": "bob"}, odd_value(rnd), {"q": "x"}])}
    elif where == 4:
        return [msg, odd_value(rnd)]  # a batch (not in this protocol version)
    elif where == 5:
        msg["result"] = odd_value(rnd)  # a response or error where a request belongs
        msg.pop("method", None)
    else:
        msg["params"] = odd_value(rnd)
    return msg


def mcp_body(rnd: random.Random) -> bytes:
    """One bad (or oddly valid) body for POST /mcp."""
    pick = rnd.random()
    if pick < 0.5:
        return _bytes_of(rnd, _mutate_rpc(rnd, _rpc(rnd)))
    if pick < 0.8:
        return _corrupt(rnd, _bytes_of(rnd, _rpc(rnd)))
    return _structural(rnd)

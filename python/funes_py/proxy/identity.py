"""Who a message is and which conversation a request continues (pure).

* `canonical(msg)`: the bytes that identify a message: role, text, tool calls (name, arguments with their JSON
  normalised, call id), tool_call_id and name. Reasoning and fields an app adds or drops on resend are left
  out, so a history resent by the client hashes the same.
* Message ids are content-and-position hashes within a conversation: `m` + 12 hex digits of
  sha256(conversation, position, canonical). Resending a history yields the same ids (nothing new to
  archive); editing one old message changes only its own id (one new archive line).
* The chain: c_0 = H(canonical_0), c_i = H(c_{i-1} + canonical_i). A request continues the conversation that
  owns the longest known chain prefix (at least through its first user message, so a shared system prompt
  alone never merges two conversations). A request that matches nothing starts a new conversation, named
  by its chain so the name is the same after a restart.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .messages import text_of, tool_calls_of

CHAIN_HEX = 16
ID_HEX = 12
CONVERSATION_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")


def canonical(msg: Mapping[str, Any]) -> bytes:
    content = msg.get("content")
    if type(content) is str and not msg.get("tool_calls") and not msg.get("name"):
        # The common message, built in one step (every request re-identifies the whole history).
        cid = msg.get("tool_call_id")
        text = f"{msg.get('role') or ''}\x1e{content}" + (f"\x1eresult\x1f{cid}" if cid else "")
        return text.encode("utf-8", "surrogatepass")
    parts = [str(msg.get("role") or ""), text_of(content)]
    for cid, name, args in tool_calls_of(msg):
        parts.append(f"call\x1f{cid}\x1f{name}\x1f{args}")
    if msg.get("tool_call_id"):
        parts.append(f"result\x1f{msg['tool_call_id']}")
    if msg.get("name"):
        parts.append(f"name\x1f{msg['name']}")
    return "\x1e".join(parts).encode("utf-8", "surrogatepass")


def key(msg: Mapping[str, Any]) -> bytes:
    """The digest of a message's canonical form: hashed once per request, then combined cheaply into its id
    and its chain link (a 100K-token history is one pass of sha256, not three)."""
    return hashlib.sha256(canonical(msg)).digest()


def message_id(conversation: str, position: int, content_key: bytes) -> str:
    h = hashlib.sha256(f"{conversation}\x00{position}\x00".encode())
    h.update(content_key)
    return "m" + h.hexdigest()[:ID_HEX]


def chain(keys: Sequence[bytes]) -> list[str]:
    """The chain hash after each message, as CHAIN_HEX hex digits (each link hashes the previous one's
    digits, so the chain can be extended from a stored value: `next_chain`)."""
    out = []
    prev = b""
    sha = hashlib.sha256
    for k in keys:
        prev = sha(prev + k).digest()[: CHAIN_HEX // 2]
        out.append(prev.hex())
    return out


def next_chain(prev: str, content_key: bytes) -> str:
    return hashlib.sha256(bytes.fromhex(prev) + content_key).hexdigest()[:CHAIN_HEX]


def first_user(messages: Sequence[Mapping[str, Any]]) -> int | None:
    for i, m in enumerate(messages):
        if m.get("role") == "user":
            return i
    return None


@dataclass(frozen=True)
class Identified:
    """One request's history, identified: its conversation, and per message its id and chain hash."""

    conversation: str
    ids: list[str]
    chains: list[str]
    known_prefix: int  # how many leading messages matched a known chain (0: a new conversation)


def identify(
    messages: Sequence[Mapping[str, Any]], known: Mapping[str, str], named: str | None = None
) -> Identified:
    """`known`: chain hash -> conversation. `named`: a conversation the client named (header), which wins."""
    keys = [key(m) for m in messages]
    chains = chain(keys)
    floor = first_user(messages)
    floor = len(messages) - 1 if floor is None else floor
    conv, prefix = None, 0
    for i in range(len(chains) - 1, floor - 1, -1):
        conv = known.get(chains[i])
        if conv is not None:
            prefix = i + 1
            break
    if named is not None:
        conv = named
    if conv is None:
        conv = "c" + chains[-1][:CHAIN_HEX] if chains else "c0"
    sha, head = hashlib.sha256, conv.encode()
    ids = ["m" + sha(b"%s\x00%d\x00%s" % (head, i, k)).hexdigest()[:ID_HEX] for i, k in enumerate(keys)]
    return Identified(conv, ids, chains, prefix)

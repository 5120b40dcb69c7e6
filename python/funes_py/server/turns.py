"""The ingest body -> `.funes.jsonl` lines (pure: validation, secret masking, the pasted-recall rule).

Body: {"user": str, "conversation_id": str, "turns": [{"id"?: str, "role": str, "text": str, "ts": ISO-8601}]},
the whole conversation so far. Each turn i becomes one line
{"session_id": conversation_id, "turn_uuid": id or f"{conversation_id}-{i}", "seq": i, "ts": ..., "role": ...,
 "harness": "gateway", "blocks": [{"block_type": "text", "text": ...}]}.
`seq` is the turn's position in the body even when earlier turns are skipped, so a resend of the same
conversation produces the same lines and the engine sees nothing new.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from typing import Any

from ..jsonbody import BadRequest, JsonLimits, parse_json, require_encodable
from ..redact import mask_secrets
from .passages import strip_pasted_recall

CONVERSATION_ID_RE = re.compile(r"[A-Za-z0-9_-]{1,128}")
MAX_USER_CHARS = 512
MAX_TURN_ID_CHARS = 256
_MAX_TS_CHARS = 64  # the longest ISO-8601 form Python reads is 32; room for spaces around it
HARNESS = "gateway"
# Roles that become memories. Others ("tool", "system", ...) are accepted and not stored: tool output,
# this service's own answers included, is not something the user said.
STORED_ROLES = ("user", "assistant")


__all__ = ["BadRequest", "Conversation", "TurnLimits", "parse_body", "parse_request", "require_conversation_id",
           "require_user"]


@dataclass(frozen=True)
class TurnLimits:
    max_turns: int
    max_turn_chars: int


@dataclass(frozen=True)
class Conversation:
    user: str
    conversation_id: str
    lines: list[str]  # .funes.jsonl lines, without newlines
    skipped: int  # turns not stored (other roles, empty after masking, pasted recall output)


def parse_ts(value: Any, where: str) -> str:
    """ISO-8601 -> 'YYYY-MM-DDTHH:MM:SS(.ffffff)Z' in UTC; a time without zone is taken as UTC."""
    if not isinstance(value, str) or not value.strip():
        raise BadRequest(f"{where}: required, an ISO-8601 timestamp")
    if len(value) > _MAX_TS_CHARS:
        raise BadRequest(f"{where}: longer than {_MAX_TS_CHARS} characters, not an ISO-8601 timestamp")
    try:
        t = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise BadRequest(f"{where}: {value[:40]!r} is not an ISO-8601 timestamp") from None
    try:
        t = t.replace(tzinfo=dt.UTC) if t.tzinfo is None else t.astimezone(dt.UTC)
    except OverflowError:  # 0001-01-01T00:00+01:00 is in year 0 in UTC; 9999-12-31T23:59-01:00 in 10000
        raise BadRequest(f"{where}: {value[:40]!r} falls outside the years 1 to 9999 in UTC") from None
    return t.isoformat().replace("+00:00", "Z")


def require_user(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise BadRequest("user: required, a non-empty string")
    if len(value) > MAX_USER_CHARS:
        raise BadRequest(f"user: longer than {MAX_USER_CHARS} characters")
    return require_encodable(value, "user")


def require_conversation_id(value: Any) -> str:
    if not isinstance(value, str) or not CONVERSATION_ID_RE.fullmatch(value):
        raise BadRequest("conversation_id: required, 1 to 128 of A-Z a-z 0-9 _ -")
    return value


def parse_body(body: Any, mask: bool, limits: TurnLimits | None = None) -> Conversation:
    """Validate an ingest body and convert it; raises BadRequest naming the first bad field.

    Cost is linear in the body's size (the masking patterns and the pasted-recall rule are linear), but a
    large body still takes a while: callers run this off the event loop."""
    if not isinstance(body, dict):
        raise BadRequest("body: expected a JSON object")
    user = require_user(body.get("user"))
    cid = require_conversation_id(body.get("conversation_id"))
    turns = body.get("turns")
    if not isinstance(turns, list) or not turns:
        raise BadRequest("turns: required, a non-empty list")
    if limits is not None and len(turns) > limits.max_turns:
        raise BadRequest(f"turns: {len(turns)} turns, more than the limit of {limits.max_turns}")

    lines: list[str] = []
    skipped = 0
    for i, turn in enumerate(turns):
        where = f"turns[{i}]"
        if not isinstance(turn, dict):
            raise BadRequest(f"{where}: expected an object")
        role, text, tid = turn.get("role"), turn.get("text"), turn.get("id")
        if not isinstance(role, str) or not role.strip():
            raise BadRequest(f"{where}.role: required, a non-empty string")
        if not isinstance(text, str):
            raise BadRequest(f"{where}.text: required, a string")
        if limits is not None and len(text) > limits.max_turn_chars:
            raise BadRequest(f"{where}.text: {len(text)} characters, more than the limit of {limits.max_turn_chars}")
        ts = parse_ts(turn.get("ts"), f"{where}.ts")
        if tid is not None and (not isinstance(tid, str) or not tid.strip() or len(tid) > MAX_TURN_ID_CHARS):
            raise BadRequest(f"{where}.id: when given, a non-empty string of at most {MAX_TURN_ID_CHARS} characters")
        require_encodable(text, f"{where}.text")
        if tid is not None:
            require_encodable(tid, f"{where}.id")

        role = role.strip().lower()
        if role not in STORED_ROLES:
            skipped += 1
            continue
        masked = mask_secrets(text) if mask else text
        kept = strip_pasted_recall(masked) if role == "assistant" else masked
        if kept is None or not kept.strip():
            skipped += 1
            continue
        head = json.dumps({
            "session_id": cid,
            "turn_uuid": tid or f"{cid}-{i}",
            "seq": i,
            "ts": ts,
            "role": role,
            "harness": HARNESS,
        }, ensure_ascii=False)
        lines.append(f'{head[:-1]}, "blocks": [{{"block_type": "text", "text": {_json_string(kept)}}}]}}')
    return Conversation(user, cid, lines, skipped)


# json.dumps of a 4 MB text is one C call of tens of milliseconds holding the GIL; escaping is per character,
# so the string is encoded in pieces and joined (the same bytes as one call).
_DUMPS_PIECE = 64 * 1024


def _json_string(text: str) -> str:
    if len(text) <= _DUMPS_PIECE:
        return json.dumps(text, ensure_ascii=False)
    pieces = (json.dumps(text[i:i + _DUMPS_PIECE], ensure_ascii=False)[1:-1]
              for i in range(0, len(text), _DUMPS_PIECE))
    return '"' + "".join(pieces) + '"'



def parse_request(raw: bytes, json_limits: JsonLimits, limits: TurnLimits, mask: bool) -> Conversation:
    """The raw ingest body -> a Conversation (the whole of the write path's CPU work, for a worker thread)."""
    return parse_body(parse_json(raw, json_limits), mask=mask, limits=limits)

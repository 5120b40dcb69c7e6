"""Shared by the tests of funes_py.sources: where the samples are, copying them, reading an adapter's items."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data" / "sources"

CLAUDE_CODE = "claude_code/-home-ana-projects-pumpctl/5b1f0c2e-8d4a-4f1e-9c3b-2a7e6d5f4c31.jsonl"
CODEX = "codex/2026/03/05/rollout-2026-03-05T09-12-44-0199a1b2-7c3d-7e4f-8a5b-6c7d8e9f0a1b.jsonl"
CURSOR = (
    "cursor/-home-ana-web-shop/agent-transcripts/3c9d2e1f-4a5b-4c6d-8e7f-90a1b2c3d4e5/"
    "3c9d2e1f-4a5b-4c6d-8e7f-90a1b2c3d4e5.jsonl"
)
CHATGPT = "chatgpt/conversations.json"
CLAUDE_AI = "claude_ai/conversations.json"
NATIVE = "native/gateway-0042.funes.jsonl"

CLAUDE_CODE_SESSION = "5b1f0c2e-8d4a-4f1e-9c3b-2a7e6d5f4c31"
CODEX_SESSION = "0199a1b2-7c3d-7e4f-8a5b-6c7d8e9f0a1b"
CURSOR_SESSION = "3c9d2e1f-4a5b-4c6d-8e7f-90a1b2c3d4e5"
CHATGPT_SOURDOUGH = "67c6d2a0-1b2c-8003-9d4e-5f6a7b8c9d0e"
CLAUDE_AI_TAX = "8e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b"
CLAUDE_AI_BIKE = "9f2a3b4c-5d6e-4f70-8192-a3b4c5d6e7f8"


def copy_sample(rel: str, dest: Path) -> Path:
    """The sample `rel` copied under `dest`, keeping its relative path (a session id may come from it)."""
    out = dest / rel
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(DATA / rel, out)
    return out


def read_items(path: Path, format: str | None = None) -> list[Any]:
    from funes_py.sources import get, items, units

    return list(items(units(path), get(format) if format else None))


def turns_of(path: Path, format: str | None = None) -> list[dict[str, Any]]:
    """Every turn line the adapters make of `path`, parsed, with its place as `_place`."""
    out = []
    for src in read_items(path, format):
        for place, line in src.lines or []:
            row = json.loads(line)
            row["_place"] = place
            out.append(row)
    return out


def bad_of(path: Path) -> list[tuple[int, str]]:
    return [b for src in read_items(path) for b in src.bad]


def append_jsonl(path: Path, *records: Any) -> None:
    with path.open("a", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


# Damage, as a reader meets it: a first line cut off, a record nested past any parser's depth, and a record of
# the format itself (it would be indexed) longer than the record limit. The place each gets in a damaged copy.
BROKEN_FIRST, DEEP, LONG = 1, 3, 4
DEPTH = 5_000
SAMPLES = {"claude-code": CLAUDE_CODE, "codex": CODEX, "cursor": CURSOR, "funes": NATIVE,
           "chatgpt": CHATGPT, "claude-ai": CLAUDE_AI}  # fmt: skip
# The samples' own corrupt record and turn count (tests/test_sources_cli_indexes_a_mixed_directory.py).
SAMPLE_BAD = {"claude-code": [11], "codex": [12], "cursor": [5], "funes": [2], "chatgpt": [3, 4], "claude-ai": [3]}
SAMPLE_TURNS = {"claude-code": 9, "codex": 7, "cursor": 5, "funes": 2, "chatgpt": 7, "claude-ai": 8}


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def record_of(fmt: str, content: str) -> str:
    """A record of `fmt` whose text is `content` (raw JSON text: a string literal, or the deep nesting)."""
    if fmt == "claude-code":
        rec: dict[str, Any] = {"type": "user", "sessionId": CLAUDE_CODE_SESSION, "uuid": "f0000000-0000-4000-8000-000000000001",
                               "timestamp": "2026-03-04T10:30:00Z", "message": {"role": "user", "content": "@@"}}  # fmt: skip
    elif fmt == "codex":
        rec = {"timestamp": "2026-03-05T09:30:00Z", "type": "response_item",
               "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "@@"}]}}  # fmt: skip
    elif fmt == "cursor":
        rec = {"role": "user", "message": {"content": [{"type": "text", "text": "@@"}]}}
    else:
        rec = {"session_id": "gateway-0042", "turn_uuid": "gateway-0042-9", "seq": 9, "ts": "2026-03-09T08:05:00Z",
               "role": "user", "harness": "gateway", "blocks": [{"block_type": "text", "text": "@@"}]}  # fmt: skip
    return json.dumps(rec).replace('"@@"', content)


def _long_export(fmt: str, conv: dict[str, Any], size: int) -> dict[str, Any]:
    """A copy of `conv` under another id, one of its messages `size` characters long: a conversation that
    would be indexed but for its length."""
    conv = json.loads(json.dumps(conv))
    long_text = "the tide tables for the Wadden crossing " * (size // 40 + 1)
    if fmt == "chatgpt":
        conv["conversation_id"] = conv["id"] = "long-0001"
        node = conv["mapping"][conv["current_node"]]
        node["message"]["content"] = {"content_type": "text", "parts": [long_text]}
    else:
        conv["uuid"] = "long-0001"
        conv["chat_messages"][0]["content"] = [{"type": "text", "text": long_text}]
    return conv


def damaged_copy(fmt: str, dest: Path, long_size: int) -> Path:
    """The sample of `fmt` copied under `dest` with a broken first record (line or conversation 1), one nested
    DEPTH deep (DEEP) and one of `long_size` bytes (LONG) between its good records: the sample's own record 1
    becomes 2, its record k>1 becomes k+3."""
    rel = SAMPLES[fmt]
    out = dest / rel
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt in ("chatgpt", "claude-ai"):
        convs = json.loads((DATA / rel).read_text())
        deep = json.dumps({**convs[0], "uuid": "deep-0001", "conversation_id": "deep-0001", "id": "deep-0001"})
        deep = deep[:-1] + ', "metadata": ' + _nested(DEPTH) + "}"
        parts = ['{"title": "cut off", "mapping": broken}', json.dumps(convs[0]), deep,
                 json.dumps(_long_export(fmt, convs[0], long_size)), *map(json.dumps, convs[1:])]  # fmt: skip
        out.write_text("[" + ",\n".join(parts) + "]\n")
        return out
    lines = (DATA / rel).read_text().splitlines()
    # A record of the format with one field nested DEPTH deep (Python's parser cannot read it). The engine reads
    # native lines itself, and its parser skips an unknown field without recursing: there the damage is a line
    # that is nothing but the nesting.
    deep = record_of(fmt, '"nested too deep"')[:-1] + ', "meta": ' + _nested(DEPTH) + "}"
    deep = _nested(DEPTH) if fmt == "funes" else deep
    damage = [deep, record_of(fmt, json.dumps("x" * long_size))]
    out.write_text("\n".join(['{"type": "user", "sessionId": "cut off', lines[0], *damage, *lines[1:]]) + "\n")
    return out


def damaged_places(fmt: str) -> list[int]:
    """Every place a damaged copy of `fmt` reports: the damage and the sample's own corrupt records, shifted."""
    return sorted([BROKEN_FIRST, DEEP, LONG, *(k + 3 if k > 1 else 2 for k in SAMPLE_BAD[fmt])])

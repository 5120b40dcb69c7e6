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

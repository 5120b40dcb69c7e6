"""The formats funes-py reads, their names, where each lives by default and the one command that indexes it.

A new format is a module with `NAME`, `read(unit) -> Iterator[Source]` (and `looks_like(record)` for a JSONL
format) plus one `Format` entry here; detection and discovery need nothing else."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from . import chatgpt, claude_ai, claude_code, codex, cursor, native
from .common import Source, Unit
from .tail import ReaderFactory


@dataclass(frozen=True)
class Format:
    name: str
    label: str
    read: Callable[[Unit], Iterator[Source]]
    # Where it lives by default ('~' and at most one '*' segment), what its files are called there (what
    # `funes-py sources` counts), and the command a user runs.
    locations: tuple[str, ...]
    pattern: str
    command: str
    # JSONL formats: does one record look like ours? None for a JSON export (recognised by its first keys).
    looks_like: Callable[[dict[str, Any]], bool] | None = None
    # A format an agent appends to all day: its per-file reader, which `sources.tail` resumes where the last
    # read stopped (`funes-py sync` and the watcher). None: a file is read whole when it changes.
    reader: ReaderFactory | None = None


FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format(native.NAME, "funes-py's own .funes.jsonl", native.read, (), "*.funes.jsonl",
               "funes-py index DIR_OF_FUNES_JSONL", native.looks_like),
        Format(claude_code.NAME, "Claude Code sessions", claude_code.read, ("~/.claude/projects",), "*.jsonl",
               "funes-py index ~/.claude/projects", claude_code.looks_like, claude_code.Reader),
        Format(codex.NAME, "Codex CLI rollouts", codex.read, ("~/.codex/sessions",), "rollout-*.jsonl",
               "funes-py index ~/.codex/sessions", codex.looks_like, codex.Reader),
        Format(cursor.NAME, "Cursor agent transcripts", cursor.read, ("~/.cursor/projects/*/agent-transcripts",),
               "*.jsonl", "funes-py index ~/.cursor/projects", cursor.looks_like, cursor.Reader),
        Format(chatgpt.NAME, "ChatGPT data export", chatgpt.read, (), "conversations.json",
               "funes-py index ~/Downloads/chatgpt-export.zip"),
        Format(claude_ai.NAME, "Claude.ai data export", claude_ai.read, (), "conversations.json",
               "funes-py index ~/Downloads/claude-ai-export.zip"),
    )
}  # fmt: skip

# JSONL formats in the order detection tries them (the most specific record shape first).
JSONL_ORDER = (native.NAME, codex.NAME, claude_code.NAME, cursor.NAME)
EXPORTS = (chatgpt.NAME, claude_ai.NAME)
_ALIASES = {"native": native.NAME, "funes.jsonl": native.NAME, "claude": claude_code.NAME,
            "claude_code": claude_code.NAME, "claude.ai": claude_ai.NAME, "claude_ai": claude_ai.NAME}  # fmt: skip


def get(name: str) -> Format:
    """The format called `name` (a few spellings accepted); ValueError listing the names otherwise."""
    key = name.strip().lower()
    fmt = FORMATS.get(_ALIASES.get(key, key))
    if fmt is None:
        raise ValueError(f"unknown format {name!r}: one of {', '.join(FORMATS)}")
    return fmt

"""``funes-py setup claude-code|codex|cursor``: the stdio server registered in an agent's MCP configuration.

Each client keeps its MCP servers in its own user-level file (what its own ``mcp add`` command writes):

* Claude Code: ``~/.claude.json``, ``mcpServers.funes = {"type": "stdio", "command", "args", "env"}``;
* Codex: ``~/.codex/config.toml``, a ``[mcp_servers.funes]`` table with ``command`` and ``args``;
* Cursor: ``~/.cursor/mcp.json``, ``mcpServers.funes = {"command", "args"}``.

``plan`` says what would change (the entry as it is and as it will be) and writes nothing; ``apply`` writes
it, keeping the previous file as ``<file>.funes-backup`` and writing through a temporary file and a rename.
Every other key of the file is kept as it was; a second run finds the entry in place and changes nothing.
The command is this Python with ``-m funes_py.cli mcp --home HOME``: it works whatever the agent's PATH is."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from .privacy import SERVER_NAME

CLIENTS = ("claude-code", "codex", "cursor")


@dataclasses.dataclass(frozen=True)
class Change:
    client: str
    file: Path
    before: str | None  # the entry as it is (None: absent)
    after: str  # the entry as it will be
    new_text: str  # the whole file as it will be

    @property
    def needed(self) -> bool:
        return self.before != self.after


def command(home: Path) -> list[str]:
    return [sys.executable, "-m", "funes_py.cli", "mcp", "--home", str(home)]


def config_file(client: str, user_home: Path | None = None) -> Path:
    base = user_home or Path(os.path.expanduser("~"))
    return {
        "claude-code": base / ".claude.json",
        "codex": base / ".codex" / "config.toml",
        "cursor": base / ".cursor" / "mcp.json",
    }[client]


def plan(client: str, home: Path, user_home: Path | None = None) -> Change:
    """What registering the server for ``client`` changes. ValueError for a file that is not what that client
    writes (unparseable JSON, say): nothing is written over it."""
    if client not in CLIENTS:
        raise ValueError(f"unknown client {client!r}: one of {', '.join(CLIENTS)}")
    file = config_file(client, user_home)
    text = file.read_text(encoding="utf-8") if file.exists() else ""
    argv = command(home)
    if client == "codex":
        return _plan_toml(client, file, text, argv)
    entry: dict[str, Any] = {"command": argv[0], "args": argv[1:]}
    if client == "claude-code":
        entry = {"type": "stdio", **entry, "env": {}}
    return _plan_json(client, file, text, entry)


def _plan_json(client: str, file: Path, text: str, entry: dict[str, Any]) -> Change:
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as e:
        raise ValueError(f"{file} is not valid JSON ({e.msg}, line {e.lineno}): fix it first, nothing was written") from None
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers", {}), dict):
        raise ValueError(f"{file}: `mcpServers` is not an object: fix it first, nothing was written")
    servers = data.setdefault("mcpServers", {})
    old = servers.get(SERVER_NAME)
    before = json.dumps(old, indent=2) if old is not None else None
    servers[SERVER_NAME] = entry
    return Change(client, file, before, json.dumps(entry, indent=2), json.dumps(data, indent=2) + "\n")


_TABLE = re.compile(rf"^\[mcp_servers\.{SERVER_NAME}\]\s*$", re.MULTILINE)
_NEXT_TABLE = re.compile(r"^\s*\[", re.MULTILINE)


def _plan_toml(client: str, file: Path, text: str, argv: list[str]) -> Change:
    import tomllib

    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{file} is not valid TOML ({e}): fix it first, nothing was written") from None
    after = f"[mcp_servers.{SERVER_NAME}]\ncommand = {json.dumps(argv[0])}\nargs = [{', '.join(json.dumps(a) for a in argv[1:])}]\n"
    m = _TABLE.search(text)
    if m is None:
        sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
        return Change(client, file, None, after, text + sep + after)
    nxt = _NEXT_TABLE.search(text, m.end())
    end = nxt.start() if nxt else len(text)
    before = text[m.start() : end].rstrip("\n") + "\n"
    rest = text[end:]
    new_text = text[: m.start()] + after + ("\n" + rest if rest else "")
    tomllib.loads(new_text)  # never write a file the client could not read
    return Change(client, file, before, after, new_text)


def apply(change: Change) -> Path | None:
    """Writes ``change`` (if needed); returns the backup's path (None when there was no file or no change)."""
    if not change.needed:
        return None
    change.file.parent.mkdir(parents=True, exist_ok=True)
    backup = None
    if change.file.exists():
        backup = change.file.with_name(change.file.name + ".funes-backup")
        backup.write_bytes(change.file.read_bytes())
    tmp = change.file.with_name(f".{change.file.name}.funes-tmp")
    tmp.write_text(change.new_text, encoding="utf-8")
    if change.file.exists():
        os.chmod(tmp, change.file.stat().st_mode & 0o777)
    os.replace(tmp, change.file)
    return backup

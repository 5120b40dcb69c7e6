"""The one-person commands: ``funes-py sync`` (one pass over the agents' history files), ``funes-py mcp`` (the
MCP server over stdio, watching those files) and ``funes-py setup CLIENT`` (register that server with an
agent). ``funes_py.personal`` does the work; this module reads flags and prints."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from .exits import EXIT_ERROR, EXIT_OK, EXIT_USAGE, fail

COMMANDS = ("sync", "mcp", "setup")


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    s = sub.add_parser("sync", parents=[common], help="index what the agents wrote since the last sync (one pass)",
                       description="Read the agents' history files (Claude Code, Codex, Cursor at their default "
                       "locations, and every --source) from where the last pass stopped, and index the new turns. "
                       "Exclusions, the skip marker and private spans come from <home>/personal.toml.")  # fmt: skip
    _sources(s)
    s.add_argument("--json", action="store_true", help="print the result as JSON")
    s = sub.add_parser("mcp", parents=[common], help="serve the memory to one agent over stdio (MCP)",
                       description="An MCP server on stdin/stdout with the tools recall, get, sessions and scan; "
                       "it keeps the memory indexed from the agents' history files while it runs.")  # fmt: skip
    _sources(s)
    s.add_argument("--no-watch", action="store_true", help="serve only: do not backfill or watch the sources")
    s.add_argument("--project", help="the project a recall looks in first (default: the client's root, else the working directory)")
    s = sub.add_parser("setup", parents=[common], help="register `funes-py mcp` with an agent (claude-code, codex, cursor)",
                       description="Print the change to the agent's MCP configuration that registers this memory's "
                       "stdio server; --write makes it (the previous file is kept as <file>.funes-backup).")  # fmt: skip
    s.add_argument("client", choices=("claude-code", "codex", "cursor"))
    s.add_argument("--write", action="store_true", help="write the change (default: only print it)")


def _sources(s: argparse.ArgumentParser) -> None:
    s.add_argument("--source", action="append", metavar="PATH", help="also read this directory or file (repeatable)")
    s.add_argument("--no-default-sources", action="store_true", help="read only the --source paths and personal.toml's")


def _config(args: argparse.Namespace) -> Any:
    from ..personal.config import load_config

    return load_config(
        args.home,
        sources=getattr(args, "source", None),
        default_sources=False if getattr(args, "no_default_sources", False) else None,
    )


def run(args: argparse.Namespace) -> int:
    from ..config import ConfigError

    try:
        config = _config(args)
    except ConfigError as e:
        return fail(str(e), EXIT_USAGE)
    if args.cmd == "sync":
        return _sync(args, config)
    if args.cmd == "mcp":
        from ..personal.stdio import serve

        asyncio.run(serve(config, project=args.project, watch=not args.no_watch))
        return EXIT_OK
    return _setup(args, config)


def _sync(args: argparse.Namespace, config: Any) -> int:
    from ..engine import Engine
    from ..personal.sync import sync
    from ..personal.watch import SyncLock

    lock = SyncLock(config.home)
    if not lock.try_take():
        print(f"a running `funes-py mcp` (pid {lock.holder()}) keeps {config.home} in step: nothing to do", file=sys.stderr)
        return EXIT_OK
    report = sync(Engine(config.home), config)
    lock.release()
    for key, place, why in report.bad:
        print(f"skipped {key}:{place}: {why}", file=sys.stderr)
    if args.json:
        print(json.dumps(dataclasses.asdict(report), indent=2))
    else:
        print(report.summary())
    return EXIT_OK


def _setup(args: argparse.Namespace, config: Any) -> int:
    from ..personal import clients

    try:
        change = clients.plan(args.client, Path(config.home))
    except (ValueError, OSError) as e:
        return fail(str(e), EXIT_ERROR)
    if not change.needed:
        print(f"{change.file}: `funes` is already registered for {args.client}; nothing to change")
        return EXIT_OK
    print(f"{change.file}: {'replace' if change.before else 'add'} the MCP server `funes`:")
    if change.before:
        print("--- now\n" + change.before.rstrip())
    print("+++ then\n" + change.after.rstrip())
    if not args.write:
        print("(nothing written: run again with --write)")
        return EXIT_OK
    backup = clients.apply(change)
    print(f"written{f'; the previous file is {backup}' if backup else ''}. Restart {args.client} to load it.")
    return EXIT_OK

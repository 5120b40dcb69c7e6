"""`funes-py sources`: the formats funes-py reads and which of their default locations exist here.

It lists directories and counts file names; it opens no file (a history is private until the user names it
to `funes-py index`)."""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from .registry import FORMATS


@dataclass(frozen=True)
class Location:
    format: str
    label: str
    location: str  # as documented, with '~'
    path: str | None  # expanded, when it exists
    files: int  # files matching the format's name pattern under it
    command: str


def _count(root: Path, pattern: str) -> int:
    n = 0
    for _, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        n += sum(1 for f in files if not f.startswith(".") and fnmatch.fnmatch(f, pattern))
    return n


def locations(home: Path | None = None) -> list[Location]:
    """Each format's default locations: found ones with their file counts, missing ones with path None.
    Formats without a default location (exports, the native format) appear once with location ''."""
    home = home or Path.home()
    out = []
    for fmt in FORMATS.values():
        if not fmt.locations:
            out.append(Location(fmt.name, fmt.label, "", None, 0, fmt.command))
        for loc in fmt.locations:
            rel = loc.removeprefix("~/")
            found = sorted(home.glob(rel)) if "*" in rel else [home / rel]
            found = [p for p in found if p.is_dir()]
            if not found:
                out.append(Location(fmt.name, fmt.label, loc, None, 0, fmt.command))
            for p in found:
                out.append(Location(fmt.name, fmt.label, loc, str(p), _count(p, fmt.pattern), fmt.command))
    return out


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    s = subparsers.add_parser("sources", help="the formats funes-py reads and their locations on this machine")
    s.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    rows = locations()
    out = sys.stdout
    if args.json:
        json.dump([asdict(r) for r in rows], out, indent=2)
        out.write("\n")
        return 0
    out.write(f"{'format':<12} {'what':<28} {'where':<52} files\n")
    for r in rows:
        where = r.path or (f"{r.location} (not here)" if r.location else "(a file you name)")
        files = str(r.files) if r.path else "-"
        out.write(f"{r.format:<12} {r.label:<28} {where:<52} {files}\n")
    found = [r for r in rows if r.path]
    out.write("\nindex with:\n")
    for r in found or rows:
        if r.location or not found:
            out.write(f"  {r.command}\n")
    out.write(
        "Exports: `funes-py index` the zip you downloaded (or its conversations.json); --format NAME forces a format.\n"
    )
    return 0

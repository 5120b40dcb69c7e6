"""What an index run reads under a path: files and zip members, each with the format that reads it.

Nothing outside the given path is opened. Below it, hidden files and directories (a name starting with '.',
a writer's temporary file, `.git`) and `__MACOSX` folders in zips are skipped. A directory walk looks at
`*.jsonl`, `*.json` and `*.zip` files; a path given as a file is taken whatever its name. Listing costs a
stat per file (and a zip's central directory); formats are recognised only for the files that changed since
the last run (`items`), so an unchanged tree is neither opened nor parsed."""

from __future__ import annotations

import logging
import os
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path

from .common import Source, Unit
from .detect import is_blank, sniff
from .limits import Limits, over_limit
from .registry import Format

log = logging.getLogger("funes_py.sources")

WALKED_SUFFIXES = (".jsonl", ".json")
# What reading a damaged file can raise: the file is reported as unreadable and the run goes on.
READ_ERRORS = (OSError, EOFError, zipfile.BadZipFile, zlib.error, RuntimeError)
UNPLACED = "none of the formats funes-py reads recognises it (`funes-py sources` lists them; --format NAME forces one)"
UNPLACED_LONG = "its format could not be told: the records looked at are over the record limit (--format NAME forces one)"


class UnknownFormat(ValueError):
    """A file given by name is none of the formats funes-py reads."""


def _hidden(name: str) -> bool:
    return name.startswith(".") or name == "__MACOSX"


def _zip_members(path: Path) -> list[Unit]:
    with zipfile.ZipFile(path) as z:
        names = sorted(i.filename for i in z.infolist() if not i.is_dir())
    return [
        Unit(path, n) for n in names if n.endswith(WALKED_SUFFIXES) and not any(_hidden(part) for part in n.split("/"))
    ]


def units(path: str | os.PathLike[str]) -> list[Unit]:
    """Every file or zip member under `path` that may hold conversations, in a stable order.
    FileNotFoundError when `path` does not exist."""
    root = Path(path).expanduser()
    if not root.exists():
        raise FileNotFoundError(f"path to index not found: {root}")
    if root.is_file():
        return _zip_members(root) if zipfile.is_zipfile(root) else [Unit(root)]
    out: list[Unit] = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if not _hidden(x))
        for name in sorted(files):
            if _hidden(name):
                continue
            p = Path(d) / name
            if name.endswith(".zip"):
                try:
                    out.extend(_zip_members(p))
                except READ_ERRORS as e:
                    log.warning("skipping %s: not a readable zip (%s)", p, e)
            elif name.endswith(WALKED_SUFFIXES):
                out.append(Unit(p))
    return out


def check_explicit(path: str | os.PathLike[str], todo: list[Unit]) -> None:
    """A file (or zip) the user named must hold something we read: UnknownFormat otherwise, before any
    indexing starts."""
    if todo and not any(_recognised(u) for u in todo):
        what = "none of its members is" if todo[0].member is not None else "not"
        raise UnknownFormat(
            f"{path}: {what} a format funes-py reads (see `funes-py sources`, or force one with --format)"
        )


def _recognised(unit: Unit) -> bool:
    try:
        found = sniff(unit)
    except READ_ERRORS:
        return True  # damaged rather than foreign: `items` reports it as unreadable
    return found.format is not None or bool(found.over_limit)  # records too long to read: damaged, reported


def items(todo: Iterable[Unit], forced: Format | None = None) -> Iterator[Source]:
    """The `Source` items of `todo`, read lazily, one file at a time. A file none of our formats recognises,
    and one that fails while it is read, yields an item with signature None and a `bad` entry at place 0
    saying why: the run reports it by name, and does not record it as indexed (a later run, perhaps with
    --format, reads it again). A blank file is read: it holds nothing."""
    for unit in todo:
        try:
            fmt = forced
            if fmt is None:
                found = sniff(unit)
                if found.format is None:
                    yield _unplaced(unit, found.over_limit)
                    continue
                fmt = found.format
            log.debug("reading %s as %s", unit, fmt.name)
            yield from fmt.read(unit)
        except READ_ERRORS as e:
            yield Source(unit.key, None, [], [(0, f"unreadable: {e}")])


def _unplaced(unit: Unit, over: list[tuple[int, int]]) -> Source:
    """A file no format recognised, for the report (not recorded as read: a run with --format reads it): its
    lines over the record limit, and why it was not read; nothing at all for a blank file."""
    if not over and is_blank(unit):
        return Source(unit.key, unit.signature(), [], [])
    limit = Limits.current().record
    bad = [(n, over_limit(size, limit)) for n, size in over]
    return Source(unit.key, None, [], [*bad, (0, UNPLACED_LONG if over else UNPLACED)])

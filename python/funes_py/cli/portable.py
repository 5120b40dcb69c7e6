"""``funes-py export OUT`` and ``funes-py import FILE``: a memory to one portable file and back
(``funes_py.portable`` holds the format). The memory is ``--home DIR`` or ``$FUNES_HOME``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .exits import EXIT_NO_MEMORY, EXIT_OK, EXIT_USAGE, fail


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    s = sub.add_parser("export", parents=[common], help="write the memory's turns and model stamp to one file",
                       description="Write every turn of the memory, verbatim, and its model stamp to OUT "
                       "(gzip JSON lines, written atomically). `funes-py import` reads it back.")  # fmt: skip
    s.add_argument("out", help="the file to write (e.g. memory.funes-export.gz)")
    s.add_argument("--json", action="store_true", help="print the result as JSON")
    s = sub.add_parser("import", parents=[common], help="index the turns of an export file into the memory",
                       description="Index the turns of FILE (from `funes-py export` or the service's GET "
                       "/export) into the memory, embedded with the memory's model: its own, or for a new "
                       "memory the export's model when it is installed, else the default.")  # fmt: skip
    s.add_argument("file", help="an export file")
    s.add_argument("--json", action="store_true", help="print the result as JSON")


def run(args: argparse.Namespace) -> int:
    from .memory import _home

    home = _home(args)
    if args.cmd == "export":
        return _export(args, home)
    return _import(args, home)


def _export(args: argparse.Namespace, home: str) -> int:
    from .. import choice
    from ..engine import Engine
    from ..models import Models
    from ..portable import memory_header, memory_lines, write_export

    if "://" not in home and not Path(home).exists():
        return fail(f"no memory at {home}", EXIT_NO_MEMORY)
    models = Models.load(embedder=args.embedder or choice.for_memory(home).embedder)
    eng = Engine(home, models, resident=False)
    header = memory_header(eng)
    turns = write_export(args.out, header, memory_lines(eng))
    result = {"out": args.out, "turns": turns, "model": header.model}
    _say(args, result, f"exported {turns} turns of {home} ({header.model or 'empty memory'}) to {args.out}\n")
    return EXIT_OK


def _import(args: argparse.Namespace, home: str) -> int:
    from .. import _funes
    from ..engine import Engine
    from ..portable import NotAnExport, read_header, read_sessions

    path = Path(args.file)
    if not path.is_file():
        return fail(f"no export file at {path}", EXIT_USAGE)
    try:
        header = read_header(path)
    except (NotAnExport, OSError, EOFError) as e:  # EOFError, BadGzipFile (an OSError): not a whole gzip file
        return fail(str(e), EXIT_USAGE)
    models = _models_for(args, home, header.model)
    eng = Engine(home, models, resident=False)
    stored = _funes.stored_model(home)
    report = eng.index_lines((f"{path}#{sid}", lines) for sid, lines in read_sessions(path))
    for b in report.bad_lines:
        print(f"skipped {b.file}:{b.line}: {b.reason}", file=sys.stderr)
    model = eng.models.embedder_stamp
    re_embedded = header.model is not None and header.model != model
    result = {"file": str(path), "turns": report.turns, "chunks_added": report.chunks_added,
              "chunks_skipped": report.chunks_skipped, "bad_lines": len(report.bad_lines), "model": model,
              "export_model": header.model, "re_embedded": re_embedded, "memory_was_new": stored is None}  # fmt: skip
    why = f", re-embedded: the export was made with {header.model}" if re_embedded else ""
    _say(args, result, f"imported {report.turns} turns into {home} with {model}: {report.chunks_added} chunks added, "
                       f"{report.chunks_skipped} already stored, {len(report.bad_lines)} bad lines{why}\n")  # fmt: skip
    return EXIT_OK


def _models_for(args: argparse.Namespace, home: str, export_model: str | None) -> Any:
    """--embedder, else the memory's own model, else (a new memory) the export's when it loads here, else the
    default."""
    from .. import _funes, choice
    from ..errors import FunesError
    from ..models import Models

    if args.embedder is not None or _funes.stored_model(home) is not None or export_model is None:
        return Models.load(embedder=args.embedder or choice.for_memory(home).embedder)
    try:
        return Models.load(embedder=choice.stamp_name(export_model))
    except (FunesError, OSError, ValueError) as e:
        print(f"model: {choice.stamp_name(export_model)} of the export is not available here ({e}); "
              "using the default", file=sys.stderr)  # fmt: skip
        return Models.load(embedder=choice.for_memory(home).embedder)


def _say(args: argparse.Namespace, result: dict[str, Any], text: str) -> None:
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(text)

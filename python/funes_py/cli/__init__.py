"""``funes-py``: the command line, mirroring the funes commands so a script that called ``funes`` can call
``funes-py``. Global options (``--home``, ``--embedder``) go before or after the command:
``funes-py --home DIR recall ...`` and ``funes-py recall --home DIR ...`` are the same.

Placement: ``memory`` holds the commands on one memory (index, recall, get, scan, sessions, sketch, status,
forget), ``portable`` export and import, ``personal`` sync, mcp and setup, ``models`` the model commands, ``exits`` the exit codes, ``funes_py.sources.cli`` the ``sources``
listing, ``ui`` the local page; ``serve``, ``demo`` and ``proxy`` own
their flags (``funes_py.server``, ``funes_py.proxy``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .exits import EXIT_ERROR, EXIT_LOCKED, EXIT_MODEL, EXIT_OK, EXIT_PATH

HOME_HELP = "the memory directory (default: $FUNES_HOME, else ~/.funes-py)"
EMBEDDER_HELP = "embedding model directory or name (default: $FUNES_EMBEDDER, else the packaged MiniLM)"


def _common(default: object) -> argparse.ArgumentParser:
    """The global options. On each command they default to SUPPRESS, so a value given before the command
    is not overwritten by the command's own (absent) one."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--home", default=default, help=HOME_HELP)
    p.add_argument("--embedder", default=default, help=EMBEDDER_HELP)
    return p


def parser() -> argparse.ArgumentParser:
    from .. import _funes
    from ..sources import cli as sources_cli
    from . import memory, models, personal, portable, ui

    p = argparse.ArgumentParser(
        prog="funes-py", description="Recall over earlier conversations.", parents=[_common(None)]
    )
    p.add_argument("--version", action="version", version=f"funes-py {_funes.__version__}")
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")
    common = _common(argparse.SUPPRESS)
    memory.add_parsers(sub, common)
    portable.add_parsers(sub, common)
    personal.add_parsers(sub, common)
    models.add_parser(sub, common)
    ui.add_parser(sub, common)
    sources_cli.add_parser(sub)
    for name, help_ in (
        ("serve", "run the MCP recall service"),
        ("demo", "seed a demo and ask it questions"),
        ("proxy", "archive-and-recall proxy in front of an OpenAI-compatible engine"),
    ):
        s = sub.add_parser(name, help=help_, add_help=False)
        s.add_argument("rest", nargs=argparse.REMAINDER)
    return p


def _own_flags(argv: list[str]) -> int | None:
    """``serve``, ``demo`` and ``proxy`` parse their own flags; None for every other command."""
    if argv[:1] == ["serve"]:
        from ..server.cli import serve_main

        return serve_main(argv[1:]) or 0
    if argv[:1] == ["demo"]:
        from ..server.demo import main as demo_main

        return demo_main(argv[1:]) or 0
    if argv[:1] == ["proxy"]:
        from ..proxy.cli import main as proxy_main

        return proxy_main(argv)
    return None


def main(argv: Sequence[str] | None = None) -> int:
    from ..config import configure_logging

    argv = list(sys.argv[1:] if argv is None else argv)
    configure_logging()
    code = _own_flags(argv)
    if code is not None:
        return code
    args = parser().parse_args(argv)
    from ..malloc import limit_arenas

    limit_arenas()  # before an index run's threads allocate (see funes_py.malloc)
    from ..errors import FunesError, MemoryLockedError, ModelMismatchError
    from ..sources import cli as sources_cli
    from . import memory, models, personal, portable, ui

    try:
        if args.cmd == "models":
            return models.run_args(args)
        if args.cmd in ("export", "import"):
            return portable.run(args)
        if args.cmd in personal.COMMANDS:
            return personal.run(args)
        if args.cmd == "ui":
            return ui.run(args)
        if args.cmd == "sources":
            return sources_cli.run(args)
        return memory.run(args)
    except ModelMismatchError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_MODEL
    except MemoryLockedError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_LOCKED
    except (FileNotFoundError, PermissionError, IsADirectoryError) as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_PATH
    except FunesError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_OK

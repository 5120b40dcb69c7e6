"""``funes-py ui``: the local page on one memory (``funes_py.personal.ui``). It binds a loopback address only;
any other ``--host`` is refused before anything binds or loads."""

from __future__ import annotations

import argparse
from typing import Any

from .exits import EXIT_USAGE, fail


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    s = sub.add_parser("ui", parents=[common], help="a local page to search and forget what the memory stores",
                       description="Serve a page on this machine only (no login): search the memory, read a "
                       "conversation, forget it, see what is left out. Binds 127.0.0.1, ::1 or localhost; "
                       "any other --host is refused.")  # fmt: skip
    s.add_argument("--host", default="127.0.0.1", help="a loopback address (default: 127.0.0.1)")
    s.add_argument("--port", type=int, default=8765, help="the port (default: 8765; 0 picks a free one)")
    s.add_argument("--open", action="store_true", help="open the page in the default browser")


def run(args: argparse.Namespace) -> int:
    from ..config import ConfigError
    from ..personal.config import load_config
    from ..personal.ui import check_host, serve

    why = check_host(args.host)
    if why is not None:
        return fail(why, EXIT_USAGE)
    if not 0 <= args.port <= 65535:
        return fail(f"--port {args.port} is not a port (0 to 65535)", EXIT_USAGE)
    try:
        config = load_config(args.home)
    except ConfigError as e:
        return fail(str(e), EXIT_USAGE)
    return serve(config, args.host, args.port, open_browser=args.open)

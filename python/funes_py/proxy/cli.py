"""`funes-py proxy`: run the agent-archive proxy in front of an OpenAI-compatible engine.

    funes-py proxy --upstream URL [--host 127.0.0.1] [--port 8096] [--data DIR] [--window TOKENS]
                   [--engine auto|llama.cpp|openai]

Flags win over FUNES_PROXY_* variables, which win over the defaults (`config.py`). The upstream's API key
comes only from the environment (FUNES_PROXY_UPSTREAM_API_KEY), never from the command line, where other
users of the machine could read it.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
from pathlib import Path
from typing import Any

from ..malloc import limit_arenas
from .config import DEFAULT_PORT, ENGINES, ProxyConfig


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "proxy", help="archive-and-recall proxy in front of an OpenAI-compatible engine (llama-server)",
        description="Keeps a local agent's context window small: archives every message, hides old tool "
        "outputs behind receipts, answers a recall tool itself, starts new segments with handoff notes.",
    )  # fmt: skip
    p.add_argument("--upstream", help="the engine's URL, e.g. http://127.0.0.1:8080 (FUNES_PROXY_UPSTREAM)")
    p.add_argument("--host", help="interface to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, help=f"TCP port (default {DEFAULT_PORT})")
    p.add_argument("--data", type=Path, dest="data_dir", help="archive and state directory (FUNES_PROXY_DATA)")
    p.add_argument("--window", type=int, help="context window in tokens (required if the engine does not report it)")
    p.add_argument("--engine", choices=ENGINES, help="engine kind (default auto: llama.cpp if /props says so)")


def run(args: Any) -> int:
    flags = {k: getattr(args, k, None) for k in ("upstream", "host", "port", "data_dir", "window", "engine")}
    try:
        cfg = ProxyConfig.load(**flags)
    except ValueError as e:
        print(f"funes-py proxy: {e}", file=sys.stderr)
        return 2
    if not cfg.loopback and cfg.tokens_file is None:
        print(f"funes-py proxy: --host {cfg.host} is not a loopback address: set FUNES_TOKENS_FILE so only token "
              "holders can reach the archive", file=sys.stderr)  # fmt: skip
        return 2
    logging.basicConfig(level=cfg.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")  # fmt: skip
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per upstream call is noise, not news
    try:
        import uvicorn  # the proxy extra; imported late so --help works without it
    except ImportError:
        print("funes-py proxy: needs the proxy extra: pip install 'funes_py[proxy]'", file=sys.stderr)
        return 1

    limit_arenas()  # before the archive's engine threads allocate (see funes_py.malloc)
    from .app import create_app

    uvicorn.run(create_app(cfg), host=cfg.host, port=cfg.port, log_level=cfg.log_level.lower(), log_config=None,
                access_log=False, timeout_graceful_shutdown=10)  # fmt: skip
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        # An index run is still embedding on a worker thread, and the interpreter would wait for it. Leaving
        # now is what a crash would do, which the memory is built for (one Lance commit per write; the next
        # start indexes the files newer than the last stamp again).
        logging.getLogger("funes_py.proxy").info("index run still going: exiting without waiting for it")
        logging.shutdown()
        os._exit(0)
    return 0


def main(argv: list[str] | None = None) -> int:
    """`python -m funes_py.proxy.cli ...` without the main CLI."""
    parser = argparse.ArgumentParser(prog="funes-py")
    add_parser(parser.add_subparsers(dest="cmd", required=True))
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())

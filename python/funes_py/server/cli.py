"""`funes-py serve`: run the recall service. Flags win over FUNES_* variables, which win over defaults."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from ..malloc import limit_arenas
from .config import ServiceConfig


def setup_logging(level: str) -> None:
    """Logs go to stderr; stdout stays free for whoever runs us."""
    logging.basicConfig(
        level=level.upper(),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    # The SDK logs every MCP request at INFO; one line per recall is the service's own job.
    logging.getLogger("mcp").setLevel(max(logging.WARNING, logging.getLogger().level))


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="funes-py serve",
        description="Serve recall over MCP (streamable HTTP at /mcp) and ingest at POST /turns.",
    )
    p.add_argument("--host", help="interface to bind (FUNES_HOST, default 127.0.0.1)")
    p.add_argument("--port", type=int, help="TCP port (FUNES_PORT, default 8000)")
    p.add_argument("--data", dest="data_dir", help="data directory or s3://bucket/prefix (FUNES_DATA)")
    p.add_argument("--tokens-file", type=Path, help="JSON {token: user} (FUNES_TOKENS_FILE)")
    p.add_argument("--log-level", help="DEBUG, INFO, WARNING, ERROR (FUNES_LOG)")
    return p


def serve_main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        config = ServiceConfig.load(**vars(args))
    except ValueError as e:
        print(f"funes-py serve: {e}", file=sys.stderr)
        return 2
    setup_logging(config.log_level)
    limit_arenas()  # before any engine's threads allocate (see funes_py.malloc)
    # Before anything imports prometheus_client: the ingest workers then count into the same /metrics.
    from ..metrics_setup import prepare_multiprocess

    where = prepare_multiprocess()
    logging.getLogger("funes_py.server").info("metrics of every process counted in %s", where)

    import uvicorn  # the serve extra; imported late so `--help` works without it

    from .app import create_app

    uvicorn.run(
        create_app(config),
        host=config.host,
        port=config.port,
        log_level=config.log_level.lower(),
        log_config=None,  # keep our stderr logging
        access_log=False,  # request lines would carry conversation ids
        timeout_graceful_shutdown=30,
    )
    return 0

"""One ASGI app on one port: the MCP endpoint (/mcp), the ingest routes, the health check and /metrics.

Start-up order (the lifespan): load the models and queue recovery of interrupted indexing, then start the
MCP session manager, then accept requests. Uvicorn binds the port only after the lifespan has started,
so the first request never pays for loading the models.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.routing import Mount

from ..gc_freeze import freeze_startup
from ..metrics import route
from ..metrics_setup import cleanup_multiprocess
from ..tenancy.auth import TenantTokenVerifier
from .config import ServiceConfig
from .mcp_fast import FastRecall
from .mcp_guard import McpGuard
from .mcp_tool import TOOL_NAME, build_mcp
from .routes import build_routes
from .service import Service

log = logging.getLogger("funes_py.server")


def create_app(config: ServiceConfig, models: Any = None) -> Starlette:
    """The service as an ASGI app. `models` lets a caller that already loaded them share them."""
    service = Service(config, models=models)
    verifier = TenantTokenVerifier.from_files(config.tokens_file, config.jwt_secret, config.jwt_audience)
    if not config.ingest_key:
        log.warning("no FUNES_INGEST_KEY: POST /turns and DELETE /conversations will answer 401")
    mcp = build_mcp(service, verifier)
    mcp_app = mcp.streamable_http_app()  # must come first: it creates the session manager

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await service.start()
        freeze_startup()  # what start-up built lives as long as the process (see gc_freeze)
        try:
            async with mcp.session_manager.run():
                log.info("serving on http://%s:%d (data in %s)", config.host, config.port, config.data_dir)
                yield
        finally:
            await service.stop()
            cleanup_multiprocess()  # the counts die with the process that served them

    # McpGuard answers the transport's own errors (bad bodies, idle streams) before the SDK sees them, and
    # plain recall calls itself (mcp_fast).
    metrics = route(service.live_metrics, config.metrics_token)
    fast = FastRecall(service, TOOL_NAME, mcp.settings.transport_security) if config.mcp_fast_path else None
    guard = McpGuard(mcp_app, verifier, config, fast)
    app = Starlette(routes=[*build_routes(service, verifier), metrics, Mount("/", app=guard)],
                    lifespan=lifespan)
    app.state.service = service
    return app

"""The recall service: an MCP server with one warm engine per tenant, and an authenticated ingest route.

    read:  bearer token -> tenant -> warm Engine (tenants) -> recall on a bounded pool -> passages (text)
    write: ingest key -> validate, mask secrets, drop pasted recall (turns) -> atomic file in src/
           -> debounced index run per tenant (indexer) -> the same Engine

Modules: `config` (every setting, one reader of FUNES_*), `auth` (tokens, ingest key, tenant ids),
`tenants` (warm engines), `indexer` (debounce + crash recovery), `jsonbody` (bodies -> JSON within limits),
`turns` and `passages` (pure text rules; secret masking is `funes_py.redact`, shared with the source
adapters), `ingest_pool` (the worker processes that apply them to ingest bodies), `service` (what each
operation does), `routes` and `mcp_tool` (the two surfaces), `mcp_guard` (bad bodies and idle streams in
front of the MCP SDK), `app` (one ASGI app), `cli` (`funes-py serve`), `demo` (`funes-py demo`).
"""

from .config import ServiceConfig

__all__ = ["ServiceConfig", "create_app"]


def create_app(config: ServiceConfig, models: object = None):  # type: ignore[no-untyped-def]
    """The service as an ASGI app (see `funes_py.server.app.create_app`)."""
    from .app import create_app as _create_app

    return _create_app(config, models=models)

"""Python's cyclic garbage collector in a long-running funes_py process (the recall service, the proxy).

A full collection walks every object the collector tracks. A server builds most of those once, at start-up
(the modules, functions and classes of uvicorn, starlette, httpx, the MCP SDK, the models' wrappers: about
66,000 in the proxy), and then keeps them for its life; every full collection walked them again. In the proxy
that was 20-30 ms per full collection, one about every 30 requests of a long history: its p95. Moving what
start-up built to the permanent generation (`gc.freeze`) takes it out of every later collection; what is
created afterwards (tenants, archives, requests) is collected as before.
"""

from __future__ import annotations

import gc


def freeze_startup() -> None:
    """Collects once, then freezes every object that survived: call it when start-up is done."""
    gc.collect()
    gc.freeze()

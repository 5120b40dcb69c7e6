"""The worker processes that turn ingest bodies into `.funes.jsonl` lines (JSON, limits, secret masking, the
pasted-recall rule: `turns.parse_request`).

Why processes: that work is Python and regexes. On a thread it would hold the server's GIL, and a recall
needs the GIL at every step (request, tool call, engine call, rendering): a 200 KB turn on a thread took
tens of milliseconds of it, and each handoff back to the event loop waits up to the 5 ms switch interval.
In a worker process it costs the server only copying the body there and the lines back.

The workers are spawned, not forked (the server holds threads, an ONNX Runtime and a tokio runtime that a
fork would copy mid-flight), import only `funes_py.server.turns` and what it needs (about 16 MB each, never
the engine), ignore Ctrl-C (the server shuts them down), and exit by themselves when the server is gone:
after a `kill -9` nothing else would tell them (each holds both ends of the pool's pipe).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures.process import BrokenProcessPool

from ..jsonbody import JsonLimits
from .turns import Conversation, TurnLimits, parse_request

log = logging.getLogger("funes_py.server")

_PARENT_POLL_S = 1.0


class IngestPool:
    def __init__(self, workers: int) -> None:
        self._workers = workers
        self._pool = self._new_pool()

    def _new_pool(self) -> concurrent.futures.ProcessPoolExecutor:
        return concurrent.futures.ProcessPoolExecutor(
            self._workers, mp_context=multiprocessing.get_context("spawn"),
            initializer=_worker_init, initargs=(os.getpid(),))

    async def start(self) -> None:
        """Start every worker now, so the first body does not wait for an interpreter to start."""
        loop = asyncio.get_running_loop()
        await asyncio.gather(*(loop.run_in_executor(self._pool, time.sleep, 0.05) for _ in range(self._workers)))

    async def parse(self, raw: bytes, json_limits: JsonLimits, limits: TurnLimits, mask: bool) -> Conversation:
        """`parse_request` in a worker. BadRequest comes back as itself; a worker that died (killed, out of
        memory) is replaced and the body tried once more, and if it dies again BrokenProcessPool is raised."""
        work = functools.partial(_parse_timed, raw, json_limits, limits, mask)
        loop = asyncio.get_running_loop()
        for attempt in range(2):
            try:
                return await loop.run_in_executor(self._pool, work)
            except BrokenProcessPool:
                log.error("an ingest worker process died; starting new ones")
                self._pool.shutdown(wait=False, cancel_futures=True)
                self._pool = self._new_pool()
                if attempt:
                    raise
        raise AssertionError("unreachable")

    async def close(self) -> None:
        """Stop the workers and wait for them (a worker left behind would outlive the server)."""
        await asyncio.to_thread(self._pool.shutdown, wait=True, cancel_futures=True)


def _parse_timed(raw: bytes, json_limits: JsonLimits, limits: TurnLimits, mask: bool) -> Conversation:
    """`parse_request`, timed in the worker (its count reaches /metrics through PROMETHEUS_MULTIPROC_DIR)."""
    from ..metrics import INGEST_PARSE_SECONDS  # here: the worker's first body, after its environment is set

    with INGEST_PARSE_SECONDS.time():
        return parse_request(raw, json_limits, limits, mask)


def _worker_init(parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(_PARENT_POLL_S)
        os._exit(0)  # the server is gone: nothing will ever be asked of this worker again

    threading.Thread(target=watch, name="funes-parent-watch", daemon=True).start()

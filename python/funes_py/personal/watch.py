"""The watcher: keeps one memory in step with its sources for as long as its process lives.

One per memory: the process that takes the lock on ``<home>/sync.lock`` (``fcntl.flock``, released by the
kernel when the process dies, however it dies) watches; another process on the same memory does not (its
recalls still see every write: the engine reads what another process committed). It backfills with one full
pass at start, then waits on ``watchfiles`` (inotify; no polling loop of ours, ~0 CPU when nothing is
written) and runs a pass over the files each burst of writes touched, once ``debounce_ms`` passed without a
new write. Passes run one at a time in a worker thread, so the stdio server's event loop keeps answering."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING

from ..sources.discover import WALKED_SUFFIXES
from .config import PersonalConfig
from .sync import SyncReport, sync

if TYPE_CHECKING:
    from ..engine import Engine

log = logging.getLogger("funes_py.personal")

LOCK_NAME = "sync.lock"


class SyncLock:
    """The memory's sync lock, held while the object lives (or until ``release``)."""

    def __init__(self, home: Path) -> None:
        home.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] | None = open(home / LOCK_NAME, "a+")  # noqa: SIM115 - held for the process's life

    def try_take(self) -> bool:
        assert self._file is not None
        try:
            fcntl.flock(self._file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        self._file.seek(0)
        self._file.truncate()
        self._file.write(f"{os.getpid()}\n")
        self._file.flush()
        return True

    def holder(self) -> str:
        """The pid written by the process that holds it (for messages)."""
        assert self._file is not None
        self._file.seek(0)
        return self._file.read().strip() or "?"

    def release(self) -> None:
        if self._file is not None:
            self._file.close()  # closing drops the flock
            self._file = None


class Watcher:
    def __init__(self, engine: Engine, config: PersonalConfig, on_pass: Callable[[SyncReport], None] | None = None) -> None:
        self.engine = engine
        self.config = config
        self.on_pass = on_pass
        self.passes = 0

    def _wanted(self, _change: object, path: str) -> bool:
        return path.endswith(WALKED_SUFFIXES) and not self.config.excluded(path)

    async def run(self, stop: asyncio.Event) -> None:
        """Backfill, then follow writes until ``stop`` is set."""
        import watchfiles

        await self._pass(None)
        roots = [p for p in self.config.roots() if p.exists()]
        if not roots:
            log.warning("no source directory exists yet (%s): nothing to watch", ", ".join(map(str, self.config.roots())) or "none configured")
            return
        log.info("watching %s", ", ".join(map(str, roots)))
        async for changes in watchfiles.awatch(
            *roots, watch_filter=self._wanted, debounce=max(self.config.debounce_ms, 1), step=50, stop_event=stop,
            ignore_permission_denied=True,
        ):  # fmt: skip
            paths = sorted({Path(p) for change, p in changes if change != watchfiles.Change.deleted})
            if paths:
                await self._pass(paths)

    async def _pass(self, paths: list[Path] | None) -> None:
        try:
            report = await asyncio.to_thread(sync, self.engine, self.config, paths)
        except Exception:  # one failed pass must not end the watcher: the next write tries again
            log.exception("sync pass failed")
            return
        self.passes += 1
        for key, place, why in report.bad:
            log.warning("skipped %s:%d: %s", key, place, why)
        if report.files_read or self.passes == 1:
            log.info("%s", report.summary())
        if self.on_pass is not None:
            self.on_pass(report)


@contextlib.asynccontextmanager
async def watching(engine: Engine, config: PersonalConfig, enabled: bool = True):  # type: ignore[no-untyped-def]
    """Runs the watcher in the background while the block runs, if this process gets the lock."""
    lock = SyncLock(config.home)
    stop = asyncio.Event()
    task: asyncio.Task[None] | None = None
    if enabled and lock.try_take():
        task = asyncio.create_task(Watcher(engine, config).run(stop))
    elif enabled:
        log.info("another process (pid %s) keeps this memory in step: not watching", lock.holder())
    try:
        yield task
    finally:
        stop.set()
        if task is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(task, 5)
        lock.release()

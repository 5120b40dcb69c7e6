"""``Engine``: one open memory. Synchronous methods release the GIL inside Rust, so Python threads run them
in parallel; the ``a*`` twins run them on one dedicated, bounded executor for asyncio callers."""

from __future__ import annotations

import asyncio
import datetime as _dt
import functools
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from . import _funes
from ._funes import ForgetReport, Hit, IndexReport, InvalidInputError, ScanMatch, SessionInfo, Sketch, Status, Turn
from .config import settings
from .models import Models

T = TypeVar("T")
TimeBound = str | _dt.date | _dt.datetime | None

_EXECUTOR: ThreadPoolExecutor | None = None
_EXECUTOR_PID: int | None = None
_EXECUTOR_LOCK = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    """The executor behind every async method (size FUNES_ASYNC_WORKERS), recreated after a fork."""
    global _EXECUTOR, _EXECUTOR_PID
    with _EXECUTOR_LOCK:
        if _EXECUTOR is None or _EXECUTOR_PID != os.getpid():
            _EXECUTOR = ThreadPoolExecutor(settings().async_workers, thread_name_prefix="funes-py")
            _EXECUTOR_PID = os.getpid()
        return _EXECUTOR


def _iso(t: TimeBound) -> str | None:
    if t is None or isinstance(t, str):
        return t
    if isinstance(t, _dt.datetime):
        if t.tzinfo is None:
            t = t.replace(tzinfo=_dt.timezone.utc)
        return t.isoformat()
    return t.isoformat()  # a date: the whole day, as the engine reads bare dates


class Engine:
    """A memory at ``home`` (created if missing), searched with ``models`` (``Models.load()`` if None).

    ``resident`` (default True): answer recall from a copy of the memory held in RAM (int8 vectors, BM25
    postings, the text), built by the first recall and kept in step with this engine's writes; about 0.4 KB
    per chunk plus the text. Right for anything that recalls more than once. ``resident=False`` answers
    every recall with Lance's own indexes: slower per call, but nothing to load, which suits a process that
    answers one query and exits (the CLI does this)."""

    def __init__(
        self, home: str | os.PathLike[str], models: Models | None = None, *, resident: bool = _funes.DEFAULT_RESIDENT
    ) -> None:
        self.models = models if models is not None else Models.load()
        self._inner = _funes.Engine(str(Path(home).expanduser()), self.models._inner, resident)

    @classmethod
    def rebuild(cls, home: str | os.PathLike[str], models: Models | None = None) -> tuple["Engine", int]:
        """Re-embeds a memory's stored text with ``models`` (after a model change); returns the engine and
        the number of chunks re-embedded. No source files are needed."""
        self = cls.__new__(cls)
        self.models = models if models is not None else Models.load()
        self._inner, n = _funes.Engine.rebuild(str(Path(home).expanduser()), self.models._inner)
        return self, n

    @property
    def home(self) -> str:
        return self._inner.home

    def index(
        self,
        path: str | os.PathLike[str],
        format: str | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> IndexReport:
        """Indexes the conversations under ``path`` (a file, a directory or an export zip): ``.funes.jsonl``,
        Claude Code, Codex and Cursor sessions, ChatGPT and Claude.ai exports, each file's format recognised by
        its content unless ``format`` names one (see ``funes_py.sources``). Files unchanged since the last run
        are not read; only new chunks are embedded."""
        from . import sources

        if not hasattr(self._inner, "index_sources"):  # transitional: an engine built before index_sources
            if format not in (None, "funes"):
                raise InvalidInputError("this build of the engine reads only .funes.jsonl; rebuild it for other formats")
            return self._inner.index(str(path), progress)
        try:
            todo, unchanged = sources.plan(path, format, self._inner.unchanged)
        except ValueError as e:  # an unknown format name, or a named file none of the formats reads
            raise InvalidInputError(str(e)) from None
        return self._inner.index_sources(todo, unchanged, progress)

    def recall(
        self,
        query: str,
        k: int = _funes.DEFAULT_K,
        candidates: int = _funes.DEFAULT_CANDIDATES,
        half_life_days: float = _funes.DEFAULT_HALF_LIFE_DAYS,
        neighbors: int = _funes.DEFAULT_NEIGHBORS,
        since: TimeBound = None,
        until: TimeBound = None,
        roles: Sequence[str] | None = None,
        block_types: Sequence[str] | None = None,
        min_similarity: float | None = None,
        identifier_guard: bool = False,
        rerank: bool | None = None,
        now: TimeBound = None,
        legs: str = "hybrid",
        dense_weight: float = _funes.DEFAULT_DENSE_WEIGHT,
        exact: bool = False,
    ) -> list[Hit]:
        """Hybrid recall: dense + BM25 fused by reciprocal rank, recency-weighted, top ``k`` with neighbours.

        ``min_similarity`` drops passages whose cosine similarity to the query is below it, so a query about
        something never discussed returns ``[]``; ``identifier_guard`` drops passages that contain none of the
        identifiers the query names (``MT-4471``, ``P-003``). ``rerank``: None = automatic when a reranker is loaded and
        ``candidates >= 4 * k``. ``now`` pins the reference time of recency (benchmarks). ``legs``: "hybrid",
        or "dense" / "bm25" alone (for comparisons); ``dense_weight`` weighs the dense leg in the fusion;
        ``exact`` searches vectors exactly even where a vector index exists."""
        return self._inner.recall(
            query, k, candidates, half_life_days, neighbors, _iso(since), _iso(until),
            list(roles) if roles else None, list(block_types) if block_types else None,
            min_similarity, identifier_guard, rerank, _iso(now), legs, dense_weight, exact,
        )  # fmt: skip

    def get(self, session_id: str, turn_uuid: str | None = None, window: int = _funes.DEFAULT_GET_WINDOW) -> list[Turn]:
        """A session's turns around ``turn_uuid`` (± ``window``), or all of them; splits stitched back."""
        return self._inner.get(session_id, turn_uuid, window)

    def scan(self, session_id: str, needle: str, ignore_case: bool = True, context: int | None = None) -> list[ScanMatch]:
        """Every exact occurrence of ``needle`` in one session (case-insensitive by default)."""
        return self._inner.scan(session_id, needle, ignore_case, context)

    def sessions(self, since: TimeBound = None, until: TimeBound = None) -> list[SessionInfo]:
        """Sessions newest first, with first/last time and turn count."""
        return self._inner.sessions(_iso(since), _iso(until))

    def sketch(self, session_id: str) -> Sketch:
        """What a session was about: opening ask, last word, size and dates."""
        return self._inner.sketch(session_id)

    def status(self) -> Status:
        return self._inner.status()

    def forget(self, session_id: str) -> ForgetReport:
        """Deletes a session; its text is physically gone from every file of the memory afterwards."""
        return self._inner.forget(session_id)

    def close(self) -> None:
        """Drops this handle's reference to the memory (the models stay loaded for other engines)."""
        self._inner = None  # type: ignore[assignment]

    # Async twins: the same calls on the dedicated executor.
    async def _run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(_executor(), functools.partial(fn, *args, **kwargs))

    async def arecall(self, query: str, **kwargs: Any) -> list[Hit]:
        return await self._run(self.recall, query, **kwargs)

    async def aindex(self, path: str | os.PathLike[str], format: str | None = None) -> IndexReport:
        return await self._run(self.index, path, format)

    async def aforget(self, session_id: str) -> ForgetReport:
        return await self._run(self.forget, session_id)

    async def aget(self, session_id: str, turn_uuid: str | None = None, window: int = _funes.DEFAULT_GET_WINDOW) -> list[Turn]:
        return await self._run(self.get, session_id, turn_uuid, window)

    async def asessions(self, since: TimeBound = None, until: TimeBound = None) -> list[SessionInfo]:
        return await self._run(self.sessions, since, until)

    async def astatus(self) -> Status:
        return await self._run(self.status)

    def __repr__(self) -> str:
        return f"Engine(home={self.home!r}, models={self.models!r})"

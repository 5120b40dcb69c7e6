"""``Engine``: one open memory. Every method releases the GIL inside Rust, so Python threads run them in
parallel; an asyncio caller runs them in a thread (``await asyncio.to_thread(eng.recall, q)``), on a pool
it sizes itself (the recall service keeps one for recalls and one for index runs)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from . import _funes
from ._funes import ForgetReport, Hit, IndexReport, InvalidInputError, ScanMatch, SessionInfo, Sketch, Status, Turn
from .models import Models
from .options import RecallOptions, TimeBound, _iso

OnModelMismatch = Literal["refuse", "rebuild"]


def _home(home: str | os.PathLike[str]) -> str:
    """A local path with ``~`` expanded, or an object-store URI (``s3://bucket/prefix``) as given: ``Path``
    would fold its ``//``."""
    text = os.fspath(home)
    return text if "://" in text else str(Path(text).expanduser())


class Engine:
    """A memory at ``home`` (created if missing), searched with ``models`` (``Models.load()`` if None).

    ``home`` is a local directory or ``s3://bucket/prefix`` on S3-compatible object storage, whose endpoint,
    region and credentials come from the usual variables (``AWS_ENDPOINT_URL``, ``AWS_REGION``,
    ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``; ``AWS_ALLOW_HTTP=true`` for a plain-HTTP endpoint).
    A remote memory keeps its writer lock and index state on this machine under ``$FUNES_STATE_DIR``.

    ``resident`` (default True): answer recall from a copy of the memory held in RAM (int8 vectors, BM25
    postings, the text), built by the first recall and kept in step with this engine's writes; about 0.4 KB
    per chunk plus the text. Right for anything that recalls more than once. ``resident=False`` answers
    every recall with Lance's own indexes: slower per call, but nothing to load, which suits a process that
    answers one query and exits (the CLI does this).

    ``models`` None: the memory's own model (the one it was built with), or for a memory that holds nothing
    yet the model its first ``index`` chooses by what it reads: the default embedder, or multilingual-e5-small
    for a history mostly written in scripts the default does not read (``funes_py.choice``; ``choice`` says
    which and why). ``FUNES_EMBEDDER`` names one for every memory.

    ``on_model_mismatch``: a memory embedded with another model than ``models``' is refused with
    ``ModelMismatchError`` ("refuse", the default) or re-embedded from its stored text ("rebuild"; then
    ``rebuilt`` says from which model and how many chunks)."""

    def __init__(
        self,
        home: str | os.PathLike[str],
        models: Models | None = None,
        *,
        resident: bool = _funes.DEFAULT_RESIDENT,
        on_model_mismatch: OnModelMismatch = "refuse",
    ) -> None:
        from . import choice

        self.choice = choice.Choice(None, "given by the caller") if models is not None else choice.for_memory(home)
        self.models = models if models is not None else Models.load(self.choice.embedder)
        self._open_args = (resident, on_model_mismatch)
        self._inner = _funes.Engine(_home(home), self.models._inner, resident, on_model_mismatch)

    @classmethod
    def rebuild(
        cls,
        home: str | os.PathLike[str],
        models: Models | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> tuple[Engine, int]:
        """Re-embeds a memory's stored text with ``models`` (after a model change); returns the engine and
        the number of chunks re-embedded. No source files are needed."""
        from . import choice

        self = cls.__new__(cls)
        self.models = models if models is not None else Models.load()
        self.choice = choice.Choice(None, "rebuilt with the given models")
        self._open_args = (_funes.DEFAULT_RESIDENT, "refuse")
        self._inner, n = _funes.Engine.rebuild(_home(home), self.models._inner, progress=progress)
        return self, n

    @property
    def home(self) -> str:
        return self._inner.home

    @property
    def rebuilt(self) -> tuple[str, int] | None:
        """``(model the memory was built with, chunks re-embedded)`` when opening re-embedded it."""
        return self._inner.rebuilt

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

        if self.choice.open:
            self.choose_model(path, format)
        try:
            todo, unchanged = sources.plan(path, format, self._inner.unchanged)
        except ValueError as e:  # an unknown format name, or a named file none of the formats reads
            raise InvalidInputError(str(e)) from None
        return self._inner.index_sources(todo, unchanged, progress)

    def choose_model(self, path: str | os.PathLike[str], format: str | None = None) -> None:
        """For a memory with no data and no model named (``choice.open``): let the first texts of ``path``
        choose its model (``funes_py.choice.for_texts``), and load it. ``index`` does this by itself; call it
        first to know the choice before a long run. Otherwise it does nothing."""
        if not self.choice.open:
            return
        from . import choice, sources

        if _funes.stored_model(self.home) is not None:  # another writer got there first
            self.choice = choice.for_memory(self.home)
        else:
            try:
                self.choice = choice.for_texts(sources.sample_texts(path, format, choice.SAMPLE_TEXTS))
            except (OSError, ValueError):  # unreadable input is the index run's to report, with its place
                self.choice = choice.Choice(None, "the default embedder")
        if self.choice.embedder is not None and self.choice.embedder != self.models.embedder_name:
            self.models = Models.load(self.choice.embedder)
            self._inner = _funes.Engine(self.home, self.models._inner, *self._open_args)

    def index_lines(self, sources: Iterable[tuple[str, Iterable[str]]]) -> IndexReport:
        """Indexes ``.funes.jsonl`` lines held in memory (sources read from object storage, say), in one run:
        ``sources`` yields ``(key, lines)``, read as the run goes; ``key`` names the lines in bad-line
        reports. Only new chunks are embedded: a turn already stored is skipped by its id, so the same lines
        twice add nothing."""
        items: Iterator[tuple[str, None, list[tuple[int, str]], list[tuple[int, str]]]] = (
            (key, None, [(n, line) for n, line in enumerate(lines, start=1) if line.strip()], []) for key, lines in sources
        )
        return self._inner.index_sources(items, 0, None)

    def recall(self, query: str, options: RecallOptions | None = None, **overrides: Any) -> list[Hit]:
        """Hybrid recall: dense + BM25 (with the model's near words) fused by score, recency-weighted, top ``k``
        with neighbours.

        ``options`` (a ``RecallOptions``; its defaults when None) with ``overrides`` applied:
        ``eng.recall(q, k=3)`` or ``eng.recall(q, opts, sessions=["conv-1"])``. See ``RecallOptions``."""
        opts = options if options is not None else RecallOptions()
        if overrides:
            opts = opts.replace(**overrides)
        return self._inner.recall(query, opts)

    def warm(self) -> None:
        """Does now what the first recall would: reads the memory into RAM (the resident copy a warm engine
        searches) and runs the embedder once. The first recall otherwise pays for both: 0.2 s at 7,000
        passages, 13 s at 700,000. On a memory with no data yet it only loads the embedder."""
        self._inner.warm()

    def is_warm(self) -> bool:
        """Whether the memory is in RAM (after ``warm`` or a recall); false for a memory with no data yet."""
        return self._inner.is_warm()

    def recall_many(self, queries: Sequence[str], options: RecallOptions | None = None, **overrides: Any) -> list[list[Hit]]:
        """``recall`` of each query with the same options, in order: the queries are embedded together first
        (one pass over many short queries costs about what a pass over one does), so a batch of questions
        costs less than as many calls. An empty query raises ``InvalidInputError`` before anything runs."""
        opts = options if options is not None else RecallOptions()
        if overrides:
            opts = opts.replace(**overrides)
        return self._inner.recall_many(list(queries), opts)

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

    def __repr__(self) -> str:
        return f"Engine(home={self.home!r}, models={self.models!r})"

"""The page's routes: search (``/``), the sessions (``/sessions``), one conversation (``/c/<id>``), forgetting it
(``/c/<id>/forget``), what is left out (``/excluded``), and ``/healthz``.

One ``Engine`` per process, opened by the first request that needs it once the memory's directory exists (the
page never creates a memory) and kept warm: its resident copy answers every later search. Engine calls run on
starlette's thread pool; they release the GIL. Every failure is a page with a sentence, never a traceback."""

from __future__ import annotations

import math
import os
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote

import jinja2
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.templating import Jinja2Templates

from ...errors import FunesError, InvalidInputError, MemoryLockedError
from ...render import format_ts
from . import guards
from .marks import highlight

if TYPE_CHECKING:
    from ...engine import Engine
    from ..config import PersonalConfig

HITS = 10  # passages a search lists
SESSIONS_PER_PAGE = 50
EXCLUDED_LISTED = 200  # excluded files named on /excluded; the rest are counted
FORM_LIMIT = 4096  # bytes of a POSTed form
EXCLUDED_WALK_LIMIT = 200_000  # files looked at under the sources before /excluded stops counting


class _Memory:
    """The process's engine on ``config.home``, opened once, on first use."""

    def __init__(self, config: PersonalConfig) -> None:
        self.config = config
        self._engine: Engine | None = None
        self._lock = threading.Lock()

    def engine(self) -> Engine | None:
        """The open engine; None while the memory's directory does not exist (nothing indexed yet)."""
        if self._engine is not None:
            return self._engine
        with self._lock:
            if self._engine is None and self.config.home.is_dir():
                from ...engine import Engine

                self._engine = Engine(self.config.home)
            return self._engine


def recall_options(eng: Engine) -> Any:
    """``HITS`` passages, with the embedder's calibrated answer floor (``funes_py.convert.floors``, what the
    recall service uses): a search for something never discussed lists nothing rather than the ten least
    unrelated passages."""
    from ...convert.floors import calibrated_floors
    from ...options import RecallOptions

    f = calibrated_floors(eng.models.embedder_name)
    return RecallOptions(k=HITS, min_similarity=f.min_similarity, answer_floor=f.answer_floor,
                         answer_floor_per_decade=f.answer_floor_per_decade)  # fmt: skip


@dataclass
class _Excluded:
    files: list[tuple[str, str]]  # (path, the glob that leaves it out), at most EXCLUDED_LISTED
    count: int
    looked_at: int
    stopped: bool  # EXCLUDED_WALK_LIMIT reached: the count is a floor


def _excluded_files(config: PersonalConfig) -> _Excluded:
    out = _Excluded([], 0, 0, False)
    for root in config.roots():
        paths = [(str(root), [], [root.name])] if root.is_file() else os.walk(root)
        for dirpath, _dirs, names in paths:
            for name in sorted(names):
                path = str(root) if root.is_file() else os.path.join(dirpath, name)
                out.looked_at += 1
                if out.looked_at > EXCLUDED_WALK_LIMIT:
                    out.stopped = True
                    return out
                glob = config.excluded(path)
                if glob is not None:
                    out.count += 1
                    if len(out.files) < EXCLUDED_LISTED:
                        out.files.append((path, glob))
    return out


async def _small_form(request: Request) -> dict[str, str]:
    """A urlencoded form of at most ``FORM_LIMIT`` bytes (the Forget form holds one token), read without
    python-multipart, which starlette's ``request.form()`` needs; a bigger or other body reads as empty."""
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/x-www-form-urlencoded":
        return {}
    body = b""
    async for part in request.stream():
        body += part
        if len(body) > FORM_LIMIT:
            return {}
    return {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}


def _conversation_url(session_id: str, turn: str | None = None) -> str:
    url = "/c/" + quote(session_id, safe="")
    return url if turn is None else f"{url}?turn={quote(turn, safe='')}#t-{quote(turn, safe='')}"


def _templates() -> Jinja2Templates:
    env = jinja2.Environment(loader=jinja2.PackageLoader("funes_py.personal.ui", "templates"), autoescape=True)
    env.filters["when"] = format_ts
    env.globals.update(highlight=highlight, conversation_url=_conversation_url, quote=quote)
    return Jinja2Templates(env=env)


class _Pages:
    """The endpoints, over one memory, one set of templates and the process's CSRF token."""

    def __init__(self, config: PersonalConfig) -> None:
        self.config = config
        self.memory = _Memory(config)
        self.templates = _templates()
        self.token = guards.new_token()

    def page(self, request: Request, name: str, status: int = 200, **context: Any) -> Response:
        context = {"home": str(self.config.home), "csrf": self.token, **context}
        return self.templates.TemplateResponse(request, name, context, status_code=status)

    def error(self, request: Request, status: int, title: str, message: str) -> Response:
        return self.page(request, "error.html", status, title=title, message=message)

    def unknown(self, request: Request, session_id: str) -> Response:
        return self.error(request, 404, "No such conversation",
                          f"The memory holds no conversation {session_id!r}: it was forgotten, or never stored.")  # fmt: skip

    async def turns_of(self, session_id: str) -> list[Any] | None:
        """The conversation's turns; None when the memory holds no such conversation."""
        eng = await run_in_threadpool(self.memory.engine)
        if eng is None:
            return None
        try:
            return await run_in_threadpool(eng.get, session_id)
        except InvalidInputError:  # "session ... not found": forgotten, or never stored
            return None

    async def search(self, request: Request) -> Response:
        q = request.query_params.get("q", "").strip()
        eng = await run_in_threadpool(self.memory.engine)
        empty = eng is None or (await run_in_threadpool(eng.status)).rows == 0
        hits: list[Any] = []
        if q and eng is not None and not empty:
            hits = await run_in_threadpool(eng.recall, q, recall_options(eng))
        return self.page(request, "search.html", q=q, hits=hits, empty=empty, forgotten=request.query_params.get("forgotten"))

    async def sessions(self, request: Request) -> Response:
        eng = await run_in_threadpool(self.memory.engine)
        rows = await run_in_threadpool(eng.sessions) if eng is not None else []
        pages = max(1, math.ceil(len(rows) / SESSIONS_PER_PAGE))
        try:
            n = min(max(1, int(request.query_params.get("page", "1"))), pages)
        except ValueError:
            n = 1
        shown = rows[(n - 1) * SESSIONS_PER_PAGE : n * SESSIONS_PER_PAGE]
        return self.page(request, "sessions.html", sessions=shown, total=len(rows), page_no=n, pages=pages)

    async def conversation(self, request: Request) -> Response:
        sid = request.path_params["session_id"]
        turns = await self.turns_of(sid)
        if not turns:
            return self.unknown(request, sid)
        return self.page(request, "conversation.html", session_id=sid, turns=turns, hit=request.query_params.get("turn"))

    async def forget(self, request: Request) -> Response:
        """GET: the confirmation page. POST (token and origin checked first): forget, then back to search."""
        sid = request.path_params["session_id"]
        if request.method == "POST":
            why = guards.check_post(request, await _small_form(request), self.token)
            if why is not None:
                return self.error(request, 403, "Not forgotten", why)
        turns = await self.turns_of(sid)
        if not turns:
            return self.unknown(request, sid)
        if request.method == "GET":
            return self.page(request, "forget.html", session_id=sid, turns=len(turns), first=turns[0].ts, last=turns[-1].ts)
        eng = await run_in_threadpool(self.memory.engine)
        await run_in_threadpool(eng.forget, sid)  # type: ignore[union-attr]
        return RedirectResponse("/?forgotten=" + quote(sid, safe=""), status_code=303)

    async def excluded(self, request: Request) -> Response:
        found = await run_in_threadpool(_excluded_files, self.config)
        roots = [str(r) for r in self.config.roots()]
        return self.page(request, "excluded.html", config=self.config, roots=roots, found=found)

    async def healthz(self, request: Request) -> Response:
        return JSONResponse({"status": "ready", "home": str(self.config.home)})

    # --- errors: a page with a sentence, never a traceback (that goes to the terminal) -------------------

    async def not_found(self, request: Request, exc: Exception) -> Response:
        if isinstance(exc, HTTPException) and exc.status_code == 405:
            return self.error(request, 405, "Not allowed", f"{request.method} is not how this page is used.")
        return self.error(request, 404, "Not found", f"Nothing here at {request.url.path}.")

    async def engine_error(self, request: Request, exc: Exception) -> Response:
        if isinstance(exc, MemoryLockedError):
            return self.error(request, 409, "The memory is busy", f"{exc} Try again in a moment.")
        return self.error(request, 500, "The memory could not answer", f"{type(exc).__name__}: {exc}")

    async def unexpected(self, request: Request, exc: Exception) -> Response:
        return self.error(request, 500, "Something went wrong", f"{type(exc).__name__}: {exc} (the details are on the terminal)")

    @asynccontextmanager
    async def lifespan(self, _app: Starlette) -> AsyncIterator[None]:
        await run_in_threadpool(_warm, self.memory)  # the models load before the first search, not during it
        yield


def app(config: PersonalConfig) -> Starlette:
    """The page for ``config``'s memory as an ASGI app (``serve`` runs it; tests drive it directly)."""
    p = _Pages(config)
    routes = [
        Route("/", p.search),
        Route("/sessions", p.sessions),
        Route("/excluded", p.excluded),
        Route("/healthz", p.healthz),
        Route("/c/{session_id:path}/forget", p.forget, methods=["GET", "POST"]),
        Route("/c/{session_id:path}", p.conversation),
    ]
    handlers: dict[Any, Any] = {404: p.not_found, 405: p.not_found, FunesError: p.engine_error, Exception: p.unexpected}
    return Starlette(routes=routes, middleware=[Middleware(guards.LoopbackHostOnly)], exception_handlers=handlers,
                     lifespan=p.lifespan)  # fmt: skip


def _warm(memory: _Memory) -> None:
    """Opens the engine at start; a failure here is left for the first page to show."""
    import logging

    try:
        memory.engine()
    except (FunesError, OSError) as e:
        logging.getLogger(__name__).warning("the memory at %s did not open: %s", memory.config.home, e)

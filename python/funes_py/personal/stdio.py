"""``funes-py mcp``: the memory of one person, served to their agent as an MCP server over stdio.

The agent (Claude Code, Codex, Cursor) starts it as a command and talks JSON-RPC on its stdin and stdout;
everything else goes to stderr. Tools: ``recall`` (the recall service's rendering and defaults, each passage
naming its session and project, scoped to the caller's project first), ``get`` (a session's turns around
one), ``sessions`` (newest first) and ``scan`` (every exact occurrence of a string in one session). The
engine opens once, in the background, and stays warm while the client keeps the process; the watcher
(``personal.watch``) keeps the memory in step with the agents' history files unless ``--no-watch``.

Scope: a turn's project is the working directory its agent ran in (``Hit.workdir``). A recall looks first in
the caller's project: the tool's ``project`` argument, else ``--project``, else the first root the client
declares (MCP roots), else this process's working directory (an agent starts its servers in the project it
works on); when nothing there answers it searches every project and says so."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import unquote, urlparse

from mcp.server.fastmcp import Context, FastMCP
from mcp.types import ToolAnnotations
from pydantic import Field

from ..render import NOTHING, format_passages, format_ts
from .config import PersonalConfig
from .privacy import SERVER_NAME

log = logging.getLogger("funes_py.personal")

INSTRUCTIONS = (
    "Memory of this user's earlier conversations with their coding agents, on this machine. Call `recall` when "
    "the user refers to something discussed or decided before; quote what it returns with its date and invent "
    "nothing. Follow a passage with `get` (more of that session) or `scan` (an exact string in it)."
)
RECALL_DESCRIPTION = """\
Search this user's own earlier conversations with their agents and return dated passages, quoted verbatim, \
each naming its session and project. Looks in the current project first and widens to all projects when \
nothing there answers.

Call it when the user points at something said before that is not in this conversation ("last time", \
"what did we decide", "the command we used") or names a ticket, file, person or figure you have no context \
for. Pass a few key words (identifiers, names, key nouns), not a whole sentence; if the passages do not \
answer, search again with other words. Quote or closely paraphrase what comes back with its date; if nothing \
relevant comes back, say so."""
MAX_CHARS = 6000
MAX_GET_CHARS = 20000
_READONLY = ToolAnnotations(readOnlyHint=True, idempotentHint=True, openWorldHint=False)


class Memory:
    """The engine, opened once in a worker thread; tools wait for it."""

    def __init__(self, config: PersonalConfig, project: str | None) -> None:
        self.config = config
        self.project = project
        self._ready: asyncio.Future[Any] | None = None
        self._options: tuple[str, Any] | None = None  # (embedder name, the service's recall options for it)

    def start(self) -> None:
        self._ready = asyncio.ensure_future(asyncio.to_thread(_open_warm, self.config.home))

    async def engine(self) -> Any:
        if self._ready is None:
            self.start()
        assert self._ready is not None
        return await asyncio.shield(self._ready)

    def options(self, engine: Any, **overrides: Any) -> Any:
        """The service's recall options for the engine's embedder (made once: a new memory's first sync may
        choose another embedder), with the call's ``overrides``."""
        name = engine.models.embedder_name
        if self._options is None or self._options[0] != name:
            from ..convert.floors import calibrated_floors
            from ..server.config import ServiceConfig

            self._options = (name, ServiceConfig().recall_options(calibrated_floors(name)))
        given = {k: v for k, v in overrides.items() if v is not None}
        return self._options[1].replace(**given) if given else self._options[1]


def _open_warm(home: Path) -> Any:
    """The engine, warmed (`Engine.warm`): the first recall reads the memory into RAM and runs the embedder
    for the first time, 2 to 3 s at 80,000 passages, which the agent's first question would otherwise wait for."""
    from ..engine import Engine
    from ..errors import FunesError

    engine = Engine(home)
    try:
        engine.warm()
    except FunesError as e:  # an unusual memory: the first real call will say what is wrong
        log.debug("warm-up: %s", e)
    return engine


async def _client_root(ctx: Context) -> str | None:  # type: ignore[type-arg]
    """The first file:// root the client declares, if it supports roots."""
    try:
        caps = ctx.session.client_params.capabilities if ctx.session.client_params else None
        if caps is None or caps.roots is None:
            return None
        result = await asyncio.wait_for(ctx.session.list_roots(), 2)
    except Exception:  # a client that answers roots/list with an error: no scope from it
        return None
    for root in result.roots:
        url = urlparse(str(root.uri))
        if url.scheme == "file":
            return unquote(url.path).rstrip("/") or "/"
    return None


async def recall_text(memory: Memory, query: str, project: str | None, since: str | None, until: str | None,
                      k: int | None, ctx: Context | None) -> str:  # type: ignore[type-arg]
    engine = await memory.engine()
    query = query.strip()
    if not query:
        return "The query is empty: pass a few key words (identifiers, names, key nouns)."
    scope = project or memory.project or (await _client_root(ctx) if ctx is not None else None) or os.getcwd()
    opts = memory.options(engine, since=since or None, until=until or None, k=k)
    hits = await asyncio.to_thread(engine.recall, query, opts, projects=[scope]) if scope else []
    where = f"From this project ({scope}):"
    if not hits:
        hits = await asyncio.to_thread(engine.recall, query, opts)
        where = f"Nothing in this project ({scope}); from all projects:" if scope else ""
    if not hits:
        return NOTHING
    return f"{where}\n{format_passages(hits, MAX_CHARS, where=True)}".strip()


def build(config: PersonalConfig, project: str | None = None) -> tuple[FastMCP, Memory]:
    memory = Memory(config, project)
    mcp = FastMCP(name=SERVER_NAME, instructions=INSTRUCTIONS, log_level="WARNING")

    @mcp.tool(name="recall", description=RECALL_DESCRIPTION, structured_output=False,
              annotations=ToolAnnotations(title="Recall earlier conversations", readOnlyHint=True,
                                          idempotentHint=True, openWorldHint=False))  # fmt: skip
    async def recall(
        query: Annotated[str, Field(description="A few key words: identifiers, names, key nouns.")],
        ctx: Context,  # type: ignore[type-arg]
        project: Annotated[str | None, Field(description="A project directory to look in first (default: the current one).")] = None,
        since: Annotated[str | None, Field(description="Only turns at or after this ISO date or time.")] = None,
        until: Annotated[str | None, Field(description="Only turns at or before this ISO date (that whole day) or time.")] = None,
        k: Annotated[int | None, Field(description="How many passages (default 3).", ge=1, le=20)] = None,
    ) -> str:
        return await recall_text(memory, query, project, since, until, k, ctx)

    @mcp.tool(name="get", structured_output=False, annotations=_READONLY,
              description="A session's turns, all of them or those around one turn (by its uuid), with dates.")  # fmt: skip
    async def get(
        session_id: Annotated[str, Field(description="The session named under a recall passage.")],
        turn_uuid: Annotated[str | None, Field(description="Centre on this turn (default: the whole session).")] = None,
        window: Annotated[int, Field(description="Turns on each side of turn_uuid.", ge=0, le=50)] = 3,
    ) -> str:
        engine = await memory.engine()
        turns = await asyncio.to_thread(engine.get, session_id, turn_uuid, window)
        if not turns:
            return f"No session {session_id!r} (or no turn {turn_uuid!r} in it)."
        lines = [f"[{format_ts(t.ts)}] #{t.seq} {t.role} (turn {t.turn_uuid}): {t.text}" for t in turns]
        return _capped("\n".join(lines), MAX_GET_CHARS)

    @mcp.tool(name="sessions", structured_output=False, annotations=_READONLY,
              description="Stored sessions, newest first: id, first and last date, number of turns.")  # fmt: skip
    async def sessions(
        since: Annotated[str | None, Field(description="Only sessions with a turn at or after this ISO date.")] = None,
        until: Annotated[str | None, Field(description="Only sessions with a turn at or before this ISO date.")] = None,
        limit: Annotated[int, Field(ge=1, le=500)] = 30,
    ) -> str:
        engine = await memory.engine()
        found = await asyncio.to_thread(engine.sessions, since or None, until or None)
        if not found:
            return "No sessions stored."
        rows = [f"{s.session_id}  {format_ts(s.first_ts)} .. {format_ts(s.last_ts)}  {s.turns} turns" for s in found[:limit]]
        more = f"\n({len(found) - limit} older sessions not shown)" if len(found) > limit else ""
        return "\n".join(rows) + more

    @mcp.tool(name="scan", structured_output=False, annotations=_READONLY,
              description="Every exact occurrence of a string in one session (case-insensitive), with its turn.")  # fmt: skip
    async def scan(
        session_id: Annotated[str, Field(description="The session to search.")],
        needle: Annotated[str, Field(description="The exact text to find.", min_length=1)],
    ) -> str:
        engine = await memory.engine()
        found = await asyncio.to_thread(engine.scan, session_id, needle)
        if not found:
            return f"{needle!r} does not occur in session {session_id!r}."
        rows = [f"[{format_ts(m.ts)}] #{m.seq} {m.role} (turn {m.turn_uuid}): {m.excerpt}" for m in found]
        return _capped("\n".join(rows), MAX_GET_CHARS)

    return mcp, memory


def _capped(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 40].rstrip() + "\n(… cut; ask for a narrower window)"


async def serve(config: PersonalConfig, project: str | None = None, watch: bool = True) -> None:
    """Serves on stdin/stdout until the client closes them; watches the sources meanwhile (if this process gets
    the memory's sync lock). The MCP handshake does not wait for the engine: the first tool call does."""
    from .watch import watching

    mcp, memory = build(config, str(Path(project).expanduser().resolve()) if project else None)
    memory.start()
    done = asyncio.Event()

    async def keep_in_step() -> None:
        try:
            engine = await memory.engine()
        except Exception:
            log.exception("the memory at %s could not be opened", config.home)
            return
        async with watching(engine, config, watch):
            await done.wait()

    task = asyncio.create_task(keep_in_step())
    try:
        await mcp.run_stdio_async()
    finally:
        done.set()
        await task

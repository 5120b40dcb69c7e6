"""`funes-py mcp` through the real MCP SDK's stdio client (issue 38): the tools are listed, recall answers from
a Claude Code history it backfilled itself, looks in the caller's project first and widens when nothing there
answers, a turn appended to a session file is found within 2 s with no other command, and a second server on
the same memory serves recall but does not watch (nothing is indexed twice)."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from contextlib import AsyncExitStack
from datetime import timedelta
from pathlib import Path

import pytest

from personal_helpers import START, append_turn, write_session

pytestmark = pytest.mark.models

PUMPS, MOTORS = "/src/pumps", "/src/motors"


def _history(root: Path) -> Path:
    pumps = write_session(root, PUMPS, "sess-pumps", [
        ("user", "The seal on pump P-7 keeps weeping. What did we decide?"),
        ("assistant", "We decided to replace the P-7 seal with a Viton seal, kit VS-220, at the next shutdown."),
    ])  # fmt: skip
    write_session(root, MOTORS, "sess-motors", [
        ("user", "Which bearing does motor M-3 take?"),
        ("assistant", "Motor M-3 takes a 6204-2RS bearing; two are in the store room, bin 14."),
    ], START + timedelta(days=1))  # fmt: skip
    return pumps


def _params(home: Path, *extra: str):
    from mcp.client.stdio import StdioServerParameters

    env = {**os.environ, "FUNES_LOG": "INFO"}
    return StdioServerParameters(command=sys.executable, args=["-m", "funes_py.cli", "mcp", "--home", str(home), *extra], env=env)


async def _text(session, tool: str, **args) -> str:
    result = await session.call_tool(tool, args)
    assert not result.isError, result
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def _until(check, timeout: float) -> float:
    t0 = time.monotonic()
    while True:
        if await check():
            return time.monotonic() - t0
        if time.monotonic() - t0 > timeout:
            raise AssertionError(f"not true after {timeout}s")
        await asyncio.sleep(0.05)


def test_the_stdio_server_recalls_scopes_and_follows_writes(tmp_path: Path):
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    root, home = tmp_path / "claude" / "projects", tmp_path / "memory"
    pumps = _history(root)
    home.mkdir()
    (home / "personal.toml").write_text(f'default_sources = false\nsources = ["{root}"]\ndebounce_ms = 100\n')

    async def main() -> None:
        async with AsyncExitStack() as stack:
            err = stack.enter_context(open(tmp_path / "first.log", "w"))
            read, write = await stack.enter_async_context(stdio_client(_params(home, "--project", PUMPS), errlog=err))
            first = await stack.enter_async_context(ClientSession(read, write))
            await first.initialize()
            tools = {t.name for t in (await first.list_tools()).tools}
            assert tools == {"recall", "get", "sessions", "scan"}

            async def backfilled() -> bool:
                return (await _text(first, "sessions")).count("sess-") == 2

            await _until(backfilled, 120)
            text = await _text(first, "recall", query="P-7 seal decision")
            assert "Viton" in text and f"From this project ({PUMPS})" in text and "session sess-pumps" in text
            text = await _text(first, "recall", query="motor M-3 bearing")
            assert "6204-2RS" in text and "from all projects" in text, text
            assert "6204-2RS" in await _text(first, "recall", query="motor M-3 bearing", project=MOTORS)
            got = await _text(first, "get", session_id="sess-pumps")
            assert got.count("\n") == 1 and "VS-220" in got
            assert "VS-220" in await _text(first, "scan", session_id="sess-pumps", needle="vs-220")

            # A turn appended by the agent is found within 2 s, with no other command.
            append_turn(pumps, "sess-pumps", "assistant", "The spare impeller for P-7 is part IMP-5521, on order.", PUMPS,
                        START + timedelta(days=2))  # fmt: skip

            async def appended() -> bool:
                return "IMP-5521" in await _text(first, "recall", query="P-7 spare impeller part")

            took = await _until(appended, 10)
            assert took <= 2.0, f"an appended turn took {took:.2f}s to be found"

            # A second server on the same memory answers from it but does not watch.
            err2 = stack.enter_context(open(tmp_path / "second.log", "w"))
            read2, write2 = await stack.enter_async_context(stdio_client(_params(home), errlog=err2))
            second = await stack.enter_async_context(ClientSession(read2, write2))
            await second.initialize()
            assert "IMP-5521" in await _text(second, "recall", query="P-7 spare impeller part", project=PUMPS)
            append_turn(pumps, "sess-pumps", "user", "Also log that P-7 was restarted at 14:05 by Mirela.", PUMPS,
                        START + timedelta(days=3))  # fmt: skip

            async def restarted() -> bool:
                return "Mirela" in await _text(second, "recall", query="who restarted P-7", project=PUMPS)

            await _until(restarted, 10)  # indexed by the first server's watcher, read by the second
            row = next(r for r in (await _text(second, "sessions")).splitlines() if r.startswith("sess-pumps"))
            assert row.endswith(" 4 turns"), row  # two written, two appended: each stored once

    asyncio.run(main())
    second_log = (tmp_path / "second.log").read_text()
    assert "keeps this memory in step: not watching" in second_log, second_log[-2000:]
    assert "watching" in (tmp_path / "first.log").read_text()

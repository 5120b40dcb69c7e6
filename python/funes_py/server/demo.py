"""`funes-py demo`: seed a fresh data directory through the real ingest route, then ask as a real MCP client.

Starts the service in this process on a free loopback port, posts alice's six conversations and bob's
one to POST /turns (with the ingest key, as a gateway would), waits for indexing, then connects to /mcp
with alice's token and prints what `recall_my_conversations` returns for three questions, plus a negative
control asked as alice and as bob.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from .config import ServiceConfig
from .demo_data import ALICE, ALICE_QUESTIONS, BOB, BOB_ONLY_MARKERS, NEGATIVE_QUESTION, bodies
from .mcp_tool import TOOL_NAME


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _InProcessServer:
    """uvicorn on a thread; signal handlers stay with the main thread."""

    def __init__(self, config: ServiceConfig):
        import uvicorn

        from .app import create_app

        self.app = create_app(config)
        self._server = uvicorn.Server(uvicorn.Config(
            self.app, host=config.host, port=config.port, log_config=None, access_log=False,
            log_level=config.log_level.lower(),
        ))
        self._thread = threading.Thread(target=self._server.run, name="funes-demo-server", daemon=True)

    def __enter__(self) -> _InProcessServer:
        self._thread.start()
        deadline = time.monotonic() + 120
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the demo server did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=60)


async def _ask(url: str, token: str, questions: list[str]) -> list[str]:
    import httpx
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60.0) as http:
        async with streamable_http_client(url, http_client=http) as (read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()
                answers = []
                for q in questions:
                    result = await session.call_tool(TOOL_NAME, {"query": q})
                    answers.append("".join(c.text for c in result.content if c.type == "text"))
                return answers


def _wait_indexed(base: str, timeout: float = 300.0) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if httpx.get(base + "/healthz").json().get("indexing") == 0:
            return
        time.sleep(0.2)
    raise TimeoutError("indexing did not finish")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="funes-py demo", description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, help="data directory to seed (default: a new temporary directory)")
    args = p.parse_args(argv)

    import httpx

    from .cli import setup_logging

    data = args.data or Path(tempfile.mkdtemp(prefix="funes-demo-"))
    if data.exists() and any(data.iterdir()):
        print(f"funes-py demo: {data} is not empty; give a fresh directory", file=sys.stderr)
        return 2
    tokens = {secrets.token_urlsafe(16): "alice", secrets.token_urlsafe(16): "bob"}
    token_of = {user: tok for tok, user in tokens.items()}
    data.mkdir(parents=True, exist_ok=True)
    tokens_file = data.parent / f".{data.name}-tokens.json"
    tokens_file.write_text(json.dumps(tokens))
    ingest_key = secrets.token_urlsafe(24)
    config = ServiceConfig.load(
        host="127.0.0.1", port=_free_port(), data_dir=str(data), tokens_file=tokens_file, ingest_key=ingest_key,
        index_debounce_s=0.2, log_level="WARNING",
    )
    setup_logging(config.log_level)
    base = f"http://{config.host}:{config.port}"

    print(f"data directory: {data}")
    t0 = time.perf_counter()
    with _InProcessServer(config):
        print(f"server ready at {base} in {time.perf_counter() - t0:.1f} s (models loaded at start-up)")
        n = 0
        for user, convs in (("alice", ALICE), ("bob", BOB)):
            for body in bodies(user, convs):
                r = httpx.post(base + "/turns", json=body, headers={"x-ingest-key": ingest_key})
                r.raise_for_status()
                n += 1
        _wait_indexed(base)
        print(f"ingested {n} conversations through POST /turns and indexed them in {time.perf_counter() - t0:.1f} s\n")

        questions = [q for q, _ in ALICE_QUESTIONS] + [NEGATIVE_QUESTION]
        answers = asyncio.run(_ask(base + "/mcp", token_of["alice"], questions))
        bob_answer = asyncio.run(_ask(base + "/mcp", token_of["bob"], [NEGATIVE_QUESTION]))[0]

    ok = True
    for (question, expected), answer in zip(ALICE_QUESTIONS, answers[:-1], strict=True):
        found = all(e in answer for e in expected)
        ok &= found
        print(f"=== alice asks: {question}\n{answer}\n--- expected {expected}: {'found' if found else 'MISSING'}\n")
    alice_neg = answers[-1]
    leak = [m for m in BOB_ONLY_MARKERS if m in alice_neg]
    ok &= not leak
    print(f"=== negative control, alice asks: {NEGATIVE_QUESTION}\n{alice_neg}\n"
          f"--- bob's P-7 / MT-5120 in alice's answer: {'LEAKED ' + str(leak) if leak else 'no (correct)'}\n")
    bob_has = "P-7" in bob_answer and "MT-5120" in bob_answer
    ok &= bob_has
    print(f"=== negative control, bob asks: {NEGATIVE_QUESTION}\n{bob_answer}\n"
          f"--- bob's own conversation found: {'yes' if bob_has else 'NO'}\n")
    tokens_file.unlink(missing_ok=True)
    print("demo passed" if ok else "demo FAILED: see the answers above")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

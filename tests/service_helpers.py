"""Helpers for the service tests: a real server in a subprocess, a real MCP client, a real HTTP client."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

INGEST_KEY = "test-ingest-key-0123456789"
TOKENS = {"tok-alice-5f1c": "alice", "tok-bob-9a2e": "bob", "tok-carol-77d0": "carol"}
ALICE, BOB, CAROL = "tok-alice-5f1c", "tok-bob-9a2e", "tok-carol-77d0"
JWT_SECRET = "test-jwt-secret-with-enough-bytes-0123456789"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """`python -m funes_py.server` on a free loopback port, logs in `log_path`."""

    def __init__(self, data: Path, env: dict[str, str] | None = None):
        self.data = data
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = data.parent / f"server-{self.port}.log"
        tokens = data.parent / "tokens.json"
        tokens.write_text(json.dumps(TOKENS))
        self.env = {
            **os.environ,
            "FUNES_HOST": "127.0.0.1",
            "FUNES_PORT": str(self.port),
            "FUNES_DATA": str(data),
            "FUNES_TOKENS_FILE": str(tokens),
            "FUNES_JWT_SECRET": JWT_SECRET,
            "FUNES_INGEST_KEY": INGEST_KEY,
            "FUNES_INDEX_DEBOUNCE_S": "0.3",
            "FUNES_LOG": "INFO",
            **(env or {}),
        }
        # The child imports the same funes_py as this process, installed or from the tree.
        import funes_py

        pkg_root = str(Path(funes_py.__file__).resolve().parent.parent)
        self.env["PYTHONPATH"] = os.pathsep.join(p for p in (pkg_root, os.environ.get("PYTHONPATH")) if p)
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 90.0) -> Server:
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "funes_py.server"], env=self.env, stdout=self._log, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self._log.close()
                raise RuntimeError(f"server exited with {self.proc.returncode}:\n{self.log()}")
            try:
                if httpx.get(self.url + "/healthz", timeout=1.0).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.kill()
        raise RuntimeError(f"server not ready after {timeout} s:\n{self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def health(self) -> dict[str, Any]:
        return httpx.get(self.url + "/healthz", timeout=5.0).json()

    def wait_indexed(self, timeout: float = 60.0) -> dict[str, Any]:
        """Wait until no index run is going or pending (give a debounce a moment to start first)."""
        time.sleep(0.1)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            h = self.health()
            if h["indexing"] == 0:
                return h
            time.sleep(0.1)
        raise TimeoutError(f"still indexing after {timeout} s:\n{self.log()}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self._log.close()

    # --- the two clients --------------------------------------------------------------------------
    def post_turns(self, body: Any, key: str | None = INGEST_KEY, **kw: Any) -> httpx.Response:
        headers = {} if key is None else {"x-ingest-key": key}
        headers.update(kw.pop("headers", {}))
        return httpx.post(self.url + "/turns", json=body, headers=headers, timeout=30.0, **kw)

    def recall(self, token: str | None, query: str) -> str:
        return asyncio.run(mcp_recall(self.url + "/mcp", token, query))

    def recall_many(self, token: str, queries: list[str]) -> list[str]:
        return asyncio.run(mcp_recall_many(self.url + "/mcp", token, queries))


async def mcp_recall_many(url: str, token: str | None, queries: list[str]) -> list[str]:
    """One MCP session over streamable HTTP; each query is one tools/call of recall_my_conversations."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(30.0, read=60.0)) as http:
        async with streamable_http_client(url, http_client=http) as (read, write, _):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                from funes_py import __version__

                assert init.serverInfo.name == "funes" and init.serverInfo.version == __version__
                out = []
                for q in queries:
                    result = await session.call_tool("recall_my_conversations", {"query": q})
                    assert not result.isError, result
                    out.append("".join(c.text for c in result.content if c.type == "text"))
                return out


async def mcp_recall(url: str, token: str | None, query: str) -> str:
    return (await mcp_recall_many(url, token, [query]))[0]


def mcp_post_status(url: str, token: str | None) -> int:
    """The HTTP status of a raw MCP initialize POST with `token` (to see the 401 itself)."""
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    body = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "0"}},
    }
    return httpx.post(url + "/mcp", json=body, headers=headers, timeout=10.0).status_code


def ingest_demo(server: Server) -> None:
    from funes_py.server.demo_data import ALICE as ALICE_CONVS
    from funes_py.server.demo_data import BOB as BOB_CONVS
    from funes_py.server.demo_data import bodies

    for body in bodies("alice", ALICE_CONVS) + bodies("bob", BOB_CONVS):
        r = server.post_turns(body)
        assert r.status_code == 202, r.text

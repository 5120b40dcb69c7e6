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
import uuid
from dataclasses import dataclass
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


@dataclass
class DataRoot:
    """Where a test server keeps its tenants (`FUNES_DATA`): a local directory, or a fresh prefix in the
    session's real S3 server, with a local work directory for logs, tokens and each replica's state.
    `tenant_files` reads back every file or object of a tenant, so a test can look at what is stored either way."""

    uri: str
    workdir: Path
    s3: Any = None  # s3_helpers.SeaweedS3 when on S3

    @classmethod
    def local(cls, workdir: Path) -> DataRoot:
        return cls(str(workdir / "data"), workdir)

    @classmethod
    def on_s3(cls, server: Any, workdir: Path) -> DataRoot:
        return cls(server.uri(f"service-{uuid.uuid4().hex[:12]}"), workdir, server)

    @property
    def name(self) -> str:
        return "s3" if self.s3 is not None else "local"

    def env(self, replica: str = "") -> dict[str, str]:
        """The server's variables for this root; on S3, a state directory of the replica's own (as a
        replica on its own machine would have)."""
        if self.s3 is None:
            return {"FUNES_DATA": self.uri}
        return {"FUNES_DATA": self.uri, "FUNES_STATE_DIR": str(self.workdir / f"state{replica}"), **self.s3.env()}

    def tenant_names(self) -> list[str]:
        """The names of the tenants stored (directories, or first key components under the prefix)."""
        if self.s3 is None:
            root = Path(self.uri)
            return sorted(p.name for p in root.iterdir()) if root.is_dir() else []
        prefix = self.uri.removeprefix(f"s3://{self.s3.bucket}/") + "/"
        return sorted({k[len(prefix):].split("/", 1)[0] for k in self.s3.client().list_objects_v2(self.s3.bucket, prefix=prefix)})

    def source(self, tenant: str, conversation_id: str) -> str | None:
        """The stored source file of a conversation; None when there is none."""
        name = f"src/{conversation_id}.funes.jsonl"
        if self.s3 is None:
            path = Path(self.uri) / tenant / name
            return path.read_text() if path.exists() else None
        key = self.uri.removeprefix(f"s3://{self.s3.bucket}/") + f"/{tenant}/{name}"
        r = self.s3.client().get(self.s3.bucket, key)
        if r.status == 404:
            return None
        assert r.ok, (key, r.status)
        return r.body.decode()

    def tenant_files(self, tenant: str) -> dict[str, tuple[bytes, str]]:
        """{path under the tenant: (content, version)}; the version changes whenever the file is rewritten
        (local: mtime and size; S3: ETag and LastModified). On S3, the replicas' local state directories
        are listed too (as `local:state<replica>/...`)."""
        if self.s3 is None:
            root = Path(self.uri) / tenant
            return {str(p.relative_to(root)): (p.read_bytes(), f"{p.stat().st_mtime_ns}:{p.stat().st_size}")
                    for p in sorted(root.rglob("*")) if p.is_file()}  # fmt: skip
        prefix = self.uri.removeprefix(f"s3://{self.s3.bucket}/") + f"/{tenant}/"
        client = self.s3.client()
        out = {}
        for key in client.list_objects_v2(self.s3.bucket, prefix=prefix):
            r = client.get(self.s3.bucket, key)
            if r.status == 404:  # removed between the listing and the read
                continue
            assert r.ok, (key, r.status)
            out[key[len(prefix):]] = (r.body, f"{r.headers.get('etag')}:{r.headers.get('last-modified')}")
        # What a replica keeps on its own disk for S3 memories (lock, index state) counts as stored too.
        for state in sorted(self.workdir.glob("state*")):
            for p in sorted(state.rglob("*")):
                if p.is_file():
                    out[f"local:{p.relative_to(self.workdir)}"] = (p.read_bytes(), f"{p.stat().st_mtime_ns}")
        return out


class Server:
    """`python -m funes_py.server` on a free loopback port, logs in `log_path`. `data` is a local directory
    or a DataRoot (then `replica` names this server's own state directory)."""

    def __init__(self, data: Path | DataRoot, env: dict[str, str] | None = None, replica: str = ""):
        root = data if isinstance(data, DataRoot) else DataRoot(str(data), data.parent)
        self.root = root
        self.data = Path(root.uri) if root.s3 is None else root.uri
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = root.workdir / f"server-{self.port}.log"
        tokens = root.workdir / "tokens.json"
        root.workdir.mkdir(parents=True, exist_ok=True)
        tokens.write_text(json.dumps(TOKENS))
        self.env = {
            **os.environ,
            "FUNES_HOST": "127.0.0.1",
            "FUNES_PORT": str(self.port),
            **root.env(replica),
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
        return httpx.post(self.url + "/turns", json=body, headers=headers, **{"timeout": 30.0, **kw})

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

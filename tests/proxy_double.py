"""ScriptedEngine: a TEST DOUBLE of an OpenAI-compatible engine (llama-server flavoured), for the proxy's loop.

The issue allows exactly this: "the proxy's loop logic is tested against a scripted OpenAI-compatible engine
written in the tests (named as a test double: records bodies, follows per-test scripts, serves /props,
/slots, token counts)". It is a real HTTP server on loopback (stdlib ThreadingHTTPServer), so the proxy
talks to it exactly as to llama-server. What it does:

* records every request body (raw bytes and parsed) per path;
* counts prompt tokens deterministically (`tokens`: a quarter of the characters of the rendered messages
  and tools, plus 5 per message) and refuses, like llama-server, any prompt that does not fit `n_ctx`; it
  also records every request whose prompt + max_tokens exceeds `n_ctx` (`oversize`), which no test allows;
* answers from a per-test script: `script(body, n)` returns a `Reply` (text, tool calls, or an error);
* streams SSE chunks when asked (role, content pieces, tool-call deltas, finish, usage, [DONE]);
* serves /props (n_ctx), /slots (a simulated KV cache: the last prompt's tokens; save/restore/erase to an
  in-memory dict keyed by filename; `restart()` empties the cache as a killed server would), and
  /v1/chat/completions/input_tokens. With `flavor="openai"` /props and /slots answer 404.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse


@dataclass
class Reply:
    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    status: int = 200
    error: dict[str, Any] | None = None
    delay_s: float = 0.0
    chunks: int = 3  # how many content pieces when streamed


def call(name: str, arguments: dict[str, Any], cid: str) -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def text_of(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))


def tokens(body: dict[str, Any]) -> int:
    n = 0
    for m in body.get("messages", []):
        chars = len(text_of(m.get("content")))
        for c in m.get("tool_calls") or []:
            chars += len(json.dumps(c.get("function", {})))
        n += chars // 4 + 5
    if body.get("tools"):
        n += len(json.dumps(body["tools"])) // 4
    return n


def default_script(body: dict[str, Any], n: int) -> Reply:
    return Reply(text=f"answer {n}")


class ScriptedEngine:
    def __init__(self, n_ctx: int = 16384, flavor: str = "llama", script: Callable[..., Reply] = default_script,
                 slot_dir: Any = None):  # fmt: skip
        self.n_ctx = n_ctx
        self.slot_dir = slot_dir  # like --slot-save-path: saves are also written there as files
        self.flavor = flavor
        self.script = script
        self.bodies: list[dict[str, Any]] = []  # chat completion bodies, in order
        self.raw: list[bytes] = []
        self.counts: list[dict[str, Any]] = []  # token-count bodies
        self.paths: list[tuple[str, str]] = []  # (method, path) of every request
        self.oversize: list[tuple[int, int]] = []  # (prompt tokens, max_tokens) past n_ctx
        self.slot_tokens = 0  # the simulated KV cache of slot 0
        self.slot_prompt: list[Any] = []
        self.saved: dict[str, tuple[int, list[Any]]] = {}
        self.id_task = 0
        self.processed: list[int] = []  # prompt tokens each completion had to process (not cached)
        self.lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> ScriptedEngine:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()

    def restart(self) -> None:
        """What a killed and restarted llama-server looks like: the slot's cache is empty."""
        with self.lock:
            self.slot_tokens = 0
            self.slot_prompt = []
            self.id_task = 0

    # --- the cache model: the common prefix of messages is reused --------------------------------
    def _process(self, body: dict[str, Any]) -> int:
        msgs = body.get("messages", [])
        common = 0
        for a, b in zip(self.slot_prompt, msgs, strict=False):
            if a != b:
                break
            common += 1
        cached = tokens({"messages": msgs[:common]}) if common else 0
        total = tokens(body)
        self.slot_prompt = list(msgs)
        self.slot_tokens = total
        return total - (cached if common and body.get("tools") == self._tools else 0)

    _tools: Any = None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        engine = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out as two writes: with Nagle's algorithm on, the second waits for the
            # client's delayed ACK (40 ms on Linux), which would swamp every latency measured through it.
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def _json(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _body(self) -> bytes:
                n = int(self.headers.get("content-length") or 0)
                return self.rfile.read(n) if n else b""

            def do_GET(self) -> None:
                url = urlparse(self.path)
                engine.paths.append(("GET", url.path))
                if url.path == "/props" and engine.flavor == "llama":
                    return self._json(200, {"default_generation_settings": {"n_ctx": engine.n_ctx}, "total_slots": 1})
                if url.path == "/slots" and engine.flavor == "llama":
                    slot: dict[str, Any] = {"id": 0, "n_ctx": engine.n_ctx, "is_processing": False}
                    if engine.slot_tokens:
                        slot.update(id_task=engine.id_task, n_prompt_tokens=engine.slot_tokens)
                    return self._json(200, [slot])
                if url.path == "/v1/models":
                    return self._json(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})
                if url.path == "/echo-stream":
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.send_header("transfer-encoding", "chunked")
                    self.end_headers()
                    for i in range(3):
                        self._chunk(f"data: {i}\n\n".encode())
                    self._chunk(b"")
                    return None
                return self._json(404, {"error": {"message": f"no route {url.path}", "code": 404}})

            def do_POST(self) -> None:
                url = urlparse(self.path)
                raw = self._body()
                engine.paths.append(("POST", url.path))
                if url.path.startswith("/slots/") and engine.flavor == "llama":
                    return self._slot_action(parse_qs(url.query).get("action", [""])[0], raw)
                if url.path == "/v1/chat/completions/input_tokens" and engine.flavor == "llama":
                    body = json.loads(raw)
                    engine.counts.append(body)
                    return self._json(200, {"input_tokens": tokens(body), "object": "response.input_tokens"})
                if url.path == "/v1/echo":
                    return self._json(200, {"echo": json.loads(raw or b"null"), "auth": self.headers.get("authorization")})
                if url.path != "/v1/chat/completions":
                    return self._json(404, {"error": {"message": f"no route {url.path}", "code": 404}})
                body = json.loads(raw)
                with engine.lock:
                    engine.raw.append(raw)
                    engine.bodies.append(body)
                    n = len(engine.bodies)
                prompt = tokens(body)
                max_tokens = body.get("max_tokens") or body.get("max_completion_tokens") or 0
                if prompt + max_tokens > engine.n_ctx:
                    engine.oversize.append((prompt, max_tokens))
                if prompt >= engine.n_ctx:
                    return self._json(400, {"error": {"code": 400, "type": "exceed_context_size_error",
                                                      "message": f"request ({prompt} tokens) exceeds the available "
                                                                 f"context size ({engine.n_ctx} tokens)"}})
                reply = engine.script(body, n)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.status != 200:
                    return self._json(reply.status, reply.error or {"error": {"message": "scripted error"}})
                with engine.lock:
                    engine.id_task += 1
                    engine._tools = body.get("tools")
                    engine.processed.append(engine._process(body))
                usage = {"prompt_tokens": prompt, "completion_tokens": 7, "total_tokens": prompt + 7}
                if body.get("stream"):
                    return self._stream(reply, usage)
                msg: dict[str, Any] = {"role": "assistant", "content": reply.text}
                if reply.tool_calls:
                    msg["tool_calls"] = reply.tool_calls
                self._json(200, {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 1, "model": "scripted",
                                 "choices": [{"index": 0, "message": msg,
                                              "finish_reason": "tool_calls" if reply.tool_calls else "stop"}],
                                 "usage": usage})

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

            def _stream(self, reply: Reply, usage: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                base = {"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 1, "model": "scripted"}

                def ev(delta: dict[str, Any], finish: str | None = None) -> None:
                    c = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
                    self._chunk(b"data: " + json.dumps(c).encode() + b"\n\n")

                ev({"role": "assistant", "content": None})
                text = reply.text
                step = max(1, len(text) // max(1, reply.chunks))
                for i in range(0, len(text), step):
                    ev({"content": text[i : i + step]})
                for i, tc in enumerate(reply.tool_calls):
                    ev({"tool_calls": [{"index": i, "id": tc["id"], "type": "function",
                                        "function": {"name": tc["function"]["name"], "arguments": ""}}]})
                    args = tc["function"]["arguments"]
                    half = len(args) // 2
                    for part in (args[:half], args[half:]):
                        ev({"tool_calls": [{"index": i, "function": {"arguments": part}}]})
                ev({}, "tool_calls" if reply.tool_calls else "stop")
                self._chunk(b"data: " + json.dumps({**base, "choices": [], "usage": usage}).encode() + b"\n\n")
                self._chunk(b"data: [DONE]\n\n")
                self._chunk(b"")

            def _slot_action(self, action: str, raw: bytes) -> None:
                body = json.loads(raw or b"{}")
                name = body.get("filename", "")
                with engine.lock:
                    if action == "save":
                        engine.saved[name] = (engine.slot_tokens, list(engine.slot_prompt))
                        if engine.slot_dir is not None:
                            (engine.slot_dir / name).write_bytes(json.dumps(engine.slot_prompt).encode())
                        return self._json(200, {"id_slot": 0, "filename": name, "n_saved": engine.slot_tokens})
                    if action == "restore":
                        if name not in engine.saved:
                            return self._json(400, {"error": {"message": "no such file"}})
                        engine.slot_tokens, engine.slot_prompt = engine.saved[name][0], list(engine.saved[name][1])
                        return self._json(200, {"id_slot": 0, "filename": name, "n_restored": engine.slot_tokens})
                    if action == "erase":
                        engine.slot_tokens, engine.slot_prompt = 0, []
                        return self._json(200, {"id_slot": 0, "n_erased": 0})
                return self._json(400, {"error": {"message": "Invalid action"}})

        return Handler

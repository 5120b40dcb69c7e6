"""The published 9-turn experiment's shape, for the proxy benchmark (`bench.py`).

Turn 1 runs a release check that prints a build id, a p95 latency and a list of skipped migrations (and then
deletes itself, so its output exists only in the conversation); turns 2-7 read real modules of installed
Python packages (httpx, starlette) through a `read` tool and document them, far past the window; turn 8 asks
for the turn-1 values ("unknown" if not known); turn 9 asks where they came from.

The client is a scripted agent. The model is either the scripted engine (the tests' test double) running
`reader`, a policy that answers from what is in its prompt, follows an auto-recall hint by calling recall,
and never fetches from the archive unprompted (the worst case of the published "1 session in 3"); or the real
SmolLM2-135M behind llama-server. Answers are reported, never gated.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SYSTEM = {"role": "system", "content": "You are a coding agent. You read files with the read tool and run commands with bash."}
TOOLS = [
    {"type": "function", "function": {"name": "read", "description": "read a file",
                                      "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "bash", "description": "run a command",
                                      "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}},
]  # fmt: skip
TASK = "First run the release check (python scripts/release_check.py), then read and document the modules I name."
TURN1_OUTPUT = (
    "$ python scripts/release_check.py\n"
    + "".join(f"[{i:02d}/40] check {name} ... ok\n" for i, name in enumerate(
        ["imports", "lint", "types", "unit tests", "integration tests", "schema", "fixtures", "api contract",
         "docs build", "wheel build", "sdist build", "license headers", "changelog", "version bump",
         "dependency pins", "security audit", "smoke test", "container build", "config defaults", "feature flags"],
        start=1))
    + "build id: BLD-7Q2XK9\n"
    "p95 latency: 184 ms (load test, 200 requests/s for 60 s)\n"
    "skipped migrations: 0042_add_index, 0057_backfill_owner, 0061_drop_legacy\n"
    + "".join(f"[{i:02d}/40] check artefact {i} ... ok\n" for i in range(21, 41))
    + "release check passed; release_check.py removed itself\n"
)
VALUES = ("BLD-7Q2XK9", "184 ms", "0042_add_index")
QUESTION = ("What were the build id, the p95 latency and the skipped migrations that the release check printed "
            "at the start? Answer 'unknown' for anything you do not know.")  # fmt: skip
WHERE = "Where did those values come from?"
# The probe's four turn-8 queries; the last is a paraphrase (no word in common with the output).
PROBE_QUERIES = ("build id", "p95 latency", "skipped migrations", "which database schema changes were left out")

FULL_MODULES = [("httpx", "_client.py"), ("httpx", "_models.py"), ("starlette", "routing.py"),
                ("starlette", "datastructures.py"), ("starlette", "responses.py"), ("httpx", "_urls.py")]  # fmt: skip
QUICK_MODULES = [("starlette", "formparsers.py"), ("starlette", "staticfiles.py"), ("starlette", "websockets.py"),
                 ("starlette", "status.py"), ("starlette", "applications.py"), ("httpx", "_config.py")]  # fmt: skip


def module_source(package: str, name: str) -> tuple[str, str]:
    """(path shown to the model, the file's text) of a module of an installed package."""
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.origin is not None, f"{package} is not installed"
    path = Path(spec.origin).parent / name
    return f"{package}/{name}", path.read_text(encoding="utf-8")


def call_msg(cid: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": "", "tool_calls": [
        {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]}  # fmt: skip


def turns(quick: bool) -> list[list[dict[str, Any]]]:
    """The client's new messages for each of the 9 turns (the model's answers are appended as they come)."""
    out = [[{"role": "user", "content": TASK}, call_msg("call_1", "bash", {"command": "python scripts/release_check.py"}),
            {"role": "tool", "tool_call_id": "call_1", "content": TURN1_OUTPUT}]]  # fmt: skip
    for i, (pkg, name) in enumerate(QUICK_MODULES if quick else FULL_MODULES, start=2):
        path, text = module_source(pkg, name)
        out.append([{"role": "user", "content": f"Read and document {path}."},
                    call_msg(f"call_{i}", "read", {"path": path}),
                    {"role": "tool", "tool_call_id": f"call_{i}", "content": text}])  # fmt: skip
    out.append([{"role": "user", "content": QUESTION}])
    out.append([{"role": "user", "content": WHERE}])
    return out


def found_values(text: str) -> dict[str, str]:
    out = {}
    if m := re.search(r"BLD-[A-Z0-9]{6}", text):
        out["build id"] = m.group(0)
    if m := re.search(r"p95 latency: (\d+ ms)", text):
        out["p95 latency"] = m.group(1)
    if m := re.search(r"skipped migrations: (\d{4}_[a-z_]+(?:, \d{4}_[a-z_]+)*)", text):
        out["skipped migrations"] = m.group(1)
    return out


def _text(m: dict[str, Any]) -> str:
    c = m.get("content")
    return c if isinstance(c, str) else json.dumps(c) if c else ""


def reader(body: dict[str, Any], n: int) -> Any:
    """The scripted model: answers from its prompt; follows a hint naming archive ids; never recalls unprompted."""
    from proxy_double import Reply, call  # the tests' test double (benches put tests/ on sys.path)

    msgs = body["messages"]
    last = msgs[-1]
    prompt = "\n".join(_text(m) for m in msgs)
    asked = next((_text(m) for m in reversed(msgs) if m.get("role") == "user"), "")
    tool_names = {t["function"]["name"] for t in body.get("tools") or []}
    if QUESTION in asked or (last.get("role") == "tool" and str(last.get("tool_call_id", "")).startswith("bench_recall")):
        vals = found_values(prompt)
        if vals:
            return Reply(text="; ".join(f"{k}: {v}" for k, v in vals.items()))
        hinted = re.findall(r'recall\(id="(m[0-9a-f]+)"\)', _text(last)) if last.get("role") == "user" else []
        if hinted and "recall" in tool_names:
            return Reply(tool_calls=[call("recall", {"id": hinted[0]}, f"bench_recall_{n}")])
        return Reply(text="build id: unknown; p95 latency: unknown; skipped migrations: unknown")
    if WHERE in asked:
        src = re.search(r"id=(m[0-9a-f]{12})", prompt)
        if found_values(prompt):
            return Reply(text="From the release check's output at the start" + (f" (archive id {src.group(1)})." if src else "."))
        return Reply(text="unknown")
    return Reply(text=f"Documented ({len(msgs)} messages so far).")


@dataclass
class Outcome:
    condition: str
    refused: int = 0
    requests: int = 0
    tokens_sent: list[int] = field(default_factory=list)
    history_tokens: list[int] = field(default_factory=list)
    switches: int = 0
    mask_batches: int = 0
    recall_calls: int = 0
    answers: dict[str, str] = field(default_factory=dict)
    conversation: str | None = None


def play(condition: str, quick: bool, send: Callable[[list[dict[str, Any]]], Any], count: Callable[[list[dict[str, Any]]], int]) -> Outcome:
    """Run the 9 turns; `send(history)` -> (status, assistant message or None, headers)."""
    out = Outcome(condition)
    history = [SYSTEM]
    for t, new in enumerate(turns(quick), start=1):
        history += new
        out.requests += 1
        out.history_tokens.append(count(history))
        status, msg, headers = send(history)
        if status != 200:
            out.refused += 1
            msg = {"role": "assistant", "content": "(refused: the request did not fit the window)"}
        report = headers.get("x-funes-proxy", "") if headers else ""
        out.switches += "switch" in report
        out.mask_batches += "mask" in report
        if m := re.search(r"recall_calls=(\d+)", report):
            out.recall_calls += int(m.group(1))
        if headers and headers.get("x-funes-conversation"):
            out.conversation = headers["x-funes-conversation"]
        if t in (8, 9):
            out.answers[f"turn {t}"] = str(msg.get("content") or "")[:300]
        history.append({"role": "assistant", "content": msg.get("content") or ""})
    return out

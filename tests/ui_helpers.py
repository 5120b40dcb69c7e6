"""Shared by the tests of ``funes-py ui``: a small Claude Code history (three sessions, one holding a fact
nothing else mentions), a memory indexed from it, and the page started as a real ``funes-py ui`` process."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROJECT = "/home/ana/projects/garden"

# (session id, [(role, text), ...]); FACT_SESSION's second turn is the one a search for the fact finds.
FACT_SESSION = "7a1c2e90-4b3d-4f5e-8a6b-1c2d3e4f5a60"
FACT = "The spare key for the allotment shed is taped under the third rain barrel, code on the padlock is 4471."
FACT_QUERY = "where is the spare key for the allotment shed"
SESSIONS = {
    FACT_SESSION: [
        ("user", "I keep forgetting where I put things at the allotment. Can you help me remember?"),
        ("assistant", FACT),
        ("user", "Thanks, and remind me to water the tomatoes on Thursday."),
        ("assistant", "Noted: water the tomatoes on Thursday evening, before the forecast heat."),
    ],
    "8b2d3f01-5c4e-4a6f-9b7c-2d3e4f5a6b71": [
        ("user", "How do I configure the nginx reverse proxy to pass websocket upgrades?"),
        ("assistant", "Set proxy_http_version 1.1 and forward the Upgrade and Connection headers in the location block."),
    ],
    "9c3e4a12-6d5f-4b70-8c8d-3e4f5a6b7c82": [
        ("user", "Give me a recipe for a quick lentil soup."),
        ("assistant", "Soften an onion and carrot, add red lentils, cumin and stock, simmer twenty minutes, blend half."),
    ],
}


def fact_turn_uuid() -> str:
    return f"{FACT_SESSION[:8]}-0000-4000-8000-000000000001"


def write_history(root: Path) -> Path:
    """The sessions as Claude Code writes them: ``<root>/<project dir>/<session>.jsonl``, one record per turn
    (the fact session on 2026-03-04, the others a day apart before it)."""
    project = root / PROJECT.replace("/", "-")
    project.mkdir(parents=True, exist_ok=True)
    for day, (sid, turns) in enumerate(SESSIONS.items()):
        parent = None
        with (project / f"{sid}.jsonl").open("w", encoding="utf-8") as f:
            for i, (role, text) in enumerate(turns):
                uuid = f"{sid[:8]}-0000-4000-8000-{i:012d}"
                content = text if role == "user" else [{"type": "text", "text": text}]
                rec = {"type": role, "uuid": uuid, "parentUuid": parent, "sessionId": sid, "isSidechain": False,
                       "timestamp": f"2026-03-{4 - day:02d}T10:{i:02d}:00.000Z", "cwd": PROJECT,
                       "message": {"role": role, "content": content}}  # fmt: skip
                f.write(json.dumps(rec) + "\n")
                parent = uuid
    return root


def build_memory(tmp: Path) -> Path:
    """A memory under ``tmp`` indexed from the history; returns its home."""
    from funes_py import Engine

    home = tmp / "memory"
    report = Engine(home).index(write_history(tmp / "claude-projects"))
    assert report.turns == sum(len(t) for t in SESSIONS.values()), report
    # personal.toml: only this history, so /excluded does not walk the machine's own agent folders
    (home / "personal.toml").write_text("default_sources = false\n", encoding="utf-8")
    return home


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def env() -> dict[str, str]:
    """The test's environment as it is: the page's process imports the same funes_py as the test (the installed
    wheel under scripts/test.sh; the source tree only when PYTHONPATH says so). Putting this checkout's python/
    first would import a source tree without its compiled engine."""
    return dict(os.environ)


def ui_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "funes_py.cli", "ui", *args]


@contextmanager
def running_ui(home: Path, timeout: float = 180.0) -> Iterator[str]:
    """``funes-py ui --home home`` as a real process on a free port; yields its base URL once /healthz answers."""
    port = free_port()
    proc = subprocess.Popen(ui_command("--home", str(home), "--port", str(port)), env=env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"funes-py ui exited {proc.returncode}: {proc.stderr.read() if proc.stderr else ''}")
            try:
                with urllib.request.urlopen(base + "/healthz", timeout=2) as r:
                    if r.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() > deadline:
                raise AssertionError("funes-py ui did not answer /healthz in time")
            time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

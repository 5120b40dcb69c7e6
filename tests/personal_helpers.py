"""Claude Code session files as the agent writes them (one JSON record per line, appended as the session goes),
for the one-person mode's tests."""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

START = datetime(2026, 11, 2, 9, 0, tzinfo=timezone.utc)


def record(session: str, role: str, text: str, cwd: str, ts: datetime, turn: str | None = None) -> dict:
    return {
        "type": role,
        "uuid": turn or str(uuid.uuid4()),
        "sessionId": session,
        "timestamp": ts.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
        "cwd": cwd,
        "isSidechain": False,
        "message": {"role": role, "content": [{"type": "text", "text": text}] if role == "assistant" else text},
    }


def write_session(root: Path, project: str, session: str, turns: list[tuple[str, str]], start: datetime = START) -> Path:
    """`root/<slug>/<session>.jsonl` with `turns` [(role, text)] one minute apart, held in `project`."""
    path = root / project.strip("/").replace("/", "-") / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as f:
        for i, (role, text) in enumerate(turns):
            f.write(json.dumps(record(session, role, text, project, start + timedelta(minutes=i))) + "\n")
    return path


def append_turn(path: Path, session: str, role: str, text: str, project: str, ts: datetime) -> None:
    with path.open("a") as f:
        f.write(json.dumps(record(session, role, text, project, ts)) + "\n")
        f.flush()

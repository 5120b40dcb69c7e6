"""The one-person mode, measured (issue 38): backfill of a Claude Code tree, the watcher's CPU while nothing is
written, and the time from a line written to a session file to a recall that finds it.

    python -m benches.probes.personal [--mb 100] [--idle-seconds 30] [--appends 10]

- backfill: a generated Claude Code tree of about `--mb` MB (sessions of user questions, assistant answers,
  thinking, tool calls and their outputs repeated in `toolUseResult`, as the agent writes them; sub-agent
  files under `subagents/`, which the default exclusion skips) indexed by `funes-py sync` in a subprocess:
  wall time, MB/s, turns and chunks. A second `sync` right after, which finds nothing new, is timed too.
- idle: `funes-py mcp` (the stdio server, watching the tree) is started by the real MCP SDK client; once its
  backfill pass is over, its process's CPU time (user + system, every thread) over `--idle-seconds` seconds
  with nothing written.
- write to searchable: `--appends` times, one assistant turn with a new identifier appended to a session
  file, then `recall` through the same client every 20 ms until the identifier is in the answer: p50 and max
  (the client's polling adds up to 20 ms).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

from benches.paths import OUT

WORDS = ("pump seal valve bearing motor torque curve pressure flow sensor alarm threshold schedule deploy build "
         "release branch migration schema index query latency cache queue worker retry timeout config secret "
         "token rollout canary metric dashboard budget vendor ticket review decision owner deadline site line").split()  # fmt: skip
START = datetime(2026, 6, 1, 9, 0, tzinfo=timezone.utc)


def _prose(rnd: random.Random, words: int) -> str:
    out = []
    for i in range(words):
        w = rnd.choice(WORDS)
        if rnd.random() < 0.04:
            w = f"{rnd.choice('ABCDEFGHKLMNPRSTVW')}-{rnd.randint(1, 999)}"
        out.append(w + ("." if i % 14 == 13 else ""))
    return " ".join(out)


def _record(session: str, kind: str, content, ts: datetime, cwd: str, parent: str | None, extra: dict | None = None) -> dict:
    rec = {
        "parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": session,
        "version": "2.0.31", "gitBranch": "main", "type": kind, "uuid": str(uuid.uuid4()),
        "timestamp": ts.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
        "message": {"role": kind, "content": content} if kind == "user" else
                   {"id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                    "content": content, "stop_reason": None, "usage": {"input_tokens": 1200, "output_tokens": 300}},
    }  # fmt: skip
    rec.update(extra or {})
    return rec


def write_tree(root: Path, mb: float, seed: int = 7) -> tuple[int, int]:
    """A Claude Code tree of about `mb` MB under `root`; (files, bytes)."""
    rnd = random.Random(seed)
    target, written, files, s = mb * (1 << 20), 0, 0, 0
    while written < target:
        project = f"/home/dev/src/service-{s % 12}"
        session = str(uuid.UUID(int=rnd.getrandbits(128)))
        folder = root / project.strip("/").replace("/", "-")
        folder.mkdir(parents=True, exist_ok=True)
        ts, parent, lines = START + timedelta(hours=s * 5), None, []
        for _ in range(rnd.randint(20, 60)):
            recs = [_record(session, "user", _prose(rnd, rnd.randint(8, 60)), ts, project, parent)]
            call = f"toolu_{uuid.uuid4().hex[:24]}"
            output = "\n".join(_prose(rnd, 12) for _ in range(rnd.randint(2, 60)))
            recs.append(_record(session, "assistant", [{"type": "thinking", "thinking": _prose(rnd, rnd.randint(10, 80)), "signature": "x" * 40},
                                                       {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": f"grep -rn {rnd.choice(WORDS)} src/"}}],
                                ts + timedelta(seconds=5), project, recs[-1]["uuid"]))  # fmt: skip
            recs.append(_record(session, "user", [{"type": "tool_result", "tool_use_id": call, "content": output}],
                                ts + timedelta(seconds=9), project, recs[-1]["uuid"], {"toolUseResult": {"stdout": output, "stderr": ""}}))  # fmt: skip
            recs.append(_record(session, "assistant", [{"type": "text", "text": _prose(rnd, rnd.randint(20, 160))}],
                                ts + timedelta(seconds=20), project, recs[-1]["uuid"]))  # fmt: skip
            parent = recs[-1]["uuid"]
            lines.extend(json.dumps(r) for r in recs)
            ts += timedelta(minutes=3)
        body = "\n".join(lines) + "\n"
        (folder / f"{session}.jsonl").write_text(body)
        written += len(body)
        files += 1
        if s % 5 == 0:  # a sub-agent's transcript, excluded by default
            sub = folder / session / "subagents"
            sub.mkdir(parents=True, exist_ok=True)
            (sub / "agent-1.jsonl").write_text("\n".join(lines[:40]) + "\n")
        s += 1
    return files, written


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _server_pid() -> int:
    import psutil

    me = psutil.Process()
    for child in me.children(recursive=True):
        if "mcp" in child.cmdline() and any("funes_py.cli" in a for a in child.cmdline()):
            return child.pid
    raise RuntimeError("the stdio server's process was not found")


async def _serve_and_measure(home: Path, tree: Path, session_file: Path, idle_s: float, appends: int) -> dict:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "funes_py.cli", "mcp", "--home", str(home),
                                   "--no-default-sources", "--source", str(tree)], env={**os.environ, "FUNES_LOG": "WARNING"})  # fmt: skip
    out: dict = {}
    with open(home.parent / "mcp.log", "w") as err:
        async with stdio_client(params, errlog=err) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            pid = _server_pid()
            await client.call_tool("sessions", {})  # the engine is open
            state = home / "sync-state.json"
            before = state.stat().st_mtime_ns if state.exists() else 0
            t0 = time.monotonic()
            # the start-up pass: it finds nothing new (the tree was synced) and rewrites no cursor
            await asyncio.sleep(3)
            out["startup_pass_changed_cursors"] = (state.stat().st_mtime_ns if state.exists() else 0) != before
            c0, w0 = _cpu_seconds(pid), time.monotonic()
            await asyncio.sleep(idle_s)
            out["idle_cpu_percent"] = 100 * (_cpu_seconds(pid) - c0) / (time.monotonic() - w0)
            out["idle_seconds"] = round(time.monotonic() - w0, 1)
            lat = []
            meta = json.loads(session_file.read_text().splitlines()[0])
            for i in range(appends):
                marker = f"QX-{4000 + i}"
                rec = _record(meta["sessionId"], "assistant", [{"type": "text", "text": f"The rollback ticket for the canary is {marker}, owned by Ilse."}],
                              datetime.now(timezone.utc), meta["cwd"], None)  # fmt: skip
                t0 = time.monotonic()
                with session_file.open("a") as f:
                    f.write(json.dumps(rec) + "\n")
                while True:
                    res = await client.call_tool("recall", {"query": f"{marker} rollback ticket"})
                    if marker in "".join(c.text for c in res.content if c.type == "text"):
                        lat.append(time.monotonic() - t0)
                        break
                    if time.monotonic() - t0 > 30:
                        lat.append(float("inf"))
                        break
                    await asyncio.sleep(0.02)
                await asyncio.sleep(0.5)
            out["write_to_searchable_s"] = lat
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=100)
    ap.add_argument("--idle-seconds", type=float, default=30)
    ap.add_argument("--appends", type=int, default=10)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="funes-personal-") as tmp:
        tree, home = Path(tmp) / "projects", Path(tmp) / "memory"
        files, size = write_tree(tree, args.mb)
        cmd = [sys.executable, "-m", "funes_py.cli", "sync", "--home", str(home), "--no-default-sources", "--source", str(tree), "--json"]
        t0 = time.monotonic()
        r = subprocess.run(cmd, capture_output=True, text=True, check=True)
        backfill = time.monotonic() - t0
        report = json.loads(r.stdout)
        t0 = time.monotonic()
        again = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
        resync = time.monotonic() - t0
        session_file = next(p for p in sorted(tree.rglob("*.jsonl")) if "subagents" not in p.parts)
        served = asyncio.run(_serve_and_measure(home, tree, session_file, args.idle_seconds, args.appends))
    lat = served["write_to_searchable_s"]
    result = {
        "tree_mb": round(size / (1 << 20), 1), "files": files, "backfill_s": round(backfill, 1),
        "backfill_mb_per_s": round(size / (1 << 20) / backfill, 2), "turns": report["turns"], "chunks": report["chunks_added"],
        "files_excluded": report["files_excluded"], "second_sync_s": round(resync, 2), "second_sync_files_read": again["files_read"],
        "idle_cpu_percent": round(served["idle_cpu_percent"], 3), "idle_seconds": served["idle_seconds"],
        "write_to_searchable_p50_s": round(statistics.median(lat), 3), "write_to_searchable_max_s": round(max(lat), 3),
        "appends": len(lat), "write_to_searchable_s": [round(x, 3) for x in lat],
        "cores": os.cpu_count(), "load": round(os.getloadavg()[0], 2),
    }  # fmt: skip
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "personal.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A 300 MB line is skipped without being read into memory: a child process indexing a Claude Code session whose
middle line is a 300 MB record (once as a file, once inside a zip) grows its peak RSS by far less than the
line, reports the line with its place, and indexes the good lines around it.

The peak is the child's high-water RSS over the run alone: reset (`/proc/self/clear_refs`) once the models are
loaded and the engine warmed by a first small run, read back from `VmHWM` after it, and compared with the
RSS at the reset. `getrusage`'s `ru_maxrss` cannot be reset and, on Linux, starts a child at its parent's
RSS (it survives fork and exec), so it would measure pytest. A reader that held the line whole would push
the peak at least 300 MB above the reset point; if the reset cannot be made, the child fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile

import pytest

pytestmark = pytest.mark.models

LINE = 300_000_000
GROWTH_MAX = 100 * 2**20  # a third of the line; the default record limit (32 MiB) is what may be held

CHILD = """
import json, sys
from funes_py import Engine, Models

def status(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field + ":"))

eng = Engine(sys.argv[1], models=Models.load(), resident=False)
eng.index(sys.argv[2])  # warm-up: the engine's first run allocates what every run reuses
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # the peak RSS starts again from the current RSS
before = status("VmRSS")
assert status("VmHWM") < before + 16 * 2**20, "the peak RSS was not reset"
report = eng.index(sys.argv[3])
peak = status("VmHWM")
print(json.dumps({"before": before, "peak": peak, "turns": report.turns,
                  "bad": [[b.file, b.line, b.reason] for b in report.bad_lines]}))
"""


def record(uuid: str, text_bytes: bytes) -> bytes:
    head = json.dumps({"type": "user", "sessionId": "big-1", "uuid": uuid, "timestamp": "2026-03-04T10:00:00Z",
                       "message": {"role": "user", "content": "@"}})  # fmt: skip
    return head.encode().replace(b'"@"', b'"' + text_bytes + b'"') + b"\n"


def write_session(f) -> None:
    """Written in pieces: the test process itself never holds the line."""
    f.write(record("a0000000-0000-4000-8000-000000000001", b"the ferry to Texel leaves at 08:30"))
    head, tail = record("a0000000-0000-4000-8000-000000000002", b"@").split(b"@")
    f.write(head)
    piece = b"x" * 2**20
    for _ in range(LINE // len(piece)):
        f.write(piece)
    f.write(b"x" * (LINE % len(piece)) + tail)
    f.write(record("a0000000-0000-4000-8000-000000000003", b"the return ferry is at 17:00"))


def test_a_300_mb_line_is_skipped_in_bounded_memory(tmp_path):
    warm = tmp_path / "warm" / "w.jsonl"
    warm.parent.mkdir()
    warm.write_bytes(record("b0000000-0000-4000-8000-000000000001", b"warming up"))
    src = tmp_path / "src"
    src.mkdir()
    with (src / "s.jsonl").open("wb") as f:
        write_session(f)
    with zipfile.ZipFile(src / "export.zip", "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z, z.open("z.jsonl", "w") as f:
        write_session(f)
    run = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "memory"), str(warm), str(src)],
                         capture_output=True, text=True, timeout=900)  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    growth = out["peak"] - out["before"]
    assert growth < GROWTH_MAX, f"peak RSS grew {growth / 2**20:.0f} MiB for a {LINE / 1e6:.0f} MB line ({out})"
    assert out["turns"] == 4, out
    places = sorted((os.path.basename(f), n) for f, n, _ in out["bad"])
    assert places == [("export.zip!z.jsonl", 2), ("s.jsonl", 2)], out["bad"]
    size = len(record("a0000000-0000-4000-8000-000000000002", b"")) - 1 + LINE  # without its newline
    assert all(f"{size:,} bytes, over the limit" in why for _, _, why in out["bad"]), out["bad"]

"""Two processes indexing one memory at the same time (a CLI run next to the service, two cron jobs): each
either completes or fails fast with MemoryLockedError, before embedding anything; never another error,
never a damaged memory. Afterwards the memory holds every conversation of every run that completed, and
rerunning a refused one completes it. Also: an Engine opened on a home that was empty sees the rows another
process writes afterwards. Real processes, real Lance on disk, real models."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import index_at_once, write_conversation

pytestmark = pytest.mark.models


def history(root: Path, tag: str, conversations: int, turns: int) -> Path:
    for n in range(conversations):
        write_conversation(root / f"{tag}{n}.funes.jsonl", f"{tag}{n}",
                           [("user", f"{tag.upper()} log {n}.{i}: pump P-{n * 50 + i} ran {i + 2} hours at "
                                     f"{40 + i} degrees; work order WO-{tag}{n:03d}{i:02d}.") for i in range(turns)])
    return root


def check_outcomes(results: list[dict]) -> None:
    for r in results:
        assert "ok" in r or r["error"] == "MemoryLockedError", f"a concurrent index run failed otherwise: {r}"
        if "error" in r:  # fail fast: refused at the lock, not after embedding its history
            assert r["seconds"] < 30, r
    assert any("ok" in r for r in results), results


@pytest.mark.parametrize("fresh", [True, False], ids=["fresh-home", "existing-memory"])
def test_two_processes_index_one_memory(tmp_path: Path, models, fresh: bool) -> None:
    from funes_py import Engine

    home = tmp_path / "memory"
    if not fresh:
        Engine(home, models=models).index(str(history(tmp_path / "seed", "s", 2, 5)))
    sources = [history(tmp_path / "a", "a", 30, 20), history(tmp_path / "b", "b", 30, 20)]
    results = index_at_once(home, sources)
    print("two index runs at once:", results)
    check_outcomes(results)

    engine = Engine(home, models=models)
    for src, r in zip(sources, results, strict=True):
        if "error" in r:  # refused: rerun it now, alone
            engine.index(str(src))
    status = engine.status()
    assert status.sessions == 60 + (0 if fresh else 2) and status.rows == 1_200 + (0 if fresh else 10)
    for tag in ("a", "b"):
        hits = engine.recall(f"work order WO-{tag}02919", k=3)
        assert hits and f"WO-{tag}02919" in hits[0].text


def test_an_engine_on_an_empty_home_sees_what_another_process_writes(tmp_path: Path, models) -> None:
    from funes_py import Engine

    home = tmp_path / "memory"
    early = Engine(home, models=models)  # nothing on disk yet
    assert early.status().rows == 0
    src = history(tmp_path / "a", "a", 3, 4)
    script = "import sys\nfrom funes_py import Engine, Models\nEngine(sys.argv[1], models=Models.load()).index(sys.argv[2])\n"
    subprocess.run([sys.executable, "-c", script, str(home), str(src)], check=True, timeout=300)

    deadline = time.monotonic() + 10
    while early.status().rows != 12 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert early.status().rows == 12
    hits = early.recall("work order WO-a00203", k=3)
    assert hits and "WO-a00203" in hits[0].text
    # And it writes through the table the other process created.
    more = history(tmp_path / "b", "b", 1, 4)
    early.index(str(more))
    assert Engine(home, models=models).status().rows == 16

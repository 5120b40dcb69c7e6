"""What every part of `benches.run` shares: where results go, the metadata stamped on them, and cached
memories that are rebuilt when the engine changes.

A cached memory (`benches/out/history-N-s7/memory`, `benches/out/locomo/<conv>/memory`) is only as good as
the engine that wrote it: a change to chunking or to the BM25 analyser changes what is stored. Each cache
therefore carries `engine-stamp.txt` (a hash of the compiled extension); a cache without one, or with
another, is rebuilt (`--keep-index` trusts it anyway, for when only the search side changed).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import subprocess
from functools import lru_cache
from pathlib import Path

from .latency import OUT, ensure_indexed, machine
from .paths import REPO

STAMP_FILE = "engine-stamp.txt"


@lru_cache(maxsize=1)
def engine_stamp() -> str:
    """funes_py's version and the first 12 hex digits of the compiled extension's sha256."""
    from funes_py import _funes

    h = hashlib.sha256()
    with open(_funes.__file__, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return f"{getattr(_funes, '__version__', '?')}+{h.hexdigest()[:12]}"


def cache_is_current(cache_dir: Path) -> bool:
    p = cache_dir / STAMP_FILE
    return p.exists() and p.read_text().strip() == engine_stamp()


def mark_current(cache_dir: Path) -> None:
    cache_dir.mkdir(parents=True, exist_ok=True)
    (cache_dir / STAMP_FILE).write_text(engine_stamp() + "\n")


def history_root(n: int, seed: int = 7) -> Path:
    return OUT / f"history-{n}-s{seed}"


def indexed_history(n: int, keep_index: bool = False, reindex: bool = False, seed: int = 7) -> tuple[Path, Path, dict]:
    """`benches.latency.ensure_indexed(n)`, after dropping a cache written by another engine build (or any
    cache when `reindex`): removing its `index-run.json` makes ensure_indexed regenerate and re-index."""
    root = history_root(n, seed)
    stale = reindex or not (keep_index or cache_is_current(root))
    if stale and (root / "index-run.json").exists():
        (root / "index-run.json").unlink()
    out = ensure_indexed(n, seed)
    if not cache_is_current(root):
        mark_current(root)
    return out


def child_json(cmd: list[str]) -> dict:
    """Runs one benchmark configuration in its own process (so its peak memory is its own) from the repo
    root; returns the JSON object on its last stdout line, echoed to stderr."""
    import sys

    p = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=REPO)
    if p.returncode != 0:
        raise RuntimeError(f"{cmd} failed: {p.stderr[-2000:]}")
    row = json.loads(p.stdout.strip().splitlines()[-1])
    print(json.dumps(row), file=sys.stderr)
    return row


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def git_commit() -> str:
    try:
        out = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, check=False)  # fmt: skip
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=False).stdout.strip()  # fmt: skip
        return out.stdout.strip() + ("+dirty" if dirty else "")
    except OSError:
        return "unknown"


def meta(part: str, command: str, quick: bool, seconds: float) -> dict:
    """What a result file says about how it was made."""
    return {
        "part": part,
        "command": command,
        "machine": machine(),
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "quick": quick,
        "git": git_commit(),
        "engine": engine_stamp(),
        "seconds": round(seconds, 1),
        # What else the machine was doing: the 1/5/15-minute load averages when the part ended.
        "loadavg": [round(x, 2) for x in os.getloadavg()],
        "cores": os.cpu_count(),
    }


def results_dir(quick: bool) -> Path:
    """Full runs write benches/out/run-<part>.json; quick runs benches/out/quick/run-<part>.json, so a quick
    check never overwrites the figures RESULTS.md is written from."""
    return OUT / "quick" if quick else OUT


def result_path(part: str, quick: bool) -> Path:
    return results_dir(quick) / f"run-{part}.json"


def save_result(part: str, quick: bool, data: dict) -> Path:
    p = result_path(part, quick)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return p


def load_result(part: str, quick: bool) -> dict | None:
    p = result_path(part, quick)
    return json.loads(p.read_text(encoding="utf-8")) if p.exists() else None


def pct(x: float | None, digits: int = 0) -> str:
    return "–" if x is None else f"{100 * x:.{digits}f}"


def short(text: str, width: int = 160) -> str:
    one = " ".join(text.split())
    return one if len(one) <= width else one[: width - 1] + "…"

"""Recall latency: warm in-process versus a fresh ``funes-py recall`` process per call, side by side in one run.

    python -m benches.latency --n 10000            # history of 10,000 conversations (indexed once, cached)
    python -m benches.latency --n 1000 --quick     # fewer calls

What is timed:
* in-process: ``Engine.recall(q, k=8)`` (defaults: candidates 30, neighbours 1, recency on) on an engine that
  has answered one warm-up query; models loaded and memory open before timing. Wall time per call.
* per-process: ``funes-py --home H recall -k 8 -- q`` as a subprocess, wall time from spawn to exit: Python
  start, imports, model load, memory open, one recall, output. A small launcher spawns it and reports its wall
  time and its own peak RSS (a child forked from this big process would inherit our peak in ru_maxrss).
Excluded: generating and indexing the history (reported separately, with the index run's peak RSS).
Read the ratio, not the floor: the machine is shared and absolute numbers move between runs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

from .history import generate, write_history
from .metrics import percentiles
from .paths import OUT


def machine() -> str:
    cpu = "unknown cpu"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores ({cpu}), {mem:.0f} GiB, {platform.system()} {platform.release()}, Python {platform.python_version()}"


def report(name: str, rows: list[dict], table_md: str, *notes: str) -> None:
    """The end of a standalone benchmark: the machine, any notes, the markdown table on stdout, and the rows
    as `benches/out/<name>.json`."""
    print(f"machine: {machine()}\n")
    for note in notes:
        print(f"{note}\n")
    print(table_md)
    (OUT / f"{name}.json").write_text(json.dumps(rows, indent=1))


# Peak RSS of a child: Linux folds the forking parent's peak into the child's ru_maxrss (the child starts as
# a copy of the parent's memory), so a child forked from this large benchmark process would report our peak.
# A small launcher process forks the real child and reports that child's own ru_maxrss on its last line.
_LAUNCHER = (
    "import resource,subprocess,sys,time\n"
    "t=time.perf_counter();r=subprocess.run(sys.argv[1:]);t=time.perf_counter()-t\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,t,file=sys.stderr)\n"
    "sys.exit(r.returncode)\n"
)


def run_child(cmd: list[str], env: dict | None = None) -> tuple[float, int, str]:
    """Runs a command; returns (wall seconds from its spawn to its exit, its own peak RSS in MB, stdout). Both
    are measured by the launcher, so the launcher's own start is not counted."""
    p = subprocess.run([sys.executable, "-c", _LAUNCHER, *cmd], capture_output=True, env=env, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{cmd} failed ({p.returncode}): {p.stderr[-2000:]}")
    peak_kb, wall = p.stderr.strip().splitlines()[-1].split()
    return float(wall), int(peak_kb) // 1024, p.stdout


def ensure_indexed(n: int, seed: int = 7) -> tuple[Path, Path, dict]:
    """The history of n conversations and its memory (built once, reused while the manifest matches)."""
    root = OUT / f"history-{n}-s{seed}"
    home = root / "memory"
    info_path = root / "index-run.json"
    manifest = root / "manifest.json"
    if not (manifest.exists() and info_path.exists() and json.loads(manifest.read_text())["n_conversations"] == n):
        import shutil

        shutil.rmtree(root, ignore_errors=True)
        t0 = time.perf_counter()
        write_history(generate(n, seed=seed), root)
        gen_s = time.perf_counter() - t0
        code = (
            "import json,resource,sys,time\n"
            "from funes_py import Engine, Models\n"
            "t0=time.perf_counter(); m=Models.load(); load=time.perf_counter()-t0\n"
            "t1=time.perf_counter(); r=Engine(sys.argv[1], m).index(sys.argv[2]); idx=time.perf_counter()-t1\n"
            "print(json.dumps({'model_load_s':load,'index_s':idx,'chunks':r.chunks_added,'files':r.files,"
            "'peak_rss_mb':resource.getrusage(resource.RUSAGE_SELF).ru_maxrss//1024}))\n"
        )
        _, _, out = run_child([sys.executable, "-c", code, str(home), str(root / "src")])
        info = json.loads(out.strip().splitlines()[-1]) | {"generate_s": gen_s}
        info_path.write_text(json.dumps(info, indent=1))
    return root, home, json.loads(info_path.read_text())


def bench(n: int, calls: int, process_calls: int, seed: int = 7) -> dict:
    from funes_py import Engine, Models

    root, home, index_info = ensure_indexed(n, seed)
    questions = [json.loads(line) for line in (root / "questions.jsonl").read_text().splitlines()]
    queries = [q["long"] for q in questions]

    t0 = time.perf_counter()
    eng = Engine(home, Models.load())
    open_s = time.perf_counter() - t0
    eng.recall(queries[0], k=8)  # warm-up (first query touches the index files)
    warm = []
    for i in range(calls):
        q = queries[i % len(queries)]
        t = time.perf_counter()
        eng.recall(q, k=8)
        warm.append((time.perf_counter() - t) * 1000)
    in_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024

    cli = [sys.executable, "-m", "funes_py.cli", "--home", str(home), "recall", "-k", "8", "--"]
    proc, proc_rss = [], 0
    for i in range(process_calls):
        wall, rss, _ = run_child(cli + queries[i % len(queries)].split())
        proc.append(wall * 1000)
        proc_rss = max(proc_rss, rss)
    w, p = percentiles(warm), percentiles(proc)
    return {
        "n": n,
        "chunks": eng.status().rows,
        "index": index_info,
        "open_s": open_s,
        "in_process_ms": w,
        "in_process_rss_mb": in_rss,
        "per_process_ms": p,
        "per_process_rss_mb": proc_rss,
        "ratio_p50": p["p50"] / w["p50"],
        "calls": calls,
        "process_calls": process_calls,
    }


def table(rows: list[dict]) -> str:
    head = ("| conversations | chunks | in-process p50 / p95 / p99 ms | per-process p50 / p95 / p99 ms | "
            "p50 ratio | RSS in-process / per-process MB |\n|---|---|---|---|---|---|\n")  # fmt: skip
    body = "".join(
        f"| {r['n']:,} | {r['chunks']:,} | {r['in_process_ms']['p50']:.1f} / {r['in_process_ms']['p95']:.1f} / "
        f"{r['in_process_ms']['p99']:.1f} | {r['per_process_ms']['p50']:.0f} / {r['per_process_ms']['p95']:.0f} / "
        f"{r['per_process_ms']['p99']:.0f} | {r['ratio_p50']:.0f}x | {r['in_process_rss_mb']} / {r['per_process_rss_mb']} |\n"
        for r in rows
    )
    return head + body


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benches.latency", description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[10_000])
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--process-calls", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="100 warm calls, 5 processes")
    args = ap.parse_args(argv)
    if args.quick:
        args.calls, args.process_calls = 100, 5
    rows = []
    for n in args.n:
        r = bench(n, args.calls, args.process_calls)
        print(json.dumps(r), file=sys.stderr)
        rows.append(r)
    report("latency", rows, table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What one recall costs, and where it goes (issue 37): warm latency, CPU per recall, the engine's steps, and
throughput with parallel callers, at each memory size, for one or more engine builds side by side.

    python -m benches.run --parts cost --n 1000 10000 [--baseline DIR]
    python -m benches.cost --memory HOME --questions FILE [--calls 300] [--threads 1 2 4 8] [--seconds 5]

Each (build, size) is measured in a child process of its own (so its RSS and CPU time are its own), with the
build's package first on `PYTHONPATH`: `--baseline DIR` names a directory holding another build's `funes_py`
package (the engine before a change: `benches/README.md` says how to make one), measured in the same run,
alternating with the current build, so both see the same machine.

In the child, on the ops history's memory at that size (`benches.meaning.indexed_ops`, the library's
defaults, `k=8`):
* `open_s`: `Engine(home)`; `first_s`: the first recall, which builds the resident copy; `rss_mb` after it;
* one caller: `calls` recalls of the long questions in turn: wall p50 / p99, and CPU per recall (the
  process's user+system time over the calls: every thread, ONNX Runtime's included);
* the engine's steps (`_funes.recall_steps`, wall time summed per step, the builds that have it) and what is
  left of a recall's wall time outside them (the binding: options in, hits out);
* parallel callers: `threads` Python threads recalling for `seconds`: recalls per second, CPU per recall.
Read the ratios between builds, not the floors: the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import threading
import time
from pathlib import Path

from .harness import read_jsonl

THREADS = (1, 2, 4, 8)


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _rss_mb() -> float:
    with open("/proc/self/status", encoding="utf-8") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _pick(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def measure(home: str, questions: list[str], calls: int, threads: tuple[int, ...], seconds: float,
            embedder: str | None = None) -> dict:  # fmt: skip
    """The measurements of one build on one memory, in this process (see the module doc)."""
    import funes_py
    from funes_py import Engine, Models, _funes

    models = Models.load(embedder=embedder)
    t = time.perf_counter()
    eng = Engine(home, models)
    open_s = time.perf_counter() - t
    t = time.perf_counter()
    eng.recall(questions[0], k=8)
    first_s = time.perf_counter() - t
    steps = getattr(_funes, "recall_steps", None)
    for q in questions[:20]:  # warm: caches, the latency session's first shapes
        eng.recall(q, k=8)
    if steps:
        steps(True)
    wall: list[float] = []
    c0 = _cpu()
    for i in range(calls):
        t = time.perf_counter()
        eng.recall(questions[i % len(questions)], k=8)
        wall.append(time.perf_counter() - t)
    cpu = _cpu() - c0
    out: dict = {
        "funes_py": os.path.dirname(funes_py.__file__), "rows": eng.status().rows, "open_s": open_s, "first_s": first_s,
        "rss_mb": _rss_mb(), "calls": calls, "p50_ms": 1000 * _pick(wall, 0.5), "p99_ms": 1000 * _pick(wall, 0.99),
        "mean_ms": 1000 * statistics.fmean(wall), "cpu_ms": 1000 * cpu / calls,
    }  # fmt: skip
    if steps:
        totals, n = steps(True)
        out["steps_ms"] = {name: ns / 1e6 / max(n, 1) for name, ns in totals}
        out["binding_ms"] = out["mean_ms"] - sum(out["steps_ms"].values())
    out["parallel"] = [_parallel(eng, questions, k, seconds) for k in threads]
    return out


def _parallel(eng, questions: list[str], threads: int, seconds: float) -> dict:
    done = [0] * threads
    stop = time.perf_counter() + seconds

    def work(slot: int) -> None:
        i = slot
        while time.perf_counter() < stop:
            eng.recall(questions[i % len(questions)], k=8)
            done[slot] += 1
            i += threads

    c0, t0 = _cpu(), time.perf_counter()
    pool = [threading.Thread(target=work, args=(s,)) for s in range(threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    elapsed, cpu, n = time.perf_counter() - t0, _cpu() - c0, sum(done)
    return {"threads": threads, "recalls_per_s": n / elapsed, "cpu_ms": 1000 * cpu / max(n, 1)}


def child(package: str | None, home: Path, questions_file: Path, calls: int, threads: tuple[int, ...], seconds: float) -> dict:
    """`measure` in a fresh process with `package` (a directory holding `funes_py`) first on the path."""
    from .latency import run_child

    env_path = os.pathsep.join(p for p in (package, os.environ.get("PYTHONPATH")) if p)
    cmd = [sys.executable, "-m", "benches.cost", "--memory", str(home), "--questions", str(questions_file),
           "--calls", str(calls), "--seconds", str(seconds), "--threads", *map(str, threads)]  # fmt: skip
    _, _, out = run_child(cmd, env={**os.environ, "PYTHONPATH": env_path})
    return json.loads(out.strip().splitlines()[-1])


def run(ns: list[int], baseline: str | None, calls: int = 300, threads: tuple[int, ...] = THREADS, seconds: float = 5.0,
        keep_index: bool = True) -> dict:  # fmt: skip
    """Every size, each build in turn (the current one, then the baseline), on the ops history's memory."""
    from funes_py import Models

    from .meaning import indexed_ops

    models = Models.load()
    builds = {"current": None, **({"baseline": baseline} if baseline else {})}
    rows = []
    for n in ns:
        root, home = indexed_ops(n, models, keep_index)
        for name, package in builds.items():
            r = child(package, home, root / "questions.jsonl", calls, threads, seconds)
            rows.append({"n": n, "build": name, **r})
            print(f"cost: {name} at {n:,}: p50 {r['p50_ms']:.2f} ms, cpu {r['cpu_ms']:.2f} ms/recall, "
                  f"{max(p['recalls_per_s'] for p in r['parallel']):.0f}/s at best", file=sys.stderr, flush=True)  # fmt: skip
    return {"rows": rows, "builds": {k: v or "this checkout" for k, v in builds.items()}, "calls": calls, "seconds": seconds}


def render(data: dict) -> str:
    rows = data["rows"]
    out = ("Warm `recall(q, k=8)` with the library's defaults on the ops history, one caller: wall p50 / p99, and "
           "CPU per recall (every thread of the process); parallel callers: recalls/s (CPU ms per recall). "
           f"Builds: {', '.join(f'`{k}` = {v}' for k, v in data['builds'].items())}.\n\n")  # fmt: skip
    threads = [p["threads"] for p in rows[0]["parallel"]] if rows else []
    out += ("| conversations | rows | build | open s | first recall s | RSS MB | p50 / p99 ms | CPU ms | "
            + " | ".join(f"{t} thread{'s' if t > 1 else ''}/s" for t in threads) + " |\n")
    out += "|---|---|---|---|---|---|---|---|" + "---|" * len(threads) + "\n"
    for r in rows:
        par = " | ".join(f"{p['recalls_per_s']:.0f} ({p['cpu_ms']:.1f})" for p in r["parallel"])
        out += (f"| {r['n']:,} | {r['rows']:,} | {r['build']} | {r['open_s']:.2f} | {r['first_s']:.2f} | {r['rss_mb']:.0f} | "
                f"{r['p50_ms']:.2f} / {r['p99_ms']:.2f} | {r['cpu_ms']:.2f} | {par} |\n")  # fmt: skip
    stepped = [r for r in rows if "steps_ms" in r]
    if stepped:
        names = list(stepped[0]["steps_ms"])
        out += ("\nWhere one caller's recall goes (ms per recall, wall time of each step of `search::recall`, "
                "`_funes.recall_steps`; `binding`: the rest of the call, options in and hits out):\n\n")
        out += "| conversations | build | " + " | ".join(names) + " | binding | total |\n|---|---|" + "---|" * (len(names) + 2) + "\n"
        for r in stepped:
            cells = " | ".join(f"{r['steps_ms'][k]:.3f}" for k in names)
            out += f"| {r['n']:,} | {r['build']} | {cells} | {r['binding_ms']:.3f} | {r['mean_ms']:.3f} |\n"
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memory", required=True)
    ap.add_argument("--questions", required=True)
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--threads", type=int, nargs="+", default=list(THREADS))
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--embedder")
    args = ap.parse_args(argv)
    qs = [q["long"] for q in read_jsonl(Path(args.questions))]
    print(json.dumps(measure(args.memory, qs, args.calls, tuple(args.threads), args.seconds, args.embedder)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

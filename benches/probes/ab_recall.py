"""Warm recall of one memory by several engine builds, interleaved: each build in a child process of its own
(its package first on `PYTHONPATH`), all loaded at once, taking turns in short rounds, so that every build
sees the same moments of a shared machine. `benches.cost` measures one build after the other; on a machine
whose speed changes from one minute to the next (a pure Python loop here took 86 to 156 ms within a minute,
and the service's throughput read 280 and 411 recalls/s in consecutive runs of one build) that order moves
the ratio more than most engine changes do.

    python -m benches.probes.ab_recall --memory DIR --questions FILE NAME=PACKAGE_DIR [NAME=PACKAGE_DIR ...] \\
        [--rounds 12] [--per 300]

`PACKAGE_DIR` holds a `funes_py` package (`.` for this checkout's `python/`). Each round, every build makes
`per` recalls of the long questions in turn (`recall(q, k=8)`, the library's defaults, one caller), in an
order that alternates between rounds. Reported per build: wall p50 / p99 over every call, CPU per recall (the
child's user + system time), and the engine's steps (`_funes.recall_steps`, ms per recall, averaged over
rounds).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from ..harness import read_jsonl
from ..paths import REPO


def worker(memory: str, questions: str) -> None:
    """A child: loads the memory, then answers each line `N` on stdin with N timed recalls, as one JSON line."""
    from funes_py import Engine, _funes

    engine = Engine(memory)
    qs = [q["long"] for q in read_jsonl(Path(questions))]
    for q in qs:
        engine.recall(q, k=8)
    print("ready", flush=True)
    i = 0
    for line in sys.stdin:
        n = int(line)
        _funes.recall_steps(True)
        walls = []
        cpu0 = time.process_time()
        for _ in range(n):
            t = time.perf_counter()
            engine.recall(qs[i % len(qs)], k=8)
            walls.append(time.perf_counter() - t)
            i += 1
        cpu = (time.process_time() - cpu0) / n
        steps, calls = _funes.recall_steps()
        print(json.dumps({"walls": walls, "cpu": cpu, "steps": {k: v / 1e6 / max(calls, 1) for k, v in steps}}), flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memory", required=True)
    ap.add_argument("--questions", required=True, help="a questions.jsonl with a 'long' field per line")
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--per", type=int, default=300, help="recalls per build per round")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("builds", nargs="*", metavar="NAME=PACKAGE_DIR")
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.memory, args.questions)
        return 0
    children = []
    for spec in args.builds:
        name, _, path = spec.partition("=")
        package = REPO / "python" if path in ("", ".") else Path(path).resolve()
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(package), str(REPO)]))
        cmd = [sys.executable, "-m", "benches.probes.ab_recall", "--worker", "--memory", args.memory, "--questions", args.questions]
        child = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=REPO)
        assert child.stdin is not None and child.stdout is not None
        if child.stdout.readline().strip() != "ready":
            raise SystemExit(f"{name}: the child did not start (see its stderr)")
        children.append((name, child))
    results: dict[str, dict[str, list]] = {name: {"walls": [], "cpu": [], "steps": []} for name, _ in children}
    for r in range(args.rounds):
        for name, child in children if r % 2 == 0 else children[::-1]:
            assert child.stdin is not None and child.stdout is not None
            child.stdin.write(f"{args.per}\n")
            child.stdin.flush()
            got = json.loads(child.stdout.readline())
            for key in ("walls", "cpu", "steps"):
                results[name][key] += got[key] if key == "walls" else [got[key]]
    for _, child in children:
        assert child.stdin is not None
        child.stdin.close()
        child.wait()
    step_names = [k for k, v in results[children[0][0]]["steps"][0].items() if v or k == "embed"]
    print(f"{args.rounds} rounds x {args.per} recalls per build, builds alternating; memory {args.memory}")
    print("| build | p50 ms | p99 ms | CPU ms/recall | " + " | ".join(step_names) + " |")
    print("|---|---:|---:|---:|" + "---:|" * len(step_names))
    for name, res in results.items():
        walls = sorted(res["walls"])
        p50, p99 = walls[len(walls) // 2], walls[min(len(walls) - 1, int(0.99 * len(walls)))]
        steps = [statistics.fmean(s.get(k, 0.0) for s in res["steps"]) for k in step_names]
        cells = " | ".join(f"{v:.3f}" for v in steps)
        print(f"| {name} | {1000 * p50:.2f} | {1000 * p99:.2f} | {1000 * statistics.fmean(res['cpu']):.2f} | {cells} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

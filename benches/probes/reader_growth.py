"""RSS of a warm engine (a reader with a resident copy) while another process appends to its memory: the
recall service's situation, where ingest workers write and the server recalls, without the service around it.

    python -m benches.probes.reader_growth [--minutes 3]

A writer process indexes one 4-turn conversation (the soak's shape, `benches.soak.canary_body`) about every
0.45 s into a fresh memory; this process recalls back to back and samples its own RSS and row count every
10 s. Prints one JSON line: the samples and the growth per conversation after the first minute.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..paths import REPO

WRITER = r"""
import json, sys, time
from pathlib import Path
from benches.probes.soak import canary_body
from funes_py import Engine, Models
home, tmp, stop = sys.argv[1], Path(sys.argv[2]), time.time() + float(sys.argv[3]) * 60
eng = Engine(home, Models.load(), resident=False)
n = 0
while time.time() < stop:
    body, _ = canary_body(0, n)
    rows = [{"session_id": body["conversation_id"], "turn_uuid": f"{body['conversation_id']}-{i}", "seq": i,
             "ts": t["ts"], "role": t["role"], "harness": "bench", "blocks": [{"block_type": "text", "text": t["text"]}]}
            for i, t in enumerate(body["turns"])]
    path = tmp / f"w{n % 4}.funes.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    eng.index(path)
    n += 1
    time.sleep(0.1)
print(n, flush=True)
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=3.0)
    args = ap.parse_args(argv)
    import psutil

    from funes_py import Engine, Models
    from funes_py.malloc import limit_arenas

    limit_arenas()  # as `funes-py serve` does
    repo = REPO
    with tempfile.TemporaryDirectory(prefix="funes-reader-") as tmp:
        home = Path(tmp) / "memory"
        writer = [sys.executable, "-c", WRITER, str(home), tmp]
        subprocess.run([*writer, "0.3"], check=True, capture_output=True, cwd=repo)  # a first few conversations
        reader = Engine(home, Models.load())
        for _ in range(200):
            reader.recall("meter reading at the Ghent site", k=3)
        proc = psutil.Process()
        w = subprocess.Popen([*writer, str(args.minutes)], stdout=subprocess.PIPE, text=True, cwd=repo)
        t0, last, samples = time.time(), 0.0, []
        while w.poll() is None:
            reader.recall("meter reading at the Ghent site", k=3)
            time.sleep(0.05)
            if time.time() - last >= 10:
                last = time.time()
                samples.append((round((last - t0) / 60, 2), round(proc.memory_info().rss / 2**20, 1), reader.status().rows))
        appends = int((w.stdout.read() if w.stdout else "").strip() or 0)
    after = [s for s in samples if s[0] >= 1.0]
    per_conv_kb = ((after[-1][1] - after[0][1]) * 1024 / ((after[-1][2] - after[0][2]) / 4)) if len(after) > 1 else None
    print(json.dumps({"minutes": args.minutes, "appends": appends, "samples": samples,
                      "kb_per_conversation_after_1_min": round(per_conv_kb, 1) if per_conv_kb else None}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

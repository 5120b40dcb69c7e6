"""Replicas on one S3 bucket behind HAProxy (issue 17): the four measurements, in one run.

    python -m benches.probes.distributed [--seconds 6] [--tenants 100] [--clients 16] [--json benches/out/run-distributed.json]

The parts are the tests' real ones: SeaweedFS 4.48 (tests/s3_helpers.py) on loopback, HAProxy running
deploy/haproxy.cfg (tests/lb_helpers.py), and `python -m funes_py.server` replicas with FUNES_DATA=s3://...,
each with its own local state directory as on its own machine. Recalls are MCP `tools/call` requests of
`recall_my_conversations` posted as JSON-RPC to the stateless /mcp endpoint (no session set-up per call, so a
client survives a replica dying under it); writes are POST /turns.

1. Balancer cost: one client, one warm tenant, recall p50 straight to a replica and through HAProxy (one
   backend), alternated in rounds; and the balancer's own cost, the same for GET /healthz.
2. Cold tenant and ingest: the first recall of a tenant a replica has never opened, whose memory (6,000 and
   18,000 chunks, copied into the bucket from benches/out/history-{1000,3000}-s7) is read from the bucket;
   POST /turns acknowledgement (source object and marker written) p50 on S3 against a replica on local disk.
3. Throughput through HAProxy with 1, 2 and 3 replicas: C clients spread over T tenants, each client cycling
   through its tenants; recalls/s, latency, and CPU per recall of every process on the server side
   (replicas + HAProxy; SeaweedFS apart), from which capacity per core. All on this one machine's 2 cores:
   more replicas cannot add cores here, so the figures say what a replica costs, not how it scales.
4. Failover: 3 replicas, C clients on T tenants and a writer posting new turns through HAProxy; one replica
   gets SIGKILL. Reported: seconds until HAProxy marks it down, until every tenant has answered again, the
   failed calls in between, and how many acknowledged turns cannot be recalled once the survivors caught up.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import psutil

from benches.paths import REPO as ROOT

sys.path.insert(0, str(ROOT / "tests"))  # the tests' real parts: SeaweedFS and HAProxy harnesses

from benches.probes.service import QUERIES, conversations  # noqa: E402
from funes_py.server.passages import UNAVAILABLE  # noqa: E402
from funes_py.tenancy.auth import tenant_id  # noqa: E402
from lb_helpers import HAProxy  # noqa: E402
from s3_helpers import SeaweedS3  # noqa: E402

INGEST_KEY = "bench-ingest-key-0123456789"
# Memories copied into the bucket as they are (int8 MiniLM, as the service loads): 6,000, 10,002 and 18,000
# chunks. The 10k one is the first 1,667 conversations of the 3,000 history, indexed by `prepare_cold10k`.
COLD = {"cold6k": ROOT / "benches/out/history-1000-s7", "cold10k": ROOT / "benches/out/history-cold-10k",
        "cold18k": ROOT / "benches/out/history-3000-s7"}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
               "MCP-Protocol-Version": "2025-06-18"}


def token_of(user: str) -> str:
    return f"bench-{user}-token"


class Replica:
    """`python -m funes_py.server` on a free port; `data` a directory or an s3:// root."""

    def __init__(self, name: str, data: str, work: Path, tokens: Path, env: dict[str, str]):
        from lb_helpers import free_port

        self.name, self.port = name, free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = work / f"{name}.log"
        self.env = {**os.environ, **env, "FUNES_HOST": "127.0.0.1", "FUNES_PORT": str(self.port), "FUNES_DATA": data,
                    "FUNES_TOKENS_FILE": str(tokens), "FUNES_INGEST_KEY": INGEST_KEY,
                    "FUNES_STATE_DIR": str(work / f"state-{name}"), "FUNES_LOG": "INFO",
                    "FUNES_INDEX_DEBOUNCE_S": "0.2", "FUNES_MAX_OPEN_TENANTS": "400", "FUNES_RECONCILE_S": "5"}
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Replica:
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen([sys.executable, "-m", "funes_py.server"], env=self.env, stdout=self._log,
                                     stderr=subprocess.STDOUT)  # fmt: skip
        deadline = time.monotonic() + 180
        while True:
            try:
                if httpx.get(self.url + "/healthz", timeout=1).status_code == 200:
                    self.ps = psutil.Process(self.proc.pid)
                    return self
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} did not start:\n{self.log_path.read_text()[-3000:]}")
            time.sleep(0.1)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def cpu_s(self) -> float:
        try:
            t = self.ps.cpu_times()
            return t.user + t.system
        except psutil.NoSuchProcess:
            return 0.0

    def wait_indexed(self, timeout: float = 600) -> None:
        time.sleep(0.4)
        deadline = time.monotonic() + timeout
        while httpx.get(self.url + "/healthz", timeout=10).json()["indexing"]:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.name} still indexing")
            time.sleep(0.2)

    def stop(self) -> None:
        if self.alive():
            assert self.proc is not None
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self._log.close()


# --- clients -----------------------------------------------------------------------------------------------

async def recall(http: httpx.AsyncClient, url: str, user: str, query: str) -> tuple[bool, str]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "recall_my_conversations", "arguments": {"query": query}}}
    try:
        r = await http.post(url + "/mcp", json=body, headers={**MCP_HEADERS, "Authorization": f"Bearer {token_of(user)}"})
    except httpx.HTTPError as e:
        return False, f"{type(e).__name__}"
    if r.status_code != 200:
        return False, f"HTTP {r.status_code}"
    result = r.json().get("result") or {}
    text = "".join(c.get("text", "") for c in result.get("content", []))
    return (not result.get("isError") and text != UNAVAILABLE), text


async def load(url: str, users: list[str], clients: int, seconds: float, events: list[tuple[float, float, str, bool]]) -> None:
    """`clients` loops until `seconds` pass, client i cycling through users i, i+clients, ...; every call is
    appended to `events` as (start, end, user, ok)."""
    stop_at = time.perf_counter() + seconds

    async def one(i: int) -> None:
        mine = users[i::clients] or users
        async with httpx.AsyncClient(timeout=30) as http:
            n = 0
            while time.perf_counter() < stop_at:
                user = mine[n % len(mine)]
                t0 = time.perf_counter()
                ok, _ = await recall(http, url, user, QUERIES[n % len(QUERIES)])
                events.append((t0, time.perf_counter(), user, ok))
                n += 1

    await asyncio.gather(*(one(i) for i in range(clients)))


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def ms(x: float) -> float:
    return round(1000 * x, 2)


async def sequential(url: str, user: str, n: int) -> list[float]:
    lat = []
    async with httpx.AsyncClient(timeout=30) as http:
        for i in range(n):
            t0 = time.perf_counter()
            ok, text = await recall(http, url, user, QUERIES[i % len(QUERIES)])
            lat.append(time.perf_counter() - t0)
            assert ok, text
    return lat


# --- the run -----------------------------------------------------------------------------------------------

def upload_memory(client: Any, bucket: str, src: Path, prefix: str) -> int:
    n = 0
    for p in sorted(src.rglob("*")):
        if p.is_file() and p.name != "index-state.json":
            client.upload_file(str(p), bucket, f"{prefix}/{p.relative_to(src)}")
            n += 1
    return n


def prepare_cold10k() -> None:
    """benches/out/history-cold-10k: the first 1,667 conversations of history-3000-s7 (10,002 chunks), indexed."""
    out = COLD["cold10k"]
    if (out / "memory").is_dir():
        return
    base = COLD["cold18k"] / "src"
    if not base.is_dir():
        subprocess.run([sys.executable, "-m", "benches.history", "--n", "3000"], check=True, cwd=ROOT)
    (out / "src").mkdir(parents=True, exist_ok=True)
    for f in sorted(base.glob("*.funes.jsonl"))[:1667]:
        (out / "src" / f.name).write_bytes(f.read_bytes())
    subprocess.run([sys.executable, "-m", "funes_py.cli", "index", str(out / "src"), "--home", str(out / "memory")],
                   check=True, cwd=ROOT)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=6.0, help="per timed cell")
    ap.add_argument("--tenants", type=int, default=100)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--json", type=Path, default=ROOT / "benches/out/run-distributed.json")
    args = ap.parse_args(argv)
    prepare_cold10k()
    work = Path(tempfile.mkdtemp(prefix="funes-distributed-"))
    out: dict[str, Any] = {"tenants": args.tenants, "clients": args.clients, "seconds": args.seconds,
                           "load_before": os.getloadavg()[0]}
    users = [f"user{i}" for i in range(args.tenants)]
    tokens = work / "tokens.json"
    tokens.write_text(json.dumps({token_of(u): u for u in [*users, *COLD]}))
    replicas: list[Replica] = []
    balancers: list[HAProxy] = []
    with SeaweedS3(workdir=work / "seaweed") as s3:
        env = s3.env()
        os.environ.update(env)
        from funes_py.tenancy.storage import s3_client

        data = s3.uri(f"bench-{uuid.uuid4().hex[:8]}")
        try:
            replicas = [Replica(f"r{i}", data, work, tokens, env).start() for i in (1, 2, 3)]
            r1, r2, r3 = replicas

            # Seed: every tenant's conversations through replica 1, which indexes them.
            t0 = time.perf_counter()
            with httpx.Client(headers={"x-ingest-key": INGEST_KEY}, timeout=60) as http:
                for i, u in enumerate(users):
                    for body in conversations(i):
                        r = http.post(r1.url + "/turns", json={**body, "user": u})
                        assert r.status_code == 202, r.text
            r1.wait_indexed()
            out["seed_s"] = round(time.perf_counter() - t0, 1)
            boto = s3_client()
            prefix = data.removeprefix(f"s3://{s3.bucket}/")
            for user, hist in COLD.items():
                upload_memory(boto, s3.bucket, hist / "memory", f"{prefix}/{tenant_id(user)}/memory")
            print(f"seeded {args.tenants} tenants in {out['seed_s']} s; cold memories uploaded", flush=True)

            # 1. Balancer cost.
            lb1 = HAProxy([r1.port], workdir=work / "lb1").start()
            balancers.append(lb1)
            asyncio.run(sequential(r1.url, users[0], 20))
            direct, through = [], []
            for _ in range(3):
                direct += asyncio.run(sequential(r1.url, users[0], 100))
                through += asyncio.run(sequential(lb1.url, users[0], 100))
            hz_direct, hz_lb = [], []
            with httpx.Client(timeout=10) as http:
                for _ in range(300):
                    for url, acc in ((r1.url, hz_direct), (lb1.url, hz_lb)):
                        t = time.perf_counter()
                        http.get(url + "/healthz")
                        acc.append(time.perf_counter() - t)
            out["balancer"] = {"recall_p50_direct_ms": ms(statistics.median(direct)),
                               "recall_p50_lb_ms": ms(statistics.median(through)),
                               "healthz_p50_direct_ms": ms(statistics.median(hz_direct)),
                               "healthz_p50_lb_ms": ms(statistics.median(hz_lb))}
            print("balancer", out["balancer"], flush=True)

            # 2. Cold tenants from the bucket, and ingest acknowledgement.
            cold = {}
            for user, replica in zip(COLD, (r2, r3, r1), strict=True):  # each replica has never opened it
                async def first_and_warm(url: str = replica.url, user: str = user) -> tuple[float, float]:
                    async with httpx.AsyncClient(timeout=60) as http:
                        t = time.perf_counter()
                        ok, text = await recall(http, url, user, "what did we decide about the upgrade?")
                        first = time.perf_counter() - t
                        assert ok, text
                    return first, statistics.median(await sequential(url, user, 30))

                first, warm = asyncio.run(first_and_warm())
                cold[user] = {"first_recall_ms": ms(first), "warm_p50_ms": ms(warm)}
            out["cold"] = cold
            local = Replica("local", str(work / "local-data"), work, tokens, {}).start()
            ingest = {}
            for name, replica in (("s3", r1), ("local", local), ("s3 again", r1)):
                lat = []
                with httpx.Client(headers={"x-ingest-key": INGEST_KEY}, timeout=60) as http:
                    for i in range(150):
                        body = {"user": "ingest-bench", "conversation_id": f"{name.replace(' ', '-')}-{i}",
                                "turns": [{"role": "user", "text": f"Dock {i} pallet count checked, seal {i % 7}.",
                                           "ts": "2026-11-20T08:00:00Z"},
                                          {"role": "assistant", "text": f"Logged dock {i}.", "ts": "2026-11-20T08:00:05Z"}]}
                        t = time.perf_counter()
                        assert http.post(replica.url + "/turns", json=body).status_code == 202
                        lat.append(time.perf_counter() - t)
                ingest[name] = {"p50_ms": ms(statistics.median(lat)), "p95_ms": ms(pct(lat, 0.95))}
            local.stop()
            r1.wait_indexed()
            out["ingest_ack"] = ingest
            print("cold", cold, "ingest", ingest, flush=True)

            # 3. Throughput with 1, 2, 3 replicas.
            scaling = []
            for n in (1, 2, 3):
                lb = HAProxy([r.port for r in replicas[:n]], workdir=work / f"lb-n{n}").start()
                balancers.append(lb)
                warm_events: list[tuple[float, float, str, bool]] = []
                asyncio.run(load(lb.url, users, args.clients, 0.0 + max(3.0, args.seconds / 2), warm_events))
                events: list[tuple[float, float, str, bool]] = []
                lb_ps = psutil.Process(lb.proc.pid) if lb.proc else None
                cpu0 = sum(r.cpu_s() for r in replicas) + (sum(lb_ps.cpu_times()[:2]) if lb_ps else 0)
                client0 = sum(os.times()[:2])
                t = time.perf_counter()
                asyncio.run(load(lb.url, users, args.clients, args.seconds, events))
                wall = time.perf_counter() - t
                cpu = sum(r.cpu_s() for r in replicas) + (sum(lb_ps.cpu_times()[:2]) if lb_ps else 0) - cpu0
                client = sum(os.times()[:2]) - client0
                lat = [e - s for s, e, _, _ in events]
                ok = sum(1 for *_, good in events if good)
                scaling.append({"replicas": n, "recalls_per_s": round(ok / wall, 1), "p50_ms": ms(statistics.median(lat)),
                                "p95_ms": ms(pct(lat, 0.95)), "errors": len(events) - ok,
                                "server_cpu_ms_per_recall": round(1000 * cpu / max(1, ok), 2),
                                "client_cpu_ms_per_recall": round(1000 * client / max(1, ok), 2),
                                "recalls_per_core_s": round(ok / max(cpu, 1e-9), 1)})
                print("scaling", scaling[-1], flush=True)
                lb.stop()
            out["scaling"] = scaling

            # 4. Failover.
            lb3 = HAProxy([r.port for r in replicas], workdir=work / "lb-failover").start()
            balancers.append(lb3)
            asyncio.run(load(lb3.url, users, args.clients, 3.0, []))
            events = []
            acked: list[tuple[str, str]] = []
            write_errors: list[str] = []
            down_at: list[float] = []
            stop = threading.Event()

            def writer() -> None:
                n = 0
                with httpx.Client(headers={"x-ingest-key": INGEST_KEY}, timeout=30) as http:
                    while not stop.is_set():
                        user, canary = users[n % len(users)], f"Qz{n:05d}k"
                        body = {"user": user, "conversation_id": f"failover-{n}",
                                "turns": [{"role": "user", "text": f"Crate {canary} left the Antwerp dock at 07:{n % 60:02d}.",
                                           "ts": "2026-11-25T07:00:00Z"}]}
                        try:
                            if http.post(lb3.url + "/turns", json=body).status_code == 202:
                                acked.append((user, canary))
                            else:
                                write_errors.append(str(n))
                        except httpx.HTTPError as e:
                            write_errors.append(type(e).__name__)
                        n += 1
                        time.sleep(0.05)

            victim = r2
            victim_name = lb3.servers[replicas.index(victim)]

            def killer() -> None:
                time.sleep(4.0)
                assert victim.proc is not None
                down_at.append(time.perf_counter())
                victim.proc.send_signal(signal.SIGKILL)
                while lb3.server_states().get(victim_name) != "DOWN":
                    time.sleep(0.02)
                down_at.append(time.perf_counter())

            threads = [threading.Thread(target=writer), threading.Thread(target=killer)]
            for th in threads:
                th.start()
            asyncio.run(load(lb3.url, users, args.clients, 16.0, events))
            stop.set()
            for th in threads:
                th.join()
            killed, marked = down_at
            after = [e for e in events if e[0] >= killed or e[1] >= killed]
            failed = [e for e in after if not e[3]]
            last_fail: dict[str, float] = {}
            for _s, e, u, good in after:
                if not good:
                    last_fail[u] = max(last_fail.get(u, 0.0), e)
            recovered = {}
            for s, e, u, good in sorted(after, key=lambda x: x[1]):
                if good and u not in recovered and s >= last_fail.get(u, 0.0):
                    recovered[u] = e
            missing_users = [u for u in users if u not in recovered]
            all_back = max(recovered.values()) - killed if not missing_users else float("nan")
            # The survivors catch up: markers of what the dead replica acknowledged are found at the
            # next reconcile (FUNES_RECONCILE_S=5 here) and indexed.
            time.sleep(8)
            for r in replicas:
                if r.alive():
                    r.wait_indexed()

            async def check() -> list[str]:
                lost = []
                async with httpx.AsyncClient(timeout=30) as http:
                    for user, canary in acked:
                        ok, text = await recall(http, lb3.url, user, f"crate {canary} Antwerp dock")
                        if canary not in text:
                            lost.append(canary)
                return lost

            lost = asyncio.run(check())
            out["failover"] = {"marked_down_s": round(marked - killed, 2),
                               "every_tenant_answers_again_s": round(all_back, 2),
                               "after_marked_down_s": round(all_back - (marked - killed), 2),
                               "tenants_not_back": len(missing_users),
                               "recalls_after_kill": len(after), "recalls_failed": len(failed),
                               "writes_acked": len(acked), "writes_failed": len(write_errors),
                               "acked_not_recalled": len(lost), "lost_examples": lost[:5]}
            print("failover", out["failover"], flush=True)
        finally:
            for lb in balancers:
                lb.stop()
            for r in replicas:
                r.stop()
    out["load_after"] = os.getloadavg()[0]
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(out, indent=1))
    print(json.dumps(out, indent=1))
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The real load balancer for tests: HAProxy (Debian's package) running deploy/haproxy.cfg itself.

`HAProxy(backends)` writes a copy of deploy/haproxy.cfg in which the replica lines (between "BEGIN replicas"
and "END replicas") are generated from the first of them, one per backend, with the addresses passed in
the same environment variables production uses (FUNES_REPLICA_<i>, FUNES_LB_BIND); every other line is
the deployed one, so the test and the deployment cannot drift apart. The only addition is a stats socket
in the work directory, through which tests read each replica's state (UP/DOWN) as HAProxy sees it.
"""

from __future__ import annotations

import csv
import io
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEPLOY_CFG = ROOT / "deploy" / "haproxy.cfg"
BEGIN, END = "# BEGIN replicas", "# END replicas"
# `server replica1 "${FUNES_REPLICA_1}" id 1 [more]`: the name and the variable end in the replica's number.
SERVER_LINE = re.compile(r'^(?P<indent>\s*)server\s+(?P<name>[A-Za-z_-]+)1\s+"\$\{(?P<var>[A-Za-z_]+)1\}"\s+id\s+1(?P<rest>.*)$')


def haproxy_binary() -> Path:
    found = shutil.which("haproxy") or next((p for p in ("/usr/sbin/haproxy", "/usr/local/sbin/haproxy") if Path(p).exists()), None)
    if not found:
        raise FileNotFoundError("no haproxy binary: `apt-get install -y haproxy` (scripts/bootstrap.sh does)")
    return Path(found)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def render_config(n: int, template: Path = DEPLOY_CFG, stats_socket: Path | None = None) -> tuple[str, list[str], str]:
    """The template with `n` replica lines. Returns (config text, the servers' names, the name of the
    environment variable prefix that carries their addresses: <prefix><i> for i in 1..n)."""
    lines = template.read_text().splitlines()
    try:
        begin = next(i for i, line in enumerate(lines) if line.strip() == BEGIN)
        end = next(i for i, line in enumerate(lines) if line.strip() == END)
    except StopIteration:
        raise ValueError(f"{template}: no '{BEGIN}' ... '{END}' block") from None
    first = next((m for line in lines[begin + 1 : end] if (m := SERVER_LINE.match(line))), None)
    if first is None:
        raise ValueError(f'{template}: the replica block has no line like `server replica1 "${{FUNES_REPLICA_1}}" id 1`')
    g = first.groupdict()
    servers = [f"{g['name']}{i}" for i in range(1, n + 1)]
    block = [f'{g["indent"]}server {g["name"]}{i} "${{{g["var"]}{i}}}" id {i}{g["rest"]}' for i in range(1, n + 1)]
    out = lines[: begin + 1] + block + lines[end:]
    if stats_socket is not None:
        at = next(i for i, line in enumerate(out) if line.strip() == "global")
        out.insert(at + 1, f"    stats socket {stats_socket} mode 600 level admin  # added by tests/lb_helpers.py")
    return "\n".join(out) + "\n", servers, g["var"]


class HAProxy:
    """`haproxy -db -f <config>` on a free loopback port in front of `backends` ("host:port" or ports on
    127.0.0.1). Attributes: url, port, cfg_path, log_path, servers (the replica names, in backend order).
    Use as a context manager."""

    def __init__(self, backends: Sequence[int | str], workdir: Path | None = None, template: Path = DEPLOY_CFG) -> None:
        self.backends = [b if isinstance(b, str) else f"127.0.0.1:{b}" for b in backends]
        self._own_workdir = workdir is None
        self.workdir = Path(tempfile.mkdtemp(prefix="funes-haproxy-")) if workdir is None else Path(workdir)
        self.cfg_path = self.workdir / "haproxy.cfg"
        self.log_path = self.workdir / "haproxy.log"
        self.stats_socket = self.workdir / "admin.sock"
        self.template = template
        self.port = 0
        self.url = ""
        self.servers: list[str] = []
        self.proc: subprocess.Popen[bytes] | None = None
        self._env: dict[str, str] = {}

    def env(self) -> dict[str, str]:
        """The environment HAProxy runs with (FUNES_LB_BIND, FUNES_REPLICA_<i>)."""
        return self._env

    def start(self, timeout: float = 15.0) -> HAProxy:
        self.workdir.mkdir(parents=True, exist_ok=True)
        text, self.servers, var = render_config(len(self.backends), self.template, self.stats_socket)
        self.cfg_path.write_text(text)
        last = ""
        for _attempt in range(3):  # the port may be taken between our check and HAProxy's bind
            self.port = free_port()
            self.url = f"http://127.0.0.1:{self.port}"
            self._env = {
                **os.environ,
                "FUNES_LB_BIND": f"127.0.0.1:{self.port}",
                **{f"{var}{i}": addr for i, addr in enumerate(self.backends, start=1)},
            }
            check = subprocess.run([str(haproxy_binary()), "-c", "-f", str(self.cfg_path)], env=self._env, capture_output=True, text=True)
            if check.returncode != 0:
                raise RuntimeError(f"haproxy -c refused {self.cfg_path}:\n{check.stdout}{check.stderr}")
            with open(self.log_path, "ab") as log:
                self.proc = subprocess.Popen([str(haproxy_binary()), "-db", "-f", str(self.cfg_path)], env=self._env,
                                             stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)  # fmt: skip
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and self.proc.poll() is None:
                try:
                    with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                        pass
                    if self.stats_socket.exists():
                        return self
                except OSError:
                    pass
                time.sleep(0.05)
            last = f"haproxy exited with {self.proc.returncode}" if self.proc.poll() is not None else f"not up after {timeout} s"
            self.stop()
            if "Address already in use" not in self.log() and "cannot bind" not in self.log():
                break
        raise RuntimeError(f"{last}\n--- {self.log_path} ---\n{self.log()[-4000:]}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def command(self, cmd: str) -> str:
        """One command on the stats socket (management guide, section 9.3), e.g. 'show stat'."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(5)
            s.connect(str(self.stats_socket))
            s.sendall(cmd.encode() + b"\n")
            chunks = []
            while chunk := s.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks).decode()

    def server_states(self) -> dict[str, str]:
        """{replica name: status} of the funes_replicas backend as HAProxy sees it: 'UP', 'DOWN', 'UP 1/2'
        (failing, not yet down), 'DOWN 1/1' (recovering), 'MAINT'."""
        rows = csv.DictReader(io.StringIO(self.command("show stat").lstrip("# ")))
        return {r["svname"]: r["status"] for r in rows if r["pxname"] == "funes_replicas" and r["svname"] in self.servers}

    def server_counts(self, field: str = "stot") -> dict[str, int]:
        """{replica name: a counter of `show stat`}, by default the sessions HAProxy sent it so far."""
        rows = csv.DictReader(io.StringIO(self.command("show stat").lstrip("# ")))
        return {r["svname"]: int(r[field] or 0) for r in rows if r["pxname"] == "funes_replicas" and r["svname"] in self.servers}

    def wait_states(self, want: dict[str, str], timeout: float = 10.0) -> float:
        """Waits until every named replica has the wanted status; returns the seconds it took."""
        t0 = time.monotonic()
        while True:
            states = self.server_states()
            if all(states.get(k) == v for k, v in want.items()):
                return time.monotonic() - t0
            if time.monotonic() - t0 > timeout:
                raise AssertionError(f"replica states {states}, wanted {want} within {timeout} s")
            time.sleep(0.05)

    def stop(self) -> None:
        """SIGTERM (HAProxy's hard stop), then SIGKILL."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> HAProxy:
        try:
            return self.start()
        except BaseException:
            self.__exit__()
            raise

    def __exit__(self, *exc: Any) -> None:
        self.stop()
        if self._own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

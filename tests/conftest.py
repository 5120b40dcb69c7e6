"""Shared fixtures: the real models (loaded once per test session), a real S3 server (`s3_server`, from
s3_helpers.py; started only by the tests that ask for it), the service's data root on local disk and on
that server (`data_root`), and a writer of .funes.jsonl files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

# Session fixtures defined beside their helpers, shared with every test file from here.
from s3_helpers import s3_server  # noqa: F401  (the SeaweedFS S3 server: tests/s3_helpers.py)


def write_conversation(
    path: Path,
    session_id: str,
    turns: Sequence[tuple[str, str]],
    start: datetime = datetime(2026, 10, 8, 9, 0, tzinfo=timezone.utc),
) -> Path:
    """Writes turns [(role, text), ...] as one .funes.jsonl file, one minute apart."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as f:
        for i, (role, text) in enumerate(turns):
            ts = (start + timedelta(minutes=i)).strftime("%Y-%m-%dT%H:%M:%SZ")
            row = {
                "session_id": session_id,
                "turn_uuid": f"{session_id}-t{i}",
                "seq": i,
                "ts": ts,
                "role": role,
                "harness": "test",
                "blocks": [{"block_type": "text", "text": text}],
            }
            f.write(json.dumps(row) + "\n")
    return path


# Prints one JSON line: {"ok": chunks added} or {"error": class name, "message": ..., "seconds": ...}.
_INDEX_SCRIPT = """
import json, sys, time
from funes_py import Engine, Models
models = Models.load()
print(json.dumps({"ready": True}), flush=True)
sys.stdin.readline()  # every process starts indexing at the same moment
t0 = time.monotonic()
try:
    report = Engine(sys.argv[1], models=models).index(sys.argv[2])
    print(json.dumps({"ok": report.chunks_added, "embedded": report.texts_embedded,
                      "seconds": time.monotonic() - t0}), flush=True)
except Exception as e:
    print(json.dumps({"error": type(e).__name__, "message": str(e)[:300], "seconds": time.monotonic() - t0}), flush=True)
"""


def index_at_once(home, sources, envs=None) -> list[dict]:
    """`Engine(home).index(source)` in one process per source, all released at the same moment once every
    one has loaded its models; `envs` (one dict per process) adds to the environment, e.g. a state
    directory of its own, as on another machine. Returns each process's JSON line."""
    envs = envs or [{} for _ in sources]
    procs = [subprocess.Popen([sys.executable, "-c", _INDEX_SCRIPT, str(home), str(src)], env={**os.environ, **env},
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for src, env in zip(sources, envs, strict=True)]  # fmt: skip
    for p in procs:  # models loaded in all before any starts
        assert p.stdout is not None and json.loads(p.stdout.readline()) == {"ready": True}
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=900)
        assert p.returncode == 0, stderr[-2000:]
        out.append(json.loads(stdout.strip().splitlines()[-1]))
    return out


@pytest.fixture(scope="module", params=["local", "s3"])
def data_root(request, tmp_path_factory):
    """Where a module's service keeps its tenants, once on local disk and once under a fresh prefix of the
    real S3 server: the service suites that take it hold for both."""
    from service_helpers import DataRoot

    work = tmp_path_factory.mktemp(f"svc-{request.param}")
    if request.param == "local":
        return DataRoot.local(work)
    return DataRoot.on_s3(request.getfixturevalue("s3_server"), work)


@pytest.fixture(scope="session")
def models():
    from funes_py import Models

    return Models.load()


@pytest.fixture(params=["resident", "lance", "s3"])
def engine(models, tmp_path, request, monkeypatch):
    """An engine on a fresh memory, once per recall path: the resident copy in RAM (what a warm engine
    uses) and Lance's own indexes (what the CLI uses), on local disk; and a warm engine on a memory under a
    fresh prefix of the real S3 server. Every engine test holds for all three."""
    import uuid

    from funes_py import Engine

    if request.param == "s3":
        server = request.getfixturevalue("s3_server")
        for k, v in server.env().items():
            monkeypatch.setenv(k, v)
        monkeypatch.setenv("FUNES_STATE_DIR", str(tmp_path / "state"))
        return Engine(server.uri(f"engine-{uuid.uuid4().hex[:12]}"), models=models)
    return Engine(tmp_path / "memory", models=models, resident=request.param == "resident")


def stored_bytes(home: str, s3=None) -> bytes:
    """Every byte a memory keeps: its files on disk, or every object under its prefix on the S3 server."""
    if not home.startswith("s3://"):
        return b"".join(p.read_bytes() for p in Path(home).rglob("*") if p.is_file())
    assert s3 is not None, "an s3:// memory needs the s3_server fixture to be read back"
    prefix = home.removeprefix(f"s3://{s3.bucket}/").rstrip("/") + "/"
    client = s3.client()
    return b"".join(client.get(s3.bucket, k).body for k in client.list_objects_v2(s3.bucket, prefix=prefix))


def _analyzer_version() -> int | None:
    """The engine build's BM25 analyzer version; None for a build from before the stamp (whitespace only)."""
    try:
        from funes_py import _funes
    except ImportError:
        return None
    return getattr(_funes, "ANALYZER_VERSION", None)


# Tests of the CJK bigram analyzer (issue 14) run only on a build that has it: an older build has the
# whitespace analyzer and no `_funes.ANALYZER_VERSION`; there is nothing of the new behaviour to test in it.
needs_bigram_analyzer = pytest.mark.skipif(
    (_analyzer_version() or 1) < 2,
    reason=f"this engine build has BM25 analyzer version {_analyzer_version() or '1 (no _funes.ANALYZER_VERSION)'}: "
    "the CJK bigram analyzer (version 2, issue 14) is not in it",
)

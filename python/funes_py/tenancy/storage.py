"""Where the service keeps its tenants: a local directory, or a prefix on S3-compatible object storage.

Layout of one tenant under the data root (`FUNES_DATA`: a path, or `s3://bucket/prefix`):
    <tenant>/src/<conversation_id>.funes.jsonl   what the ingest route stored (the source of truth)
    <tenant>/memory/                             the Engine home (a Lance dataset), rebuilt from src/ if lost
    <tenant>/indexed.stamp                       local: when the last complete index run started (scheduler.py)
    <tenant>/pending/<id>.<token>                S3: a write that no index run has completed yet (below)

`TenantData` is what the service asks of either: write a conversation durably (an ingest is acknowledged
only after this returns), delete one, plan an index run, and say which conversations may not be in the
memory yet. The engine opens `memory_home(tenant)` itself: Lance reads and commits on S3 with its own object
store (conditional PUT), so two replicas may index one tenant at once.

What is not indexed yet, on a local root: the stamp (scheduler.py), a time that one process keeps. Replicas
sharing a bucket cannot share a time like that (a replica's run knows nothing of the writes another one
acknowledged and died with), so on S3 every acknowledged write leaves a marker, `<tenant>/pending/<id>.<token>`,
unique to that write and put after its source. An index run, on any replica, lists the markers first, indexes
their conversations with its own, and deletes exactly the markers it listed once it succeeded: a write that
lands meanwhile has a marker of its own, which stays. A marker therefore outlives its write until a run that
read the source after it completed. Replicas look for markers when they open a tenant and every
`FUNES_RECONCILE_S` for the tenants they hold.

On S3 the source files go through boto3 (`pip install funes_py[s3]`), configured by the same variables as
Lance's object store (`AWS_ENDPOINT_URL`, `AWS_REGION`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`;
path-style requests unless `AWS_VIRTUAL_HOSTED_STYLE_REQUEST=true`, as Lance), so one set of variables
serves both. A PUT is atomic and durable when it answers, so no temporary object is needed.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .auth import TENANT_HEX_CHARS

SUFFIX = ".funes.jsonl"
_TENANT_RE = re.compile(rf"[0-9a-f]{{{TENANT_HEX_CHARS}}}")  # auth.tenant_id's names
# Per request to the store. Our requests are small (a conversation, a marker, a listing): a store that says
# nothing for this long is stuck, and the retry (up to 5 tries) goes out on a fresh connection.
READ_TIMEOUT_S = 10.0

# One index step: given the tenant's engine, index and return the engine's IndexReport.
IndexStep = Callable[[Any], Any]


@dataclass
class IndexPlan:
    """What an index run does (`steps`, in order), what it settles once every step succeeded (`done`), and how
    many conversations it reads (`size`; None: a whole directory)."""

    steps: list[IndexStep]
    done: Callable[[], None] = lambda: None
    size: int | None = None


def is_remote(root: str | os.PathLike[str]) -> bool:
    return str(root).startswith("s3://")


def open_data(root: str | os.PathLike[str]) -> TenantData:
    """`FUNES_DATA` -> where the tenants live."""
    return S3Data(str(root)) if is_remote(root) else LocalData(Path(root).expanduser())


class TenantData:
    """The operations the service needs of a data root (see the module doc). Every method may block: the
    service calls them on worker threads."""

    #: True when several replicas share this root: a tenant is then checked for sources that no index run
    #: took in (a replica died after acknowledging them) each time a replica opens it, not only at start-up.
    shared: bool = False
    root: str = ""

    def prepare(self) -> None:
        """Make sure the root exists (start-up)."""

    def memory_home(self, tenant: str) -> str:
        raise NotImplementedError

    def has_memory(self, tenant: str) -> bool:
        raise NotImplementedError

    def write_conversation(self, tenant: str, conversation_id: str, lines: list[str]) -> None:
        """Store a conversation's lines, replacing the previous ones; durable when it returns."""
        raise NotImplementedError

    def delete_conversation(self, tenant: str, conversation_id: str) -> bool:
        """Remove a conversation's source; False when there was none."""
        raise NotImplementedError

    def index_plan(self, tenant: str, conversation_ids: set[str] | None) -> IndexPlan:
        """An index run for these conversations (None: all of the tenant's sources), with whatever else the
        root knows to be unindexed."""
        raise NotImplementedError

    def write_stamp(self, tenant: str, stamp: int | None) -> None:
        raise NotImplementedError

    def stale(self, tenant: str) -> set[str] | None:
        """Conversations not known to be indexed: None means all of them (no stamp); empty when none."""
        raise NotImplementedError

    def has_sources(self, tenant: str) -> bool:
        raise NotImplementedError

    def tenants(self) -> Iterator[str]:
        """Every tenant with sources (start-up recovery of a local root)."""
        raise NotImplementedError

    def conversations(self, tenant: str) -> Iterator[tuple[str, list[str]]]:
        """(conversation id, its stored lines) of every source of the tenant, by id (a user's export)."""
        raise NotImplementedError

    def erase(self, tenant: str) -> bool:
        """Remove everything the root holds of the tenant: sources, memory, stamp, markers, and the memory's
        local state on this machine. False when there was nothing. The caller closes the engine first."""
        raise NotImplementedError


# --- a local directory ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class TenantPaths:
    root: Path

    @property
    def src(self) -> Path:
        return self.root / "src"

    @property
    def memory(self) -> Path:
        return self.root / "memory"

    @property
    def stamp(self) -> Path:
        return self.root / "indexed.stamp"

    def conversation(self, conversation_id: str) -> Path:
        return self.src / f"{conversation_id}{SUFFIX}"


class LocalData(TenantData):
    def __init__(self, root: Path) -> None:
        self.path = root
        self.root = str(root)

    def paths(self, tenant: str) -> TenantPaths:
        return TenantPaths(self.path / tenant)

    def prepare(self) -> None:
        self.path.mkdir(parents=True, exist_ok=True)

    def memory_home(self, tenant: str) -> str:
        return str(self.paths(tenant).memory)

    def has_memory(self, tenant: str) -> bool:
        return self.paths(tenant).memory.is_dir()

    def write_conversation(self, tenant: str, conversation_id: str, lines: list[str]) -> None:
        write_atomic(self.paths(tenant).conversation(conversation_id), lines)

    def delete_conversation(self, tenant: str, conversation_id: str) -> bool:
        try:
            self.paths(tenant).conversation(conversation_id).unlink()
            return True
        except FileNotFoundError:
            return False

    def index_plan(self, tenant: str, conversation_ids: set[str] | None) -> IndexPlan:
        paths = self.paths(tenant)
        if conversation_ids is None:  # the engine's stamps skip unchanged files unread
            return IndexPlan([_index_path(str(paths.src))] if paths.src.is_dir() else [])
        files = [p for p in map(paths.conversation, sorted(conversation_ids)) if p.exists()]
        return IndexPlan([_index_sources(lambda: _read_files(files))] if files else [], size=len(files))

    def write_stamp(self, tenant: str, stamp: int | None) -> None:
        write_stamp(self.paths(tenant).stamp, stamp)

    def stale(self, tenant: str) -> set[str] | None:
        paths = self.paths(tenant)
        for tmp in paths.src.glob(".*.tmp"):  # a write cut short by a kill; its rename never happened
            tmp.unlink(missing_ok=True)
        return stale_conversations(paths.src, read_stamp(paths.stamp))

    def has_sources(self, tenant: str) -> bool:
        return any(self.paths(tenant).src.glob(f"*{SUFFIX}"))

    def tenants(self) -> Iterator[str]:
        if not self.path.is_dir():
            return
        for root in sorted(self.path.iterdir()):
            if _TENANT_RE.fullmatch(root.name) and (root / "src").is_dir():
                yield root.name

    def conversations(self, tenant: str) -> Iterator[tuple[str, list[str]]]:
        files = sorted(self.paths(tenant).src.glob(f"*{SUFFIX}"))
        for path, lines in _read_files(files):
            yield Path(path).name[: -len(SUFFIX)], lines

    def erase(self, tenant: str) -> bool:
        root = self.paths(tenant).root
        if not root.exists():
            return False
        shutil.rmtree(root)  # unlinked: the memory (a local home keeps its state inside) and the sources
        return True


def _index_path(path: str) -> IndexStep:
    return lambda engine: engine.index(path)


def _index_sources(sources: Callable[[], Iterator[tuple[str, list[str]]]]) -> IndexStep:
    """One engine run over many sources (one commit and one index refresh, not one per conversation: a burst
    of 150 conversations took 70 s on S3 one by one)."""
    return lambda engine: engine.index_lines(sources())


def _read_files(files: list[Path]) -> Iterator[tuple[str, list[str]]]:
    for f in files:
        try:
            text = f.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:  # forgotten since the run was planned
            continue
        # A last line without its newline is still being appended (the proxy's archive grows in place): it is
        # left for the run its writer scheduled, as the engine's own file reader does.
        yield str(f), text.split("\n")[:-1]


def write_atomic(path: Path, lines: list[str]) -> None:
    """Write to a temporary file beside `path`, fsync, rename: a reader sees the old file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            for line in lines:
                f.write(line)
                f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def read_stamp(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None


def write_stamp(path: Path, stamp: int | None) -> None:
    if stamp is None:
        path.unlink(missing_ok=True)
        return
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(str(stamp))
    tmp.replace(path)


def stale_conversations(src: Path, stamp: int | None) -> set[str] | None:
    """Conversations in `src` not known to be indexed: None means 'all of them' (no stamp)."""
    if stamp is None:
        return None
    stale = set()
    for p in src.glob(f"*{SUFFIX}"):
        try:
            if p.stat().st_mtime_ns >= stamp:
                stale.add(p.name[: -len(SUFFIX)])
        except FileNotFoundError:  # forgotten meanwhile
            pass
    return stale


# --- S3-compatible object storage -----------------------------------------------------------------------

class S3Data(TenantData):
    shared = True

    def __init__(self, uri: str) -> None:
        bucket, _, prefix = uri.removeprefix("s3://").strip("/").partition("/")
        if not bucket:
            raise ValueError(f"{uri}: no bucket (expected s3://bucket/prefix)")
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self.root = f"s3://{bucket}/{self.prefix}" if self.prefix else f"s3://{bucket}"
        self._client = s3_client()
        # A memory once seen stays (forget removes rows, never the dataset): no request per recall for it.
        self._memories: set[str] = set()

    def key(self, *parts: str) -> str:
        return "/".join(p for p in (self.prefix, *parts) if p)

    def _conversation_key(self, tenant: str, conversation_id: str) -> str:
        return self.key(tenant, "src", f"{conversation_id}{SUFFIX}")

    def prepare(self) -> None:
        # Fails at start-up, with the store's own reason, on a wrong endpoint, bucket or credentials.
        self._client.list_objects_v2(Bucket=self.bucket, Prefix=self.key(""), MaxKeys=1)

    def memory_home(self, tenant: str) -> str:
        return f"s3://{self.bucket}/{self.key(tenant, 'memory')}"

    def has_memory(self, tenant: str) -> bool:
        if tenant in self._memories:
            return True
        r = self._client.list_objects_v2(Bucket=self.bucket, Prefix=self.key(tenant, "memory") + "/", MaxKeys=1)
        if r.get("KeyCount", 0) > 0:
            self._memories.add(tenant)
            return True
        return False

    def write_conversation(self, tenant: str, conversation_id: str, lines: list[str]) -> None:
        body = "".join(f"{line}\n" for line in lines).encode("utf-8")
        self._client.put_object(Bucket=self.bucket, Key=self._conversation_key(tenant, conversation_id), Body=body)
        # After the source, never before: a run that lists this marker then reads the source it announces.
        marker = self.key(tenant, "pending", f"{conversation_id}.{uuid.uuid4().hex}")
        self._client.put_object(Bucket=self.bucket, Key=marker, Body=b"")

    def delete_conversation(self, tenant: str, conversation_id: str) -> bool:
        key = self._conversation_key(tenant, conversation_id)
        existed = self._head(key) is not None
        self._client.delete_object(Bucket=self.bucket, Key=key)
        for marker in self._pending(tenant).get(conversation_id, []):  # their names hold the id
            self._client.delete_object(Bucket=self.bucket, Key=marker)
        return existed

    def _head(self, key: str) -> dict[str, Any] | None:
        from botocore.exceptions import ClientError  # type: ignore[import-untyped]

        try:
            return self._client.head_object(Bucket=self.bucket, Key=key)  # type: ignore[no-any-return]
        except ClientError as e:
            if e.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
                return None
            raise

    def _sources(self, tenant: str) -> Iterator[tuple[str, float]]:
        """(conversation id, last modified as epoch seconds) of every source object of the tenant."""
        prefix = self.key(tenant, "src") + "/"
        for page in self._client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix):
            for obj in page.get("Contents", []):
                name = obj["Key"][len(prefix):]
                if name.endswith(SUFFIX) and "/" not in name:
                    yield name[: -len(SUFFIX)], obj["LastModified"].timestamp()

    def _pending(self, tenant: str) -> dict[str, list[str]]:
        """{conversation id: its markers' keys} of the writes no index run has completed."""
        prefix = self.key(tenant, "pending") + "/"
        out: dict[str, list[str]] = {}
        for page in self._client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix):
            for obj in page.get("Contents", []):
                cid, dot, _token = obj["Key"][len(prefix):].rpartition(".")
                if dot and cid:
                    out.setdefault(cid, []).append(obj["Key"])
        return out

    def index_plan(self, tenant: str, conversation_ids: set[str] | None) -> IndexPlan:
        pending = self._pending(tenant)  # before any source is read (see the module doc)
        if conversation_ids is None:
            ids = {c for c, _ in self._sources(tenant)} | set(pending)
        else:
            ids = conversation_ids | set(pending)
        markers = [k for keys in pending.values() for k in keys]

        def done() -> None:
            for i in range(0, len(markers), 1000):  # DeleteObjects takes up to 1,000 keys
                batch = [{"Key": k} for k in markers[i:i + 1000]]
                self._client.delete_objects(Bucket=self.bucket, Delete={"Objects": batch, "Quiet": True})

        steps = [_index_sources(lambda: self._read_objects(tenant, sorted(ids)))] if ids else []
        return IndexPlan(steps, done, size=len(ids))

    def _read_objects(self, tenant: str, ids: list[str]) -> Iterator[tuple[str, list[str]]]:
        from botocore.exceptions import ClientError  # type: ignore[import-untyped]

        for cid in ids:
            key = self._conversation_key(tenant, cid)
            try:
                body = self._client.get_object(Bucket=self.bucket, Key=key)["Body"].read()
            except ClientError as e:
                if e.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
                    continue  # forgotten since the run was planned
                raise
            yield f"s3://{self.bucket}/{key}", body.decode("utf-8", errors="replace").splitlines()

    def write_stamp(self, tenant: str, stamp: int | None) -> None:
        pass  # the markers say what is unindexed (module doc)

    def stale(self, tenant: str) -> set[str] | None:
        return set(self._pending(tenant))

    def has_sources(self, tenant: str) -> bool:
        r = self._client.list_objects_v2(Bucket=self.bucket, Prefix=self.key(tenant, "src") + "/", MaxKeys=1)
        return r.get("KeyCount", 0) > 0

    def tenants(self) -> Iterator[str]:
        # Shared roots recover a tenant when a replica opens it: listing every tenant of a bucket at each
        # replica's start would cost O(tenants) requests per start.
        return iter(())

    def conversations(self, tenant: str) -> Iterator[tuple[str, list[str]]]:
        for key, lines in self._read_objects(tenant, sorted(c for c, _ in self._sources(tenant))):
            yield key.rsplit("/", 1)[-1][: -len(SUFFIX)], lines

    def erase(self, tenant: str) -> bool:
        prefix = self.key(tenant) + "/"
        keys = [obj["Key"] for page in self._client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix)
                for obj in page.get("Contents", [])]  # fmt: skip
        for i in range(0, len(keys), 1000):  # DeleteObjects takes up to 1,000 keys
            batch = [{"Key": k} for k in keys[i:i + 1000]]
            self._client.delete_objects(Bucket=self.bucket, Delete={"Objects": batch, "Quiet": True})
        self._memories.discard(tenant)
        state = remote_state_dir(self.memory_home(tenant))
        had_state = state.exists()
        shutil.rmtree(state, ignore_errors=True)
        return bool(keys) or had_state


def remote_state_dir(uri: str) -> Path:
    """This machine's directory for the lock and index state of the memory at `uri`, as the engine names it
    (rust/src/engine/mod.rs `resolve_home`, rust/src/home.rs `state_name`: keep the three in step)."""
    import hashlib

    def env(name: str) -> str | None:
        return os.environ.get(name) or None

    if (state := env("FUNES_STATE_DIR")) is not None:
        root = Path(state)
    elif (xdg := env("XDG_STATE_HOME")) is not None:
        root = Path(xdg) / "funes_py" / "remote"
    elif (home := env("HOME")) is not None:
        root = Path(home) / ".local" / "state" / "funes_py" / "remote"
    else:
        root = Path(tempfile.gettempdir()) / "funes_py-state"
    uri = uri.rstrip("/")
    tail = "".join(c for c in uri.rsplit("/", 1)[-1] if (c.isascii() and c.isalnum()) or c in "-_.")[:40]
    return root / f"{tail}-{hashlib.sha1(uri.encode('utf-8')).digest()[:8].hex()}"


def s3_client() -> Any:
    """A boto3 S3 client configured as Lance's object store is (see the module doc)."""
    try:
        import boto3  # type: ignore[import-untyped]
        from botocore.config import Config  # type: ignore[import-untyped]
    except ImportError:
        raise RuntimeError("FUNES_DATA on s3:// needs boto3: pip install 'funes_py[s3]'") from None
    style = "virtual" if os.environ.get("AWS_VIRTUAL_HOSTED_STYLE_REQUEST", "").lower() in ("1", "true") else "path"
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
    endpoint = os.environ.get("AWS_ENDPOINT_URL") or os.environ.get("AWS_ENDPOINT") or None
    config = Config(s3={"addressing_style": style}, retries={"max_attempts": 5, "mode": "standard"}, read_timeout=READ_TIMEOUT_S,
                    max_pool_connections=32)
    client = boto3.session.Session().client("s3", region_name=region, endpoint_url=endpoint, config=config)
    # No `Expect: 100-continue` on uploads. Our bodies are small (a conversation, a marker), so waiting for
    # the server's go-ahead saves nothing; and a server that answers an empty body at once without a 100
    # (SeaweedFS does) leaves urllib3's connection out of step, so the next request on it hung for the 60 s
    # read timeout.
    from botocore.handlers import add_expect_header  # type: ignore[import-untyped]

    client.meta.events.unregister("before-call.s3", add_expect_header)
    return client

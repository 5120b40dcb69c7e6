"""Weight fingerprints, remembered per file so that resolving a model does not re-hash it in every process.

`fingerprint_of(files)` is `manifest.fingerprint(files)` (SHA-256 of the bytes, 16 hex), memoised in
`<models dir>/fingerprints.json` under the files' resolved paths and their (size, mtime_ns, ctime_ns, inode).
Hashing the packaged MiniLM's 90 MB costs ~0.1 s; a `funes-py recall` process per call must not pay that.

Correctness: a rewritten file changes its mtime or size; ctime and inode are in the key too, because they
change on any write or replacement and, unlike mtime, cannot be set back (`touch -d`, `cp -p`). A file that
changes while it is being hashed is not remembered (stat before and after must agree). The sidecar is a
cache: unreadable or corrupt means "hash again", and a models dir we cannot write only loses the speed-up.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Sequence
from pathlib import Path

from . import cache
from .manifest import fingerprint

SIDECAR = "fingerprints.json"
# Entries kept; old ones go first. One per model weight file a user has resolved: a handful in practice.
MAX_ENTRIES = 64


def _stat(f: Path) -> list[int]:
    st = f.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _read(path: Path) -> dict:
    try:
        memo = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return memo if isinstance(memo, dict) else {}


def _write(path: Path, memo: dict) -> None:
    """Atomic replace (a concurrent reader sees the old or the new file); a lost concurrent update only
    means one more hash later."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        tmp.write_text(json.dumps(memo, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass


def fingerprint_of(files: Sequence[str | Path]) -> str:
    """The fingerprint of `files` (in the order given), from the sidecar when the files are unchanged."""
    paths = [Path(f).resolve() for f in files]
    key = "\n".join(map(str, paths))
    before = [_stat(p) for p in paths]
    sidecar = cache.models_dir() / SIDECAR
    hit = _read(sidecar).get(key)
    if isinstance(hit, dict) and hit.get("stat") == before and isinstance(hit.get("fingerprint"), str):
        return hit["fingerprint"]
    fp = fingerprint(paths)
    if [_stat(p) for p in paths] == before:
        memo = _read(sidecar)  # re-read: another process may have added entries meanwhile
        memo.pop(key, None)
        memo[key] = {"stat": before, "fingerprint": fp}
        _write(sidecar, dict(list(memo.items())[-MAX_ENTRIES:]))
    return fp

"""Where the one-person sync stopped in each file: ``<home>/sync-state.json``.

Per file (its canonical key): the format it was read as, its change stamp (size and mtime) when it was last
read, and for a format that resumes (``sources.tail``) where that read stopped. Also the sessions a skip
marker keeps out. Written only after the engine committed what was read, by a write to a temporary file and a
rename, so a kill at any moment leaves the previous state or the new one, whole: the next pass at worst reads
again lines already stored, which the engine skips by their turn id (nothing is indexed twice)."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from pathlib import Path
from typing import Any

from ..sources.tail import Tail

log = logging.getLogger("funes_py.personal")

STATE_NAME = "sync-state.json"
VERSION = 1


@dataclasses.dataclass
class FileState:
    format: str | None  # None: no format recognised it (read again only when it changes)
    signature: str
    tail: Tail | None = None


@dataclasses.dataclass
class Cursors:
    path: Path
    files: dict[str, FileState] = dataclasses.field(default_factory=dict)
    skipped: set[str] = dataclasses.field(default_factory=set)

    @classmethod
    def load(cls, home: Path) -> Cursors:
        path = home / STATE_NAME
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls(path)
        except (OSError, ValueError) as e:
            # Never half-written (see save); a hand-edited or foreign file: start over, which re-reads every file
            # and stores nothing twice.
            log.warning("%s is unreadable (%s): every source file is read again", path, e)
            return cls(path)
        files: dict[str, FileState] = {}
        for key, f in (raw.get("files") or {}).items():
            if isinstance(f, dict) and isinstance(f.get("signature"), str):
                tail = Tail.from_json(f["tail"]) if f.get("tail") else None
                files[key] = FileState(f.get("format"), f["signature"], tail)
        return cls(path, files, set(raw.get("skipped") or ()))

    def save(self) -> None:
        data: dict[str, Any] = {
            "version": VERSION,
            "files": {
                k: {"format": f.format, "signature": f.signature, **({"tail": f.tail.to_json()} if f.tail else {})}
                for k, f in sorted(self.files.items())
            },
            "skipped": sorted(self.skipped),
        }
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f, ensure_ascii=False, separators=(",", ":"))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)

"""One tenant's archive: every message verbatim, one `.funes.jsonl` line each, and an index of it in memory.

Layout: `DATA/<tenant>/src/<conversation>.funes.jsonl`, the source the tenant's funes_py memory indexes.
A line is a funes turn (`session_id` = conversation, `turn_uuid` = message id, `seq` = the line's number in
the file, so ids are unique and `seq` is arrival order) plus a `proxy` object the engine ignores: the
message's position in the client's history, its chain hash, the tool and command behind an output.

Durability: `append` writes whole lines (one write call) without waiting for the disk; `sync` makes every
line written so far durable (fsync). The invariant is the caller's: nothing is hidden from the model before
`sync` has returned for its line. A crash can leave a torn last line that was never synced (and so never
relied on); `open` cuts it off. Resending a history appends nothing: lines are keyed by message id.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger("funes_py.proxy")

SUFFIX = ".funes.jsonl"
HARNESS = "proxy"


@dataclass(frozen=True)
class Record:
    """A message to archive. `position`: its index in the client's history (None for internal rounds)."""

    mid: str
    role: str
    blocks: list[dict[str, Any]]
    kind: str = "message"  # "message" (the client's), "internal" (a recall round), "notes" (handoff notes)
    position: int | None = None
    chain: str | None = None
    tool: str | None = None
    origin: str | None = None


@dataclass(frozen=True)
class Entry:
    """Where an archived message is, and what a receipt or a recall header says about it."""

    conversation: str
    offset: int
    length: int
    seq: int
    role: str
    kind: str
    position: int | None
    tool: str | None
    origin: str | None
    chars: int
    ts: str


@dataclass
class _File:
    path: Path
    size: int = 0
    lines: int = 0
    dirty: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)  # appends and the dirty flag
    sync_lock: threading.Lock = field(default_factory=threading.Lock)  # one fsync at a time, waited for


def message_text(blocks: Iterable[dict[str, Any]]) -> str:
    """The exact text recall(id) pages over: the blocks' texts, one after another, newline-separated."""
    return "\n".join(str(b.get("text", "")) for b in blocks)


class Archive:
    def __init__(self, src: Path, mask: Any = None) -> None:
        """`mask`: a text -> text function applied before writing (secret masking), or None (verbatim)."""
        self.src = src
        self._mask = mask
        self._files: dict[str, _File] = {}
        self.entries: dict[str, Entry] = {}
        self.chains: dict[str, str] = {}

    # --- loading ----------------------------------------------------------------------------------
    def open(self) -> None:
        """Read every conversation file into the index; cut a torn (never synced) last line."""
        self.src.mkdir(parents=True, exist_ok=True)
        for path in sorted(self.src.glob(f"*{SUFFIX}")):
            self._load(path.name[: -len(SUFFIX)], path)

    def _load(self, conv: str, path: Path) -> None:
        data = path.read_bytes()
        end = data.rfind(b"\n") + 1
        if end < len(data):
            log.warning("%s: cutting a torn last line (%d bytes) left by a crash", path, len(data) - end)
            with open(path, "r+b") as torn:
                torn.truncate(end)
                os.fsync(torn.fileno())
        f = _File(path, size=end)
        offset = 0
        for n, raw in enumerate(data[:end].split(b"\n")[:-1]):
            try:
                row = json.loads(raw)
                self._index(conv, row, offset, len(raw))
            except (ValueError, KeyError, TypeError) as e:
                log.warning("%s line %d: not an archive line, skipped: %s", path, n + 1, e)
            offset += len(raw) + 1
            f.lines = n + 1
        self._files[conv] = f

    def _index(self, conv: str, row: dict[str, Any], offset: int, length: int) -> None:
        meta = row.get("proxy") or {}
        blocks = row["blocks"]
        self.entries[row["turn_uuid"]] = Entry(
            conv, offset, length, int(row["seq"]), row["role"], meta.get("kind", "message"), meta.get("pos"),
            meta.get("tool"), meta.get("origin"), len(message_text(blocks)), row["ts"],
        )  # fmt: skip
        if meta.get("chain"):
            self.chains[meta["chain"]] = conv

    # --- writing ----------------------------------------------------------------------------------
    def append(self, conv: str, records: Iterable[Record]) -> list[str]:
        """Append the records whose ids are not archived yet (one write); returns the new ids."""
        f = self._file(conv)
        with f.lock:
            ts = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            lines: list[bytes] = []
            new: list[tuple[Record, dict[str, Any]]] = []
            seen: set[str] = set()
            for r in records:
                if r.mid in self.entries or r.mid in seen:
                    continue
                seen.add(r.mid)
                row = self._row(conv, r, f.lines + len(lines), ts)
                lines.append(json.dumps(row, ensure_ascii=False).encode("utf-8", "surrogatepass"))
                new.append((r, row))
            if not lines:
                return []
            data = b"\n".join(lines) + b"\n"
            fd = os.open(f.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                written = os.write(fd, data)
                if written != len(data):  # a short write on a full disk: cut it so no torn line stays
                    os.ftruncate(fd, f.size)
                    raise OSError(f"short write to {f.path}: {written} of {len(data)} bytes")
            finally:
                os.close(fd)
            offset = f.size
            for (_r, row), raw in zip(new, lines, strict=True):
                self._index(conv, row, offset, len(raw))
                offset += len(raw) + 1
            f.size = offset
            f.lines += len(lines)
            f.dirty = True
            return [r.mid for r, _ in new]

    def _row(self, conv: str, r: Record, seq: int, ts: str) -> dict[str, Any]:
        blocks = r.blocks
        if self._mask is not None:
            blocks = [{**b, "text": self._mask(b["text"])} for b in blocks]
        meta: dict[str, Any] = {"kind": r.kind}
        if r.position is not None:
            meta["pos"] = r.position
        if r.chain:
            meta["chain"] = r.chain
        if r.tool:
            meta["tool"] = r.tool
        if r.origin:
            meta["origin"] = r.origin
        return {"session_id": conv, "turn_uuid": r.mid, "seq": seq, "ts": ts, "role": r.role,
                "harness": HARNESS, "blocks": blocks, "proxy": meta}  # fmt: skip

    def sync(self, conv: str) -> None:
        """Make every line written so far for `conv` durable (fsync). Safe from any thread."""
        f = self._files.get(conv)
        if f is None:
            return
        # A second caller waits for the fsync in flight: returning early would claim durability too soon.
        with f.sync_lock:
            with f.lock:
                if not f.dirty:
                    return
                f.dirty = False
            fd = os.open(f.path, os.O_RDONLY)
            try:
                os.fsync(fd)
            except BaseException:
                f.dirty = True
                raise
            finally:
                os.close(fd)

    def dirty(self) -> list[str]:
        return [c for c, f in self._files.items() if f.dirty]

    def _file(self, conv: str) -> _File:
        f = self._files.get(conv)
        if f is None:
            self.src.mkdir(parents=True, exist_ok=True)
            f = self._files[conv] = _File(self.src / f"{conv}{SUFFIX}")
        return f

    # --- reading ----------------------------------------------------------------------------------
    def path(self, conv: str) -> Path:
        return self.src / f"{conv}{SUFFIX}"

    def has(self, conv: str) -> bool:
        return conv in self._files

    def row(self, mid: str) -> dict[str, Any] | None:
        """The archived line of a message id, parsed, or None."""
        e = self.entries.get(mid)
        if e is None:
            return None
        fd = os.open(self._files[e.conversation].path, os.O_RDONLY)
        try:
            raw = os.pread(fd, e.length, e.offset)
        finally:
            os.close(fd)
        row: dict[str, Any] = json.loads(raw)
        return row

    def text(self, mid: str) -> str | None:
        row = self.row(mid)
        return None if row is None else message_text(row["blocks"])

    # --- forgetting -------------------------------------------------------------------------------
    def forget(self, conv: str) -> bool:
        """Delete a conversation's file and its index entries; True when there was one."""
        f = self._files.pop(conv, None)
        for mid in [m for m, e in self.entries.items() if e.conversation == conv]:
            del self.entries[mid]
        for h in [h for h, c in self.chains.items() if c == conv]:
            del self.chains[h]
        path = f.path if f is not None else self.path(conv)
        try:
            path.unlink()
            return True
        except FileNotFoundError:
            return f is not None

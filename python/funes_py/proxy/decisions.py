"""The decisions the proxy took for a conversation, stored by message id and replayed on every later request.

File: `DATA/<tenant>/state/<conversation>.jsonl`, append-only, one decision a line, fsynced before the request
that acts on it goes out (so a restart replays exactly what the engine already saw). Kinds:

    mask     {"ids": {message id: receipt}}        a batch of tool outputs hidden behind receipts
    insert   {"id": mid, "messages": [...]}        the client's assistant message `mid` is, for the engine,
                                                   these messages (internal recall rounds + the final one)
    auto     {"id": mid, "text": "..."}            auto-recall's line appended to user message `mid` ("" = none)
    segment  {"n": N, "cut": i, "cut_id": mid, "head": [...]}
                                                   from position i on, the prompt is head + the history
    scale    {"v": x}                              token-estimate calibration
    slot     {"file": ..., "count": n, "digest": ..., "tokens": t}
                                                   a saved llama-server slot holding the first n physical
                                                   messages (digest) of a prompt

A torn last line (a crash mid-write, never synced) is cut when the file is read.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger("funes_py.proxy")


@dataclass(frozen=True)
class Segment:
    number: int
    cut: int  # position in the client's history where the verbatim tail starts
    cut_id: str  # the id of the message there (a history that differs there does not map into this segment)
    head: list[dict[str, Any]]


@dataclass(frozen=True)
class SlotSave:
    file: str
    count: int  # physical messages the saved state covers
    digest: str  # of those messages
    tokens: int


@dataclass
class ConversationState:
    path: Path
    masks: dict[str, str] = field(default_factory=dict)
    inserts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    autos: dict[str, str] = field(default_factory=dict)
    segments: list[Segment] = field(default_factory=list)
    scale: float | None = None
    slots: dict[str, SlotSave] = field(default_factory=dict)  # file -> save

    @classmethod
    def load(cls, path: Path) -> ConversationState:
        st = cls(path)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return st
        end = data.rfind(b"\n") + 1
        if end < len(data):
            log.warning("%s: cutting a torn last line left by a crash", path)
            with open(path, "r+b") as f:
                f.truncate(end)
                os.fsync(f.fileno())
        for n, raw in enumerate(data[:end].splitlines()):
            try:
                st._apply(json.loads(raw))
            except (ValueError, KeyError, TypeError) as e:
                log.warning("%s line %d: not a decision, skipped: %s", path, n + 1, e)
        return st

    def _apply(self, rec: dict[str, Any]) -> None:
        kind = rec["k"]
        if kind == "mask":
            self.masks.update(rec["ids"])
        elif kind == "insert":
            self.inserts[rec["id"]] = rec["messages"]
        elif kind == "auto":
            self.autos[rec["id"]] = rec["text"]
        elif kind == "segment":
            self.segments.append(Segment(rec["n"], rec["cut"], rec["cut_id"], rec["head"]))
        elif kind == "scale":
            self.scale = float(rec["v"])
        elif kind == "slot":
            self.slots[rec["file"]] = SlotSave(rec["file"], rec["count"], rec["digest"], rec["tokens"])
        else:
            raise KeyError(f"unknown decision kind {kind!r}")

    def record(self, rec: dict[str, Any], durable: bool = True) -> None:
        """Apply a decision and append it; `durable`: fsync before returning (the default: a decision is
        acted on right after, and must replay after a crash)."""
        line = (json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8", "surrogatepass")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            written = os.write(fd, line)
            if written != len(line):
                raise OSError(f"short write to {self.path}")
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        self._apply(rec)

    def segment_for(self, ids: list[str]) -> Segment | None:
        """The latest segment this history maps into: its cut message is where the segment says."""
        for seg in reversed(self.segments):
            if seg.cut < len(ids) and ids[seg.cut] == seg.cut_id:
                return seg
        return None

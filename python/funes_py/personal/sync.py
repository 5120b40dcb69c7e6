"""One pass of the one-person sync: every source file that changed since the last pass, read from where that
pass stopped, privacy applied, indexed, and only then its cursor moved.

Files come from the configured roots (``PersonalConfig.roots``) or, for the watcher, the paths it saw
change. A file an exclude glob matches is never opened. A format that resumes (Claude Code, Codex, Cursor:
``sources.tail``) is read from its last offset; any other (``.funes.jsonl``, an export) is read whole when its
change stamp moves, and the engine skips what it already holds. Work is committed in batches of at most
``batch_mb`` (``personal.toml``) of new file content, each followed by its cursors, so a kill in a long backfill loses at most
the batch under way, which the next pass reads again (turns already stored are skipped by id)."""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..sources.common import Source, Unit
from ..sources.detect import sniff
from ..sources.discover import READ_ERRORS, UNPLACED, WALKED_SUFFIXES, units
from ..sources.registry import get
from ..sources.tail import Tail, read_from
from .config import PersonalConfig
from .cursors import Cursors, FileState
from .privacy import Privacy

if TYPE_CHECKING:
    from ..engine import Engine

log = logging.getLogger("funes_py.personal")

@dataclasses.dataclass
class SyncReport:
    files_seen: int = 0
    files_read: int = 0
    files_excluded: int = 0
    turns: int = 0
    chunks_added: int = 0
    turns_withheld: int = 0  # a skip-marked session's, or left with nothing once private spans were cut
    forgotten: list[str] = dataclasses.field(default_factory=list)
    unplaced: list[str] = dataclasses.field(default_factory=list)
    bad: list[tuple[str, int, str]] = dataclasses.field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> str:
        text = (
            f"synced {self.files_read} changed file(s) of {self.files_seen} ({self.files_excluded} excluded): "
            f"{self.turns} turn(s), {self.chunks_added} new chunk(s) in {self.seconds:.1f}s"
        )
        if self.turns_withheld:
            text += f"; {self.turns_withheld} turn(s) withheld (skip marker or private)"
        if self.forgotten:
            text += f"; forgot {len(self.forgotten)} skip-marked session(s)"
        return text


def sync(engine: Engine, config: PersonalConfig, paths: Iterable[Path] | None = None) -> SyncReport:
    """One pass over ``paths`` (the files the watcher saw change) or over every file under the configured
    roots. Returns what it did; bad records and files no format reads are in the report with their place."""
    t0 = time.perf_counter()
    report = SyncReport()
    cursors = Cursors.load(config.home)
    privacy = Privacy(config.skip_marker, config.private_tag)
    batch: list[tuple[Unit, str]] = []  # a file and its change stamp, taken before it is read
    size = 0
    for unit in _candidates(config, paths, report):
        try:
            sig = unit.signature()
        except OSError:
            continue  # gone since it was listed
        known = cursors.files.get(unit.key)
        if known is not None and known.signature == sig:
            continue
        batch.append((unit, sig))
        size += max(int(sig.split(":", 1)[0]) - (known.tail.offset if known and known.tail else 0), 0)
        if size >= config.batch_mb * (1 << 20):
            _run(engine, batch, cursors, privacy, report)
            batch, size = [], 0
    if batch:
        _run(engine, batch, cursors, privacy, report)
    report.seconds = time.perf_counter() - t0
    return report


def _candidates(config: PersonalConfig, paths: Iterable[Path] | None, report: SyncReport) -> Iterator[Unit]:
    if paths is None:
        listed: list[Unit] = []
        for root in config.roots():
            try:
                listed.extend(units(root))
            except FileNotFoundError:
                log.info("source %s does not exist (yet)", root)
    else:
        listed = [Unit(Path(p)) for p in paths if str(p).endswith(WALKED_SUFFIXES) and Path(p).is_file()]
    for unit in listed:
        report.files_seen += 1
        if config.excluded(unit.key) or config.excluded(unit.path):
            report.files_excluded += 1
            continue
        yield unit


def _run(engine: Engine, batch: list[tuple[Unit, str]], cursors: Cursors, privacy: Privacy, report: SyncReport) -> None:
    """Reads and indexes one batch, then moves its cursors."""
    states: dict[str, FileState] = {}
    marked: set[str] = set()

    def items() -> Iterator[tuple[str, None, list[tuple[int, str]], list[tuple[int, str]]]]:
        for unit, sig in batch:
            for source in _read(unit, sig, cursors.files.get(unit.key), states, report):
                lines = []
                for place, line in source.lines or []:
                    row = json.loads(line)
                    sid = str(row.get("session_id", ""))
                    if privacy.marked(line) and sid not in cursors.skipped:
                        marked.add(sid)
                    kept = None if sid in cursors.skipped or sid in marked else privacy.keep(line, row)
                    if kept is None:
                        report.turns_withheld += 1
                    else:
                        lines.append((place, kept))
                report.bad.extend((unit.key, place, why) for place, why in source.bad)
                report.turns += len(lines)
                yield unit.key, None, lines, []

    if engine.choice.open:  # a new memory: its first texts choose its model (funes_py.choice)
        engine.choose_model(batch[0][0].path)
    result = engine._inner.index_sources(items(), 0, None)
    report.chunks_added += result.chunks_added
    report.files_read += len(batch)
    for sid in sorted(marked):
        # A session stored before its marker was written: forgotten now, and kept out from here on.
        if engine.forget(sid).found:
            report.forgotten.append(sid)
        cursors.skipped.add(sid)
    cursors.files.update(states)
    cursors.save()


def _read(unit: Unit, sig: str, known: FileState | None, states: dict[str, FileState], report: SyncReport) -> Iterator[Source]:
    """The new lines of one file, whose change stamp before reading was ``sig`` (lines appended meanwhile make
    the next pass read again); its next state goes to ``states`` (saved after the commit)."""
    try:
        fmt_name = known.format if known is not None else None
        fmt = get(fmt_name) if fmt_name else sniff(unit).format
        if fmt is None:
            report.unplaced.append(unit.key)
            report.bad.append((unit.key, 0, UNPLACED))
            states[unit.key] = FileState(None, sig)
            return
        if fmt.reader is not None and unit.member is None:
            source, tail = read_from(unit, fmt.reader, known.tail if known and known.tail else Tail())
            states[unit.key] = FileState(fmt.name, sig, tail)
            yield source
            return
        yield from fmt.read(unit)
        states[unit.key] = FileState(fmt.name, sig)
    except READ_ERRORS as e:
        report.bad.append((unit.key, 0, f"unreadable: {e}"))

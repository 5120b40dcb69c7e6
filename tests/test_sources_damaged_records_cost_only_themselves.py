"""A damaged record costs only itself, in every format, on the real engine and a Lance memory on disk: a file
whose first record is cut off, with a record nested 5,000 deep and one over the record limit between its good
records, has every good record indexed and each bad one reported with its place; `funes-py index` prints every
place, and names each file it could not place or read."""

from __future__ import annotations

import os
import zipfile

import pytest

from funes_py.cli import main
from sources_helpers import (
    BROKEN_FIRST,
    DEEP,
    LONG,
    SAMPLE_TURNS,
    SAMPLES,
    damaged_copy,
    damaged_places,
)  # fmt: skip

pytestmark = pytest.mark.models

LIMIT = 64 * 1024  # FUNES_MAX_RECORD_BYTES for these tests: the long record is 100 KB, not 40 MB
# A passage from a good record after the damage (the sample's last turns), per format.
AFTER = {
    "claude-code": ("overcurrent trips on phase B in the pump log", "41.7A"),
    "codex": ("patch fetch_tariffs with retry_with_backoff", "retry_with_backoff"),
    "cursor": ("the disabled prop reads couponPending", "couponPending"),
    "funes": ("when is the dentist booked", "Halvorsen"),
    "chatgpt": ("rye sourdough spreads flat, hydration too high", "68%"),
    "claude-ai": ("11-speed chain skips on the smallest cogs", "chain"),
}


@pytest.fixture
def limit(monkeypatch):
    monkeypatch.setenv("FUNES_MAX_RECORD_BYTES", str(LIMIT))


@pytest.fixture
def engine(models, tmp_path):
    from funes_py import Engine

    return Engine(tmp_path / "memory", models=models, resident=False)


def why(fmt: str, place: int) -> str:
    """What the report must say of each place of the damage."""
    exports = fmt in ("chatgpt", "claude-ai")
    if place == BROKEN_FIRST:
        return "invalid JSON" if exports else ("EOF while parsing" if fmt == "funes" else "invalid JSON")
    if place == DEEP:
        return "invalid type: sequence" if fmt == "funes" else "nested too deeply"  # the engine's parser, or ours
    return f"over the limit of {LIMIT:,} for one record (FUNES_MAX_RECORD_BYTES)"


@pytest.mark.parametrize("fmt", list(SAMPLES))
def test_every_good_record_is_indexed_and_each_bad_one_reported_with_its_place(engine, tmp_path, limit, fmt):
    p = damaged_copy(fmt, tmp_path / "src", long_size=100_000)
    report = engine.index(tmp_path / "src")
    assert report.turns == SAMPLE_TURNS[fmt], report
    assert sorted(b.line for b in report.bad_lines) == damaged_places(fmt), report.bad_lines
    assert {b.file for b in report.bad_lines} == {os.path.realpath(p)} and report.unreadable == []
    reasons = {b.line: b.reason for b in report.bad_lines}
    for place in (BROKEN_FIRST, DEEP, LONG):
        assert why(fmt, place) in reasons[place], (place, reasons[place])
    query, needle = AFTER[fmt]
    hits = engine.recall(query, k=3, neighbors=0, half_life_days=0)
    assert any(needle in h.text for h in hits), [h.text[:80] for h in hits]
    # The file was read to its end, so it is recorded as indexed; the next run does not read it again.
    again = engine.index(tmp_path / "src")
    assert (again.chunks_added, again.files_unchanged) == (0, 1)


def test_the_cli_prints_every_place_and_names_the_files_it_could_not_read(tmp_path, limit, capsys):
    src = tmp_path / "histories"
    paths = {fmt: damaged_copy(fmt, src, long_size=100_000) for fmt in SAMPLES if fmt != "chatgpt"}
    # The ChatGPT export as its zip, with the companion file every export holds.
    with zipfile.ZipFile(src / "chatgpt-export.zip", "w", zipfile.ZIP_DEFLATED) as z:
        z.write(damaged_copy("chatgpt", tmp_path / "staging", long_size=100_000), "conversations.json")
        z.writestr("user.json", '{"id": "user-x"}')
    (src / "notes.json").write_text('{"hello": "world"}\n')
    (src / "empty.jsonl").write_text("")
    assert main(["--home", str(tmp_path / "memory"), "index", str(src)]) == 0
    out, err = capsys.readouterr()
    said = err.splitlines()
    member = f"{os.path.realpath(src / 'chatgpt-export.zip')}!conversations.json"
    expected = {(os.path.realpath(p), n) for fmt, p in paths.items() for n in damaged_places(fmt)}
    expected |= {(member, n) for n in damaged_places("chatgpt")}
    skipped = {(line.split(":", 1)[0].removeprefix("skipped "), int(line.split(":")[1]))
               for line in said if line.startswith("skipped ")}  # fmt: skip
    assert skipped == expected, sorted(skipped ^ expected)
    not_read = sorted(line for line in said if line.startswith("not read "))
    assert [line.split(": ", 1)[0] for line in not_read] == [
        f"not read {os.path.realpath(src / 'chatgpt-export.zip')}!user.json",
        f"not read {os.path.realpath(src / 'notes.json')}",
    ]
    assert all("none of the formats funes-py reads recognises it" in line for line in not_read)
    assert f"{sum(SAMPLE_TURNS.values())} turns" in out
    assert f"{len(expected)} bad lines, 2 files not read" in out

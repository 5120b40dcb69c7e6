"""A growing history file is read from where the last read stopped (issue 38): the resumed reads give exactly
the lines one whole read gives, a line still being written waits for its newline, a file rewritten in place
is read again from its start, and a Codex rollout's session id and project travel in the carry."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from funes_py.sources.common import Unit
from funes_py.sources.registry import get
from funes_py.sources.tail import Tail, read_from, read_whole
from personal_helpers import START, append_turn, record, write_session


def _lines(source) -> list[tuple[int, str]]:
    return list(source.lines)


def test_resumed_reads_give_the_lines_of_one_whole_read(tmp_path: Path):
    reader = get("claude-code").reader
    path = write_session(tmp_path, "/src/pumps", "s1", [("user", "pump P-7 seal"), ("assistant", "replace the seal")])
    first, tail = read_from(Unit(path), reader, Tail())
    assert [json.loads(t)["seq"] for _, t in first.lines] == [0, 1]
    for i in range(3):
        append_turn(path, "s1", "user", f"follow-up {i}", "/src/pumps", START + timedelta(hours=1, minutes=i))
    # a record still being written: no newline yet
    with path.open("a") as f:
        f.write(json.dumps(record("s1", "assistant", "half written", "/src/pumps", START + timedelta(hours=2)))[:40])
    second, tail2 = read_from(Unit(path), reader, tail)
    assert [n for n, _ in second.lines] == [3, 4, 5]
    assert tail2.offset < path.stat().st_size, "the unfinished line is not consumed"
    whole = next(read_whole(Unit(path), reader))
    assert _lines(first) + _lines(second) == [(n, t) for n, t in whole.lines]
    assert [json.loads(t)["seq"] for _, t in second.lines] == [2, 3, 4], "seq goes on from the carry"


def test_a_file_rewritten_in_place_is_read_from_its_start(tmp_path: Path):
    reader = get("claude-code").reader
    path = write_session(tmp_path, "/src/a", "s2", [("user", "first version of this file")] * 3)
    _, tail = read_from(Unit(path), reader, Tail())
    write_session(tmp_path, "/src/a", "s2", [("user", "another text entirely, longer than before")] * 4)
    again, _ = read_from(Unit(path), reader, tail)
    assert [n for n, _ in again.lines] == [1, 2, 3, 4]


def test_a_broken_line_in_the_tail_is_reported_with_its_place_and_costs_only_itself(tmp_path: Path):
    reader = get("claude-code").reader
    path = write_session(tmp_path, "/src/a", "s3", [("user", "one"), ("assistant", "two")])
    _, tail = read_from(Unit(path), reader, Tail())
    with path.open("a") as f:
        f.write("{not json\n")
    append_turn(path, "s3", "user", "after the broken line", "/src/a", START + timedelta(hours=1))
    more, _ = read_from(Unit(path), reader, tail)
    assert [n for n, _ in more.bad] == [3]
    assert [n for n, _ in more.lines] == [4]


def test_a_codex_rollout_keeps_its_session_and_project_across_reads(tmp_path: Path):
    reader = get("codex").reader
    path = tmp_path / "rollout-2026-11-02T09-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"
    ts = "2026-11-02T09:00:00Z"

    def message(role: str, text: str) -> str:
        kind = "input_text" if role == "user" else "output_text"
        return json.dumps({"timestamp": ts, "type": "response_item",
                           "payload": {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}}) + "\n"  # fmt: skip

    meta = {"timestamp": ts, "type": "session_meta", "payload": {"id": "codex-session-9", "cwd": "/src/motors", "timestamp": ts}}
    path.write_text(json.dumps(meta) + "\n" + message("user", "motor M-3 bearing"))
    _, tail = read_from(Unit(path), reader, Tail())
    with path.open("a") as f:
        f.write(message("assistant", "order bearing 6204"))
    more, _ = read_from(Unit(path), reader, Tail.from_json(json.loads(json.dumps(tail.to_json()))))
    row = json.loads(more.lines[0][1])
    assert (row["session_id"], row["workdir"], row["seq"]) == ("codex-session-9", "/src/motors", 1)

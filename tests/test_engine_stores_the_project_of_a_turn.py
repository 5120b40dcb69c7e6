"""A turn's project (its working directory: Claude Code's and Codex's `cwd`) is stored with its chunks, comes
back on each hit as `workdir`, and `RecallOptions.projects` keeps a recall to those projects (exactly), on
both recall paths (a memory written before the column existed gets it when opened: a Rust test,
`store::tests::a_memory_without_a_later_column_gets_it_as_nulls`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytestmark = pytest.mark.models

DATA = Path(__file__).resolve().parent / "data" / "sources"
PUMPCTL = "/home/ana/projects/pumpctl"


def _native(path: Path, session: str, workdir: str | None, text: str) -> None:
    line = {"session_id": session, "turn_uuid": f"{session}-0", "seq": 0, "ts": "2026-10-08T09:14:00Z", "role": "user",
            "harness": "claude-code", "blocks": [{"block_type": "text", "text": text}]}  # fmt: skip
    if workdir is not None:
        line["workdir"] = workdir
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")


def test_a_claude_code_hit_carries_its_project(engine, tmp_path):
    src = tmp_path / "claude"
    shutil.copytree(DATA / "claude_code", src)
    engine.index(src)
    hits = engine.recall("P-7 pump controller overcurrent", k=3, neighbors=0)
    assert hits and {h.workdir for h in hits} == {PUMPCTL}


def test_projects_keep_a_recall_to_those_working_directories(engine, tmp_path):
    _native(tmp_path / "src" / "a.funes.jsonl", "a", "/src/kiln", "The kiln K-047 on line 3 runs hot again.")
    _native(tmp_path / "src" / "b.funes.jsonl", "b", "/src/dryer", "The kiln K-047 was inspected by the dryer team.")
    _native(tmp_path / "src" / "c.funes.jsonl", "c", None, "A chat about the kiln K-047, no project.")
    engine.index(tmp_path / "src")
    everything = {h.session_id for h in engine.recall("kiln K-047", k=5, neighbors=0)}
    assert everything == {"a", "b", "c"}
    only = engine.recall("kiln K-047", k=5, neighbors=0, projects=["/src/kiln"])
    assert [(h.session_id, h.workdir) for h in only] == [("a", "/src/kiln")]
    assert engine.recall("kiln K-047", k=5, neighbors=0, projects=["/src"]) == [], "a project is matched exactly"
    none = [h for h in engine.recall("kiln K-047", k=5, neighbors=0) if h.session_id == "c"]
    assert none and none[0].workdir == ""

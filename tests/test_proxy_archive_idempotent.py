"""Done-when 5: resending the whole history three times leaves the archive's bytes and the memory's row count
unchanged; an edited old message adds exactly one line (message ids are content-and-position hashes)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from proxy_helpers import SYSTEM, TOOLS, Proxy, filler, tool_turn

from funes_py.tenancy.auth import tenant_id
from proxy_double import Reply, ScriptedEngine

pytestmark = pytest.mark.models


def _rows(models, memory: Path) -> int:
    from funes_py import Engine

    return Engine(memory, models, resident=False).status().rows


def _settled(proxy: Proxy, models, memory: Path, timeout: float = 30.0) -> int:
    """The memory's row count once indexing has caught up (two equal readings a debounce apart)."""
    deadline = time.monotonic() + timeout
    last = -1
    while time.monotonic() < deadline:
        time.sleep(1.5)
        rows = _rows(models, memory) if memory.exists() else 0
        if rows == last and rows > 0:
            return rows
        last = rows
    raise AssertionError("indexing did not settle")


def test_resends_add_nothing_and_an_edit_adds_one_line(tmp_path, models):
    data = tmp_path / "data"
    history = [SYSTEM, {"role": "user", "content": "Summarise the three modules."}]
    for i in range(3):
        history += tool_turn(i, "read", {"path": f"m{i}.py"}, filler(i, 2500))
    with ScriptedEngine(16384, script=lambda body, n: Reply(text="Here is the summary.")) as engine:
        with Proxy(data, engine.url) as proxy:
            assert proxy.chat(history, tools=TOOLS).status_code == 200
            root = data / tenant_id("local")
            (src,) = list((root / "src").glob("*.funes.jsonl"))
            rows = _settled(proxy, models, root / "memory")
            before = src.read_bytes()
            assert len(before.splitlines()) == len(history) + 1  # every message, and the answer

            for _ in range(3):
                assert proxy.chat(history, tools=TOOLS).status_code == 200
            assert src.read_bytes() == before, "a resent history changed the archive"
            assert _settled(proxy, models, root / "memory") == rows

            edited = [dict(m) for m in history]
            edited[5] = {**edited[5], "content": edited[5]["content"] + "\n# edited by the user"}
            assert proxy.chat(edited, tools=TOOLS).status_code == 200
            after = src.read_bytes()
            assert after.startswith(before)
            new = after[len(before) :].splitlines()
            assert len(new) == 1, "an edited old message must add exactly one line"
            line = json.loads(new[0])
            assert line["proxy"]["pos"] == 5 and line["blocks"][0]["text"].endswith("# edited by the user")
            assert len(list((root / "src").glob("*.funes.jsonl"))) == 1, "the edit stays in the same conversation"
            assert _settled(proxy, models, root / "memory") > rows
        assert engine.oversize == []

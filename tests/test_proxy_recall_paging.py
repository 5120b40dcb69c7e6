"""Done-when 2: recall(id, offset) pages reassemble a 100 KB output exactly (unicode, CRLF, trailing spaces).

The scripted engine (test double) plays the model: it calls recall(id=…) for the output, then follows each
page's "continues" offset until the end. Every page reaches the engine as a tool result inside the next
round's body; the test takes the pages from the last body and joins their texts."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from proxy_helpers import SYSTEM, TOOLS, Proxy, tool_turn

from funes_py.proxy.recall_tool import page_text
from funes_py.tenancy.auth import tenant_id
from proxy_double import Reply, ScriptedEngine, call

pytestmark = pytest.mark.models

CONTINUES = re.compile(r'\[continues: recall\(id="(m[0-9a-f]+)", offset=(\d+)\)\]$')


def nasty_output(size: int) -> str:
    """Unicode of every width, CRLF and LF endings, trailing spaces and tabs, a lone CR, a BOM."""
    parts = ["\ufeffheader\r\n"]
    i = 0
    while sum(map(len, parts)) < size:
        parts.append(f"{i:05d} naïve café — 東京 🚀 e\u0301 \t trailing   \r\n" if i % 3 else f"{i:05d} plain line  \n")
        if i % 97 == 0:
            parts.append("lone\rcarriage  \n")
        i += 1
    return "".join(parts)[:size] + "  "


def test_pages_reassemble_a_100kb_output_byte_for_byte(tmp_path):
    original = nasty_output(100_000)
    target: dict[str, str] = {}

    def script(body: dict[str, Any], n: int) -> Reply:
        last = body["messages"][-1]
        if last["role"] == "user":
            return Reply(tool_calls=[call("recall", {"id": target["mid"]}, "r0")])
        m = CONTINUES.search(last["content"])
        if m:
            return Reply(tool_calls=[call("recall", {"id": m.group(1), "offset": int(m.group(2))}, f"r{n}")])
        return Reply(text="That is the whole output.")

    history = [SYSTEM, {"role": "user", "content": "Run the report."}, *tool_turn(0, "bash", {"command": "./report"}, original)]
    env = {"FUNES_PROXY_MAX_RECALL_ROUNDS": "40"}
    with ScriptedEngine(131072, script=lambda b, n: Reply(text="ok")) as engine, Proxy(tmp_path / "d", engine.url, env=env) as proxy:
        assert proxy.chat(history, tools=TOOLS).status_code == 200
        src = next((tmp_path / "d" / tenant_id("local") / "src").glob("*.funes.jsonl"))
        rows = [json.loads(line) for line in src.read_text(encoding="utf-8").splitlines()]
        (row,) = [r for r in rows if r["role"] == "tool"]
        assert row["blocks"][0]["text"] == original, "the archive line must hold the output verbatim"
        target["mid"] = row["turn_uuid"]

        engine.script = script
        history += [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "Show me the full report."}]
        resp = proxy.chat(history, tools=TOOLS)
        assert resp.status_code == 200, resp.text
        assert resp.json()["choices"][0]["message"]["content"] == "That is the whole output."
        assert "tool_calls" not in resp.json()["choices"][0]["message"], "internal calls never reach the client"
        assert engine.oversize == []

    final = engine.bodies[-1]["messages"]
    pages = [m["content"] for m in final if m["role"] == "tool" and m["tool_call_id"].startswith("r")]
    assert len(pages) >= 4, "100 KB should take several pages"
    assert pages[-1].endswith("[end of message]")
    assert "".join(page_text(p) for p in pages) == original

"""Auto-recall: on a new user message, hidden outputs that match it are named (`hint`) or quoted (`inject`)
in a line appended to that message; the line is a stored decision, replayed byte for byte on later turns.
The question paraphrases the hidden output (a lexical search would not find it). Scripted engine (test double)."""

from __future__ import annotations

import json

import pytest
from proxy_helpers import NEEDLE_VALUE, TOOLS, Proxy, needle_history

from funes_py.tenancy.auth import tenant_id
from proxy_double import Reply, ScriptedEngine

pytestmark = pytest.mark.models

QUESTION = "How often do the pre-production credentials get changed?"


@pytest.mark.parametrize("mode", ["hint", "inject"])
def test_a_new_user_message_gets_the_hidden_output_named_or_quoted_and_it_is_replayed(tmp_path, mode):
    env = {"FUNES_PROXY_AUTO_RECALL": mode, "FUNES_PROXY_MIN_MASK_TOKENS": "20"}
    history = needle_history(20)
    with ScriptedEngine(8192, script=lambda b, n: Reply(text="ok")) as engine, Proxy(tmp_path / "d", engine.url, env=env) as proxy:
        first = proxy.chat(history, tools=TOOLS)
        assert first.status_code == 200 and "hidden=0" not in first.headers["x-funes-proxy"]
        proxy.wait_indexed()
        src = next((tmp_path / "d" / tenant_id("local") / "src").glob("*.funes.jsonl"))
        needle_id = next(json.loads(line)["turn_uuid"] for line in src.read_text().splitlines()
                         if NEEDLE_VALUE in line and '"role": "tool"' in line)  # fmt: skip
        history += [{"role": "assistant", "content": "ok"}, {"role": "user", "content": QUESTION}]
        resp = proxy.chat(history, tools=TOOLS)
        assert resp.status_code == 200 and "auto" in resp.headers["x-funes-proxy"], resp.headers["x-funes-proxy"]
        asked = engine.bodies[-1]["messages"][-1]
        assert asked["role"] == "user" and asked["content"].startswith(QUESTION)
        added = asked["content"][len(QUESTION):]
        hidden = [m for m in engine.bodies[-1]["messages"] if "hidden to save space" in str(m.get("content"))]
        assert any(needle_id in m["content"] for m in hidden), "the planted output is hidden behind its receipt"
        if mode == "hint":
            assert f'recall(id="{needle_id}")' in added and NEEDLE_VALUE not in added
        else:
            assert NEEDLE_VALUE in added and needle_id in added

        history += [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "Thanks."}]
        assert proxy.chat(history, tools=TOOLS).status_code == 200
        replayed = engine.bodies[-1]["messages"]
        assert asked in replayed, "the appended line is replayed exactly on the next turn"
        assert engine.oversize == []

"""Done-when 3: streaming, the recall round stays inside the proxy. No tool-call delta reaches the client; the
client gets the final round's text; the engine (the scripted test double) saw exactly two requests; the next
turn replays the round byte for byte. The model's query paraphrases a value planted 20 turns earlier (a
lexical miss), and the recall result the engine receives holds it. Read through the real `openai` SDK."""

from __future__ import annotations

from typing import Any

import pytest
from openai import OpenAI
from proxy_helpers import NEEDLE_VALUE, PARAPHRASE, TOOLS, Proxy, needle_history

from proxy_double import Reply, ScriptedEngine, call

pytestmark = pytest.mark.models

FINAL = "The pre-production credentials are changed every 45 days."


def script(body: dict[str, Any], n: int) -> Reply:
    last = body["messages"][-1]
    if last["role"] == "user" and "credentials" in str(last["content"]):
        return Reply(tool_calls=[call("recall", {"query": PARAPHRASE}, "call_recall_1")])
    if last["role"] == "tool" and last["tool_call_id"] == "call_recall_1":
        return Reply(text=FINAL if NEEDLE_VALUE in last["content"] else "unknown", chunks=6)
    return Reply(text="Noted.")


def test_streamed_recall_is_invisible_to_the_client_and_replayed(tmp_path):
    history = needle_history(20)
    with ScriptedEngine(32768, script=script) as engine, Proxy(tmp_path / "d", engine.url) as proxy:
        assert proxy.chat(history, tools=TOOLS).status_code == 200
        proxy.wait_indexed()
        history += [{"role": "assistant", "content": "Noted."},
                    {"role": "user", "content": "How often are the credentials for pre-production rotated?"}]  # fmt: skip
        before = len(engine.bodies)
        client = OpenAI(base_url=proxy.url + "/v1", api_key="unused", max_retries=0)
        stream = client.chat.completions.create(model="m", messages=history, tools=TOOLS, stream=True)
        text, tool_deltas, finishes = [], 0, []
        for chunk in stream:
            for choice in chunk.choices:
                if choice.delta.tool_calls:
                    tool_deltas += 1
                if choice.delta.content:
                    text.append(choice.delta.content)
                if choice.finish_reason:
                    finishes.append(choice.finish_reason)
        assert tool_deltas == 0, "an internal tool-call delta reached the client"
        assert "".join(text) == FINAL
        assert finishes == ["stop"]
        rounds = engine.bodies[before:]
        assert len(rounds) == 2, "the engine must see the recall round and the final round, nothing else"
        result = rounds[1]["messages"][-1]
        assert result["role"] == "tool" and NEEDLE_VALUE in result["content"], result["content"][:500]
        assert rounds[1]["messages"][: len(rounds[0]["messages"])] == rounds[0]["messages"]

        # The next turn: the client sends back only what it saw; the engine sees the round again.
        history += [{"role": "assistant", "content": FINAL}, {"role": "user", "content": "Thanks."}]
        assert proxy.chat(history, tools=TOOLS).status_code == 200
        nxt = engine.bodies[-1]["messages"]
        replay = [*rounds[1]["messages"], {"role": "assistant", "content": FINAL}]
        assert nxt[: len(replay)] == replay
        assert engine.oversize == []

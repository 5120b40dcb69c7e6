"""Done-when 4: a value planted 20 turns earlier, asked for in other words, is in recall(query)'s top 3 with
hybrid recall, while BM25 over the words as asked misses it (the known implementation's archive search is
lexical; funes_py's own BM25 also asks for the embedder's near words, which can find it there too).

The proxy's tool is driven by the scripted engine (the test double); the lexical comparison runs the same
query on the same memory through the engine's public API with legs="bm25"."""

from __future__ import annotations

import re
from typing import Any

import pytest
from proxy_helpers import NEEDLE_OUTPUT, NEEDLE_VALUE, PARAPHRASE, TOOLS, Proxy, needle_history

from funes_py.tenancy.auth import tenant_id
from proxy_double import Reply, ScriptedEngine, call

pytestmark = pytest.mark.models

HEADER = re.compile(r"^--- id=(m[0-9a-f]+) ", re.M)


def test_paraphrase_found_by_hybrid_recall_and_missed_by_bm25(tmp_path, models):
    from funes_py import Engine

    def script(body: dict[str, Any], n: int) -> Reply:
        last = body["messages"][-1]
        if last["role"] == "user" and last["content"].startswith("Quick question"):
            return Reply(tool_calls=[call("recall", {"query": PARAPHRASE}, "q1")])
        return Reply(text="ok")

    history = needle_history(20)
    with ScriptedEngine(32768, script=script) as engine, Proxy(tmp_path / "d", engine.url) as proxy:
        assert proxy.chat(history, tools=TOOLS).status_code == 200
        proxy.wait_indexed()
        history += [{"role": "assistant", "content": "ok"},
                    {"role": "user", "content": "Quick question before we go on."}]  # fmt: skip
        resp = proxy.chat(history, tools=TOOLS)
        assert resp.status_code == 200, resp.text
        result = engine.bodies[-1]["messages"][-1]["content"]
        conv = resp.headers["x-funes-conversation"]

    ids = HEADER.findall(result)
    memory = tmp_path / "d" / tenant_id("local") / "memory"
    eng = Engine(memory, models, resident=False)
    needle_id = next(h.turn_uuid for h in eng.recall("staging database password rotated", k=5, neighbors=0,
                                                     sessions=[conv]) if "Staging environment" in h.text)  # fmt: skip
    assert needle_id in ids[:3], f"hybrid recall through the proxy missed the paraphrase: {result[:800]}"
    assert NEEDLE_VALUE in result and NEEDLE_OUTPUT.splitlines()[1] in result
    # The known implementation's search: BM25 over the words as asked (no near words, `thesaurus`).
    lexical = eng.recall(PARAPHRASE, k=3, neighbors=0, legs="bm25", sessions=[conv], near_words=False)
    assert needle_id not in [h.turn_uuid for h in lexical], "the paraphrase shares no word: BM25 must miss it"
    hybrid = eng.recall(PARAPHRASE, k=3, neighbors=0, sessions=[conv], identifier_guard=True, min_similarity=0.2)
    assert needle_id in [h.turn_uuid for h in hybrid]

"""A megabyte query is cut to FUNES_RECALL_MAX_QUERY_CHARS at a word and answered (passages or the
"nothing relevant" sentence, never the intro alone); past FUNES_MAX_MCP_BODY_BYTES it is refused with a
clear 413; a query of only spaces or punctuation gets a fixed sentence. Turns of one megabyte-long word
are stored and answered with their words, not an empty role line. Real server, raw JSON-RPC over HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from funes_py.server.passages import EMPTY_QUERY, INTRO, NOTHING_FOUND, passage_count
from service_helpers import ALICE, DataRoot, Server

pytestmark = pytest.mark.models

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
           "Authorization": f"Bearer {ALICE}"}


@pytest.fixture(scope="module")
def server(data_root: DataRoot) -> Iterator[Server]:
    # A small answer cap, so a chunk of the long word (1,200 characters) never fits and must be cut.
    s = Server(data_root, env={"FUNES_RECALL_MAX_CHARS": "300"}).start()
    try:
        turns = [{"role": "user", "text": "The Lisbon chiller QV-8812 compressor was swapped on Tuesday.",
                  "ts": "2026-10-05T10:00:00Z"},
                 {"role": "assistant", "text": "x" * 1_000_000, "ts": "2026-10-05T10:01:00Z"},
                 {"role": "user", "text": "The Lisbon chiller log ends here.", "ts": "2026-10-05T10:02:00Z"}]
        r = s.post_turns({"user": "alice", "conversation_id": "chiller", "turns": turns})
        assert r.status_code == 202, r.text
        s.wait_indexed(timeout=300)
        yield s
    finally:
        s.stop()


def tool_call(server: Server, query: str) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "recall_my_conversations", "arguments": {"query": query}}}
    return httpx.post(server.url + "/mcp", content=json.dumps(body), headers=HEADERS, timeout=60.0)


def answer(r: httpx.Response) -> str:
    assert r.status_code == 200, r.text[:500]
    return "".join(c.get("text", "") for c in r.json()["result"]["content"])


def is_well_formed(text: str) -> bool:
    """Passages under the intro, each quoting words, or one of the fixed sentences."""
    if not text.startswith(INTRO):
        return True
    return passage_count(text) >= 1 and all(
        line.split(":", 1)[1].strip().strip("…").strip()
        for line in text.splitlines() if line.startswith(("user:", "assistant:")))


def test_a_megabyte_query_is_cut_and_answered(server: Server) -> None:
    out = answer(tool_call(server, "Lisbon chiller compressor " * 37_000))  # 962 KB
    assert is_well_formed(out) and "QV-8812" in out, out[:500]


def test_a_query_past_the_body_limit_is_refused_clearly(server: Server) -> None:
    r = tool_call(server, "Lisbon chiller " * 80_000)  # 1.2 MB
    assert r.status_code == 413 and "body larger than 1048576 bytes" in r.json()["error"]["message"]


@pytest.mark.parametrize("query", ["   ", "\n\t", "?!.,;", "x" * 1_000_000])
def test_odd_queries_get_a_well_formed_answer(server: Server, query: str) -> None:
    out = answer(tool_call(server, query))
    assert is_well_formed(out), out[:500]
    if not query.strip():
        assert out == EMPTY_QUERY


def test_a_turn_of_one_long_word_is_quoted_with_its_words(server: Server) -> None:
    out = answer(tool_call(server, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"))
    assert out == NOTHING_FOUND or is_well_formed(out), out[:500]
    out = answer(tool_call(server, "Lisbon chiller log"))
    assert is_well_formed(out) and "Lisbon" in out
